package nexus_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
)

// breakerTestConfig is the default config with a breaker that decides
// after two calls and a cooldown shorter than the time between two calls,
// and the scale's calls made one at a time, so the order of breaker
// transitions does not depend on scheduling: the first two worker calls
// fail and open it, every later worker call finds the cooldown over, goes
// to the primary as the one probe, fails, and opens it again.
func breakerTestConfig(t *testing.T, scale string) *config.Config {
	t.Helper()
	cfg := defaultConfig(t)
	cfg.CircuitBreaker = config.CircuitBreaker{Enabled: true, FailureRate: 0.5, CallWindow: 4, MinCalls: 2, Cooldown: time.Nanosecond, HalfOpenProbes: 1,
		ToxicityThreshold: cfg.CircuitBreaker.ToxicityThreshold, Window: cfg.CircuitBreaker.Window}
	s := cfg.Scales[scale]
	s.Concurrency = 1
	cfg.Scales[scale] = s
	return cfg
}

// Done when (issue 12): a role whose primary model fails every call
// completes on its fallback, and the events show the breaker open, the
// half-open probes and the swap.
func TestWorkersOnAFailingModelCompleteOnTheirFallback(t *testing.T) {
	t.Parallel()
	reg := hookRegistry("down", "fails every call", func(context.Context, providers.Request, providers.Provider) (providers.Response, error) {
		return providers.Response{}, providers.NewError(providers.ClassTransient, "injected outage", nil)
	})
	res, err := runMission(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
		o.Config = breakerTestConfig(t, "ss-50")
		o.Registry = reg
		o.Models = map[string][]providers.Ref{"worker": {ref(t, "down:honest")}}
		o.Fallbacks = map[string][]providers.Ref{"worker": {ref(t, "mock:honest")}}
		// The breaker's routing alone: the ladder would also swap the
		// workers whose call failed (recovery_test.go; both together in the
		// CLI's TestRunFallbackWhileTheWorkersBreakerIsOpen).
		withoutRecovery(o)
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runfiles.StatusComplete || res.Telemetry.BundlesScored != res.Telemetry.BundlesPlanned {
		t.Fatalf("status %s, %d of %d bundles scored; want every bundle scored", res.Status, res.Telemetry.BundlesScored, res.Telemetry.BundlesPlanned)
	}
	transitions := map[string]int{}
	swaps, fallbackAnswers := 0, 0
	for _, e := range res.Events {
		switch d := e.Data.(type) {
		case events.BreakerData:
			if d.Model == "down:honest" && d.Layer == nexus.LayerWorkers {
				transitions[d.From+">"+d.To+":"+d.Reason]++
			} else {
				t.Errorf("a breaker of another model or layer moved: %+v", d)
			}
		case events.ModelSwapData:
			if d != (events.ModelSwapData{AgentID: e.AgentID, From: "down:honest", Reason: "breaker_open", Role: "worker", To: "mock:honest"}) || e.AgentID == "" {
				t.Errorf("unexpected swap %+v", d)
			}
			swaps++
		case events.CallData:
			if e.Role == "worker" && e.Model == "mock:honest" && d.Outcome == "ok" {
				fallbackAnswers++
			}
		}
	}
	for _, k := range []string{"closed>open:failure_rate", "open>half_open:cooldown", "half_open>open:probe_failed"} {
		if transitions[k] == 0 {
			t.Errorf("no %s transition in %v", k, transitions)
		}
	}
	if transitions["closed>open:failure_rate"] != 1 || transitions["half_open>closed:probes_succeeded"] != 0 {
		t.Errorf("transitions %v: want one opening, never closed again (every probe fails)", transitions)
	}
	if swaps == 0 || fallbackAnswers < swaps {
		t.Errorf("%d swaps, %d worker calls answered by the fallback; want swaps, each answered", swaps, fallbackAnswers)
	}
	stats := res.Telemetry.Breakers
	if len(stats) != 1 || stats[0].Model != "down:honest" || stats[0].Layer != nexus.LayerWorkers || stats[0].Opened != 1 ||
		stats[0].HalfOpened != transitions["open>half_open:cooldown"] || stats[0].RoutedToFallback != swaps || stats[0].State != "open" {
		t.Errorf("telemetry breakers = %+v; want down:m/workers opened once, %d half-opened, %d routed, still open", stats, transitions["open>half_open:cooldown"], swaps)
	}
}

// Without a breaker that ever leaves closed, telemetry has no breakers key
// (an empty list would pretend something was measured).
func TestNoBreakersInTelemetryWhenNoneOpened(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "mock:honest")
	if err != nil {
		t.Fatal(err)
	}
	if res.Telemetry.Breakers != nil {
		t.Errorf("breakers = %+v, want absent", res.Telemetry.Breakers)
	}
	for _, e := range res.Events {
		if e.Kind == events.Breaker || e.Kind == events.ModelSwap {
			t.Errorf("event %s in a run where nothing failed", e.Kind)
		}
	}
}

// Phase 1 used to end the run when the nexus's model failed a few attempts
// in a row: the consecutive-failure breaker sat inside the retries and
// opened between them. The breaker now sees what a call returns after its
// retries, so attempts the retries fix count for nothing, even with the
// most sensitive breaker there is (one failed call of one opens it).
func TestRetriedAttemptsDoNotOpenTheNexusBreaker(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	attempts := 0
	reg := hookRegistry("shaky", "rate limited twice, then answers", func(ctx context.Context, req providers.Request, next providers.Provider) (providers.Response, error) {
		mu.Lock()
		attempts++
		n := attempts
		mu.Unlock()
		if n <= 2 {
			return providers.Response{}, &providers.Error{Class: providers.ClassRateLimited, StatusCode: 429, RetryAfter: time.Millisecond, Msg: "injected rate limit"}
		}
		return next.Complete(ctx, req)
	})
	res, err := runMission(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
		o.Config = defaultConfig(t)
		o.Config.CircuitBreaker.FailureRate, o.Config.CircuitBreaker.CallWindow, o.Config.CircuitBreaker.MinCalls = 0.01, 1, 1
		o.Config.Providers["shaky"] = providers.KindConfig{Retries: 3}
		o.Registry = reg
		o.Models = map[string][]providers.Ref{"nexus": {ref(t, "shaky:honest")}}
	})
	if err != nil {
		t.Fatalf("the run ended: %v", err)
	}
	if res.Status != runfiles.StatusComplete {
		t.Errorf("status %s, want complete", res.Status)
	}
	for _, e := range res.Events {
		if e.Kind == events.Breaker {
			t.Errorf("breaker moved: %s", e.Message)
		}
	}
}
