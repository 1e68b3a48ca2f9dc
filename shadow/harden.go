package shadow

import (
	"context"
	"fmt"
	"strings"

	"github.com/swarm-dev/swarm/vocab"
)

// HardeningConfig controls hardening. It is also the shadow_scoring.hardening
// section of swarm's configuration (nexus.HardeningConfig is this type).
type HardeningConfig struct {
	Enabled   bool    `yaml:"enabled" json:"enabled"`
	MaxCycles int     `yaml:"max_cycles" json:"max_cycles"`
	Threshold float64 `yaml:"threshold" json:"threshold"` // harden when score > Threshold (strict)
}

// HardeningResult is the outcome of hardening one bundle.
type HardeningResult struct {
	Cycles       int         `json:"cycles_completed"`
	MaxCycles    int         `json:"max_cycles"`
	InitialScore float64     `json:"initial_shadow_score"`
	FinalScore   float64     `json:"final_shadow_score"`
	Velocity     float64     `json:"hardening_velocity"`
	MaxReveal    string      `json:"max_reveal,omitempty"`            // the spec's reveal level reached: "message" once a cycle ran
	Revealed     int         `json:"max_revealed_failures,omitempty"` // most failure messages shown in one cycle
	Kept         []bool      `json:"kept"`                            // per cycle: revision kept (not worse)
	Final        Evaluation  `json:"-"`
	FinalBundle  BundleInput `json:"-"`
}

// Reviser asks the bundle's commander for a revision. feedback is only the
// heading and "- [sc-ID] message" lines.
type Reviser func(ctx context.Context, b BundleInput, feedback string) (BundleInput, error)

// FeedbackFor renders the hardening feedback for an evaluation: a heading
// and one "- [sc-ID] message" line per failed criterion. Nothing else about
// the criteria is revealed.
func FeedbackFor(ev Evaluation) string {
	var b strings.Builder
	b.WriteString(vocab.FeedbackHeading + "\n")
	for _, v := range ev.Verdicts {
		if v.Status != "pass" {
			fmt.Fprintf(&b, "%s%s] %s\n", vocab.FeedbackItemPrefix, v.ID, oneLine(v.Message))
		}
	}
	return b.String()
}

// Harden runs up to MaxCycles revise/re-judge cycles while the score is
// above the threshold, always against the same sealed criteria. A revision
// that scores worse is discarded (the earlier bundle and score are kept).
// Velocity = (initial − final) / cycles.
func Harden(ctx context.Context, c HardeningConfig, j *Judge, env *Envelope, b BundleInput, initial Evaluation, revise Reviser) (HardeningResult, error) {
	res := HardeningResult{MaxCycles: c.MaxCycles, InitialScore: initial.Score, FinalScore: initial.Score, Final: initial, FinalBundle: b}
	if !c.Enabled {
		return res, nil
	}
	cur, curEv := b, initial
	for cycle := 0; cycle < c.MaxCycles && curEv.Score > c.Threshold; cycle++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		// Feedback shows each failed criterion's id (its test name) and
		// the judge's scrubbed message: the spec's "message" level.
		res.MaxReveal = RevealMessage
		res.Revealed = max(res.Revealed, curEv.Failed)
		nb, err := revise(ctx, cur, FeedbackFor(curEv))
		if err != nil {
			return res, fmt.Errorf("hardening cycle %d: revise: %w", cycle+1, err)
		}
		ev, err := j.Evaluate(ctx, env, nb)
		if err != nil {
			return res, fmt.Errorf("hardening cycle %d: re-judge: %w", cycle+1, err)
		}
		res.Cycles++
		keep := ev.Score <= curEv.Score
		res.Kept = append(res.Kept, keep)
		if keep {
			cur, curEv = nb, ev
		}
	}
	res.Final, res.FinalBundle, res.FinalScore = curEv, cur, curEv.Score
	if res.Cycles > 0 {
		res.Velocity = (res.InitialScore - res.FinalScore) / float64(res.Cycles)
	}
	return res, nil
}
