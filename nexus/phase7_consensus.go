package nexus

import (
	"context"
	"errors"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
)

// consensusResult is what Phase 7's consensus returns besides the scored
// bundles (their meta-review, tier and formula are in their outcomes): the
// review records and corrections, and the run's evidence (nil when it was
// not measured).
type consensusResult struct {
	reviews     []ReviewRecord
	corrections []Correction
	evidence    *evidenceTally
}

// consensus runs the meta-review of reviews and scores every bundle of
// bundles (Phase 7); arrived are the atoms' citations Phase 4 checked.
func (r *deps) consensus(bundles []*BundleOutcome, reviews []ReviewRecord, dec Decomposition, arrived *arrivedChecks) consensusResult {
	// The bundles are final (hardening has revised them): check their
	// citations, and their atoms', before they are weighed.
	out := consensusResult{evidence: r.verifyEvidence(bundles, arrived)}
	meta, recs, corr := metaReviewAll(reviews)
	out.reviews, out.corrections = recs, corr
	for _, c := range corr {
		r.rec.emit(events.Event{Phase: events.Phase7, Kind: events.ScoreCorrection, AgentID: c.Reviewer, Message: c.Reason,
			Data: events.ScoreCorrectionData{Kind: c.Kind, BundleID: c.BundleID, Delta: c.Delta}})
	}
	cc := r.cfg.Consensus
	for _, o := range bundles {
		if o.Failed {
			o.Tier = tierUnique
			continue
		}
		m := meta[o.ID]
		o.Review = m
		o.Tier = tier(m.Score, m.Reviews, cc)
		o.Formula = formulaFromAtoms(o.result.Atoms, atomChecksOf(o), o.Bundle, dec.Aspects, m.Conflicts, m.Reviews, cc)
		o.FormulaScore = formula(o.Formula, cc)
		o.InSynthesis = inSynthesis(o, r.cfg.ShadowScoring.Enabled)
	}
	return out
}

// inSynthesis is the synthesis rule (docs/shadow.md, "Gate"): only a
// bundle that passed the Shadow Gate (proceed, or warn) feeds the
// synthesis. A quarantined bundle never does, whatever its quarantine
// re-review scored: that re-review is reported (report.md's domain
// reports) for the human reviewer, it does not release the bundle, because
// reviewers who read a bundle's text cannot see that its citations were
// fabricated and scored such bundles above the majority threshold. A
// rejected or failed bundle never does either. A bundle without a gate
// decision goes in only when shadow scoring is off (there is no gate in
// the run; the report flags it); with shadow scoring on, a bundle the judge
// did not decide on (not judged, or scoring invalid) stays out.
func inSynthesis(o *BundleOutcome, shadowOn bool) bool {
	if o.Failed {
		return false
	}
	if o.Gate == nil {
		return !shadowOn
	}
	return o.Gate.Passed()
}

// synthesisBundle is what the synthesizer reads of a bundle in synthesis:
// the bundle itself, except that in a run that checked its evidence (a
// workspace mission) only the findings with at least one verified
// citation are kept. A finding nobody can check never becomes an action.
func synthesisBundle(o *BundleOutcome) commanders.Bundle {
	b := o.Bundle
	if o.checks == nil {
		return b
	}
	b.Findings = nil
	for i, f := range o.Bundle.Findings {
		if o.findingVerified(i) {
			b.Findings = append(b.Findings, f)
		}
	}
	return b
}

// Why a run makes no recommendation (Result.NoRecommendation).
const (
	NoRecommendationUngated    = "none passed the Shadow Gate"
	NoRecommendationUnverified = "no finding of the bundles that passed the Shadow Gate rests on a verified citation"
)

// errNothingPassed is synthesise's error when no bundle passed the Shadow
// Gate: there is nothing to recommend (report.md says so).
var errNothingPassed = errors.New("no bundle passed the shadow gate: nothing to synthesise")

// errNothingVerified is synthesise's error when, in a run that checked its
// evidence, bundles passed the gate but none of their findings has a
// verified citation: an action nobody can check is never recommended
// (report.md says so).
var errNothingVerified = errors.New("no finding of the bundles that passed the shadow gate rests on a verified citation: nothing to synthesise")

// synthesisResult is what Phase 7's synthesis returns: the synthesis, or
// why the run makes no recommendation (none; "" when it made one).
type synthesisResult struct {
	synthesis *Synthesis
	none      string
}

// synthesise writes the synthesis of the bundles in synthesis (Phase 7);
// the error says why there is none.
func (r *deps) synthesise(ctx context.Context, bundles []*BundleOutcome, s commanders.Settings) (synthesisResult, error) {
	var views []commanders.BundleView
	measured, verified := false, 0
	for _, o := range bundles {
		if o.InSynthesis {
			b := synthesisBundle(o)
			views = append(views, commanders.BundleView{ID: o.ID, Text: b.Text()})
			measured = measured || o.checks != nil
			verified += len(b.Findings)
		}
	}
	if len(views) == 0 {
		return synthesisResult{none: NoRecommendationUngated}, errNothingPassed
	}
	if measured && verified == 0 {
		return synthesisResult{none: NoRecommendationUnverified}, errNothingVerified
	}
	a, err := r.agent(commanders.RoleSynthesizer, "synthesizer", r.plan.Roster.Synthesizer)
	if err != nil {
		return synthesisResult{}, err
	}
	user, err := prompts.Render("synthesis", map[string]any{"Mission": r.opts.Mission, "Bundles": views})
	if err != nil {
		return synthesisResult{}, err
	}
	syn, _, err := providers.StructuredRetry[Synthesis](ctx, a.Provider, agentRequest(a, s, user, "synthesis"), 3)
	if err != nil {
		return synthesisResult{}, err
	}
	return synthesisResult{synthesis: &syn}, nil
}
