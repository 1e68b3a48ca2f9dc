package sim

import (
	"errors"
	"fmt"
	"io"

	"github.com/swarm-dev/swarm/sandbox"
)

// Replay is what a run's events.jsonl recomputes: the run's summary, the
// metrics and frozen count of each epoch that had interactions, and every
// agent's row. ReplayEvents builds it.
type Replay struct {
	Header  sandbox.RunHeader
	Summary sandbox.Report
	// Epochs holds the rows of the epochs with interactions (an epoch
	// without any writes no line that could stand for it), without their
	// collusion groups and economy.
	Epochs []EpochRow
	// Agents are the agents' rows, in the run's order.
	Agents []AgentRow
}

// eventLine is any line of events.jsonl (see EventLog).
type eventLine struct {
	Type         string                `json:"type"`
	ScenarioID   string                `json:"scenario_id"`
	Seed         int64                 `json:"seed"`
	Epochs       int                   `json:"epochs"`
	Payoff       *sandbox.PayoffConfig `json:"payoff"`
	Agent        string                `json:"agent"`
	Kind         string                `json:"kind"`
	Message      string                `json:"message"`
	Reputation   float64               `json:"reputation"`
	Epoch        int                   `json:"epoch"`
	Step         int                   `json:"step"`
	EpochStart   bool                  `json:"epoch_start"`
	Cost         float64               `json:"cost"`
	RepDelta     float64               `json:"rep_delta"`
	Payout       float64               `json:"payout"`
	FreezeEpochs int                   `json:"freeze_epochs"`
	Unfreeze     bool                  `json:"unfreeze"`
	Accepted     bool                  `json:"accepted"`
	ID           string                `json:"id"`
	Initiator    string                `json:"initiator"`
	Counterparty string                `json:"counterparty"`
	P            float64               `json:"p"`
	VHat         float64               `json:"v_hat"`
	Tau          float64               `json:"tau"`
	CA           float64               `json:"c_a"`
	CB           float64               `json:"c_b"`
	RA           float64               `json:"r_a"`
	RB           float64               `json:"r_b"`
	GroundTruth  int                   `json:"ground_truth"`
}

// replayer is the state ReplayEvents rebuilds, line by line, in the run's
// order: sums are added in the order the run added them, so they come out
// equal.
type replayer struct {
	rp          Replay
	pay         sandbox.PayoffConfig
	overall     *sandbox.Metrics
	epoch       *sandbox.Metrics
	cur         int // the epoch of the lines being read
	started     int // epochs whose frozen agents are counted: 0..started-1
	index       map[string]int
	sumP        []float64
	rep         []float64
	frozenUntil map[string]int
}

// ReplayEvents recomputes a run from its events.jsonl (name names it in
// errors): the summary and each epoch's metrics exactly, as the run
// summed them; each agent's interactions, acceptances, mean p, payoff
// (interactions, lever costs and economy payouts) and frozen epochs
// exactly; its reputation up to rounding (the file holds each change as
// new − old, and old + (new − old) may differ from new in the last bit).
// The file must come from a run with interactions written (outputs.events
// not false).
func ReplayEvents(name string, r io.Reader) (*Replay, error) {
	x := &replayer{index: map[string]int{}, frozenUntil: map[string]int{}}
	err := sandbox.ReadJSONLines(name, r, func(n int, l eventLine) error {
		if err := x.line(&l); err != nil {
			return &sandbox.LineError{Name: name, Line: n, Err: err}
		}
		return nil
	}, func(_ int, err error) error {
		return fmt.Errorf("%s: %w", name, err)
	})
	if err != nil {
		return nil, err
	}
	if x.overall == nil {
		return nil, fmt.Errorf("%s: no run header: not the events.jsonl of a sandbox run", name)
	}
	x.endEpoch()
	x.countFrozen(x.rp.Header.Epochs)
	x.rp.Summary = x.overall.Report()
	for i := range x.rp.Agents {
		a := &x.rp.Agents[i]
		a.Reputation = x.rep[i]
		if a.Interactions > 0 {
			a.MeanP = x.sumP[i] / float64(a.Interactions)
		}
	}
	return &x.rp, nil
}

