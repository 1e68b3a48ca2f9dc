package economy

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// MissionInput is the file of `swarm sandbox econ mission`.
type MissionInput struct {
	Config *struct {
		MinParticipants *int `yaml:"min_participants"`
	} `yaml:"config"`
	Pool            *float64            `yaml:"pool"`
	DeadlineEpoch   *int                `yaml:"deadline_epoch"` // nil: 10
	Coordinator     string              `yaml:"coordinator"`
	Join            []string            `yaml:"join"`
	Objectives      []ObjectiveInput    `yaml:"objectives"`
	Interactions    []InteractionInput  `yaml:"interactions"`
	Contributions   []ContributionInput `yaml:"contributions"`
	EvaluateAtEpoch *int                `yaml:"evaluate_at_epoch"`
}

// ObjectiveInput is one objective of a MissionInput; a field left out
// takes its default (metric avg_p, target 0.7, weight 1).
type ObjectiveInput struct {
	ID     string   `yaml:"id"`
	Metric *string  `yaml:"metric"`
	Target *float64 `yaml:"target"`
	Weight *float64 `yaml:"weight"`
}

// ContributionInput says that an agent contributed an interaction.
type ContributionInput struct {
	Agent       string `yaml:"agent"`
	Interaction string `yaml:"interaction"`
}

// MissionReport is the result of a mission file.
type MissionReport struct {
	Score          *float64                  `json:"score,omitempty"` // absent: no objectives
	Status         string                    `json:"status"`
	Objectives     []ObjectiveReport         `json:"objectives"`
	Payouts        Ordered[Ordered[float64]] `json:"payouts"` // rule → agent → amount
	FreeRiderIndex *float64                  `json:"free_rider_index,omitempty"`
}

// ObjectiveReport is one objective with its actual value.
type ObjectiveReport struct {
	ID     string  `json:"id"`
	Metric string  `json:"metric"`
	Target float64 `json:"target"`
	Weight float64 `json:"weight"`
	Actual float64 `json:"actual"`
	Met    bool    `json:"met"`
}

// MissionMetrics are the metrics a mission objective may name.
func MissionMetrics() []string {
	return []string{MetricAvgP, MetricMinP, MetricTotalCount, MetricAcceptanceRate, MetricTotalWelfare}
}

// ReadMissionFile reads a mission file (name names it in errors) and
// evaluates it.
func ReadMissionFile(name string, r io.Reader) (*MissionReport, error) {
	return evaluateFile(name, r, &MissionInput{}, (*MissionInput).Evaluate)
}

// Evaluate checks the input, runs the mission and pays it out under every
// reward rule.
func (f *MissionInput) Evaluate() (*MissionReport, error) {
	cfg := DefaultMissionConfig()
	if f.Config != nil && f.Config.MinParticipants != nil {
		cfg.MinParticipants = *f.Config.MinParticipants
	}
	if err := cfg.Validate(); err != nil {
		return nil, configErr(err, "min_participants")
	}
	switch {
	case f.Pool == nil:
		return nil, fieldErr("pool", "missing (the reward pool, > 0)")
	case !(*f.Pool > 0):
		return nil, fieldErr("pool", "%v: the reward pool must be > 0", *f.Pool)
	case f.Coordinator == "":
		return nil, fieldErr("coordinator", "missing")
	case f.EvaluateAtEpoch == nil:
		return nil, fieldErr("evaluate_at_epoch", "missing")
	}
	deadline := 10
	if f.DeadlineEpoch != nil {
		deadline = *f.DeadlineEpoch
	}
	var objs []Objective
	for i, o := range f.Objectives {
		p := fmt.Sprintf("objectives[%d]", i)
		ob := Objective{ID: o.ID, Metric: MetricAvgP, Target: 0.7, Weight: 1}
		if o.ID == "" {
			return nil, fieldErr(p+".id", "missing")
		}
		if o.Metric != nil {
			if !slices.Contains(MissionMetrics(), *o.Metric) {
				return nil, fieldErr(p+".metric", "%q is not a metric (known: %s)", *o.Metric, strings.Join(MissionMetrics(), ", "))
			}
			ob.Metric = *o.Metric
		}
		if o.Target != nil {
			ob.Target = *o.Target
		}
		if o.Weight != nil {
			if *o.Weight < 0 {
				return nil, fieldErr(p+".weight", "%v is negative", *o.Weight)
			}
			ob.Weight = *o.Weight
		}
		objs = append(objs, ob)
	}
	var all []Interaction
	for i, in := range f.Interactions {
		x, err := in.check(fmt.Sprintf("interactions[%d]", i), true)
		if err != nil {
			return nil, err
		}
		all = append(all, x)
	}
	e, err := NewMissions(cfg)
	if err != nil {
		return nil, err
	}
	m, err := e.Propose(f.Coordinator, "mission", objs, *f.Pool, deadline, 0)
	if err != nil {
		return nil, err
	}
	for i, a := range f.Join {
		if a == "" {
			return nil, fieldErr(fmt.Sprintf("join[%d]", i), "empty agent name")
		}
		if err := e.Join(a, m.ID); err != nil {
			return nil, fieldErr(fmt.Sprintf("join[%d]", i), "%v", err)
		}
	}
	for i, c := range f.Contributions {
		p := fmt.Sprintf("contributions[%d]", i)
		if c.Agent == "" || c.Interaction == "" {
			return nil, fieldErr(p, "needs agent and interaction")
		}
		if err := e.RecordContribution(c.Agent, m.ID, c.Interaction); err != nil {
			if errors.Is(err, ErrNotActive) {
				err = fmt.Errorf("%w: %d of min_participants %d have joined", err, len(m.Participants()), cfg.MinParticipants)
			}
			return nil, fieldErr(p+".agent", "%s: %v", c.Agent, err)
		}
	}
	ev, err := e.Evaluate(m.ID, all, *f.EvaluateAtEpoch)
	if err != nil {
		return nil, err
	}
	out := &MissionReport{Score: optional(ev.Score, ev.Scored), Status: ev.Status, Objectives: []ObjectiveReport{}, Payouts: Ordered[Ordered[float64]]{}}
	for _, o := range ev.Objectives {
		out.Objectives = append(out.Objectives, ObjectiveReport{o.ID, o.Metric, o.Target, o.Weight, o.Actual, o.Met})
	}
	for _, rule := range []string{RewardEqual, RewardProportional, RewardShapley} {
		ps, err := e.DistributeRewardsBy(m.ID, all, rule)
		if err != nil {
			return nil, err
		}
		o := Ordered[float64]{}
		for _, p := range ps {
			o.Set(p.Agent, p.Amount)
		}
		out.Payouts.Set(rule, o)
	}
	out.FreeRiderIndex = optional(e.FreeRiderIndex(m.ID))
	return out, nil
}
