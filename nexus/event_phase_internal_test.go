package nexus

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
)

// The cost ceiling's and the provider breakers' events carry the phase of
// the call that crossed the mark or tripped the breaker (its context's), not
// whichever phase was entered last: phases 4, 5 and 6 overlap, so the phase
// entered last is a race. Here phase 6 was entered last and a phase-4 call
// trips both.
func TestCeilingAndBreakerEventsCarryTheCallsPhase(t *testing.T) {
	t.Parallel()
	var got []events.Event // the event log calls observers one at a time
	rec := testRecorder(t, func(e events.Event) {
		if e.Kind == events.CostWarning || e.Kind == events.CostStop || e.Kind == events.Breaker {
			got = append(got, events.Event{Phase: e.Phase, Kind: e.Kind, Data: e.Data})
		}
	})

	// Every call costs $2 (one input token at $2M per million) and fails
	// permanently: the $1 ceiling and the one-failure breaker both go.
	prices := map[string]providers.KindConfig{"fake": {InputPerMTok: 2e6}}
	reg := &providers.Registry{}
	reg.Register(providers.KindInfo{Kind: "fake", Description: "test"}, func(providers.Ref, providers.KindConfig) (providers.Provider, error) {
		return providers.ProviderFunc(func(context.Context, providers.Request) (providers.Response, error) {
			return providers.Response{Usage: providers.Usage{InputTokens: 1}}, providers.NewError(providers.ClassPermanent, "no", nil)
		}), nil
	})
	cfg := &config.Config{Providers: prices, CircuitBreaker: config.CircuitBreaker{Enabled: true, FailureRate: 1, CallWindow: 1, MinCalls: 1, Cooldown: time.Hour, HalfOpenProbes: 1}}
	m := newMeter(cfg.PriceOf, 1, rec)
	_, cancel := context.WithCancel(t.Context())
	defer cancel()
	m.armStop(cancel)
	pp := &providerPool{cfg: cfg, reg: reg, limits: &providers.LimitSet{}, rec: rec, meter: m,
		provs: map[string]*providers.Stack{}}
	p, err := pp.forRole("worker", providers.Ref{Kind: "fake", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	rec.enter(events.Phase4, "execution")
	rec.enter(events.Phase6, "shadow validation") // entered last
	_, _ = p.Complete(withPhase(t.Context(), events.Phase4), providers.Request{Caller: providers.Caller{Role: "worker", AgentID: "w"}})

	want := []events.Event{
		{Phase: events.Phase4, Kind: events.CostWarning},
		{Phase: events.Phase4, Kind: events.CostStop, Data: events.CostStopData{Level: 0.9}},
		{Phase: events.Phase4, Kind: events.CostStop, Data: events.CostStopData{Level: 1}},
		{Phase: events.Phase4, Kind: events.Breaker, Data: events.BreakerData{FailureRate: ptr(1.0), From: "closed", Layer: "workers", Model: "fake:m", Reason: "failure_rate", To: "open", WindowCalls: 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
