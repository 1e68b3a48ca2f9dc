package nexus

import (
	"context"
	"fmt"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"
)

// consensus runs the meta-review and scores every bundle (Phase 7).
func (r *runState) consensus(res *Result, reviews []ReviewRecord, dec Decomposition) {
	// The bundles are final (hardening has revised them): check their
	// citations, and their atoms', before they are weighed.
	r.verifyEvidence(res)
	meta, recs, corr := metaReviewAll(reviews)
	res.Reviews, res.Corrections = recs, corr
	for _, c := range corr {
		r.rec.emit(Event{Phase: Phase7, Kind: EvScoreCorrection, AgentID: c.Reviewer, Message: c.Reason,
			Data: ScoreCorrectionData{Kind: c.Kind, BundleID: c.BundleID, Delta: c.Delta}})
	}
	cc := r.cfg.Consensus
	for _, o := range res.Bundles {
		if o.Failed {
			o.Tier = TierUnique
			continue
		}
		m := meta[o.ID]
		o.Review = m
		o.Tier = tier(m.Score, m.Reviews, cc)
		o.Formula = formulaFromAtoms(o.result.Atoms, atomChecksOf(o), o.Bundle, dec.Aspects, m.Conflicts, m.Reviews, cc)
		o.FormulaScore = formula(o.Formula, cc)
		o.InSynthesis = inSynthesis(o, cc)
	}
}

// inSynthesis applies the Shadow Gate: proceed and warn go in; quarantined
// bundles go in only when their re-review reaches the majority threshold;
// rejected bundles never do. Without a gate decision (shadow scoring off or
// invalid) the bundle goes in, flagged in the report.
func inSynthesis(o *BundleOutcome, cc ConsensusConfig) bool {
	if o.Failed {
		return false
	}
	if o.Gate == nil {
		return true
	}
	switch o.Gate.Action {
	case shadow.ActionProceed, shadow.ActionWarn:
		return true
	case shadow.ActionQuarantine:
		return o.Review.Score >= cc.MajorityThreshold
	}
	return false
}

func (r *runState) synthesise(ctx context.Context, res *Result, s commanders.Settings) error {
	var views []commanders.BundleView
	for _, o := range res.Bundles {
		if o.InSynthesis {
			views = append(views, commanders.BundleView{ID: o.ID, Text: o.Bundle.Text()})
		}
	}
	if len(views) == 0 {
		return fmt.Errorf("no bundle passed the shadow gate: nothing to synthesise")
	}
	a, err := r.agent(commanders.RoleSynthesizer, "synthesizer", r.plan.Roster.Synthesizer)
	if err != nil {
		return err
	}
	user, err := prompts.Render("synthesis", map[string]any{"Mission": r.opts.Mission, "Bundles": views})
	if err != nil {
		return err
	}
	syn, _, err := providers.StructuredRetry[Synthesis](ctx, a.Provider, agentRequest(a, s, user, "synthesis"), 3)
	if err != nil {
		return err
	}
	res.Synthesis = &syn
	return nil
}
