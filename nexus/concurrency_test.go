package nexus

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/config"
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
			cfg, err := config.Load("", nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Providers = tc.kinds
			roster, err := config.ResolveRoster(cfg, providers.Ref{Kind: "mock", Model: "honest"}, tc.models)
			if err != nil {
				t.Fatal(err)
			}
			scale := config.Scale{Concurrency: tc.scale, Timeouts: config.Timeouts{Worker: 3 * time.Minute}}
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
	cfg, err := config.Load("", nil)
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

// A custom scale wider than the old cap of 1024 (issue 23: a custom
// ss-5000 ran its 5000 workers in rounds of 1024) loads from a user's file
// and, with the mock's limit lifted, keeps its whole widest layer in
// flight: the run-wide cap no longer has to bind.
func TestLargeCustomScaleIsNotHeldBackByTheCap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		why         string
		concurrency int
		wantN       int
		wantRule    string
	}{
		{"ss-5000 at its widest layer", "5 commanders × 100 squad leads × 10 workers all at once", 5000, 5000, "scale"},
		{"20000, far above the old cap", "what a custom ss-20000 (40 workers per squad lead) needs", 20000, 20000, "scale"},
		{"the maximum", "the config's bound itself is accepted", config.MaxConcurrency, config.MaxConcurrency, "scale"},
	}
	for _, tt := range tests {
		file := filepath.Join(t.TempDir(), "big.yml")
		body := fmt.Sprintf("scales:\n  ss-5000:\n    description: big\n    min_commanders: 5\n    commanders: 5\n    squad_leads_per_commander: 100\n"+
			"    workers_per_commander: 0\n    workers_per_squad_lead: 10\n    reviewers: 10\n    max_depth: 3\n    sealed_criteria: 10\n"+
			"    cost_ceiling_usd: 1000\n    concurrency: %d\n    timeouts: {mission: 90m, commander: 30m, squad_lead: 10m, worker: 3m, call: 2m}\n"+
			"providers:\n  mock:\n    max_concurrency: 0\n", tt.concurrency)
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(file, nil)
		if err != nil {
			t.Fatalf("%s (%s): %v", tt.name, tt.why, err)
		}
		scale, err := cfg.ScaleFor("ss-5000")
		if err != nil {
			t.Fatal(err)
		}
		roster, err := config.ResolveRoster(cfg, providers.Ref{Kind: "mock", Model: "honest"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := effectiveConcurrency(cfg, Plan{Roster: roster, Personality: "balanced"}, scale)
		if diff := cmp.Diff([2]any{tt.wantN, tt.wantRule}, [2]any{got.N, got.Rule}); diff != "" {
			t.Errorf("%s (%s) (-want +got):\n%s\ndetail: %s", tt.name, tt.why, diff, got.Detail)
		}
	}
}