func (x *replayer) line(l *eventLine) error {
	if l.Type != sandbox.LineRun && x.overall == nil {
		return errors.New("a line before the run header")
	}
	switch l.Type {
	case sandbox.LineRun:
		if x.overall != nil || l.Payoff == nil {
			return errors.New("a second run header, or one without payoff")
		}
		x.rp.Header = sandbox.RunHeader{ScenarioID: l.ScenarioID, Seed: l.Seed, Epochs: l.Epochs, Payoff: *l.Payoff}
		x.pay = *l.Payoff
		x.overall, x.epoch = sandbox.NewMetrics(x.pay), sandbox.NewMetrics(x.pay)
		return nil
	case sandbox.LineAgent:
		x.index[l.Agent] = len(x.rp.Agents)
		x.rp.Agents = append(x.rp.Agents, AgentRow{ID: l.Agent, Type: l.Kind})
		x.rep = append(x.rep, l.Reputation)
		x.sumP = append(x.sumP, 0)
		return nil
	case sandbox.LineGovernance:
		return nil // its freezes are effect lines too
	}
	if l.Epoch < x.cur {
		return fmt.Errorf("epoch %d after epoch %d", l.Epoch, x.cur)
	}
	if l.Epoch > x.cur {
		x.endEpoch()
		x.cur = l.Epoch
	}
	switch l.Type {
	case sandbox.LineEffect:
		x.countFrozen(l.Epoch) // the epochs before
		if !l.EpochStart {
			x.countFrozen(l.Epoch + 1)
		}
		i, ok := x.index[l.Agent]
		if l.FreezeEpochs > 0 {
			x.frozenUntil[l.Agent] = max(x.frozenUntil[l.Agent], l.Epoch+1+l.FreezeEpochs)
		}
		if l.Unfreeze && x.frozenUntil[l.Agent] > l.Epoch {
			x.frozenUntil[l.Agent] = l.Epoch
		}
		if !ok {
			return nil
		}
		if l.Cost != 0 {
			x.rp.Agents[i].Payoff -= l.Cost
		}
		if l.Payout != 0 {
			x.rp.Agents[i].Payoff += l.Payout
		}
		x.rep[i] += l.RepDelta
		return nil
	case sandbox.LineInteraction:
		x.countFrozen(l.Epoch + 1)
		in := sandbox.Interaction{ID: l.ID, Initiator: l.Initiator, Counterparty: l.Counterparty, VHat: l.VHat, P: l.P, Accepted: l.Accepted,
			Tau: l.Tau, CA: l.CA, CB: l.CB, RA: l.RA, RB: l.RB, GroundTruth: l.GroundTruth, Epoch: l.Epoch, Step: l.Step}
		i, ok := x.index[in.Initiator]
		j, ok2 := x.index[in.Counterparty]
		if !ok || !ok2 {
			return fmt.Errorf("interaction %s between agents the file does not list (%s, %s)", in.ID, in.Initiator, in.Counterparty)
		}
		pay := x.pay.Payoff(in)
		payA, payB := settlePayoff(&in, pay, x.pay.WRep)
		a := &x.rp.Agents[i]
		a.Payoff += payA
		x.rp.Agents[j].Payoff += payB
		a.Interactions++
		x.sumP[i] += in.P
		if in.Accepted {
			a.Accepted++
		}
		x.rep[i] += in.RA
		x.rep[j] += in.RB
		x.epoch.Add(in)
		x.overall.Add(in)
		return nil
	}
	return fmt.Errorf("unknown type %q", l.Type)
}

// countFrozen counts, for each epoch from the last counted up to before
// upTo, the agents frozen at its start (after its epoch-start effects).
func (x *replayer) countFrozen(upTo int) {
	for ; x.started < upTo; x.started++ {
		for i, a := range x.rp.Agents {
			if x.frozenUntil[a.ID] > x.started {
				x.rp.Agents[i].FrozenEpochs++
			}
		}
	}
}

// endEpoch closes the epoch being read: its row when it had
// interactions, with the agents frozen at its end.
func (x *replayer) endEpoch() {
	if x.epoch == nil {
		return
	}
	r := x.epoch.Report()
	x.epoch = sandbox.NewMetrics(x.pay)
	if r.N == 0 {
		return
	}
	row := EpochRow{Epoch: x.cur + 1, Interactions: r.N, Accepted: r.Accepted, Toxicity: r.Toxicity, QualityGap: r.QualityGap,
		Welfare: r.TotalWelfare, NetWelfare: r.NetSocialWelfare, MeanP: r.MeanP}
	for _, a := range x.rp.Agents {
		if x.frozenUntil[a.ID] > x.cur {
			row.Frozen++
		}
	}
	x.rp.Epochs = append(x.rp.Epochs, row)
}
