package economy

import (
	"errors"
	"fmt"
)

// Mission errors.
var (
	ErrUnknownMission  = errors.New("unknown mission")
	ErrMissionLimit    = errors.New("too many proposed or active missions")
	ErrNotAcceptingNew = errors.New("mission is not proposed or active")
	ErrNotActive       = errors.New("mission is not active")
	ErrNotParticipant  = errors.New("agent is not a participant")
	ErrBadPool         = errors.New("reward pool must be > 0")
)

// Reward distribution rules.
const (
	RewardEqual        = "equal"
	RewardProportional = "proportional"
	RewardShapley      = "shapley"
)

// Mission statuses.
const (
	MissionProposed  = "proposed"
	MissionActive    = "active"
	MissionSucceeded = "succeeded"
	MissionFailed    = "failed"
	MissionExpired   = "expired"
)

// Objective metrics the evaluation knows; any other name measures 0.
const (
	MetricAvgP           = "avg_p"
	MetricMinP           = "min_p"
	MetricTotalCount     = "total_count"
	MetricAcceptanceRate = "acceptance_rate"
	MetricTotalWelfare   = "total_welfare"
)

// MissionConfig configures the mission economy.
type MissionConfig struct {
	MinParticipants    int    // ≥ 1 (2)
	MaxActiveMissions  int    // ≥ 1 (5)
	RewardDistribution string // equal, proportional (default) or shapley
}

// DefaultMissionConfig is the reference's default.
func DefaultMissionConfig() MissionConfig {
	return MissionConfig{MinParticipants: 2, MaxActiveMissions: 5, RewardDistribution: RewardProportional}
}

// Validate checks the configuration.
func (c MissionConfig) Validate() error {
	switch {
	case c.MinParticipants < 1:
		return fmt.Errorf("%w: min_participants = %d, want ≥ 1", ErrInvalidConfig, c.MinParticipants)
	case c.MaxActiveMissions < 1:
		return fmt.Errorf("%w: max_active_missions = %d, want ≥ 1", ErrInvalidConfig, c.MaxActiveMissions)
	case c.RewardDistribution != RewardEqual && c.RewardDistribution != RewardProportional && c.RewardDistribution != RewardShapley:
		return fmt.Errorf("%w: reward_distribution = %q, want equal, proportional or shapley", ErrInvalidConfig, c.RewardDistribution)
	}
	return nil
}

// Objective is one target a mission is scored against.
type Objective struct {
	ID     string
	Metric string  // one of the Metric constants
	Target float64 // met ⇔ actual ≥ target
	Weight float64
}

// Mission is one mission's state. Read it; change it only through Missions.
type Mission struct {
	ID            string
	Name          string
	Coordinator   string
	Objectives    []Objective
	Pool          float64
	DeadlineEpoch int
	CreatedEpoch  int
	Status        string
	participants  []string // insertion order
	isParticipant map[string]bool
	contributors  []string // order of first contribution
	contributions map[string][]string
}

// Participants returns the participants in joining order.
func (m *Mission) Participants() []string { return append([]string(nil), m.participants...) }

// Contributions returns agent's contributed interaction IDs in order.
func (m *Mission) Contributions(agent string) []string {
	return append([]string(nil), m.contributions[agent]...)
}

// Missions is a mission economy: a set of missions and their lifecycle.
// Mission IDs are "mission-1", "mission-2", … in proposal order.
type Missions struct {
	cfg      MissionConfig
	missions []*Mission
	byID     map[string]*Mission
}

// NewMissions returns an empty economy.
func NewMissions(cfg MissionConfig) (*Missions, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Missions{cfg: cfg, byID: map[string]*Mission{}}, nil
}

// Get returns a mission by ID.
func (e *Missions) Get(id string) (*Mission, bool) { m, ok := e.byID[id]; return m, ok }

// Propose creates a mission with coordinator as its first participant. It
// fails when MaxActiveMissions are already proposed or active (checked
// first) or when pool ≤ 0. Objectives and deadline are not validated.
func (e *Missions) Propose(coordinator, name string, objectives []Objective, pool float64, deadline, epoch int) (*Mission, error) {
	open := 0
	for _, m := range e.missions {
		if m.Status == MissionProposed || m.Status == MissionActive {
			open++
		}
	}
	if open >= e.cfg.MaxActiveMissions {
		return nil, ErrMissionLimit
	}
	if !(pool > 0) {
		return nil, ErrBadPool
	}
	m := &Mission{
		ID: fmt.Sprintf("mission-%d", len(e.missions)+1), Name: name, Coordinator: coordinator,
		Objectives: append([]Objective(nil), objectives...), Pool: pool, DeadlineEpoch: deadline, CreatedEpoch: epoch,
		Status: MissionProposed, isParticipant: map[string]bool{}, contributions: map[string][]string{},
	}
	m.add(coordinator)
	if 1 >= e.cfg.MinParticipants {
		m.Status = MissionActive
	}
	e.missions = append(e.missions, m)
	e.byID[m.ID] = m
	return m, nil
}

