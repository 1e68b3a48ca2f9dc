package compare

import (
	"fmt"
	"strings"

	"github.com/swarm-dev/swarm/internal/stats"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/workspace"
)

// EvidenceStats is a contender's citations over its repeats, checked
// against the comparison's workspace. It exists only when the comparison
// had a workspace.
type EvidenceStats struct {
	// Counts sums the contender's own citations (Result.EvidenceByModel of
	// its model) over the repeats that recorded evidence.
	workspace.Counts
	// Repeats is how many of its repeats recorded evidence.
	Repeats int `json:"repeats"`
	// FabricationRate is Fabricated / Cited, with its 95% Wilson score
	// interval; both null when the contender cited nothing (nothing was
	// measured: never a perfect 0%).
	FabricationRate *float64  `json:"fabrication_rate"`
	FabricationCI95 *Interval `json:"fabrication_ci95"`
}

// GroundTruthStats is how a contender's runs matched the planted defects
// of the comparison's ground truth. It exists only with a ground truth.
type GroundTruthStats struct {
	// Recall is the mean of the runs' recall over the RecallRepeats
	// repeats that had one (a ground truth with no defect has none); null
	// when none did. Precision likewise (a run with no finding has none).
	Recall           *float64 `json:"recall"`
	RecallRepeats    int      `json:"recall_repeats"`
	Precision        *float64 `json:"precision"`
	PrecisionRepeats int      `json:"precision_repeats"`
}

// Correlation is Pearson's r between the runs' Shadow Score and their
// recall, over contenders × repeats. A run counts only when it has a
// recall and every one of its planned bundles was judged (a failed
// bundle's Shadow Score of 100 is a penalty, not a measurement); Excluded
// counts the runs with a recall left out for that.
type Correlation struct {
	R        *float64 `json:"r"` // null: not enough data (Note says why)
	N        int      `json:"n"`
	Excluded int      `json:"excluded_runs"`
	Note     string   `json:"note"`
}

// correlationReading says how to read r; compare.md and compare.html show
// it beside the figure.
const correlationReading = "Pearson r between each run's Shadow Score and its recall of the planted defects, over every contender × repeat. " +
	"A lower Shadow Score is better and a higher recall is better, so when the sealed criteria reward finding the real defects the two move " +
	"against each other and r is negative (−1 at most); r near 0 says the Shadow Score did not track recall; a positive r says they disagree. " +
	"Runs with a failed or unjudged bundle are left out (their score holds a penalty of 100). With few runs r is a hint, not a finding."

// evidenceOf fills s's evidence and ground-truth figures from res: the
// contender's own citations (by its model, as the run's events name it)
// and the whole run's. Without a workspace the run has none and s keeps
// nil.
func evidenceOf(s *RunSummary, res *nexus.Result, model string) {
	if res.Evidence != nil {
		run := *res.Evidence
		own := res.EvidenceByModel[model] // zero: the contender cited nothing
		s.Evidence, s.RunEvidence = &own, &run
	}
	if res.GroundTruth != nil {
		m := res.GroundTruth.Match
		s.GroundTruth = &m
	}
}

// hasWorkspace reports whether the comparison had a workspace: the options
// say so, or a run recorded evidence (a report re-analysed from summaries).
func hasWorkspace(o Options, runs []RunSummary) bool {
	if o.Workspace != "" {
		return true
	}
	for _, s := range runs {
		if s.Evidence != nil || s.RunEvidence != nil {
			return true
		}
	}
	return false
}

// hasGroundTruth is hasWorkspace for the ground truth.
func hasGroundTruth(o Options, runs []RunSummary) bool {
	if o.GroundTruth != "" {
		return true
	}
	for _, s := range runs {
		if s.GroundTruth != nil {
			return true
		}
	}
	return false
}

// evidenceStats sums a contender's citations over its runs.
func evidenceStats(runs []RunSummary) *EvidenceStats {
	e := &EvidenceStats{}
	for _, s := range runs {
		if s.Evidence == nil {
			continue
		}
		e.Repeats++
		e.Counts = e.Counts.Plus(*s.Evidence)
	}
	if lo, hi, ok := stats.Wilson95(e.Fabricated, e.Cited); ok {
		rate := float64(e.Fabricated) / float64(e.Cited)
		e.FabricationRate, e.FabricationCI95 = &rate, &Interval{Lo: lo, Hi: hi}
	}
	return e
}

// untrusted says whether a contender's citations make it untrusted: its
// fabrication rate's 95% Wilson interval lies entirely above limit (a
// contender that cited nothing has no rate and is not flagged). The reason
// gives the rate, the interval and the limit.
func untrusted(e *EvidenceStats, limit float64) (bool, string) {
	if e == nil || e.FabricationRate == nil || e.FabricationCI95 == nil || !(e.FabricationCI95.Lo > limit) {
		return false, ""
	}
	return true, fmt.Sprintf("fabricated %d of %d citations (%s, 95%% CI [%s, %s]): the whole interval lies above the limit %s (compare.max_fabrication_rate)",
		e.Fabricated, e.Cited, pct1(*e.FabricationRate), pct1(e.FabricationCI95.Lo), pct1(e.FabricationCI95.Hi), pct1(limit))
}

