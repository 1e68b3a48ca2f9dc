package importer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/internal/yamlx"
	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/sandbox/governance"
	"github.com/swarm-dev/swarm/sandbox/sim"
)

// warned lists "line key" of each warning, in order.
func warned(ws []Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, fmt.Sprintf("%d %s", w.Line, w.Key))
	}
	return out
}

// loadBack writes the converted YAML to a file and loads it with the
// scenario loader, as `swarm sandbox run` would.
func loadBack(t *testing.T, res *Result) sim.Scenario {
	t.Helper()
	p := filepath.Join(t.TempDir(), "converted.yaml")
	if err := os.WriteFile(p, res.YAML, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sim.LoadScenario(p)
	if err != nil {
		t.Fatalf("the converted scenario does not load: %v\n%s", err, res.YAML)
	}
	return s
}

// TestConvertExamples converts the reference-format files under
// examples/reference: what maps is in the loaded scenario, every key that
// does not is a warning at its line.
func TestConvertExamples(t *testing.T) {
	t.Parallel()
	pay := func(sp, sm, h, th, ra, rb, w float64) sandbox.PayoffConfig {
		return sandbox.PayoffConfig{SPlus: sp, SMinus: sm, H: h, Theta: th, RhoA: ra, RhoB: rb, WRep: w}
	}
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		file, why  string
		wantWarn   []string
		agents     []sim.AgentGroup
		simulation sim.Simulation
		network    sim.Network
		gov        governance.Config
		payoff     sandbox.PayoffConfig
		maxTox     *float64
	}{
		{"baseline.yaml", "flat governance keys, rate limits and outputs the reference has and we do not",
			[]string{"6 motif", "20 governance.bandwidth_cap", "32 rate_limits.posts_per_epoch", "33 rate_limits.interactions_per_step",
				"43 success_criteria.min_epochs", "47 outputs.event_log", "48 outputs.metrics_csv"},
			[]sim.AgentGroup{{Type: "honest", Count: 4}, {Type: "opportunistic", Count: 2}, {Type: "deceptive", Count: 1}},
			sim.Simulation{Epochs: 12, StepsPerEpoch: 8, Seed: 7},
			sim.Network{Topology: "complete"},
			governance.Config{
				TransactionTax:  governance.TaxConfig{Enabled: true, Rate: 0.05, Split: 0.5},
				ReputationDecay: governance.DecayConfig{Enabled: true, Factor: 0.9},
				// audit_enabled with only the probability: the reference's
				// defaults for the rest are written out.
				RandomAudit: governance.AuditConfig{Enabled: true, Probability: 0.2, PenaltyMultiplier: 2, ThresholdP: 0.5},
			},
			pay(2, 1, 2, 0.5, 0, 0, 1), f(0.5)},
		{"collusion.yaml", "network params (k counts both sides in the reference), the short decay key, collusion keys without an equivalent",
			[]string{"11 agents[1].name", "18 network.dynamic", "19 network.edge_decay_rate", "31 governance.collusion_realtime_penalty",
				"46 success_criteria.min_flagged_pairs"},
			[]sim.AgentGroup{{Type: "honest", Count: 6}, {Type: "adversarial", Count: 3}},
			sim.Simulation{Epochs: 15, StepsPerEpoch: 10, Seed: 11, Scheduling: "random"},
			sim.Network{Topology: "small_world", K: 2, P: 0.2},
			governance.Config{
				ReputationDecay: governance.DecayConfig{Enabled: true, Factor: 0.95},
				Staking:         governance.StakingConfig{Enabled: true, MinStake: 5, SlashRate: 0.1},
				CircuitBreaker:  governance.BreakerConfig{Enabled: true, Threshold: 0.6, Violations: 3, FreezeEpochs: 3},
				Collusion:       governance.CollusionConfig{Enabled: true, ZThreshold: 1.5, BenefitCorrelation: 0.6},
			},
			pay(3, 1.5, 2.5, 0.5, 0.1, 0, 1), f(0.45)},
		{"partial.yaml", "an agent type, sections and a topology we do not have: left out, the rest kept; a disabled lever's parameter is not silently dropped",
			[]string{"9 agents[1].type", "17 network.topology", "19 marketplace", "23 perturbations", "30 governance.audit_probability",
				"31 governance.incoherence_friction_enabled", "35 simulation.observation_noise_std"},
			[]sim.AgentGroup{{Type: "honest", Count: 5}, {Type: "adaptive_adversary", Count: 1}},
			sim.Simulation{Epochs: 5, StepsPerEpoch: 10},
			sim.Network{Topology: "complete"},
			governance.Config{TransactionTax: governance.TaxConfig{Enabled: true, Rate: 0.1, Split: 0.5}},
			pay(2, 1, 2, 0.5, 0, 0, 1), nil},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			name := filepath.Join("..", "..", "examples", "reference", tc.file)
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Convert(name, data)
			if err != nil {
				t.Fatalf("%s: %v", tc.why, err)
			}
			if d := cmp.Diff(tc.wantWarn, warned(res.Warnings)); d != "" {
				t.Errorf("%s: warnings (-want +got):\n%s", tc.why, d)
			}
			for _, w := range res.Warnings {
				if !strings.HasPrefix(w.String(), fmt.Sprintf("%s:%d:", name, w.Line)) {
					t.Errorf("warning %q does not start with file:line", w)
				}
				if !strings.Contains(string(res.YAML), fmt.Sprintf("#   line %d: %s:", w.Line, w.Key)) {
					t.Errorf("warning %q is not in the output's header", w)
				}
			}
			s := loadBack(t, res)
			// Defaults the loader fills in (acceptance policy, round-robin)
			// are not the converter's business.
			got := s.Simulation
			got.Acceptance = ""
			if tc.simulation.Scheduling == "" {
				got.Scheduling = ""
			}
			if d := cmp.Diff(tc.agents, s.Agents); d != "" {
				t.Errorf("agents (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.simulation, got); d != "" {
				t.Errorf("simulation (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.network, s.Network); d != "" {
				t.Errorf("network (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.gov, s.Governance); d != "" {
				t.Errorf("governance (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.payoff, s.Payoff); d != "" {
				t.Errorf("payoff (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.maxTox, s.SuccessCriteria.MaxToxicity); d != "" {
				t.Errorf("max_toxicity (-want +got):\n%s", d)
			}
		})
	}
}

// TestConvertMappings: one rule each, on small files.
func TestConvertMappings(t *testing.T) {
	t.Parallel()
	const agents = "agents:\n  - {type: honest, count: 3}\n"
	tests := []struct {
		name, why, yaml string
		check           func(s sim.Scenario) any // what to compare
		want            any
		wantWarn        []string
	}{
		{"reference defaults", "the reference runs 10 epochs and calls an unnamed scenario unnamed; ours would run 20",
			agents, func(s sim.Scenario) any {
				return fmt.Sprint(s.ScenarioID, " ", s.Simulation.Epochs, "x", s.Simulation.StepsPerEpoch)
			},
			"unnamed 10x10", nil},
		{"count defaults to 1", "the reference's default count",
			"agents:\n  - {type: honest, count: 2}\n  - {type: deceptive}\n", func(s sim.Scenario) any { return s.Agents },
			[]sim.AgentGroup{{Type: "honest", Count: 2}, {Type: "deceptive", Count: 1}}, nil},
		{"odd small-world k", "the reference links k/2 per side (integer division); an odd k loses one, said so",
			agents + "network: {topology: small_world, k_neighbors: 5}\n", func(s sim.Scenario) any { return s.Network },
			sim.Network{Topology: "small_world", K: 2, P: 0.1}, []string{"3 network.k_neighbors"}},
		{"erdos-renyi", "random_erdos_renyi is our random; its default edge probability 0.5 is written",
			agents + "network: {topology: random_erdos_renyi}\n", func(s sim.Scenario) any { return s.Network },
			sim.Network{Topology: "random", P: 0.5}, nil},
		{"network disabled", "enabled: false means no network: everyone meets everyone",
			agents + "network: {enabled: false, topology: ring}\n", func(s sim.Scenario) any { return s.Network.Topology },
			"complete", []string{"3 network.topology"}},
		{"decay 1 is off", "reputation_decay_rate 1.0 (the reference's default) keeps everything: no lever",
			agents + "governance: {reputation_decay_rate: 1.0}\n", func(s sim.Scenario) any { return s.Governance.ReputationDecay },
			governance.DecayConfig{}, nil},
		{"breaker defaults", "circuit_breaker_enabled alone: the reference's 0.7 / 3 / 2 are written",
			agents + "governance: {circuit_breaker_enabled: true}\n", func(s sim.Scenario) any { return s.Governance.CircuitBreaker },
			governance.BreakerConfig{Enabled: true, Threshold: 0.7, Violations: 3, FreezeEpochs: 2}, nil},
		{"long key wins", "the reference reads transaction_tax_rate before transaction_tax",
			agents + "governance: {transaction_tax: 0.3, transaction_tax_rate: 0.1}\n", func(s sim.Scenario) any { return s.Governance.TransactionTax.Rate },
			0.1, []string{"3 governance.transaction_tax"}},
		{"wrong type", "a value of the wrong kind is named and left out, not guessed",
			agents + "simulation: {n_epochs: many}\n", func(s sim.Scenario) any { return s.Simulation.Epochs },
			10, []string{"3 simulation.n_epochs"}},
		{"a fraction for a count", "count: 2.5 is not a whole number: the reference would fail on it",
			"agents:\n  - {type: honest, count: 2}\n  - {type: deceptive, count: 2.5}\n", func(s sim.Scenario) any { return s.Agents },
			[]sim.AgentGroup{{Type: "honest", Count: 2}, {Type: "deceptive", Count: 1}}, []string{"3 agents[1].count"}},
		{"a key with a newline", "keys come from the file: one must not end the header comment and inject YAML",
			agents + "governance: {\"x\\nscenario_id: evil\": 1}\n", func(s sim.Scenario) any { return s.ScenarioID },
			"unnamed", []string{"3 governance.x\nscenario_id: evil"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Convert("r.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatalf("%s: %v", tc.why, err)
			}
			if d := cmp.Diff(tc.want, tc.check(loadBack(t, res))); d != "" {
				t.Errorf("%s (-want +got):\n%s", tc.why, d)
			}
			if d := cmp.Diff(tc.wantWarn, warned(res.Warnings)); d != "" {
				t.Errorf("%s: warnings (-want +got):\n%s", tc.why, d)
			}
		})
	}
}

// TestConvertRefuses: what is not a reference scenario, or cannot make a
// valid one, is an error (exit 2 in the CLI), never an empty scenario.
func TestConvertRefuses(t *testing.T) {
	t.Parallel()
	ours, err := os.ReadFile("../../examples/scenarios/baseline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	laughs := "a: &a0 [lol]\n"
	for i := 1; i <= 9; i++ {
		laughs += fmt.Sprintf("a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
	}
	tests := []struct {
		name, why, yaml string
		wantErr         error
		want            string
	}{
		{"not YAML", "a syntax error is reported with its position", "agents: [1\n", yamlx.ErrSyntax, "r.yaml:"},
		{"empty", "nothing to convert", "", ErrNotReference, "want a mapping"},
		{"a list", "a scenario is a mapping", "- 1\n- 2\n", ErrNotReference, "want a mapping"},
		{"no agents", "a YAML file that is not a scenario (a config, a mission)", "providers: {}\n", ErrNotReference, "no agents list"},
		{"already ours", "a swarm scenario would lose its nested governance", string(ours), ErrNotReference, "swarm's own format"},
		{"no agent we have", "every group is an LLM agent: nothing valid remains", "agents:\n  - {type: llm, count: 3}\n", ErrInvalidResult, "agents"},
		{"billion laughs", "alias expansion is bounded before decoding", laughs, yamlx.ErrTooManyNodes, "aliases"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Convert("r.yaml", []byte(tc.yaml))
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err = %v, want %v containing %q", tc.why, err, tc.wantErr, tc.want)
			}
		})
	}
}