func (m *Mission) add(agent string) {
	if !m.isParticipant[agent] {
		m.isParticipant[agent] = true
		m.participants = append(m.participants, agent)
	}
}

// Join adds agent (idempotent). A proposed mission that reaches
// MinParticipants becomes active.
func (e *Missions) Join(agent, id string) error {
	m, ok := e.byID[id]
	if !ok {
		return ErrUnknownMission
	}
	if m.Status != MissionProposed && m.Status != MissionActive {
		return fmt.Errorf("%w (%s)", ErrNotAcceptingNew, m.Status)
	}
	m.add(agent)
	if m.Status == MissionProposed && len(m.participants) >= e.cfg.MinParticipants {
		m.Status = MissionActive
	}
	return nil
}

// RecordContribution credits interaction ix to agent. The mission must be
// active and agent a participant; there is no deadline check and
// duplicates are kept, as in the reference.
func (e *Missions) RecordContribution(agent, id, ix string) error {
	m, ok := e.byID[id]
	if !ok {
		return ErrUnknownMission
	}
	if m.Status != MissionActive {
		return fmt.Errorf("%w (%s)", ErrNotActive, m.Status)
	}
	if !m.isParticipant[agent] {
		return ErrNotParticipant
	}
	if _, seen := m.contributions[agent]; !seen {
		m.contributors = append(m.contributors, agent)
	}
	m.contributions[agent] = append(m.contributions[agent], ix)
	return nil
}

// ObjectiveResult is one objective's evaluation.
type ObjectiveResult struct {
	Objective
	Actual float64
	Met    bool
}

// Evaluation is the result of Evaluate.
type Evaluation struct {
	MissionID string
	// Score is Σ w·(met ? 1 : actual/target) / Σw. It is 0 when Σw ≤ 0 (no
	// objectives), as in the reference, and Scored is then false.
	Score              float64
	Scored             bool
	Objectives         []ObjectiveResult
	AllMet             bool
	TotalContributions int
	Participants       int
	Status             string
}

// Evaluate measures the mission's objectives over the interactions of all
// (in its order) that some participant contributed, and updates the
// status: all met → succeeded (from any status; vacuously with no
// objectives), else epoch ≥ deadline → failed.
func (e *Missions) Evaluate(id string, all []Interaction, epoch int) (Evaluation, error) {
	m, ok := e.byID[id]
	if !ok {
		return Evaluation{}, ErrUnknownMission
	}
	credited := map[string]bool{}
	total := 0
	for _, a := range m.contributors {
		for _, ix := range m.contributions[a] {
			credited[ix] = true
			total++
		}
	}
	var ps []float64
	accepted := 0
	for _, in := range all {
		if credited[in.ID] {
			ps = append(ps, in.P)
			if in.Accepted {
				accepted++
			}
		}
	}
	metric := func(name string) float64 {
		if len(ps) == 0 {
			return 0
		}
		n := float64(len(ps))
		switch name {
		case MetricAvgP:
			s := 0.0
			for _, p := range ps {
				s += p
			}
			return s / n
		case MetricMinP:
			lo := ps[0]
			for _, p := range ps[1:] {
				lo = min(lo, p)
			}
			return lo
		case MetricTotalCount:
			return n
		case MetricAcceptanceRate:
			return float64(accepted) / n
		case MetricTotalWelfare:
			s := 0.0
			for _, p := range ps {
				s += 2*p - (1 - p)
			}
			return s
		}
		return 0
	}
	ev := Evaluation{MissionID: id, AllMet: true, TotalContributions: total, Participants: len(m.participants)}
	var num, den float64
	for _, o := range m.Objectives {
		a := metric(o.Metric)
		r := ObjectiveResult{Objective: o, Actual: a, Met: a >= o.Target}
		ev.Objectives = append(ev.Objectives, r)
		term := a / max(o.Target, 1e-10)
		if r.Met {
			term = 1
		} else {
			ev.AllMet = false
		}
		num += o.Weight * term
		den += o.Weight
	}
	if den > 0 {
		ev.Score, ev.Scored = num/den, true
	}
	switch {
	case ev.AllMet:
		m.Status = MissionSucceeded
	case epoch >= m.DeadlineEpoch:
		m.Status = MissionFailed
	}
	ev.Status = m.Status
	return ev, nil
}

