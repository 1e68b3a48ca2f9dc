package nexus

import (
	"context"
	"errors"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
)

// phaseOutputs are what the phases returned, gathered by the pipeline as
// they return: the run's one ending (ending) assembles the Result from
// them. A run that stopped early has those of the phases it finished (and
// a failed deployment's bundles).
type phaseOutputs struct {
	decomposition *Decomposition // Phase 1; nil until it returned
	sealed        *Sealed        // Phases 1 and 1.5; nil until sealed
	preset        bool           // Phases 1 and 1.5 reused a preset (RunSealed): no LLM call

	deployed  deployment      // Phases 3-4: the bundles (judged and hardened by Phase 6) and the waves
	judgement judgement       // Phase 6: whether shadow scoring is valid
	consensus consensusResult // Phase 7: reviews, corrections, evidence
	synthesis synthesisResult // Phase 7: the synthesis, or why there is none
	report    bool            // the pipeline reached Phase 8 and returned: the ending closes Phase 8
}

// pipelineInput says where the pipeline starts and stops.
type pipelineInput struct {
	// preset is reused by Phases 1 and 1.5 (RunSealed: another mission
	// sealed it); nil: they make their LLM calls.
	preset *Sealed
	// sealOnly stops the pipeline after Phase 1.5 (Mission.Seal).
	sealOnly bool
}

