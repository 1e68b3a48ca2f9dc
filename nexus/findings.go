package nexus

import (
	"cmp"
	"slices"
	"strings"

	"github.com/swarm-dev/swarm/internal/slug"
	"github.com/swarm-dev/swarm/workspace"
)

// This file merges the findings of every bundle into finding cards: the
// unit report.md, findings.csv and findings.sarif show. A card is one
// finding raised by one or more domains; cards are kept apart by what a
// reviewer may act on (cardGroup), so a failure is never ranked beside a
// success.

// Card groups, in report order.
const (
	// groupRecommended: from bundles that passed the Shadow Gate and, in a
	// run that checked its evidence, with at least one verified citation.
	groupRecommended = "recommended"
	// groupUnsupported: from bundles that passed the gate, in a run that
	// checked its evidence, without a verified citation.
	groupUnsupported = "unsupported"
	// groupRejected: from bundles that did not pass the gate (quarantined,
	// rejected, or not judged while shadow scoring was on).
	groupRejected = "rejected"
)

// findingCard is one finding as raised by one or more domains.
type findingCard struct {
	Group    string
	Title    string // the first source's title
	Priority string // the highest of its sources'
	Efforts  []string
	Domains  []string // in run order, each once
	Sources  []cardSource
	Cites    []workspace.Check // every source's citations, each location and state once
	Support  workspace.Counts  // of Cites
	Defects  []string          // ground-truth ids matched by a source (with --ground-truth)
	measured bool              // the run checked its evidence
	gateRank int               // its sources' best gate decision (shadow.GateDecision.Rank)
}

// cardSource is one bundle's finding merged into a card.
type cardSource struct {
	BundleID, Domain, Detail string
	Gate, GateReason         string // "" when the bundle had no gate decision
	Finding                  int    // its index in the bundle's findings
	checks                   []workspace.Check
}

// findingGroup is where a bundle's finding goes: whether its bundle passed
// the gate first, then (in a run that checked its evidence) its support.
func findingGroup(o *BundleOutcome, i int, measured bool) string {
	if !passedGate(o) {
		return groupRejected
	}
	if measured && !o.findingVerified(i) {
		return groupUnsupported
	}
	return groupRecommended
}

// findingCards merges the findings of res's bundles (failed bundles have
// none) into cards. Within a group, a finding joins the first card with
// the same normalised title, else the first card with the same primary
// location (its first verified citation's path and lines), else starts a
// card. Cards are sorted by group, then (for work that did not pass the
// gate: the best rejected work first) their best gate decision, then
// priority, then support: verified citations (more first), domains (more
// first), fabricated citations (fewer first), title.
func findingCards(res *Result) []findingCard {
	measured := res.Evidence != nil
	defects := findingDefects(res)
	var cards []*findingCard
	byTitle := map[string]*findingCard{}
	byPlace := map[string]*findingCard{}
	for _, o := range res.Bundles {
		if o.Failed {
			continue
		}
		for i, f := range o.Bundle.Findings {
			var cs []workspace.Check
			if o.checks != nil && i < len(o.checks.findings) {
				cs = o.checks.findings[i]
			}
			g := findingGroup(o, i, measured)
			src := cardSource{BundleID: o.ID, Domain: cmp.Or(o.Domain, o.ID), Detail: strings.TrimSpace(f.Detail), Finding: i, checks: cs}
			if o.Gate != nil {
				src.Gate, src.GateReason = o.Gate.Action, o.Gate.Reason
			}
			key := g + "\x00" + cmp.Or(slug.Make(f.Title), strings.TrimSpace(f.Title))
			place := ""
			if p := primaryPlace(cs); p != "" {
				place = g + "\x00" + p
			}
			c := byTitle[key]
			if c == nil && place != "" {
				c = byPlace[place]
			}
			if c == nil {
				c = &findingCard{Group: g, Title: oneLine(f.Title), Priority: f.Priority, measured: measured, gateRank: o.Gate.Rank()}
				cards = append(cards, c)
			}
			byTitle[key] = cmp.Or(byTitle[key], c)
			if place != "" && byPlace[place] == nil {
				byPlace[place] = c
			}
			c.gateRank = min(c.gateRank, o.Gate.Rank())
			c.add(src, f.Priority, f.Effort, defects[[2]int{bundleIndex(res, o), i}])
		}
	}
	out := make([]findingCard, 0, len(cards))
	for _, c := range cards {
		out = append(out, *c)
	}
	groups := map[string]int{groupRecommended: 0, groupUnsupported: 1, groupRejected: 2}
	slices.SortStableFunc(out, func(a, b findingCard) int {
		ga, gb := 0, 0
		if a.Group == groupRejected && b.Group == groupRejected {
			ga, gb = a.gateRank, b.gateRank
		}
		return cmp.Or(cmp.Compare(groups[a.Group], groups[b.Group]), cmp.Compare(ga, gb),
			cmp.Compare(priorityRank(a.Priority), priorityRank(b.Priority)),
			-cmp.Compare(a.Support.Verified, b.Support.Verified),
			-cmp.Compare(len(a.Domains), len(b.Domains)),
			cmp.Compare(a.Support.Fabricated, b.Support.Fabricated),
			cmp.Compare(a.Title, b.Title))
	})
	return out
}

