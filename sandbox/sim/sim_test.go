package sim

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/sandbox/agents"
)

func load(t testing.TB, name string) Scenario {
	t.Helper()
	s, err := LoadScenario(filepath.Join("..", "..", "examples", "scenarios", name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEveryExampleScenarioRuns(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../examples/scenarios/*.yaml")
	n := 0
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "sweep") {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			s := load(t, filepath.Base(f))
			// At full length, as `swarm sandbox run` would: an example must
			// meet its own success criteria.
			res, err := Run(t.Context(), s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Epochs) != s.Simulation.Epochs || res.Interactions == 0 {
				t.Fatalf("epochs %d interactions %d", len(res.Epochs), res.Interactions)
			}
			if !res.Passed {
				t.Errorf("success criteria fail: %+v", res.Criteria)
			}
		})
	}
	if n < 8 {
		t.Errorf("%d example scenarios, want at least 8", n)
	}
}

func TestSameSeedSameOutput(t *testing.T) {
	t.Parallel()
	s := load(t, "adversarial_redteam.yaml")
	a, _ := Run(t.Context(), s, Options{Epochs: 5})
	b, _ := Run(t.Context(), s, Options{Epochs: 5})
	if d := cmp.Diff(a, b, cmp.AllowUnexported()); d != "" {
		t.Fatalf("same seed differs:\n%s", d)
	}
	seed := int64(99)
	c, _ := Run(t.Context(), s, Options{Epochs: 5, Seed: &seed})
	if cmp.Equal(a.Epochs, c.Epochs) {
		t.Error("another seed gave identical epochs")
	}
}

func TestPerTypeMeanP(t *testing.T) {
	t.Parallel()
	s := DefaultScenario()
	s.ScenarioID = "calibration"
	s.Agents = []AgentGroup{{Type: agents.Honest, Count: 5}, {Type: agents.Opportunistic, Count: 5}, {Type: agents.Deceptive, Count: 5}, {Type: agents.Adversarial, Count: 5}}
	s.Simulation = Simulation{Epochs: 100, StepsPerEpoch: 20, Seed: 1}
	res, err := Run(t.Context(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for typ, want := range map[string]float64{"honest": 0.72, "opportunistic": 0.61, "deceptive": 0.63, "adversarial": 0.40} {
		if got := res.MeanPType[typ]; math.Abs(got-want) > 0.02 {
			t.Errorf("mean p of %s = %.4f, want %.2f ± 0.02", typ, got, want)
		}
	}
	if late := res.MeanPType["deceptive_late"]; late >= res.MeanPType["deceptive"]-0.05 {
		t.Errorf("deceptive agents should decay after trust-building: early %.3f late %.3f", res.MeanPType["deceptive"], late)
	}
}

func TestGovernanceReducesToxicity(t *testing.T) {
	t.Parallel()
	base, _ := Run(t.Context(), load(t, "baseline.yaml"), Options{})
	strict, _ := Run(t.Context(), load(t, "strict_governance.yaml"), Options{})
	if strict.Summary.Toxicity >= base.Summary.Toxicity {
		t.Errorf("strict governance toxicity %.3f not below baseline %.3f", strict.Summary.Toxicity, base.Summary.Toxicity)
	}
}

func TestScenarioStrictDecoding(t *testing.T) {
	t.Parallel()
	_, err := ParseScenario("bad.yaml", []byte("scenario_id: x\nagents:\n  - {type: honest, count: 2}\ngovernance:\n  transaction_tax: {enabled: true, rat: 0.1}\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml") || !strings.Contains(err.Error(), "rat") {
		t.Fatalf("unknown lever key accepted or badly reported: %v", err)
	}
	_, err = ParseScenario("bad.yaml", []byte("scenario_id: x\nagents:\n  - {type: wizard, count: 2}\n"))
	if err == nil || !strings.Contains(err.Error(), "wizard") {
		t.Fatalf("unknown type: %v", err)
	}
	if _, err := os.Stat("../../examples/scenarios/sweep-tax.yaml"); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkBaselineLoop(b *testing.B) {
	s := load(b, "baseline.yaml")
	s.Simulation.Epochs = 50
	b.ReportAllocs()
	total := 0
	for b.Loop() {
		res, err := Run(b.Context(), s, Options{})
		if err != nil {
			b.Fatal(err)
		}
		total += res.Interactions
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "interactions/s")
}

func TestSweepIsACartesianProductOverSeeds(t *testing.T) {
	t.Parallel()
	sw, base, err := LoadSweep("../../examples/scenarios/sweep-tax.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sw.Points()); n != 4 { // 1 × 4 values
		t.Fatalf("points = %d, want 4", n)
	}
	sw.Epochs = 2
	done := 0
	rows, err := RunSweep(t.Context(), sw, base, "sweep", func(d, total int) { done = d })
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 12 || done != 12 {
		t.Fatalf("rows %d progress %d, want 12 (4 points × 3 seeds)", len(rows), done)
	}
	// the swept key reaches the scenario: a 20% tax lowers welfare against no tax, same seed
	var noTax, tax float64
	for _, r := range rows {
		if r.Seed != 1 {
			continue
		}
		switch r.Point["governance.transaction_tax.rate"] {
		case 0.0:
			noTax = r.Welfare
		case 0.2:
			tax = r.Welfare
		}
	}
	if !(tax < noTax) {
		t.Errorf("welfare with 20%% tax %.2f not below no tax %.2f", tax, noTax)
	}
	dir := t.TempDir()
	if err := WriteSweepOutputs(dir, sw, rows); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sweep.csv", "sweep_governance_transaction_tax_rate.csv", "sweep_governance_transaction_tax_rate_toxicity.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
}

// agents[].params from YAML reach the agents (they were once decoded and ignored).
func TestAgentParamsFromYAML(t *testing.T) {
	t.Parallel()
	run := func(params string) *Result {
		t.Helper()
		s, err := ParseScenario("p.yaml", []byte("scenario_id: p\nagents:\n  - {type: honest, count: 4}\n  - {type: deceptive, count: 2"+params+"}\nsimulation: {epochs: 10, steps_per_epoch: 10, seed: 3}\n"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(t.Context(), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if _, late := run("").MeanPType["deceptive_late"]; !late {
		t.Error("by default deceptive agents exploit after 30% of the run")
	}
	if _, late := run(", params: {trust_fraction: 1}").MeanPType["deceptive_late"]; late {
		t.Error("trust_fraction 1: deceptive agents build trust for the whole run")
	}
	_, err := ParseScenario("p.yaml", []byte("scenario_id: p\nagents:\n  - {type: adaptive_adversary, count: 2, params: {epsilon: 3}}\n"))
	if err == nil || !strings.Contains(err.Error(), "agents[0].params.epsilon") {
		t.Errorf("out-of-range param: %v", err)
	}
	_, err = ParseScenario("p.yaml", []byte("scenario_id: p\nagents:\n  - {type: honest, count: 2, params: {treshold: 0.3}}\n"))
	if err == nil || !strings.Contains(err.Error(), "treshold") {
		t.Errorf("unknown param key: %v", err)
	}
}

// Lever effects are applied by the engine, not only reported: a slashed
// stake below the minimum, a tripped breaker and a refinery rejection all
// change what happens next.
func TestEngineAppliesLeverEffects(t *testing.T) {
	t.Parallel()
	run := func(gov string) *Result {
		t.Helper()
		s, err := ParseScenario("g.yaml", []byte("scenario_id: g\nagents:\n  - {type: honest, count: 4}\n  - {type: adversarial, count: 2}\nsimulation: {epochs: 10, steps_per_epoch: 10, seed: 5}\ngovernance:\n"+gov))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(t.Context(), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	byType := func(res *Result) (honest, adv AgentRow) {
		for _, a := range res.Agents {
			if a.Type == agents.Honest {
				honest.Interactions += a.Interactions
				honest.FrozenEpochs += a.FrozenEpochs
			} else {
				adv.Interactions += a.Interactions
				adv.FrozenEpochs += a.FrozenEpochs
				adv.Accepted += a.Accepted
			}
		}
		return honest, adv
	}
	_, free := byType(run("  transaction_tax: {enabled: false}\n"))
	_, staked := byType(run("  staking: {enabled: true, min_stake: 9, slash_rate: 0.5, violation_p: 0.5}\n"))
	if staked.Interactions*2 > free.Interactions {
		t.Errorf("slashed adversaries kept acting: %d interactions with staking, %d without", staked.Interactions, free.Interactions)
	}
	h, broken := byType(run("  circuit_breaker: {enabled: true, window: 5, threshold: 0.45, violations: 2, freeze_epochs: 3}\n"))
	if broken.FrozenEpochs == 0 || h.FrozenEpochs != 0 || broken.Interactions >= free.Interactions {
		t.Errorf("breaker: adversaries frozen %d epochs (%d interactions, %d without), honest frozen %d", broken.FrozenEpochs, broken.Interactions, free.Interactions, h.FrozenEpochs)
	}
	refined := run("  refinery: {enabled: true, threshold_p: 0.99}\n")
	if refined.Summary.Accepted != 0 {
		t.Errorf("refinery at 0.99 let %d interactions through", refined.Summary.Accepted)
	}
}

// collusionGroups runs s and returns every group the collusion detector
// penalised (from its events), with how many epochs it was flagged.
func collusionGroups(t *testing.T, s Scenario, seed int64) map[string]int {
	t.Helper()
	groups := map[string]int{}
	re := regexp.MustCompile(`^collusion: group \[([^\]]*)\] penalised$`)
	_, err := Run(t.Context(), s, Options{Seed: &seed, OnEvent: func(e Event) {
		if m := re.FindStringSubmatch(e.Message); m != nil {
			groups[m[1]]++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	return groups
}

// The collusion example flags its allied adversaries and nobody else. It
// once penalised [adversarial-2 honest-5] every epoch: adversaries never
// sought out their allies (80% of their proposals went to honest agents),
// and the detector pooled a pair's acceptance over both directions, so an
// honest agent whose own work the adversary accepted looked like its
// accomplice.
func TestCollusionScenarioFlagsOnlyAllies(t *testing.T) {
	t.Parallel()
	s := load(t, "collusion.yaml")
	allies := map[string]bool{}
	n := 0
	for _, g := range s.Agents {
		for i := 1; i <= g.Count; i++ {
			if g.Allies {
				allies[fmt.Sprintf("%s-%d", g.Type, i)] = true
			}
			n++
		}
	}
	coalition := strings.Join(slices.Sorted(maps.Keys(allies)), " ")
	for _, seed := range []int64{s.Simulation.Seed, 1, 2, 3, 4, 5} {
		groups := collusionGroups(t, s, seed)
		if len(groups) == 0 {
			t.Errorf("seed %d: no collusion flagged", seed)
		}
		for g := range groups {
			for _, a := range strings.Fields(g) {
				if !allies[a] {
					t.Errorf("seed %d: group [%s] flagged: %s is not an ally", seed, g, a)
				}
			}
		}
		if seed == s.Simulation.Seed && groups[coalition] < s.Simulation.Epochs/2 {
			t.Errorf("seed %d: the whole coalition [%s] flagged in %d epochs, want most: %v", seed, coalition, groups[coalition], groups)
		}
	}
	// Without coordination (ally_preference 0) there is no collusion to find,
	// and the detector must not invent any among honest agents.
	for i := range s.Agents {
		if s.Agents[i].Allies {
			zero := 0.0
			s.Agents[i].Params.AllyPreference = &zero
		}
	}
	if groups := collusionGroups(t, s, s.Simulation.Seed); len(groups) != 0 {
		t.Errorf("ally_preference 0: flagged %v", groups)
	}
}

func TestAllyPreferenceFromYAML(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ why, yaml, err string }{
		{"in range on an allied adversarial group", "  - {type: adversarial, count: 2, allies: true, params: {ally_preference: 0.9}}\n", ""},
		{"zero is a value, not the default", "  - {type: adaptive_adversary, count: 2, allies: true, params: {ally_preference: 0}}\n", ""},
		{"out of range", "  - {type: adversarial, count: 2, allies: true, params: {ally_preference: 1.5}}\n", "agents[1].params.ally_preference"},
		{"no allies to prefer", "  - {type: adversarial, count: 2, params: {ally_preference: 0.5}}\n", "agents[1].params.ally_preference"},
		{"honest agents do not coordinate", "  - {type: honest, count: 2, allies: true, params: {ally_preference: 0.5}}\n", "agents[1].params.ally_preference"},
	} {
		_, err := ParseScenario("a.yaml", []byte("scenario_id: a\nagents:\n  - {type: honest, count: 2}\n"+c.yaml))
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: err = %v, want %q", c.why, err, c.err)
		}
	}
}

// The adverse selection example shows adverse selection: accepted work has a
// lower mean p than rejected work. It once reported a quality gap of +0.246
// (every acceptance policy was a threshold on p) against a criterion,
// min_quality_gap: 0, that could not fail.
func TestAdverseSelectionScenarioHasNegativeQualityGap(t *testing.T) {
	t.Parallel()
	s := load(t, "adverse_selection.yaml")
	if s.SuccessCriteria.MaxQualityGap == nil || *s.SuccessCriteria.MaxQualityGap >= 0 {
		t.Fatalf("adverse_selection.yaml must require a negative quality gap: %+v", s.SuccessCriteria)
	}
	for _, seed := range []int64{s.Simulation.Seed, 1, 2} {
		res, err := Run(t.Context(), s, Options{Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		if g := res.Summary.QualityGap; g >= -0.05 {
			t.Errorf("seed %d: quality gap %.3f, want < -0.05 (accepted worse than rejected)", seed, g)
		}
		if !res.Passed {
			t.Errorf("seed %d: criteria fail: %+v", seed, res.Criteria)
		}
	}
}

// max_quality_gap passes at or below its limit and fails above it.
func TestMaxQualityGapCriterion(t *testing.T) {
	t.Parallel()
	lim := -0.05
	for _, c := range []struct {
		gap  float64
		pass bool
	}{{-0.2, true}, {-0.05, true}, {0, false}, {0.25, false}} {
		got, ok := check(SuccessCriteria{MaxQualityGap: &lim}, &Result{Summary: sandbox.Report{N: 10, QualityGap: c.gap}}, nil, nil)
		want := []CriterionResult{{Name: "max_quality_gap", Limit: lim, Actual: &c.gap, Passed: c.pass}}
		if d := cmp.Diff(want, got); d != "" || ok != c.pass {
			t.Errorf("gap %v (-want +got):\n%s", c.gap, d)
		}
	}
	s, err := ParseScenario("q.yaml", []byte("scenario_id: q\nagents:\n  - {type: honest, count: 2, params: {acceptance: price}}\nsuccess_criteria: {max_quality_gap: 0}\n"))
	if err != nil || s.SuccessCriteria.MaxQualityGap == nil || s.Agents[0].Params.Acceptance != "price" {
		t.Fatalf("max_quality_gap / acceptance from YAML: %v %+v", err, s)
	}
	if _, err := ParseScenario("q.yaml", []byte("scenario_id: q\nagents:\n  - {type: honest, count: 2, params: {acceptance: cheap}}\n")); err == nil || !strings.Contains(err.Error(), "agents[0].params.acceptance") {
		t.Errorf("unknown acceptance policy: %v", err)
	}
}

// r_a and r_b are the reputation changes an interaction causes to each side,
// lever deltas included: replaying the interactions reproduces every r and
// every final reputation, and the payoffs carry w_rep·r. Audit penalties and
// transparency bonuses once moved reputation without entering r, and r_b was
// always 0.
func TestReputationTermIsTheChangeTheInteractionCauses(t *testing.T) {
	t.Parallel()
	s, err := ParseScenario("r.yaml", []byte(`scenario_id: r
agents:
  - {type: honest, count: 3}
  - {type: adversarial, count: 3}
simulation: {epochs: 6, steps_per_epoch: 10, seed: 4}
payoff: {w_rep: 2}
governance:
  random_audit: {enabled: true, probability: 1, penalty_multiplier: 1, threshold_p: 0.5}
  transparency_bonus: {enabled: true, bonus: 0.03, min_p: 0.6}
`))
	if err != nil {
		t.Fatal(err)
	}
	var ins []sandbox.Interaction
	res, err := Run(t.Context(), s, Options{OnInteraction: func(in sandbox.Interaction) { ins = append(ins, in) }})
	if err != nil {
		t.Fatal(err)
	}
	rep := map[string]float64{}
	payoff := map[string]float64{}
	for _, a := range res.Agents {
		rep[a.ID] = 0.5
	}
	var audited, bonus, endorsed int
	for _, in := range ins {
		var dA, dB float64
		if in.Accepted {
			dA, dB = InitiatorRepRate*(in.P-0.5), CounterpartyRepRate*(in.P-0.5)
		}
		if in.P < 0.5 { // every interaction is audited
			dA -= 0.05
			audited++
		}
		if in.Accepted && in.P >= 0.6 {
			dA += 0.03
			bonus++
		}
		wantA := clamp01(rep[in.Initiator]+dA) - rep[in.Initiator]
		wantB := clamp01(rep[in.Counterparty]+dB) - rep[in.Counterparty]
		if math.Abs(in.RA-wantA) > 1e-12 || math.Abs(in.RB-wantB) > 1e-12 {
			t.Fatalf("%s (p %.3f accepted %v): r_a %v r_b %v, want %v %v", in.ID, in.P, in.Accepted, in.RA, in.RB, wantA, wantB)
		}
		if in.RB != 0 {
			endorsed++
		}
		rep[in.Initiator] += in.RA
		rep[in.Counterparty] += in.RB
		pay := s.Payoff.Payoff(in)
		if in.Accepted {
			payoff[in.Initiator] += pay.PiA
			payoff[in.Counterparty] += pay.PiB
		} else {
			payoff[in.Initiator] += -in.CA + s.Payoff.WRep*in.RA
			payoff[in.Counterparty] += -in.CB + s.Payoff.WRep*in.RB
		}
	}
	if audited == 0 || bonus == 0 || endorsed == 0 {
		t.Fatalf("the run exercised too little: %d audit penalties, %d bonuses, %d non-zero r_b", audited, bonus, endorsed)
	}
	for _, a := range res.Agents {
		if math.Abs(a.Reputation-rep[a.ID]) > 1e-9 {
			t.Errorf("%s: reputation %.6f, but 0.5 + its interactions' r = %.6f", a.ID, a.Reputation, rep[a.ID])
		}
		if math.Abs(a.Payoff-payoff[a.ID]) > 1e-9 {
			t.Errorf("%s: payoff %.6f, sum of its interactions' payoffs %.6f", a.ID, a.Payoff, payoff[a.ID])
		}
	}
}

// The collusion example asserts, through its success criteria, that the
// detector caught the allied coalition and nobody else. Before these
// criteria it "passed" whether or not the detector found anything; now a
// run where there is nothing to find (allies not coordinating), where the
// detector is off, or where it flags honest agents fails.
func TestCollusionCriteria(t *testing.T) {
	t.Parallel()
	base := load(t, "collusion.yaml")
	c := base.SuccessCriteria.Collusion
	if c == nil || c.Coalition != "allies" || c.MinEpochsFlagged == nil || c.MaxOutsidersFlagged == nil || *c.MaxOutsidersFlagged != 0 {
		t.Fatalf("collusion.yaml: collusion criteria %+v, want coalition allies, min_epochs_flagged and max_outsiders_flagged 0", c)
	}
	run := func(s Scenario) (*Result, map[string]float64) {
		t.Helper()
		res, err := Run(t.Context(), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, cr := range res.Criteria {
			got[cr.Name] = *cr.Actual
		}
		return res, got
	}

	res, got := run(base)
	if !res.Passed || got["collusion.min_epochs_flagged"] < float64(*c.MinEpochsFlagged) || got["collusion.max_outsiders_flagged"] != 0 {
		t.Errorf("seeded collusion: passed %v, criteria %+v", res.Passed, res.Criteria)
	}
	// The per-epoch groups in the result are the groups the detector
	// penalised, epoch by epoch.
	fromEvents := map[int][]string{}
	re := regexp.MustCompile(`^collusion: group \[([^\]]*)\] penalised$`)
	if _, err := Run(t.Context(), base, Options{OnEvent: func(e Event) {
		if m := re.FindStringSubmatch(e.Message); m != nil {
			fromEvents[e.Epoch+1] = append(fromEvents[e.Epoch+1], m[1])
		}
	}}); err != nil {
		t.Fatal(err)
	}
	fromResult := map[int][]string{}
	flagged := map[string]int{}
	for _, e := range res.Epochs {
		for _, g := range e.CollusionGroups {
			fromResult[e.Epoch] = append(fromResult[e.Epoch], strings.Join(g, " "))
			for _, a := range g {
				flagged[a]++
			}
		}
	}
	if d := cmp.Diff(fromEvents, fromResult); d != "" || len(fromResult) == 0 {
		t.Errorf("per-epoch collusion groups differ from the detector's events (-events +result):\n%s", d)
	}
	if res.Collusion == nil || res.Collusion.EpochsFlagged != len(fromResult) || !maps.Equal(res.Collusion.Flagged, flagged) {
		t.Errorf("collusion report %+v, want %d epochs and %v", res.Collusion, len(fromResult), flagged)
	}

	variant := func(change func(*Scenario)) Scenario {
		s := load(t, "collusion.yaml")
		change(&s)
		return s
	}
	for _, v := range []struct {
		why           string
		s             Scenario
		caught, outer float64
	}{
		{"allies not coordinating", variant(func(s *Scenario) {
			zero := 0.0
			s.Agents[1].Params.AllyPreference = &zero
		}), 0, 0},
		{"collusion detection off", variant(func(s *Scenario) { s.Governance.Collusion.Enabled = false }), 0, 0},
		// A detector that flags every pair catches no coalition on its own
		// and flags all five honest agents.
		{"detector flagging everyone", variant(func(s *Scenario) {
			s.Governance.Collusion.ZThreshold, s.Governance.Collusion.BenefitCorrelation = -1, -1
			s.Governance.Collusion.MinAcceptance, s.Governance.Collusion.QualityThreshold = 0, 1
		}), 0, 5},
	} {
		if !v.s.Agents[1].Allies {
			t.Fatal("collusion.yaml: the second group is no longer the allies")
		}
		res, got := run(v.s)
		if res.Passed || got["collusion.min_epochs_flagged"] != v.caught || got["collusion.max_outsiders_flagged"] != v.outer {
			t.Errorf("%s: passed %v, criteria %+v; want failed with %v epochs caught and %v outsiders flagged", v.why, res.Passed, res.Criteria, v.caught, v.outer)
		}
		if off := !v.s.Governance.Collusion.Enabled; off != (res.Collusion == nil) {
			t.Errorf("%s: collusion report %+v with detection enabled %v", v.why, res.Collusion, !off)
		}
	}
}

// An epoch counts towards min_epochs_flagged when some group in it is made
// of coalition members only; every agent outside the coalition in any
// group counts once towards max_outsiders_flagged.
func TestCollusionCriteriaCheck(t *testing.T) {
	t.Parallel()
	coalition := map[string]bool{"a-1": true, "a-2": true, "a-3": true}
	res := &Result{Epochs: []EpochRow{
		{Epoch: 1},
		{Epoch: 2, CollusionGroups: [][]string{{"a-1", "h-1"}}},                 // mixed: not caught, h-1 outside
		{Epoch: 3, CollusionGroups: [][]string{{"a-1", "a-2"}, {"h-1", "h-2"}}}, // caught; h-1 again, h-2
		{Epoch: 4, CollusionGroups: [][]string{{"a-1", "a-2", "a-3"}}},          // caught
	}}
	for _, c := range []struct {
		min, max int
		pass     bool
	}{{2, 2, true}, {3, 2, false}, {2, 1, false}, {1, 5, true}} {
		two := 2.0
		got, ok := check(SuccessCriteria{Collusion: &CollusionCriteria{Coalition: "allies", MinEpochsFlagged: &c.min, MaxOutsidersFlagged: &c.max}}, res, coalition, nil)
		want := []CriterionResult{
			{Name: "collusion.min_epochs_flagged", Limit: float64(c.min), Actual: &two, Passed: 2 >= c.min},
			{Name: "collusion.max_outsiders_flagged", Limit: float64(c.max), Actual: &two, Passed: 2 <= c.max},
		}
		if d := cmp.Diff(want, got); d != "" || ok != c.pass {
			t.Errorf("min %d max %d: passed %v (-want +got):\n%s", c.min, c.max, ok, d)
		}
	}
	// Only the limits that are set are checked.
	one := 1
	if got, ok := check(SuccessCriteria{Collusion: &CollusionCriteria{Coalition: "allies", MaxOutsidersFlagged: &one}}, &Result{}, coalition, nil); !ok || len(got) != 1 || got[0].Name != "collusion.max_outsiders_flagged" {
		t.Errorf("max only: %+v %v", got, ok)
	}
}

func TestCollusionCriteriaFromYAML(t *testing.T) {
	t.Parallel()
	const head = "scenario_id: c\nsimulation: {epochs: 10}\nagents:\n  - {type: honest, count: 3}\n  - {type: adversarial, count: 2, allies: true}\n  - {type: opportunistic, count: 1}\nsuccess_criteria:\n"
	for _, c := range []struct{ why, yaml, err string }{
		{"allies, both limits", "  collusion: {coalition: allies, min_epochs_flagged: 10, max_outsiders_flagged: 4}\n", ""},
		{"a type, one limit", "  collusion:\n    coalition: adversarial\n    min_epochs_flagged: 1\n", ""},
		{"unknown key", "  collusion:\n    coalition: allies\n    min_epochs: 3\n", `c.yaml:10:5: success_criteria.collusion.min_epochs: unknown key "min_epochs"`},
		{"not an integer", "  collusion: {coalition: allies, min_epochs_flagged: 1.5}\n", "c.yaml:8:54: success_criteria.collusion.min_epochs_flagged: 1.5: want a whole number"},
		{"coalition missing", "  collusion:\n    min_epochs_flagged: 3\n", "c.yaml:8:3: success_criteria.collusion.coalition: required"},
		{"unknown coalition", "  collusion:\n    coalition: pirates\n    min_epochs_flagged: 3\n", `c.yaml:9:5: success_criteria.collusion.coalition: "pirates": want allies or an agent type`},
		{"coalition of one", "  collusion: {coalition: opportunistic, min_epochs_flagged: 3}\n", `c.yaml:8:15: success_criteria.collusion.coalition: "opportunistic" selects 1 agents`},
		{"coalition of none", "  collusion: {coalition: deceptive, max_outsiders_flagged: 0}\n", `"deceptive" selects 0 agents`},
		{"no limit", "  collusion: {coalition: allies}\n", "success_criteria.collusion: set min_epochs_flagged, max_outsiders_flagged or both"},
		{"min zero", "  collusion:\n    coalition: allies\n    min_epochs_flagged: 0\n", "c.yaml:10:5: success_criteria.collusion.min_epochs_flagged: 0: want 1..10 (simulation.epochs)"},
		{"min above epochs", "  collusion: {coalition: allies, min_epochs_flagged: 11}\n", "min_epochs_flagged: 11: want 1..10"},
		{"max negative", "  collusion:\n    coalition: allies\n    max_outsiders_flagged: -1\n", "c.yaml:10:5: success_criteria.collusion.max_outsiders_flagged: -1: want 0..4 (the agents outside the coalition)"},
		{"max above outsiders", "  collusion: {coalition: adversarial, max_outsiders_flagged: 5}\n", "max_outsiders_flagged: 5: want 0..4"},
	} {
		s, err := ParseScenario("c.yaml", []byte(head+c.yaml))
		if c.err == "" && (err != nil || s.SuccessCriteria.Collusion == nil) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: err = %v, want %q", c.why, err, c.err)
		}
	}
}

// The YAML library truncates a fraction given to an integer field (count:
// 2.7 read as 2); a scenario refuses it, naming file, line and key.
func TestScenarioIntegersAreWhole(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ yaml, err string }{
		{"agents:\n  - {type: honest, count: 2.7}\n", "c.yaml:3:27: agents[0].count: 2.7: want a whole number"},
		{"agents:\n  - {type: honest, count: 2}\nsimulation: {epochs: 3.9}\n", "c.yaml:4:22: simulation.epochs: 3.9: want a whole number"},
		{"agents:\n  - {type: honest, count: 2}\nrate_limits:\n  per_agent_per_epoch: 2.5\n", "c.yaml:5:24: rate_limits.per_agent_per_epoch: 2.5: want a whole number"},
		{"agents:\n  - {type: honest, count: 2}\ngovernance:\n  circuit_breaker: {enabled: true, freeze_epochs: 1.5}\n", "governance.circuit_breaker.freeze_epochs: 1.5: want a whole number"},
		{"agents:\n  - {type: honest, count: 2}\nsimulation: {epochs: 16, seed: -7}\n", ""},
	} {
		_, err := ParseScenario("c.yaml", []byte("scenario_id: c\n"+c.yaml))
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q: err = %v, want %q", c.yaml, err, c.err)
		}
	}
}

func TestTwoGroupsOfOneTypeGetDistinctAgents(t *testing.T) {
	t.Parallel()
	s, err := ParseScenario("g.yaml", []byte("scenario_id: g\nagents:\n  - {type: adversarial, count: 2, allies: true}\n  - {type: adversarial, count: 3}\n  - {type: honest, count: 3}\nsimulation: {epochs: 3, steps_per_epoch: 5, seed: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(t.Context(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range res.Agents {
		if seen[a.ID] {
			t.Errorf("two agents share the id %s", a.ID)
		}
		seen[a.ID] = true
	}
	if len(res.Agents) != 8 || !seen["adversarial-5"] {
		t.Errorf("want 8 agents with adversarial-1..5, got %d: %v", len(res.Agents), seen)
	}
}
