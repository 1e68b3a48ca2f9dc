package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/sandbox/agents"
	"github.com/swarm-dev/swarm/sandbox/governance"
)

// EpochRow is one epoch's metrics.
type EpochRow struct {
	Epoch        int     `json:"epoch"`
	Interactions int     `json:"interactions"`
	Accepted     int     `json:"accepted"`
	Toxicity     float64 `json:"toxicity"`
	QualityGap   float64 `json:"quality_gap"`
	Welfare      float64 `json:"welfare"`
	NetWelfare   float64 `json:"net_social_welfare"`
	MeanP        float64 `json:"mean_p"`
	Frozen       int     `json:"frozen"`
	// CollusionGroups are the groups the collusion detector flagged at
	// this epoch's start, from the interactions before it (each sorted; no
	// groups: absent).
	CollusionGroups [][]string `json:"collusion_groups,omitempty"`
	// Economy is the economy's metrics this epoch (nil without one).
	Economy *EconomyEpoch `json:"economy,omitempty"`
}

// AgentRow is one agent's totals.
type AgentRow struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Interactions int     `json:"interactions"`
	Accepted     int     `json:"accepted"`
	MeanP        float64 `json:"mean_p"`
	Payoff       float64 `json:"payoff"`
	Reputation   float64 `json:"reputation"`
	FrozenEpochs int     `json:"frozen_epochs"`
}

