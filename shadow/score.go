package shadow

import (
	"cmp"
	"fmt"
	"math"
	"sort"

	"github.com/swarm-dev/swarm/internal/stats"
)

// Level is a Shadow Score level.
type Level string

// Levels.
const (
	LevelPerfect     Level = "perfect"
	LevelMinor       Level = "minor"
	LevelModerate    Level = "moderate"
	LevelSignificant Level = "significant"
	LevelCritical    Level = "critical"
	// LevelNone is the aggregate level of a run in which no bundle was
	// judged: nothing was measured, so nothing is claimed.
	LevelNone Level = "none"
)

// Score is failed / total × 100 rounded to one decimal, half away from zero.
// Zero criteria score 0.0.
func Score(failed, total int) float64 {
	if total <= 0 {
		return 0
	}
	return math.Round(float64(failed)*1000/float64(total)) / 10
}

// LevelOf maps a rounded score to its level.
func LevelOf(score float64) Level {
	switch {
	case score <= 0:
		return LevelPerfect
	case score <= 15:
		return LevelMinor
	case score <= 30:
		return LevelModerate
	case score <= 50:
		return LevelSignificant
	default:
		return LevelCritical
	}
}

// Indicator is the level's emoji.
func (l Level) Indicator() string {
	switch l {
	case LevelPerfect:
		return "✅"
	case LevelMinor:
		return "🟢"
	case LevelModerate:
		return "🟡"
	case LevelSignificant:
		return "🟠"
	case LevelCritical:
		return "🔴"
	case LevelNone:
		return "–"
	}
	return "❔"
}

// Aggregate returns the median and mean of per-bundle scores. It has no
// answer for zero scores and returns 0, 0 then: callers that may have nothing
// to aggregate use Summarize, which says so.
func Aggregate(scores []float64) (median, mean float64) {
	if len(scores) == 0 {
		return 0, 0
	}
	// The mean adds the scores in ascending order, as it always has (the
	// last digit of a printed mean depends on the order).
	s := append([]float64(nil), scores...)
	sort.Float64s(s)
	return stats.Median(s), stats.Mean(s)
}

// Summary aggregates the Shadow Scores of the bundles that were judged
// against the number of bundles planned.
type Summary struct {
	Planned int `json:"planned"`
	Scored  int `json:"scored"`
	// Median and Mean are nil when no bundle was judged: absent, never 0.
	Median *float64 `json:"median"`
	Mean   *float64 `json:"mean"`
	// Level is the median's level, or LevelNone when no bundle was judged.
	Level Level `json:"level"`
}

// Complete reports whether every planned bundle was judged (and at least one was).
func (s Summary) Complete() bool { return s.Scored > 0 && s.Scored >= s.Planned }

// Summarize aggregates scores, one per judged bundle, out of planned
// bundles. Zero scores give no median, no mean and LevelNone: a run that
// judged nothing is never read as perfect.
func Summarize(scores []float64, planned int) Summary {
	s := Summary{Planned: max(planned, len(scores)), Scored: len(scores), Level: LevelNone}
	if len(scores) == 0 {
		return s
	}
	med, mean := Aggregate(scores)
	s.Median, s.Mean, s.Level = &med, &mean, LevelOf(med)
	return s
}

// Gate actions.
const (
	ActionProceed    = "proceed"
	ActionWarn       = "warn"
	ActionQuarantine = "quarantine"
	ActionReject     = "reject"
)

// GateDecision is the Shadow Gate's verdict on a bundle.
type GateDecision struct {
	Action string `json:"action"`
	Reason string `json:"reason"`
}

// Gate: ≤ 15 proceed; ≤ 30 proceed with the report attached and a warning;
// ≤ 50 quarantine (re-reviewed with the failure messages); > 50 rejected.
func Gate(score float64) GateDecision {
	switch {
	case score <= 15:
		return GateDecision{ActionProceed, "shadow score ≤ 15: proceed"}
	case score <= 30:
		return GateDecision{ActionWarn, "shadow score in (15, 30]: proceed with the report attached"}
	case score <= 50:
		return GateDecision{ActionQuarantine, "shadow score in (30, 50]: quarantined for re-review with the failure messages"}
	default:
		return GateDecision{ActionReject, "shadow score > 50: rejected from synthesis"}
	}
}

// Policies for a bundle with a critical leak (a credential or private key
// redacted from the bundle or its workers' results), config key
// shadow_scoring.gate.on_critical_leak.
const (
	LeakQuarantine = "quarantine" // re-reviewed; in synthesis only if the re-review passes (default)
	LeakBlock      = "block"      // rejected from synthesis
	LeakWarn       = "warn"       // proceeds with a warning
)

// LeakPolicies lists the valid policies.
var LeakPolicies = []string{LeakQuarantine, LeakBlock, LeakWarn}

var actionRank = map[string]int{ActionProceed: 0, ActionWarn: 1, ActionQuarantine: 2, ActionReject: 3}

// Passed reports whether the decision lets its bundle through the gate:
// proceed, or proceed with a warning. No decision (nil) is no pass.
func (g *GateDecision) Passed() bool {
	return g != nil && (g.Action == ActionProceed || g.Action == ActionWarn)
}

// Rank orders decisions from best (proceed, 0) to worst (reject, 3); no
// decision, or an action the gate does not take, ranks after them all (4).
func (g *GateDecision) Rank() int {
	if g == nil {
		return len(actionRank)
	}
	if r, ok := actionRank[g.Action]; ok {
		return r
	}
	return len(actionRank)
}

// GateLeaks folds critical leaks into a bundle's gate decision (nil when the
// bundle was not scored): with critical > 0 the policy's action applies
// unless the score's decision is already stricter. An empty policy is
// LeakQuarantine.
func GateLeaks(g *GateDecision, critical int, policy string) *GateDecision {
	if critical <= 0 {
		return g
	}
	var leak GateDecision
	reason := fmt.Sprintf("%d critical leak(s) redacted (on_critical_leak: %s)", critical, cmp.Or(policy, LeakQuarantine))
	switch policy {
	case LeakBlock:
		leak = GateDecision{ActionReject, reason + ": rejected from synthesis"}
	case LeakWarn:
		leak = GateDecision{ActionWarn, reason + ": proceed with a warning"}
	default:
		leak = GateDecision{ActionQuarantine, reason + ": quarantined for re-review"}
	}
	if g == nil || actionRank[leak.Action] > actionRank[g.Action] {
		return &leak
	}
	out := *g
	out.Reason += "; " + reason
	return &out
}