func (c *findingCard) add(s cardSource, priority, effort string, defects []string) {
	if priorityRank(priority) < priorityRank(c.Priority) {
		c.Priority = priority
	}
	if effort != "" && !slices.Contains(c.Efforts, effort) {
		c.Efforts = append(c.Efforts, effort)
	}
	if !slices.Contains(c.Domains, s.Domain) {
		c.Domains = append(c.Domains, s.Domain)
	}
	for _, k := range s.checks {
		if !slices.ContainsFunc(c.Cites, func(x workspace.Check) bool {
			return x.Ref() == k.Ref() && x.State == k.State
		}) {
			c.Cites = append(c.Cites, k)
			c.Support.Add(k.State)
		}
	}
	for _, d := range defects {
		if !slices.Contains(c.Defects, d) {
			c.Defects = append(c.Defects, d)
		}
	}
	c.Sources = append(c.Sources, s)
}

// primaryPlace is where a finding points: its first verified citation's
// path and lines ("" without one).
func primaryPlace(cs []workspace.Check) string {
	for _, c := range cs {
		if c.State == workspace.Verified {
			return c.Ref()
		}
	}
	return ""
}

// bundleIndex is o's place in res.Bundles.
func bundleIndex(res *Result, o *BundleOutcome) int {
	return slices.Index(res.Bundles, o)
}

// findingDefects maps (bundle index, finding index) to the ground-truth
// defect ids the finding matched; nil without a ground truth. The
// ground truth's finding indexes follow findingChecks' order.
func findingDefects(res *Result) map[[2]int][]string {
	if res.GroundTruth == nil {
		return nil
	}
	refs := findingRefs(res.Bundles)
	out := map[[2]int][]string{}
	for _, d := range res.GroundTruth.ByDefect {
		for _, f := range d.Found {
			if f >= 0 && f < len(refs) {
				out[refs[f]] = append(out[refs[f]], d.ID)
			}
		}
	}
	return out
}

// findingRefs are (bundle index, finding index) of every finding
// findingChecks lists, in its order.
func findingRefs(bundles []*BundleOutcome) [][2]int {
	var out [][2]int
	for b, o := range bundles {
		if o.checks == nil {
			continue
		}
		for i := range o.checks.findings {
			out = append(out, [2]int{b, i})
		}
	}
	return out
}

// findingName names finding f of the ground truth's list: "domain: title".
func findingName(res *Result, f int) string {
	refs := findingRefs(res.Bundles)
	if f < 0 || f >= len(refs) {
		return ""
	}
	o := res.Bundles[refs[f][0]]
	if i := refs[f][1]; i < len(o.Bundle.Findings) {
		return cmp.Or(o.Domain, o.ID) + ": " + oneLine(o.Bundle.Findings[i].Title)
	}
	return cmp.Or(o.Domain, o.ID)
}

// passedGate reports whether o passed the Shadow Gate: proceed or warn,
// or, without a gate decision, was let into the synthesis (shadow scoring
// off: inSynthesis). It is inSynthesis's answer for a run that reached
// Phase 7, and the same rule for one that ended before it.
func passedGate(o *BundleOutcome) bool {
	if o.Failed {
		return false
	}
	if o.Gate == nil {
		return o.InSynthesis
	}
	return o.Gate.Passed()
}

// bestRejected is the bundle to show first when none passed the gate: the
// best gate decision, then the lowest Shadow Score (judged before not
// judged), then the highest formula score, then its id. Nil when every
// bundle failed.
func bestRejected(bundles []*BundleOutcome) *BundleOutcome {
	var best *BundleOutcome
	score := func(o *BundleOutcome) float64 {
		if o.ShadowScore == nil {
			return 1000
		}
		return *o.ShadowScore
	}
	for _, o := range bundles {
		if o.Failed || passedGate(o) {
			continue
		}
		if best == nil || cmp.Or(cmp.Compare(o.Gate.Rank(), best.Gate.Rank()),
			cmp.Compare(score(o), score(best)),
			-cmp.Compare(o.FormulaScore, best.FormulaScore),
			cmp.Compare(o.ID, best.ID)) < 0 {
			best = o
		}
	}
	return best
}