// Event is one notable thing (governance actions, freezes).
type Event struct {
	Epoch   int    `json:"epoch"`
	Step    int    `json:"step"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Result is a finished simulation.
type Result struct {
	ScenarioID string             `json:"scenario_id"`
	Seed       int64              `json:"seed"`
	Epochs     []EpochRow         `json:"epochs"`
	Agents     []AgentRow         `json:"agents"`
	Summary    sandbox.Report     `json:"summary"`
	MeanPType  map[string]float64 `json:"mean_p_by_type"`
	// PSamples holds up to 2000 p values per type, for the distribution plot.
	PSamples     map[string][]float64 `json:"-"`
	Interactions int                  `json:"interactions"`
	// Collusion sums up what the collusion detector flagged (nil when it
	// is off).
	Collusion *CollusionReport `json:"collusion,omitempty"`
	// Economy sums up the scenario's economy (nil without one).
	Economy  *EconomyReport    `json:"economy,omitempty"`
	Criteria []CriterionResult `json:"success_criteria"`
	Passed   bool              `json:"passed"`
}

// CollusionReport is what the collusion detector flagged over a run.
type CollusionReport struct {
	// EpochsFlagged counts the epochs in which it flagged any group.
	EpochsFlagged int `json:"epochs_flagged"`
	// Flagged: agent → epochs in which it was in a flagged group.
	Flagged map[string]int `json:"flagged"`
}

// CriterionResult is one success criterion's outcome.
type CriterionResult struct {
	Name  string  `json:"name"`
	Limit float64 `json:"limit"`
	// Actual is the measured value, absent when the run left it undefined
	// (the criterion then fails).
	Actual *float64 `json:"actual,omitempty"`
	Passed bool     `json:"passed"`
	// Reason says why a criterion failed without a value ("no
	// interactions"); empty otherwise.
	Reason string `json:"reason,omitempty"`
}

// NoInteractions is the Reason of a criterion over the interactions
// (toxicity, welfare, quality gap, uncertain fraction) of a run that had
// none: it fails rather than pass on the metrics' zero values.
const NoInteractions = "no interactions: the run had none to measure"

// Options adjust one run.
type Options struct {
	Seed   *int64
	Epochs int
	// MemoryBudget is the most memory, in bytes, the run may be estimated
	// to need (0: DefaultMemoryBudget); above it Run returns ErrTooBig.
	MemoryBudget int64
	OnEpoch      func(EpochRow)
	OnEvent      func(Event)
	// OnInteraction sees every interaction (events.jsonl); may be nil.
	OnInteraction func(sandbox.Interaction)
	// OnEffect sees every lever cost and reputation change outside an
	// interaction's own parties (events.jsonl); may be nil.
	OnEffect func(Effect)
	// OnAgent sees every agent (its id, type and initial reputation) as
	// the run is set up (events.jsonl); may be nil.
	OnAgent func(AgentRow)
}

// Effect is a lever's cost charged to, or reputation change of, an agent
// outside an interaction's own parties (those are the interaction's c_a,
// c_b, r_a and r_b): at an epoch's or a step's start, or a third party of
// an interaction.
type Effect struct {
	Epoch int
	Step  int
	// EpochStart: an epoch-start lever's effect (before the epoch's frozen
	// agents are counted), not a step's or an interaction's.
	EpochStart bool
	Agent      string
	Cost       float64
	// RepDelta is the change of the agent's reputation, after clamping.
	RepDelta float64
	// Payout is what the economy paid the agent (an auction's utility, a
	// mission's reward), at the epoch's end.
	Payout float64
	// FreezeEpochs freezes the agent for that many epochs after this one
	// (it stays frozen while frozen longer already); Unfreeze ends its
	// freeze with this epoch.
	FreezeEpochs int
	Unfreeze     bool
}

// agentState is one agent of a run and its running totals.
type agentState struct {
	a            agents.Agent
	n, acc       int
	sumP, payoff float64
	frozenEpochs int
	actions      int
	detected     bool
}

// Run simulates a scenario: it sets the world up (agents, governance
// state and levers, economy, network), runs the epochs (each a sequence of
// steps, each step an interaction per proposing agent) and sums the run up.
// Cancelling ctx stops it between steps with what was simulated so far
// (nil while the world is being set up).
func Run(ctx context.Context, s Scenario, o Options) (*Result, error) {
	s.Defaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	seed, epochs, err := runLength(s, o)
	if err != nil {
		return nil, err
	}
	if err := CheckMemory(s, epochs, o.MemoryBudget); err != nil {
		return nil, err
	}
	w, err := newWorld(ctx, s, o, seed, epochs)
	if err != nil {
		return nil, err
	}
	for epoch := range epochs {
		if err := ctx.Err(); err != nil {
			return w.res, err
		}
		if err := w.runEpoch(ctx, epoch); err != nil {
			return w.res, err
		}
	}
	w.summarise()
	return w.res, nil
}

// runLength is the run's seed and number of epochs: the scenario's unless
// o overrides them. An o.Epochs out of 0..MaxEpochs is a *KeyError.
func runLength(s Scenario, o Options) (seed int64, epochs int, err error) {
	seed = s.Simulation.Seed
	if o.Seed != nil {
		seed = *o.Seed
	}
	epochs = s.Simulation.Epochs
	if o.Epochs > 0 {
		epochs = o.Epochs
	}
	if o.Epochs < 0 || o.Epochs > MaxEpochs {
		return 0, 0, &KeyError{"epochs", fmt.Sprintf("%d is out of range 1..%d", o.Epochs, MaxEpochs)}
	}
	return seed, epochs, nil
}

// Reputation change of an accepted interaction per unit of p − 0.5: the
// initiator's work is judged at InitiatorRepRate; the counterparty, who
// vouched for it by accepting, at CounterpartyRepRate.
const (
	InitiatorRepRate    = 0.05
	CounterpartyRepRate = 0.025
)

func pairKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

func clamp01(x float64) float64 { return max(0, min(1, x)) }

func schedule(order []int, as []*agentState, gs *governance.State, how string, rng *rand.Rand) {
	switch how {
	case "random":
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	case "priority":
		sort.SliceStable(order, func(i, j int) bool {
			return gs.Rep[order[i]] > gs.Rep[order[j]]
		})
	default:
		sort.Ints(order)
	}
}

// check evaluates the success criteria; coalition and sybilCoalition hold
// the members of the collusion and the economy's Sybil criteria's coalitions.
func check(c SuccessCriteria, res *Result, coalition, sybilCoalition map[string]bool) ([]CriterionResult, bool) {
	r := res.Summary
	var out []CriterionResult
	ok := true
	add := func(name string, limit, actual float64, pass bool) {
		out = append(out, CriterionResult{Name: name, Limit: limit, Actual: &actual, Passed: pass})
		ok = ok && pass
	}
	// A criterion over the interactions of a run that had none fails:
	// the metrics' zero values (toxicity 0, welfare 0) measure nothing.
	overInteractions := add
	if r.N == 0 {
		overInteractions = func(name string, limit, _ float64, _ bool) {
			out = append(out, CriterionResult{Name: name, Limit: limit, Reason: NoInteractions})
			ok = false
		}
	}
	if c.MaxToxicity != nil {
		overInteractions("max_toxicity", *c.MaxToxicity, r.Toxicity, r.Toxicity <= *c.MaxToxicity)
	}
	if c.MinWelfare != nil {
		overInteractions("min_welfare", *c.MinWelfare, r.TotalWelfare, r.TotalWelfare >= *c.MinWelfare)
	}
	if c.MinQualityGap != nil {
		overInteractions("min_quality_gap", *c.MinQualityGap, r.QualityGap, r.QualityGap >= *c.MinQualityGap)
	}
	if c.MaxQualityGap != nil {
		overInteractions("max_quality_gap", *c.MaxQualityGap, r.QualityGap, r.QualityGap <= *c.MaxQualityGap)
	}
	if c.MaxUncertainFrac != nil {
		overInteractions("max_uncertain_fraction", *c.MaxUncertainFrac, r.UncertainFraction, r.UncertainFraction <= *c.MaxUncertainFrac)
	}
	if cc := c.Collusion; cc != nil {
		// With collusion detection off nothing is ever flagged: a minimum
		// fails, a maximum holds.
		caught, outsiders := coalitionCaught(res.Epochs, func(e EpochRow) [][]string { return e.CollusionGroups }, coalition)
		if n := cc.MinEpochsFlagged; n != nil {
			add("collusion.min_epochs_flagged", float64(*n), float64(caught), caught >= *n)
		}
		if n := cc.MaxOutsidersFlagged; n != nil {
			add("collusion.max_outsiders_flagged", float64(*n), float64(len(outsiders)), len(outsiders) <= *n)
		}
	}
	if ec := c.Economy; ec != nil {
		out, ok = checkEconomy(ec, res, sybilCoalition, out, ok)
	}
	return out, ok
}

// coalitionCaught reads the groups a detector flagged at each epoch
// (groups(row)): caught counts the epochs with a group of coalition members
// only, outsiders holds every flagged agent outside the coalition.
func coalitionCaught(epochs []EpochRow, groups func(EpochRow) [][]string, coalition map[string]bool) (caught int, outsiders map[string]bool) {
	outsiders = map[string]bool{}
	for _, e := range epochs {
		hit := false
		for _, g := range groups(e) {
			pure := true
			for _, a := range g {
				if !coalition[a] {
					pure = false
					outsiders[a] = true
				}
			}
			hit = hit || pure
		}
		if hit {
			caught++
		}
	}
	return caught, outsiders
}
