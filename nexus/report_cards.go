package nexus

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// This file is the reviewer's part of report.md's view: the finding cards
// (findings.go), the recommendation or the plain statement that there is
// none, the risk and report of each domain, the conflicts, the safety
// section and the per-defect ground-truth table.

// cardView is one finding card, preformatted.
type cardView struct {
	N                        int
	Title, Priority, Efforts string
	Domains                  string // "architecture, testing"
	Support                  string // "2 verified, 1 fabricated"; "no citation"; "" without a workspace
	Defects                  string // code spans; "" without a match or a ground truth
	Sources                  []sourceView
	Cites                    []cardCiteView
}

// sourceView is one domain's finding merged into a card.
type sourceView struct {
	Domain, Gate, Detail string
}

// cardCiteView is one checked citation of a card: Ref and Note as in
// citeView; Quote holds the quoted lines of a verified citation as a fenced
// code block, each line indented for the list item ("" otherwise).
type cardCiteView struct {
	Ref, Note, Quote string
}

// cardSection is a titled list of cards with what a reviewer must know
// about them.
type cardSection struct {
	Title, Note string
	Warning     bool // the note is a warning: not a recommendation
	Cards       []cardView
}

// newCardSections groups the run's finding cards: recommended, without
// verified evidence, and from bundles that did not pass the gate. Empty
// groups are left out; nil when no bundle had a finding.
func newCardSections(res *Result, cards []findingCard) []cardSection {
	sections := []cardSection{
		{Title: "Findings", Note: "Merged across domains (one card per finding, naming every domain that raised it), sorted by priority, then support."},
		{Title: "Findings without verified evidence", Warning: true,
			Note: "From bundles that passed the Shadow Gate, but none of their citations was verified: they did not feed the synthesis. Check them before acting."},
		{Title: "Work that did not pass the Shadow Gate", Warning: true,
			Note: "From bundles that were quarantined, rejected or not judged: never a recommendation, never fed to the synthesis. Shown so the work is not lost."},
	}
	from := "From bundles that passed the Shadow Gate"
	if !res.ShadowValid {
		// Without valid scoring only a run with scoring off has cards
		// here (inSynthesis): no gate checked them.
		from = "Shadow scoring did not gate this run (" + oneLine(res.ShadowReason) + "): these findings were not checked against sealed criteria. From every bundle delivered"
		sections[0].Warning = true
	}
	if res.Evidence != nil {
		sections[0].Note = from + ", each with at least one verified citation. " + sections[0].Note
	} else {
		sections[0].Note = from + ". " + sections[0].Note
	}
	idx := map[string]int{groupRecommended: 0, groupUnsupported: 1, groupRejected: 2}
	for _, c := range cards {
		s := &sections[idx[c.Group]]
		s.Cards = append(s.Cards, newCardView(len(s.Cards)+1, c, res.GroundTruth != nil))
	}
	var out []cardSection
	for _, s := range sections {
		if len(s.Cards) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func newCardView(n int, c findingCard, truth bool) cardView {
	v := cardView{N: n, Title: c.Title, Priority: cmp.Or(c.Priority, "–"), Efforts: cmp.Or(strings.Join(c.Efforts, " / "), "–"),
		Domains: strings.Join(c.Domains, ", ")}
	if c.measured {
		v.Support = supportText(c.Support)
	}
	if truth {
		var ids []string
		for _, d := range c.Defects {
			ids = append(ids, mdCode(d))
		}
		v.Defects = "none"
		if len(ids) > 0 {
			v.Defects = strings.Join(ids, ", ")
		}
	}
	for _, s := range c.Sources {
		sv := sourceView{Domain: s.Domain, Gate: cmp.Or(s.Gate, "no gate decision"), Detail: oneLine(s.Detail)}
		if i := slices.IndexFunc(v.Sources, func(x sourceView) bool { return x.Domain == sv.Domain && x.Detail == sv.Detail }); i >= 0 {
			continue
		}
		v.Sources = append(v.Sources, sv)
	}
	for _, k := range c.Cites {
		cv := newCiteView(k)
		x := cardCiteView{Ref: cv.Ref, Note: cv.Note}
		if k.State == workspace.Verified {
			x.Quote = quoteBlock(k.Quote, "  ")
		}
		v.Cites = append(v.Cites, x)
	}
	return v
}

// supportText says what a card's citations came to.
func supportText(n workspace.Counts) string {
	if n.Cited == 0 {
		return "no citation"
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{n.Verified, "verified"}, {n.Unverifiable, "unverifiable"}, {n.Fabricated, "fabricated"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return strings.Join(parts, ", ")
}

// quoteBlock renders a verified citation's quoted lines (as the run
// checked them) as a fenced code block, every line indented by indent. The
// fence is longer than any run of backticks in the quote.
func quoteBlock(quote, indent string) string {
	quote = strings.TrimRight(strings.ReplaceAll(quote, "\r\n", "\n"), "\n")
	if strings.TrimSpace(quote) == "" {
		return ""
	}
	fence := strings.Repeat("`", max(3, longestBackticks(quote)+1))
	var b strings.Builder
	b.WriteString(indent + fence + "\n")
	for _, l := range strings.Split(quote, "\n") {
		b.WriteString(indent + strings.TrimRight(l, "\r") + "\n")
	}
	b.WriteString(indent + fence)
	return b.String()
}

// noRecommendationView says plainly that no bundle passed the gate, and
// names the best rejected work.
type noRecommendationView struct {
	Why  string // "3 quarantined, 1 rejected, 1 failed"
	Best string // "`testing` (gate quarantine, Shadow Score 35.0%)"; "" when every bundle failed
	// BestSummary is the best rejected bundle's summary on one line.
	BestSummary string
	// Listed: the run has findings from bundles that did not pass.
	Listed bool
	// Unverified: bundles passed the gate (Passed of them) but the run
	// checked its evidence and none of their findings has a verified
	// citation, so nothing is recommended either.
	Unverified bool
	Passed     int
}

// newNoRecommendation is nil when a bundle passed the gate (or there are
// no bundles at all).
func newNoRecommendation(res *Result) *noRecommendationView {
	if len(res.Bundles) == 0 {
		return nil
	}
	if v := newNothingVerified(res); v != nil {
		return v
	}
	counts := map[string]int{}
	for _, o := range res.Bundles {
		switch {
		case passedGate(o):
			return nil
		case o.Failed:
			counts["failed"]++
		case o.Gate == nil:
			counts["not judged"]++
		case o.Gate.Action == shadow.ActionQuarantine:
			counts["quarantined"]++
		case o.Gate.Action == shadow.ActionReject:
			counts["rejected"]++
		default:
			counts[o.Gate.Action]++
		}
	}
	var parts []string
	for _, k := range []string{"quarantined", "rejected", "not judged", "failed"} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	v := &noRecommendationView{Why: strings.Join(parts, ", ")}
	for _, o := range res.Bundles {
		if !o.Failed && len(o.Bundle.Findings) > 0 {
			v.Listed = true
		}
	}
	if b := bestRejected(res.Bundles); b != nil {
		v.Best = mdCode(b.ID) + " (" + gateWords(b) + ")"
		v.BestSummary = strings.TrimRight(oneLine(b.Bundle.Summary), ".")
	}
	return v
}

// newNothingVerified is the no-recommendation view of a run that checked
// its evidence (a workspace mission) in which bundles passed the gate but
// none of their findings has a verified citation; nil otherwise.
func newNothingVerified(res *Result) *noRecommendationView {
	if res.Evidence == nil {
		return nil
	}
	passed := 0
	for _, o := range res.Bundles {
		if !passedGate(o) {
			continue
		}
		passed++
		if o.checks == nil {
			return nil // not checked: nothing to say about its evidence
		}
		for i := range o.Bundle.Findings {
			if o.findingVerified(i) {
				return nil
			}
		}
	}
	if passed == 0 {
		return nil
	}
	return &noRecommendationView{Unverified: true, Passed: passed}
}

// gateWords is a bundle's gate and score in words: "gate quarantine,
// Shadow Score 35.0%".
func gateWords(o *BundleOutcome) string {
	switch {
	case o.Gate == nil && o.ShadowScore == nil:
		return "not judged, no gate decision"
	case o.Gate == nil:
		return fmt.Sprintf("no gate decision, Shadow Score %.1f%%", *o.ShadowScore)
	case o.ShadowScore == nil:
		return "gate " + o.Gate.Action + ", not judged"
	}
	return fmt.Sprintf("gate %s, Shadow Score %.1f%%", o.Gate.Action, *o.ShadowScore)
}

// riskView is a domain's risk, computed from its findings and its gate.
type riskView struct {
	Domain, Level, Why string
}

// domainRisk computes the risk of o's domain: unknown when the bundle
// failed, was not judged while shadow scoring was on, or did not pass the
// gate (its findings are not trusted); else the highest priority among
// its findings (in a run that checked its evidence, those with a verified
// citation): high, medium or low, raised to at least medium by a gate
// warning. A bundle without a trusted finding is unknown when it had
// findings nobody could verify, low when it had none.
func domainRisk(o *BundleOutcome, measured bool) riskView {
	r := riskView{Domain: cmp.Or(o.Domain, o.ID), Level: "unknown"}
	switch {
	case o.Failed:
		r.Why = "the domain produced no bundle"
		return r
	case !passedGate(o):
		r.Why = "the bundle did not pass the Shadow Gate: " + gateWords(o)
		if o.Gate == nil && o.ShadowScore == nil {
			r.Why = "the bundle was not judged: no gate decision"
		}
		return r
	}
	counts := map[string]int{}
	trusted := 0
	for i, f := range o.Bundle.Findings {
		if measured && !o.findingVerified(i) {
			continue
		}
		trusted++
		counts[f.Priority]++
	}
	switch {
	case counts["high"] > 0:
		r.Level, r.Why = "high", plural(counts["high"], "high-priority finding")
	case counts["medium"] > 0:
		r.Level, r.Why = "medium", plural(counts["medium"], "medium-priority finding")
	case trusted > 0:
		r.Level, r.Why = "low", plural(trusted, "finding")+", none above low priority"
	case len(o.Bundle.Findings) > 0:
		r.Why = fmt.Sprintf("none of its %s rests on a verified citation", plural(len(o.Bundle.Findings), "finding"))
		return r
	default:
		r.Level, r.Why = "low", "no finding"
	}
	if measured && r.Why != "no finding" {
		r.Why += " with verified evidence"
	}
	if o.Gate != nil && o.Gate.Action == shadow.ActionWarn {
		if r.Level == "low" {
			r.Level = "medium"
		}
		r.Why += "; the Shadow Gate warned"
	}
	return r
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// domainView is one domain's report.
type domainView struct {
	ID, Model           string
	Failed              bool
	FailureClass, Error string
	Summary             string
	Score               string // the score with its scale; "" when not judged
	NoScore             string
	Gate                string // "warn: shadow score in (15, 30]: ..." ; "" without a decision
	InSynthesis         string
	Risk                riskView
	Failures            []string // "`sc-3`: message"
	Tier, Review        string
	Reviewers           []reviewerRow
	Evidence            []citeView // the bundle's own citations
	Leaks               int
}

// reviewerRow is one reviewer's card about a bundle.
type reviewerRow struct {
	Reviewer, Model, Kind string
	Total, Corrected      string
	Dissent, Conflicts    string // on one line; "–" when empty
}

func newDomainViews(res *Result) []domainView {
	var out []domainView
	measured := res.Evidence != nil
	for _, o := range res.Bundles {
		v := domainView{ID: o.ID, Model: o.Model, Failed: o.Failed, FailureClass: string(o.FailureClass), Error: oneLine(o.Error),
			Summary: oneLine(o.Bundle.Summary), InSynthesis: yesNo(o.InSynthesis), Risk: domainRisk(o, measured), Leaks: len(o.LeakReport)}
		if o.Failed {
			out = append(out, v)
			continue
		}
		switch {
		case o.ShadowScore != nil:
			v.Score = fmt.Sprintf("%.1f%% %s %s", *o.ShadowScore, shadow.Level(o.Level).Indicator(), o.Level)
			if o.Final != nil && o.Final.Total > 0 {
				v.Score += fmt.Sprintf(": %d of %d sealed criteria failed", o.Final.Failed, o.Final.Total)
			}
		case !res.ShadowValid && res.ShadowReason != "":
			v.NoScore = "none: " + oneLine(res.ShadowReason)
		default:
			v.NoScore = "none: the bundle was not judged"
		}
		if o.Gate != nil {
			v.Gate = o.Gate.Action
			if r := oneLine(o.Gate.Reason); r != "" {
				v.Gate += ": " + r
			}
		}
		if o.Final != nil {
			for _, vd := range o.Final.Verdicts {
				if vd.Status == "pass" {
					continue
				}
				msg := oneLine(vd.Message)
				if msg == "" {
					msg = "(no message)"
				}
				v.Failures = append(v.Failures, mdCode(vd.ID)+": "+msg)
			}
		}
		v.Tier, v.Review = o.Tier, fmt.Sprintf("%.2f", o.Review.Score)
		for _, rr := range bundleReviews(res.Reviews, o.ID) {
			row := reviewerRow{Reviewer: rr.Reviewer, Model: mdCell(rr.Model), Kind: "cross-review",
				Total: fmt.Sprintf("%.1f", rr.Total), Corrected: fmt.Sprintf("%.1f", rr.Corrected),
				Dissent: cmp.Or(mdCell(rr.Card.Dissent), "–"), Conflicts: cmp.Or(mdCell(strings.Join(rr.Card.Conflicts, "; ")), "–")}
			if rr.Quarantine {
				row.Kind = "quarantine re-review"
			}
			if rr.Weight < 1 {
				row.Kind += fmt.Sprintf(" (weight %.1f)", rr.Weight)
			}
			v.Reviewers = append(v.Reviewers, row)
		}
		if o.checks != nil {
			for _, c := range o.checks.own {
				v.Evidence = append(v.Evidence, newCiteView(c))
			}
		}
		out = append(out, v)
	}
	return out
}

// bundleReviews are the review records about bundle id, in their order.
func bundleReviews(recs []ReviewRecord, id string) []ReviewRecord {
	var out []ReviewRecord
	for _, r := range recs {
		if r.BundleID == id {
			out = append(out, r)
		}
	}
	return out
}

// conflictsView is report.md's "Conflicts and resolutions": the
// synthesizer's, the bundles whose reviewers ended in the CONFLICT tier
// with both sides, and the contradictions reviewers reported.
type conflictsView struct {
	Synthesis []Conflict
	Tiers     []tierConflict
	Reported  []string // "`bundle` (reviewer): point"
}

// tierConflict is a CONFLICT-tier bundle with both sides: the reviewers
// at or above the majority threshold and those below it.
type tierConflict struct {
	ID, Review   string
	For, Against []string
}

func (c conflictsView) None() bool {
	return len(c.Synthesis) == 0 && len(c.Tiers) == 0 && len(c.Reported) == 0
}

func newConflictsView(res *Result, majority float64) conflictsView {
	var v conflictsView
	if res.Synthesis != nil {
		for _, c := range res.Synthesis.Conflicts {
			v.Synthesis = append(v.Synthesis, Conflict{Topic: oneLine(c.Topic), Resolution: oneLine(c.Resolution)})
		}
	}
	for _, o := range res.Bundles {
		recs := bundleReviews(res.Reviews, o.ID)
		if o.Tier == TierConflict {
			t := tierConflict{ID: mdCode(o.ID), Review: fmt.Sprintf("%.2f", o.Review.Score)}
			for _, r := range recs {
				side := fmt.Sprintf("%s (%s) %.1f", r.Reviewer, r.Model, r.Corrected)
				if r.Quarantine {
					side += " in the quarantine re-review"
				}
				if d := oneLine(r.Card.Dissent); d != "" {
					side += ": " + d
				}
				if r.Corrected/10 >= majority {
					t.For = append(t.For, side)
				} else {
					t.Against = append(t.Against, side)
				}
			}
			v.Tiers = append(v.Tiers, t)
		}
		for _, r := range recs {
			for _, c := range r.Card.Conflicts {
				if c = oneLine(c); c != "" {
					v.Reported = append(v.Reported, fmt.Sprintf("%s (%s): %s", mdCode(o.ID), r.Reviewer, c))
				}
			}
		}
	}
	return v
}

// safetyView is report.md's "Safety" section: the read tools' refusals by
// kind, and the secrets redacted.
type safetyView struct {
	ToolCalls, Refused int
	Refusals           []refusalRow
	Leaks              []leakRow
	LeakTotal          int
	Critical           int
}

type refusalRow struct {
	Kind     string
	Count    int
	Examples string // "`../x` (worker-1, read_file): path leaves the root"; "–" when none kept
}

// leakRow is one detector's redactions over the run: how many, in which
// bundles, and up to three places.
type leakRow struct {
	Name, Kind, Severity string
	Count                int
	Bundles, Where       string
}

// leakRows groups the bundles' leak reports by detector, kind and
// severity: critical first, then the most frequent, then by name.
func leakRows(bundles []*BundleOutcome) (rows []leakRow, total, critical int) {
	type key struct{ name, kind, severity string }
	type group struct {
		n       int
		bundles []string
		where   []string
	}
	groups := map[key]*group{}
	var keys []key
	for _, o := range bundles {
		for _, l := range o.LeakReport {
			total++
			if l.Severity == commanders.SeverityCritical {
				critical++
			}
			k := key{l.Name, l.Kind, l.Severity}
			g := groups[k]
			if g == nil {
				g = &group{}
				groups[k] = g
				keys = append(keys, k)
			}
			g.n++
			if !slices.Contains(g.bundles, o.ID) {
				g.bundles = append(g.bundles, o.ID)
			}
			if w := o.ID + ": " + strings.TrimSpace(l.Source+" "+l.Field); len(g.where) < 3 && !slices.Contains(g.where, w) {
				g.where = append(g.where, w)
			}
		}
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		ca, cb := a.severity == commanders.SeverityCritical, b.severity == commanders.SeverityCritical
		if ca != cb {
			if ca {
				return -1
			}
			return 1
		}
		return cmp.Or(-cmp.Compare(groups[a].n, groups[b].n), cmp.Compare(a.name, b.name), cmp.Compare(a.kind, b.kind))
	})
	for _, k := range keys {
		g := groups[k]
		var bs []string
		for _, b := range g.bundles {
			bs = append(bs, mdCodeCell(b))
		}
		where := strings.Join(g.where, "; ")
		if g.n > len(g.where) {
			where += fmt.Sprintf("; %d more", g.n-len(g.where))
		}
		rows = append(rows, leakRow{Name: mdCell(k.name), Kind: mdCell(k.kind), Severity: mdCell(k.severity), Count: g.n,
			Bundles: strings.Join(bs, ", "), Where: mdCell(where)})
	}
	return rows, total, critical
}

// newSafetyView is nil for a run without a workspace and without a leak.
func newSafetyView(res *Result) *safetyView {
	t := res.Telemetry
	v := &safetyView{}
	for _, s := range t.Tools {
		v.ToolCalls += s.Calls
		v.Refused += s.Refused
	}
	for _, g := range t.Refusals {
		row := refusalRow{Kind: g.Kind, Count: g.Count, Examples: "–"}
		var ex []string
		for _, e := range g.Examples {
			what := cmp.Or(e.Path, e.Pattern)
			s := fmt.Sprintf("%s (%s, %s)", mdCodeCell(what), mdCell(e.Agent), mdCell(e.Tool))
			if r := oneLine(e.Reason); r != "" {
				s += ": " + mdText(r)
			}
			ex = append(ex, s)
		}
		if len(ex) > 0 {
			row.Examples = strings.Join(ex, "; ")
		}
		v.Refusals = append(v.Refusals, row)
	}
	v.Leaks, v.LeakTotal, v.Critical = leakRows(res.Bundles)
	if res.Workspace == nil && t.Tools == nil && v.LeakTotal == 0 {
		return nil
	}
	return v
}

// defectRow is one planted defect of the ground truth: which findings
// found it, which came near.
type defectRow struct {
	ID, Where, Title  string
	Found, NearMisses string // findings as "domain: title", "; "-separated; "–" when none
	Missed            bool
}

func newDefectRows(res *Result) []defectRow {
	g := res.GroundTruth
	if g == nil {
		return nil
	}
	names := func(fs []int) string {
		var out []string
		for _, f := range fs {
			if n := findingName(res, f); n != "" && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		if len(out) == 0 {
			return "–"
		}
		return mdCell(strings.Join(out, "; "))
	}
	var rows []defectRow
	for _, d := range g.ByDefect {
		where := citation.Citation{Path: d.Path, StartLine: d.StartLine, EndLine: d.EndLine}.Ref()
		rows = append(rows, defectRow{ID: mdCodeCell(d.ID), Where: mdCodeCell(where), Title: cmp.Or(mdCell(d.Title), "–"),
			Found: names(d.Found), NearMisses: names(d.NearMisses), Missed: len(d.Found) == 0})
	}
	return rows
}

// mdCodeCell is mdCode for a table cell: a pipe ends a cell even inside a
// code span, so it is escaped (GitHub renders the escape as a pipe).
func mdCodeCell(s string) string { return strings.ReplaceAll(mdCode(s), "|", `\|`) }
