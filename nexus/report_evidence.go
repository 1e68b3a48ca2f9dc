package nexus

import (
	"fmt"
	"strings"

	"github.com/swarm-dev/swarm/workspace"
)

// This file is the evidence part of report.md's view: every finding with
// its checked citations, the run's counts per model, the ground-truth
// match, and the consensus formula's note when evidence was not measured.

// evidenceView is report.md's "Evidence" section; nil without a workspace.
type evidenceView struct {
	Workspace string // the directory, as a code span
	Counts    workspace.Counts
	ByModel   []modelCountsRow
}

type modelCountsRow struct {
	Model string // escaped for a table cell
	workspace.Counts
}

// citeView is one checked citation, preformatted: Ref is `path:lines` as
// a Markdown code span (fabricated ones struck through), Note says the
// state and why.
type citeView struct {
	Ref, Note string
}

// groundTruthView is report.md's "Ground truth" section.
type groundTruthView struct {
	File               string
	Recall, Precision  string
	Defects, Found     int
	Findings, Matching int
	Missed             []string // as code spans
	ByDefect           []defectRow
}

// newEvidenceView builds the Evidence section of a run that measured its
// evidence (res.Evidence set), else returns nil.
func newEvidenceView(res *Result) *evidenceView {
	if res.Evidence == nil {
		return nil
	}
	v := &evidenceView{Counts: *res.Evidence}
	if res.Workspace != nil {
		v.Workspace = mdCode(res.Workspace.Dir)
	}
	for _, m := range sortedCounts(res.EvidenceByModel) {
		v.ByModel = append(v.ByModel, modelCountsRow{Model: mdCell(m.Name), Counts: m.Counts})
	}
	return v
}

// newCiteView formats one checked citation: verified `path:lines`;
// fabricated ~~`path:lines`~~ named as such, with the quote it claimed;
// unverifiable marked, with why.
func newCiteView(c workspace.Check) citeView {
	ref := mdCode(c.Citation.Ref())
	why := ""
	if r := oneLine(c.Reason); r != "" {
		why = ": " + mdText(r)
	}
	switch c.State {
	case workspace.Verified:
		return citeView{Ref: ref, Note: "verified"}
	case workspace.Fabricated:
		note := "**fabricated**" + why
		if q := oneLine(c.Quote); q != "" {
			note += "; it quoted " + mdCode(truncate(q, 80))
		}
		return citeView{Ref: "~~" + ref + "~~", Note: note}
	default:
		return citeView{Ref: ref, Note: "*unverifiable*" + why}
	}
}

// newGroundTruthView is report.md's "Ground truth" section, nil without one.
func newGroundTruthView(res *Result) *groundTruthView {
	g := res.GroundTruth
	if g == nil {
		return nil
	}
	v := &groundTruthView{File: mdCode(g.File), Defects: g.Defects, Found: g.Found, Findings: g.Findings, Matching: g.Matching,
		Recall: ratio(g.Recall, g.Found, g.Defects, "no planted defect"), Precision: ratio(g.Precision, g.Matching, g.Findings, "no finding")}
	for _, id := range g.Missed {
		v.Missed = append(v.Missed, mdCode(id))
	}
	v.ByDefect = newDefectRows(res)
	return v
}

// ratio formats a share as "k of n (p%)", or says why there is none.
func ratio(p *float64, k, n int, none string) string {
	if p == nil {
		return "– (" + none + ")"
	}
	return fmt.Sprintf("%d of %d (%.1f%%)", k, n, 100**p)
}

// formulaNote says, under the Shadow results table, that the consensus
// formula ran without its evidence term ("" when evidence was measured or
// no bundle was weighed).
func formulaNote(res *Result) string {
	if res.Evidence != nil {
		return ""
	}
	why := "no workspace"
	if res.Workspace != nil {
		why = "the run ended before its citations were checked"
	}
	for _, o := range res.Bundles {
		if !o.Failed && o.Tier != "" {
			return "formula: evidence not measured (" + why + "); its weight is spread over confidence, scope and coverage"
		}
	}
	return ""
}

// longestBackticks is the longest run of backticks in s: a Markdown fence
// around s must be longer.
func longestBackticks(s string) int {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// mdCode renders s as one Markdown code span on one line: line breaks
// become spaces and the fence is longer than any run of backticks inside.
func mdCode(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	longest := longestBackticks(s)
	fence := strings.Repeat("`", longest+1)
	if longest > 0 || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// mdCell makes s safe in a table cell: one line, pipes escaped.
func mdCell(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }

// mdText makes s safe as inline text: one line, pipes escaped, and the
// characters that would open emphasis, strike-through or code escaped.
func mdText(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "~", `\~`, "`", "\\`").Replace(oneLine(s))
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
