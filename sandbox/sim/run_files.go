package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/sandbox"
)

// This file holds what `swarm sandbox run` writes besides WriteOutputs:
// events.jsonl as the run goes, the per-epoch table and the closing summary
// on the terminal, and replays.csv.

// EventLog writes a run's events.jsonl as the run goes: one JSON object a
// line, governance events always, interactions when asked. Its hooks are
// safe for concurrent use.
//
// A line that cannot be written (a full disk) is cut off again and nothing
// more is written (rundir.Log): Close returns that failure.
type EventLog struct {
	mu  sync.Mutex
	log *rundir.Log
}

// CreateEventLog creates dir/events.jsonl.
func CreateEventLog(dir string) (*EventLog, error) {
	f, err := os.Create(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return nil, err
	}
	log, err := rundir.NewLog(&rundir.File{File: f})
	if err != nil {
		f.Close()
		return nil, err
	}
	return &EventLog{log: log}, nil
}

// governanceLine is a governance event of events.jsonl.
type governanceLine struct {
	Epoch   int    `json:"epoch"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Step    int    `json:"step"`
	Type    string `json:"type"` // "governance"
}

// runLine is the header of events.jsonl: what recomputing the run's
// metrics needs besides its interactions (sandbox.RunHeader).
type runLine struct {
	Epochs     int                  `json:"epochs"`
	Payoff     sandbox.PayoffConfig `json:"payoff"`
	ScenarioID string               `json:"scenario_id"`
	Seed       int64                `json:"seed"`
	Type       string               `json:"type"` // "run"
}

// interactionLine is an interaction of events.jsonl: with its transfer,
// the levers' costs to each party and each party's reputation change, the
// metrics of the run are recomputed from these lines exactly (Go's JSON
// numbers round-trip float64 exactly). Zero transfers, costs and
// reputation changes are left out.
type interactionLine struct {
	Accepted     bool    `json:"accepted"`
	CA           float64 `json:"c_a,omitempty"`
	CB           float64 `json:"c_b,omitempty"`
	Counterparty string  `json:"counterparty"`
	Epoch        int     `json:"epoch"`
	GroundTruth  int     `json:"ground_truth,omitempty"`
	ID           string  `json:"id"`
	Initiator    string  `json:"initiator"`
	P            float64 `json:"p"`
	RA           float64 `json:"r_a,omitempty"`
	RB           float64 `json:"r_b,omitempty"`
	Step         int     `json:"step"`
	Tau          float64 `json:"tau,omitempty"`
	Type         string  `json:"type"` // "interaction"
	VHat         float64 `json:"v_hat"`
}

// effectLine is a lever's cost or reputation change for an agent outside
// an interaction's own parties (an epoch's or step's start) in
// events.jsonl; rep_delta is the change after clamping to [0, 1].
type effectLine struct {
	Agent        string  `json:"agent"`
	Cost         float64 `json:"cost,omitempty"`
	Epoch        int     `json:"epoch"`
	EpochStart   bool    `json:"epoch_start,omitempty"`
	FreezeEpochs int     `json:"freeze_epochs,omitempty"`
	Payout       float64 `json:"payout,omitempty"`
	RepDelta     float64 `json:"rep_delta,omitempty"`
	Step         int     `json:"step"`
	Type         string  `json:"type"` // "effect"
	Unfreeze     bool    `json:"unfreeze,omitempty"`
}

// agentLine is an agent of events.jsonl, as the run is set up: its id,
// type and initial reputation.
type agentLine struct {
	Agent      string  `json:"agent"`
	Kind       string  `json:"kind"`
	Reputation float64 `json:"reputation"`
	Type       string  `json:"type"` // "agent"
}

// Header writes the run's header line (scenario, seed, epochs and payoff):
// call it before the run, so that it is the first line.
func (l *EventLog) Header(scenarioID string, seed int64, epochs int, payoff sandbox.PayoffConfig) {
	l.write(runLine{Epochs: epochs, Payoff: payoff, ScenarioID: scenarioID, Seed: seed, Type: sandbox.LineRun})
}

// Hook sets o's OnEvent and OnEffect to write governance events and the
// levers' and the economy's effects (costs, reputation changes, freezes,
// payouts) and, when interactions is true, OnAgent and OnInteraction to
// write every agent and every interaction.
func (l *EventLog) Hook(o *Options, interactions bool) {
	o.OnEvent = func(e Event) {
		l.write(governanceLine{Epoch: e.Epoch, Kind: e.Kind, Message: e.Message, Step: e.Step, Type: sandbox.LineGovernance})
	}
	o.OnEffect = func(e Effect) {
		l.write(effectLine{Agent: e.Agent, Cost: e.Cost, Epoch: e.Epoch, EpochStart: e.EpochStart, FreezeEpochs: e.FreezeEpochs, Payout: e.Payout,
			RepDelta: e.RepDelta, Step: e.Step, Type: sandbox.LineEffect, Unfreeze: e.Unfreeze})
	}
	if interactions {
		o.OnAgent = func(a AgentRow) {
			l.write(agentLine{Agent: a.ID, Kind: a.Type, Reputation: a.Reputation, Type: sandbox.LineAgent})
		}
		o.OnInteraction = func(in sandbox.Interaction) {
			l.write(interactionLine{Accepted: in.Accepted, CA: in.CA, CB: in.CB, Counterparty: in.Counterparty, Epoch: in.Epoch,
				GroundTruth: in.GroundTruth, ID: in.ID, Initiator: in.Initiator, P: in.P, RA: in.RA, RB: in.RB, Step: in.Step,
				Tau: in.Tau, Type: sandbox.LineInteraction, VHat: in.VHat})
		}
	}
}

func (l *EventLog) write(v any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, err := json.Marshal(v); err == nil {
		l.log.WriteLine(append(b, '\n'))
	}
}

// Close syncs and closes the file and returns the first write that
// failed.
func (l *EventLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log.Close()
}

// epochRowFmt has fixed widths: each row is printed as its epoch ends,
// still aligned.
const epochRowFmt = "%5v  %12v  %8v  %8v  %11v  %10v  %6v\n"

// EpochTable prints the title and header of the per-epoch table to w and
// returns the function that prints one row (an Options.OnEpoch).
func EpochTable(w io.Writer, scenarioID string, seed int64) func(EpochRow) {
	fmt.Fprintf(w, "scenario %s · seed %d\n", scenarioID, seed)
	fmt.Fprintf(w, epochRowFmt, "epoch", "interactions", "accepted", "toxicity", "quality gap", "welfare", "frozen")
	return func(e EpochRow) {
		fmt.Fprintf(w, epochRowFmt, e.Epoch, e.Interactions, e.Accepted, fmt.Sprintf("%.3f", e.Toxicity), fmt.Sprintf("%.3f", e.QualityGap),
			fmt.Sprintf("%.2f", e.Welfare), e.Frozen)
	}
}

// WriteSummary prints the closing summary of a run whose outputs are in
// outDir: totals, mean p per agent type, collusion, economy, and every
// success criterion with its limit, actual value (or "undefined") and
// verdict.
func WriteSummary(w io.Writer, res *Result, outDir string) {
	r := res.Summary
	fmt.Fprintf(w, "\n%d interactions · toxicity %.3f · quality gap %.3f · welfare %.2f · output in %s\n", r.N, r.Toxicity, r.QualityGap, r.TotalWelfare, outDir)
	for _, t := range slices.Sorted(maps.Keys(res.MeanPType)) {
		fmt.Fprintf(w, "  mean p %-16s %.3f\n", t, res.MeanPType[t])
	}
	if c := res.Collusion; c != nil {
		var flagged []string
		for _, a := range slices.Sorted(maps.Keys(c.Flagged)) {
			flagged = append(flagged, fmt.Sprintf("%s %d", a, c.Flagged[a]))
		}
		fmt.Fprintf(w, "  collusion flagged in %d epochs", c.EpochsFlagged)
		if len(flagged) > 0 {
			fmt.Fprintf(w, " (epochs per agent: %s)", strings.Join(flagged, ", "))
		}
		fmt.Fprintln(w)
	}
	for _, l := range res.Economy.Lines() {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, c := range res.Criteria {
		mark := "ok"
		if !c.Passed {
			mark = "FAILED"
		}
		// Counts (the collusion criteria) print as integers.
		num := func(x float64) string {
			switch {
			case strings.HasPrefix(c.Name, "collusion."), strings.HasPrefix(c.Name, "economy.sybil."),
				c.Name == "economy.min_missions_succeeded", c.Name == "economy.min_crashes", c.Name == "economy.max_crashes":
				return fmt.Sprintf("%.0f", x)
			}
			return fmt.Sprintf("%.3f", x)
		}
		actual := "undefined"
		if c.Actual != nil {
			actual = num(*c.Actual)
		}
		if c.Reason != "" {
			mark += " (" + c.Reason + ")"
		}
		fmt.Fprintf(w, "  criterion %-31s limit %s actual %s %s\n", c.Name, num(c.Limit), actual, mark)
	}
}

// ReplayStats are the mean and standard deviation over replays.
type ReplayStats struct {
	Toxicity, ToxicitySD float64
	Welfare, WelfareSD   float64
}

// WriteReplays writes dir/replays.csv (one row per replay) and returns the
// mean and spread of toxicity and welfare.
func WriteReplays(dir string, rs []*Result) (ReplayStats, error) {
	var tox, wel []float64
	err := writeCSV(filepath.Join(dir, "replays.csv"), []string{"seed", "interactions", "toxicity", "quality_gap", "welfare", "passed"}, func(w func([]string)) {
		for _, r := range rs {
			w([]string{fmt.Sprint(r.Seed), fmt.Sprint(r.Interactions), ftoa(r.Summary.Toxicity), ftoa(r.Summary.QualityGap), ftoa(r.Summary.TotalWelfare), fmt.Sprint(r.Passed)})
			tox, wel = append(tox, r.Summary.Toxicity), append(wel, r.Summary.TotalWelfare)
		}
	})
	if err != nil {
		return ReplayStats{}, err
	}
	var st ReplayStats
	st.Toxicity, st.ToxicitySD = sandbox.MeanSD(tox)
	st.Welfare, st.WelfareSD = sandbox.MeanSD(wel)
	return st, nil
}