// pipeline runs the phases top to bottom, each given what earlier ones
// returned, and returns their outputs (with the error that stopped it).
// from is what an earlier call of the same run returned: after
// Mission.Seal (Phases 0 to 1.5) the pipeline starts at Phase 2.
func (r *deps) pipeline(ctx context.Context, from phaseOutputs, in pipelineInput) (out phaseOutputs, err error) {
	out = from
	if out.sealed == nil {
		// Phase 0 inside the run: the briefing; every provider is built.
		if err := r.briefing(); err != nil {
			return out, err
		}
		// Phase 1: the decomposition (a preset's, without an LLM call).
		dec, err := r.decompose(ctx, in.preset)
		if err != nil {
			return out, err
		}
		out.decomposition, out.preset = &dec, in.preset != nil
		// Phase 1.5: the sealed envelope; only its hash goes further.
		env, err := r.sealPhase(ctx, dec, in.preset)
		if err != nil {
			return out, err
		}
		out.sealed = &Sealed{Decomposition: dec, Envelope: env}
		if err := ctx.Err(); err != nil {
			return out, err
		}
	}
	if in.sealOnly {
		return out, nil
	}
	dec, env := out.sealed.Decomposition, out.sealed.Envelope
	settings := r.settings()
	scale, _ := r.cfg.ScaleFor(r.plan.Scale)

	// Phase 2: one context capsule per domain.
	capsules, err := r.capsules(dec, scale)
	if err != nil {
		return out, err
	}

	// Phases 3-5: commanders run; cross-review starts when two bundles exist.
	execCtx, stopExec := context.WithCancelCause(ctx)
	defer stopExec(nil)
	stopAll := func() { stopExec(errCostCeiling) }
	if scale.Timeouts.Mission > 0 {
		var c context.CancelFunc
		execCtx, c = context.WithTimeout(execCtx, r.scaled(scale.Timeouts.Mission))
		defer c()
	}
	r.meter.armStop(stopAll) // the ceiling may have been reached before any commander started
	// Phase 6 (shadow validation and hardening) runs beside Phases 4 and 5:
	// each bundle is judged as soon as it exists. Judging runs under ctx,
	// not execCtx: the cost ceiling never cancels it.
	judging := r.newShadowJudging(ctx, env)
	// Phase 5 starts when the deployment says so (at once, or once the
	// canary passed) and takes the bundles as they arrive, handing each to
	// Phase 6.
	reviewsCh := make(chan []ReviewRecord, 1)
	startReview := func(bundles []*BundleOutcome, arrived <-chan int) {
		go func() {
			reviewsCh <- r.crossReview(execCtx, bundles, arrived, dec.Aspects, settings, judging.arrived)
		}()
	}
	out.deployed, err = r.deploy(execCtx, capsules, settings, scale, startReview)
	var reviews []ReviewRecord
	if err == nil { // a failed canary started no cross-review
		reviews = <-reviewsCh
		r.rec.leave(events.Phase5, events.Phase5End{Reviews: len(reviews)})
	}
	// The ceiling stops the commanders and the cross-review only: past this
	// point it no longer cancels anything (judging and synthesis use what
	// exists).
	r.meter.armStop(nil)
	if err != nil {
		return out, err // a failed canary's bundles (waves.go) are kept with the error
	}
	bundles := out.deployed.bundles
	if ctx.Err() != nil {
		judging.wait()
		return out, ctx.Err()
	}
	out.judgement = judging.finish(bundles)
	r.gateUnscored(bundles)
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	// Quarantined bundles are re-reviewed with their failure messages.
	reviews = append(reviews, r.quarantineReviews(ctx, bundles, dec.Aspects, settings)...)

	// Phase 7: consensus and synthesis.
	r.rec.enter(events.Phase7, "consensus and synthesis")
	out.consensus = r.consensus(bundles, reviews, dec, out.deployed.atoms)
	if out.synthesis, err = r.synthesise(ctx, bundles, settings); err != nil {
		r.rec.emit(events.Event{Phase: events.Phase7, Kind: events.Failure, Role: commanders.RoleSynthesizer, Message: err.Error(), Data: events.FailureData{FailureClass: string(providers.ClassOf(err))}})
	}
	r.rec.leave(events.Phase7, nil)

	// Phase 8: output (the ending writes it and closes the phase).
	r.rec.enter(events.Phase8, "action report and telemetry")
	if r.opts.Replays > 1 && r.sb != nil && out.judgement.valid() {
		inc, reason, err := r.replayIncoherence(ctx, dec, bundles, r.opts.Replays)
		if err != nil {
			r.rec.emit(events.Event{Phase: events.Phase8, Kind: events.Failure, Message: "replays: " + err.Error()})
		} else {
			r.sb.bridge.SetIncoherence(inc, reason)
		}
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	out.report = true
	return out, nil
}

// assemble builds the run's Result from what its phases returned: the one
// place a Result is made. The ending (conclude, writeFinal) then says how
// the run ended and adds what is measured at the end.
func (r *deps) assemble(out phaseOutputs) *Result {
	res := &Result{Plan: r.plan, Dir: r.dir.Path, Bundles: out.deployed.bundles,
		ShadowValid: out.judgement.valid(), ShadowReason: out.judgement.invalid,
		Reviews: out.consensus.reviews, Corrections: out.consensus.corrections,
		Synthesis: out.synthesis.synthesis, NoRecommendation: out.synthesis.none}
	if out.decomposition != nil {
		res.Decomposition = *out.decomposition
	}
	if out.sealed != nil {
		res.SealedHash, res.TaskHash = out.sealed.Envelope.SealedHash, out.sealed.Envelope.TaskHash
	}
	if ev := out.consensus.evidence; ev != nil {
		res.Evidence, res.EvidenceByModel, res.EvidenceByAgent, res.GroundTruth = ev.counts, ev.byModel, ev.byAgent, ev.groundTruth
	}
	return res
}

// ending ends the run however it ended (runErr; sealOnly: closed after
// sealing): the Result is assembled from the phase outputs, concluded and
// written with the final files, and Phase 8 is closed when the pipeline got
// there. Every ending (complete, failed, interrupted, sealed) goes through
// it, once.
func (r *deps) ending(out phaseOutputs, runErr error, sealOnly bool) *Result {
	res := r.assemble(out)
	res.Interrupted = errors.Is(runErr, ErrInterrupted)
	r.conclude(res, runErr, sealOnly)
	r.writeFinal(res, pathShapeOf(out))
	if out.report {
		r.rec.leave(events.Phase8, events.Phase8End{Status: res.Status})
	}
	return res
}

// pathShapeOf is what the run's critical path depends on besides its
// plan and its bundles: whether Phases 1 and 1.5 were preset, and the
// calls the last wave of commanders waited for.
func pathShapeOf(out phaseOutputs) runShape {
	return runShape{preset: out.preset, waves: out.deployed.waves}
}
