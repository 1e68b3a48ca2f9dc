package sim

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/sandbox/governance"
)

// TestRunLength: the run's seed and epochs are the scenario's unless the
// options override them, and an override out of range is refused.
func TestRunLength(t *testing.T) {
	t.Parallel()
	seven := int64(7)
	tests := []struct {
		name       string
		o          Options
		wantSeed   int64
		wantEpochs int
		wantErr    bool
	}{
		{name: "the scenario's when nothing is overridden", wantSeed: 3, wantEpochs: 4},
		{name: "a seed of the options wins", o: Options{Seed: &seven}, wantSeed: 7, wantEpochs: 4},
		{name: "epochs of the options win", o: Options{Epochs: 9}, wantSeed: 3, wantEpochs: 9},
		{name: "negative epochs are refused, not ignored", o: Options{Epochs: -1}, wantErr: true},
		{name: "epochs above MaxEpochs are refused", o: Options{Epochs: MaxEpochs + 1}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := Scenario{Simulation: Simulation{Seed: 3, Epochs: 4}}
			seed, epochs, err := runLength(s, tt.o)
			if tt.wantErr {
				var ke *KeyError
				if !errors.As(err, &ke) || ke.Path != "epochs" {
					t.Fatalf("err = %v, want a KeyError on epochs", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if seed != tt.wantSeed || epochs != tt.wantEpochs {
				t.Errorf("runLength = %d, %d, want %d, %d", seed, epochs, tt.wantSeed, tt.wantEpochs)
			}
		})
	}
}

// TestSettleReputation: an accepted interaction moves both parties'
// reputations at their rates, the levers' changes add to it, and the
// result is clamped to [0, 1].
func TestSettleReputation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                  string
		accepted              bool
		p, oldA, oldB, lA, lB float64
		wantA, wantB          float64
	}{
		{name: "a rejected interaction moves nothing by itself", p: 0.9, oldA: 0.5, oldB: 0.5, wantA: 0.5, wantB: 0.5},
		{name: "accepted good work raises both, the initiator more", accepted: true, p: 0.9, oldA: 0.5, oldB: 0.5,
			wantA: 0.5 + InitiatorRepRate*0.4, wantB: 0.5 + CounterpartyRepRate*0.4},
		{name: "accepted bad work lowers both", accepted: true, p: 0.1, oldA: 0.5, oldB: 0.5,
			wantA: 0.5 + InitiatorRepRate*(0.1-0.5), wantB: 0.5 + CounterpartyRepRate*(0.1-0.5)},
		{name: "a lever's penalty counts on a rejected interaction too", p: 0.9, oldA: 0.5, oldB: 0.5, lA: -0.2, lB: 0.1,
			wantA: 0.3, wantB: 0.6},
		{name: "clamped at 0 and 1", accepted: true, p: 1, oldA: 0.99, oldB: 0.01, lA: 0.5, lB: -0.5, wantA: 1, wantB: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b := settleReputation(tt.accepted, tt.p, tt.oldA, tt.oldB, tt.lA, tt.lB)
			if d := cmp.Diff([2]float64{tt.wantA, tt.wantB}, [2]float64{a, b}); d != "" {
				t.Errorf("reputations (-want +got):\n%s", d)
			}
		})
	}
}

// TestSettlePayoff: an accepted interaction pays the soft payoffs; a
// rejected one pays no surplus but still charges costs and counts
// reputation changes.
func TestSettlePayoff(t *testing.T) {
	t.Parallel()
	pay := sandbox.Payoff{PiA: 3, PiB: 2}
	tests := []struct {
		name         string
		in           sandbox.Interaction
		wantA, wantB float64
	}{
		{name: "accepted: the soft payoffs", in: sandbox.Interaction{Accepted: true, CA: 1, RA: 0.1}, wantA: 3, wantB: 2},
		{name: "rejected: costs and weighted reputation changes only",
			in: sandbox.Interaction{CA: 1, CB: 0.5, RA: -0.25, RB: 0.5}, wantA: -1.5, wantB: 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b := settlePayoff(&tt.in, pay, 2)
			if d := cmp.Diff([2]float64{tt.wantA, tt.wantB}, [2]float64{a, b}); d != "" {
				t.Errorf("payoffs (-want +got):\n%s", d)
			}
		})
	}
}

