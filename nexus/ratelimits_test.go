package nexus_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

// TestTelemetryAdaptiveAndCache: a run whose provider answers one 429 and
// reports cached prompt tokens has, in telemetry, the model's adaptive
// limit (halved once, the 429 counted) and the cached tokens per role; the
// change is a concurrency_limit event.
func TestTelemetryAdaptiveAndCache(t *testing.T) {
	t.Parallel()
	cfg := defaultConfig(t)
	kc := cfg.Providers["mock"]
	on := true
	kc.AdaptiveConcurrency = &on
	kc.MaxConcurrency = 8
	cfg.Providers["mock"] = kc
	var n atomic.Int64
	wrap := func(_ providers.Ref, p providers.Provider) providers.Provider {
		return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
			if req.Caller.Role == "worker" && n.Add(1) == 1 {
				return providers.Response{}, &providers.Error{Class: providers.ClassRateLimited, StatusCode: 429,
					RateLimit: &providers.RateLimitState{Requests: &providers.Budget{Limit: 100, Remaining: 0}}}
			}
			resp, err := p.Complete(ctx, req)
			if req.Caller.Role == "worker" {
				resp.Usage.CacheReadTokens = resp.Usage.InputTokens / 2
			}
			return resp, err
		})
	}
	o := nexus.Options{Config: cfg, Registry: mockRegistry(mock.Options{}), Mission: loadMission(t, "api-design.md"), MissionName: "test",
		Scale: "ss-50", Provider: ref(t, "mock:honest"), OutDir: filepath.Join(t.TempDir(), "run"), KeepEvents: true}
	m, err := nexus.Prepare(o, nexus.WithProviderWrap(wrap))
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ac := res.Telemetry.AdaptiveConcurrency
	if len(ac) != 1 || ac[0].Model != "mock:honest" || ac[0].Max != 8 || ac[0].Min != 4 || ac[0].RateLimited != 1 || ac[0].Decreases != 1 {
		t.Errorf("adaptive_concurrency %+v: want mock:honest max 8, min 4, one 429, one decrease", ac)
	}
	w := res.Telemetry.ByRole["worker"]
	if w.InputTokens == 0 || w.CacheReadTokens == 0 || w.CacheReadTokens > w.InputTokens || w.PromptCacheHits == 0 {
		t.Errorf("by_role worker %+v: want cache reads within its input, and hits", w)
	}
	if j, ok := res.Telemetry.ByRole["judge"]; !ok || j.InputTokens == 0 || j.CacheReadTokens != 0 || j.PromptCacheHits != 0 {
		t.Errorf("by_role judge %+v: want its input and no cached tokens", j)
	}
	var changes []events.ConcurrencyData
	for _, e := range res.Events {
		if d, ok := e.Data.(events.ConcurrencyData); ok && e.Kind == events.Concurrency && d.Reason == providers.AdaptiveRateLimited {
			changes = append(changes, d)
		}
	}
	want := []events.ConcurrencyData{{From: 8, To: 4, Max: 8, Model: "mock:honest", Reason: providers.AdaptiveRateLimited}}
	if diff := cmp.Diff(want, changes, cmpIgnoreInFlight); diff != "" {
		t.Errorf("concurrency_limit events (-want +got):\n%s", diff)
	}
}

var cmpIgnoreInFlight = cmp.Transformer("noInFlight", func(d events.ConcurrencyData) events.ConcurrencyData { d.InFlight = 0; return d })

// TestDefaultMockHasNoAdaptiveTelemetry: the mock kind has no adaptive
// limit by default and reports no cache use, so a run's telemetry has
// neither section (the README's figures and goldens stay as they were).
func TestDefaultMockHasNoAdaptiveTelemetry(t *testing.T) {
	t.Parallel()
	res, err := runMissionWith(t, loadMission(t, "api-design.md"), "ss-50", "mock:honest", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Telemetry.AdaptiveConcurrency != nil || res.Telemetry.PromptCacheHits != 0 || res.Telemetry.CacheReadShare != nil {
		t.Errorf("adaptive %+v cache hits %d share %v: want neither", res.Telemetry.AdaptiveConcurrency, res.Telemetry.PromptCacheHits, res.Telemetry.CacheReadShare)
	}
}

// TestConcurrencyEventRoundTrip: a concurrency_limit event read back from
// events.jsonl has its typed payload.
func TestConcurrencyEventRoundTrip(t *testing.T) {
	t.Parallel()
	in := events.Event{Kind: events.Concurrency, Model: "openai:gpt-4.1", Data: events.ConcurrencyData{From: 16, To: 8, Max: 16, Model: "openai:gpt-4.1", Reason: "rate_limited", InFlight: 15}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out events.Event
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in.Data, out.Data); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
}
