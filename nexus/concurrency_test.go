package nexus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

func TestEffectiveConcurrencyFollowsTheProvidersLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		why      string
		scale    int
		kinds    map[string]providers.KindConfig
		models   map[string][]providers.Ref // role -> model overrides
		wantN    int
		wantRule string
	}{
		{name: "one kind under the scale", why: "the provider's max_concurrency is what it accepts: no point queueing more",
			scale: 256, kinds: map[string]providers.KindConfig{"mock": {MaxConcurrency: 16}}, wantN: 16, wantRule: "providers"},
		{name: "two kinds add up", why: "each kind has its own cap, so the run can keep both full",
			scale: 256, kinds: map[string]providers.KindConfig{"mock": {MaxConcurrency: 16}, "other": {MaxConcurrency: 8}},
			models: map[string][]providers.Ref{"worker": {{Kind: "other", Model: "honest"}}}, wantN: 24, wantRule: "providers"},
		{name: "scale is a ceiling", why: "the scale's concurrency still bounds the run when the providers accept more",
			scale: 32, kinds: map[string]providers.KindConfig{"mock": {MaxConcurrency: 256}}, wantN: 32, wantRule: "scale"},
		{name: "no provider limit", why: "a kind with neither limit leaves the scale's value to decide",
			scale: 100, kinds: map[string]providers.KindConfig{"mock": {}}, wantN: 100, wantRule: "scale"},
		{name: "rate limit bounds what can start within a worker timeout", why: "60 rpm starts one call a second: at most 180 start within a 3m worker timeout",
			scale: 256, kinds: map[string]providers.KindConfig{"mock": {RequestsPerMin: 60}}, wantN: 180, wantRule: "providers"},
		{name: "the tighter of rate and max_concurrency", why: "both limits hold at once",
			scale: 256, kinds: map[string]providers.KindConfig{"mock": {RequestsPerMin: 60, MaxConcurrency: 20}}, wantN: 20, wantRule: "providers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := LoadConfig("", nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Providers = tc.kinds
			roster, err := ResolveRoster(cfg, providers.Ref{Kind: "mock", Model: "honest"}, tc.models)
			if err != nil {
				t.Fatal(err)
			}
			scale := Scale{Concurrency: tc.scale, Timeouts: Timeouts{Worker: 3 * time.Minute}}
			got := effectiveConcurrency(cfg, Plan{Roster: roster, Personality: "balanced"}, scale)
			if diff := cmp.Diff([2]any{tc.wantN, tc.wantRule}, [2]any{got.N, got.Rule}); diff != "" {
				t.Errorf("%s (-want +got):\n%s\ndetail: %s", tc.why, diff, got.Detail)
			}
		})
	}
}

// The shipped defaults must not hold a scale's widest layer back: on the
// mock, every worker of ss-250 can be in flight at once.
func TestDefaultConcurrencyTakesTheWidestLayerAtOnce(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ss-50", "ss-100", "ss-250"} {
		m, err := Prepare(Options{Config: cfg, Mission: "# m\n- a\n- b\n- c\n- d\n- e\n", Scale: name, Provider: providers.Ref{Kind: "mock", Model: "honest"}})
		if err != nil {
			t.Fatal(err)
		}
		plan := m.Plan()
		scale, _ := cfg.ScaleFor(name)
		got := effectiveConcurrency(cfg, plan, scale)
		if widest := max(plan.Workers, plan.SquadLeads); got.N < widest {
			t.Errorf("%s: concurrency %d (%s) below its widest layer of %d agents", name, got.N, got.Detail, widest)
		}
	}
}