// TestRecordHistory: pair counts are by unordered pair, counterparts by
// initiator, and pair payoffs are kept in the pair key's order whoever
// initiated, for accepted interactions only.
func TestRecordHistory(t *testing.T) {
	t.Parallel()
	gs := governance.NewState(rand.New(rand.NewPCG(1, 2)))
	recordHistory(gs, "b", "a", true, sandbox.Payoff{PiA: 3, PiB: 1})  // b initiates: a gets 1, b 3
	recordHistory(gs, "a", "b", false, sandbox.Payoff{PiA: 9, PiB: 9}) // rejected: no payoffs
	k := pairKey("a", "b")
	if d := cmp.Diff(map[[2]string]int{k: 2}, gs.PairCount); d != "" {
		t.Errorf("pair counts (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]map[string]int{"a": {"b": 1}, "b": {"a": 1}}, gs.Counterparts); d != "" {
		t.Errorf("counterparts (-want +got):\n%s", d)
	}
	var want governance.Benefits
	want.Add(1, 3)
	if d := cmp.Diff(map[[2]string]governance.Benefits{k: want}, gs.PairBenefit); d != "" {
		t.Errorf("pair benefits (-want +got):\n%s", d)
	}
}

// TestNewPopulation: agents are numbered per type across groups, each
// group's initiation probability and criteria coalitions are recorded by
// agent.
func TestNewPopulation(t *testing.T) {
	t.Parallel()
	s := parseWorld(t, `scenario_id: pop
agents:
  - {type: honest, count: 2, initiation_probability: 0.5}
  - {type: adversarial, count: 2, allies: true}
  - {type: honest, count: 1}
success_criteria:
  collusion: {coalition: allies, min_epochs_flagged: 1}
`)
	s.Defaults()
	proxy, err := sandbox.NewProxy(s.Proxy)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPopulation(t.Context(), s, proxy)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"honest-1", "honest-2", "adversarial-1", "adversarial-2", "honest-3"}, p.ids); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]float64{0.5, 0.5, 1, 1, 1}, p.initiate); d != "" {
		t.Errorf("initiation (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]bool{"adversarial-1": true, "adversarial-2": true}, p.allies); d != "" {
		t.Errorf("allies (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]bool{"adversarial-1": true, "adversarial-2": true}, p.coalition); d != "" {
		t.Errorf("coalition (-want +got):\n%s", d)
	}
}

// TestBuildLevers: the loop keeps the interaction history only when a
// lever reads it, and finds the collusion detector among the levers.
func TestBuildLevers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		governance                string
		wantDetector, wantHistory bool
	}{
		{name: "no lever: no history kept", governance: "{}"},
		{name: "a tax reads no history", governance: "{transaction_tax: {enabled: true, rate: 0.1}}"},
		{name: "the collusion detector reads it and is found",
			governance: "{collusion_detection: {enabled: true}}", wantDetector: true, wantHistory: true},
		{name: "the Sybil detector reads it", governance: "{sybil_detection: {enabled: true}}", wantHistory: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := parseWorld(t, "scenario_id: l\nagents:\n  - {type: honest, count: 2}\ngovernance: "+tt.governance+"\n")
			s.Defaults()
			ls, err := buildLevers(s, 1, governance.NewState(rand.New(rand.NewPCG(1, 2))), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := ls.detector != nil; got != tt.wantDetector {
				t.Errorf("detector found = %v, want %v", got, tt.wantDetector)
			}
			if ls.history != tt.wantHistory {
				t.Errorf("history = %v, want %v", ls.history, tt.wantHistory)
			}
		})
	}
}

// TestAcceptanceStep: the trust rule and the policy rule decide, and the
// acceptance threshold overrides both.
func TestAcceptanceStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sim  string
		p    float64
		want bool
	}{
		{name: "trust: no history is 0.5, above the default threshold", sim: "acceptance: trust", p: 0.2, want: true},
		{name: "trust: a threshold above 0.5 refuses a stranger", sim: "acceptance: trust, trust_threshold: 0.6", p: 0.9},
		{name: "the acceptance threshold refuses low p whatever the rule",
			sim: "acceptance: trust, acceptance_threshold: 0.5", p: 0.4},
		{name: "policy: an honest agent accepts very good work", sim: "acceptance: policy", p: 0.99, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := parseWorld(t, "scenario_id: a\nagents:\n  - {type: honest, count: 2}\nsimulation: {seed: 1, "+tt.sim+"}\n")
			s.Defaults()
			w, err := newWorld(t.Context(), s, Options{}, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			in := &sandbox.Interaction{Initiator: w.pop.ids[0], Kind: "honest", P: tt.p}
			if got := w.accept(0, 1, in); got != tt.want {
				t.Errorf("accept = %v, want %v", got, tt.want)
			}
		})
	}
}