// ExpireMissions marks proposed and active missions whose deadline has come
// (epoch ≥ deadline) expired and returns their IDs.
func (e *Missions) ExpireMissions(epoch int) []string {
	var ids []string
	for _, m := range e.missions {
		if (m.Status == MissionProposed || m.Status == MissionActive) && epoch >= m.DeadlineEpoch {
			m.Status = MissionExpired
			ids = append(ids, m.ID)
		}
	}
	return ids
}

// Payout is one agent's reward.
type Payout struct {
	Agent  string
	Amount float64
}

// DistributeRewards returns the payouts of a succeeded mission with
// contributions under the configured rule (nil otherwise). It changes no
// state: the caller credits the payouts and may call it again.
func (e *Missions) DistributeRewards(id string, all []Interaction) ([]Payout, error) {
	return e.DistributeRewardsBy(id, all, e.cfg.RewardDistribution)
}

// DistributeRewardsBy is DistributeRewards under an explicit rule.
func (e *Missions) DistributeRewardsBy(id string, all []Interaction, rule string) ([]Payout, error) {
	m, ok := e.byID[id]
	if !ok {
		return nil, ErrUnknownMission
	}
	if m.Status != MissionSucceeded || len(m.contributors) == 0 {
		return nil, nil
	}
	byID := make(map[string]float64, len(all))
	for _, in := range all { // the last entry of a repeated ID wins
		byID[in.ID] = in.P
	}
	P := m.Pool
	var out []Payout
	switch rule {
	case RewardEqual:
		n := float64(len(m.contributors))
		for _, a := range m.contributors {
			out = append(out, Payout{a, P / n})
		}
	case RewardProportional:
		scores := make([]float64, len(m.contributors))
		total := 0.0
		for i, a := range m.contributors {
			sum, cnt := 0.0, 0
			for _, ix := range m.contributions[a] {
				if p, ok := byID[ix]; ok {
					sum += p
					cnt++
				}
			}
			if cnt > 0 {
				scores[i] = float64(cnt) * (sum / float64(cnt))
			}
			total += scores[i]
		}
		if total == 0 {
			return nil, nil
		}
		for i, a := range m.contributors {
			if scores[i] > 0 {
				out = append(out, Payout{a, scores[i] / total * P})
			}
		}
	case RewardShapley:
		var union []string
		inUnion := map[string]bool{}
		for _, a := range m.contributors {
			for _, ix := range m.contributions[a] {
				if !inUnion[ix] {
					inUnion[ix] = true
					union = append(union, ix)
				}
			}
		}
		meanOver := func(skip map[string]bool) float64 {
			s, n := 0.0, 0
			for _, ix := range union {
				if p, ok := byID[ix]; ok && !skip[ix] {
					s += p
					n++
				}
			}
			if n == 0 {
				return 0
			}
			return s / float64(n)
		}
		full := meanOver(nil)
		mv := make([]float64, len(m.contributors))
		sum := 0.0
		for i, a := range m.contributors {
			own := map[string]bool{}
			for _, ix := range m.contributions[a] {
				own[ix] = true
			}
			mv[i] = max(0, full-meanOver(own)) + float64(len(m.contributions[a]))/float64(max(len(union), 1))
			sum += mv[i]
		}
		for i, a := range m.contributors {
			amt := P / float64(len(m.contributors))
			if sum != 0 {
				amt = mv[i] / sum * P
			}
			out = append(out, Payout{a, amt})
		}
	default:
		return nil, fmt.Errorf("%w: reward rule %q", ErrInvalidConfig, rule)
	}
	return out, nil
}

// FreeRiderIndex is the Gini of the participants' contribution counts
// (participants who never contributed count 0). ok is false for an unknown
// mission or one without contributions: the index is then undefined (the
// reference returns 0).
func (e *Missions) FreeRiderIndex(id string) (float64, bool) {
	m, found := e.byID[id]
	if !found || len(m.contributors) == 0 {
		return 0, false
	}
	counts := make([]float64, len(m.participants)-len(m.contributors), len(m.participants))
	for _, a := range m.contributors {
		counts = append(counts, float64(len(m.contributions[a])))
	}
	return Gini(counts)
}