// groundTruthStats averages a contender's recall and precision over the
// runs that measured them.
func groundTruthStats(runs []RunSummary) *GroundTruthStats {
	g := &GroundTruthStats{}
	var rec, prec []float64
	for _, s := range runs {
		if s.GroundTruth == nil {
			continue
		}
		if s.GroundTruth.Recall != nil {
			rec = append(rec, *s.GroundTruth.Recall)
		}
		if s.GroundTruth.Precision != nil {
			prec = append(prec, *s.GroundTruth.Precision)
		}
	}
	g.RecallRepeats, g.PrecisionRepeats = len(rec), len(prec)
	if len(rec) > 0 {
		m := stats.Mean(rec)
		g.Recall = &m
	}
	if len(prec) > 0 {
		m := stats.Mean(prec)
		g.Precision = &m
	}
	return g
}

// shadowRecallCorrelation is Correlation over runs.
func shadowRecallCorrelation(runs []RunSummary) *Correlation {
	c := &Correlation{}
	var xs, ys []float64
	for _, s := range runs {
		if s.GroundTruth == nil || s.GroundTruth.Recall == nil {
			continue
		}
		if len(s.Bundles) == 0 || len(s.Bundles) < len(plannedOf(s)) {
			c.Excluded++
			continue
		}
		xs, ys = append(xs, Score(s)), append(ys, *s.GroundTruth.Recall)
	}
	c.N = len(xs)
	r, ok := stats.Pearson(xs, ys)
	switch {
	case ok:
		c.R = &r
		c.Note = fmt.Sprintf("r = %.2f over %d runs", r, c.N)
	case c.N < 3:
		c.Note = fmt.Sprintf("not enough data: %d runs with both a Shadow Score and a recall (need at least 3)", c.N)
	default:
		c.Note = fmt.Sprintf("not enough data: over %d runs the Shadow Score or the recall never varied, so r is undefined", c.N)
	}
	return c
}

// evidenceRow is one contender's evidence and ground-truth cells, every
// number formatted ("—" where nothing was measured); compare.md, compare.html
// and the terminal table show the same strings.
type evidenceRow struct {
	Rank                                      int
	Model                                     string
	NoResult                                  bool
	Cited, Verified, Unverifiable, Fabricated int
	Rate, CI                                  string
	Recall, Precision                         string
}

// evidenceView is the evidence section of a report: nil rows without a
// workspace.
type evidenceView struct {
	Workspace, GroundTruth string
	Rows                   []evidenceRow
	HasTruth               bool
	Correlation            string // the figure, or why there is none
	Reading                string
}

func pct1(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// measuredMean is a mean over the n of total repeats that measured it.
func measuredMean(m *float64, n, total int) string {
	if m == nil {
		return fmt.Sprintf("— (0 of %d repeats measured)", total)
	}
	return fmt.Sprintf("%s (%d of %d repeats)", pct1(*m), n, total)
}

func (r *Report) evidenceView() evidenceView {
	v := evidenceView{Workspace: r.Workspace, GroundTruth: r.GroundTruth, HasTruth: r.Correlation != nil, Reading: correlationReading}
	for _, c := range r.Contenders {
		if c.Evidence == nil && c.GroundTruth == nil {
			continue
		}
		row := evidenceRow{Rank: c.Rank, Model: c.Model, NoResult: c.NoResult, Rate: "—", CI: "—", Recall: "—", Precision: "—"}
		if e := c.Evidence; e != nil {
			row.Cited, row.Verified, row.Unverifiable, row.Fabricated = e.Cited, e.Verified, e.Unverifiable, e.Fabricated
			if e.FabricationRate != nil {
				row.Rate = fmt.Sprintf("%s (%d of %d)", pct1(*e.FabricationRate), e.Fabricated, e.Cited)
				row.CI = fmt.Sprintf("[%s, %s]", pct1(e.FabricationCI95.Lo), pct1(e.FabricationCI95.Hi))
			} else {
				row.Rate = "— (nothing cited)"
			}
		}
		if g := c.GroundTruth; g != nil {
			row.Recall = measuredMean(g.Recall, g.RecallRepeats, len(c.Scores))
			row.Precision = measuredMean(g.Precision, g.PrecisionRepeats, len(c.Scores))
		}
		v.Rows = append(v.Rows, row)
	}
	if k := r.Correlation; k != nil {
		switch {
		case k.R != nil:
			v.Correlation = fmt.Sprintf("r = %+.2f over n = %d runs", *k.R, k.N)
		default:
			v.Correlation = k.Note
		}
		if k.Excluded > 0 {
			v.Correlation += fmt.Sprintf(" (%d run(s) with a failed or unjudged bundle left out)", k.Excluded)
		}
	}
	return v
}

// evidenceTable is the terminal lines of the evidence section ("" without
// a workspace).
func (r *Report) evidenceTable() string {
	v := r.evidenceView()
	if v.Rows == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "evidence (workspace %s): fabricated / cited over every repeat, 95%% Wilson interval; — when nothing was cited\n", v.Workspace)
	for _, row := range v.Rows {
		name := row.Model
		if row.NoResult {
			name += " (no result)"
		}
		fmt.Fprintf(&b, "  %-4d %-26s cited %4d  verified %4d  unverifiable %4d  fabricated %4d  rate %s %s", row.Rank, name, row.Cited, row.Verified, row.Unverifiable, row.Fabricated, row.Rate, row.CI)
		if v.HasTruth {
			fmt.Fprintf(&b, "  recall %s  precision %s", row.Recall, row.Precision)
		}
		b.WriteString("\n")
	}
	if v.HasTruth {
		fmt.Fprintf(&b, "Shadow Score vs recall: %s. A lower Shadow Score going with higher recall shows as a negative r.\n", v.Correlation)
	}
	return b.String()
}
