package nexus

import (
	"context"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
)

// sealPhases runs Phase 0's briefing and Phases 1 and 1.5 (with r.preset,
// without LLM calls) and returns what they sealed.
func (r *runState) sealPhases(ctx context.Context, res *Result) (*Sealed, error) {
	if err := r.briefing(); err != nil {
		return nil, err
	}
	dec, err := r.decompose(ctx)
	if err != nil {
		return nil, err
	}
	res.Decomposition = dec
	env, err := r.sealPhase(ctx, dec)
	if err != nil {
		return nil, err
	}
	res.SealedHash, res.TaskHash = env.SealedHash, env.TaskHash
	return &Sealed{Decomposition: dec, Envelope: env}, nil
}

// execute runs Phases 2 to 8 against the sealed envelope.
func (r *runState) execute(ctx context.Context, res *Result, sealed *Sealed) error {
	dec, env := res.Decomposition, sealed.Envelope
	settings := r.settings()
	scale, _ := r.cfg.ScaleFor(r.plan.Scale)
	capsules, err := r.capsules(dec, scale)
	if err != nil {
		return err
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
	outcomes, reviews, err := r.deploy(execCtx, capsules, dec, settings, scale, judging.arrived)
	// The ceiling stops the commanders only: past this point it no longer
	// cancels anything (judging and synthesis use what exists).
	r.meter.armStop(nil)
	res.Bundles = outcomes // a failed canary's (waves.go) are kept with the error
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		judging.wait()
		return ctx.Err()
	}
	judging.finish(res)
	r.gateUnscored(res)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// Quarantined bundles are re-reviewed with their failure messages.
	reviews = append(reviews, r.quarantineReviews(ctx, res, settings)...)

	// Phase 7: consensus and synthesis.
	r.rec.enter(events.Phase7, "consensus and synthesis")
	r.consensus(res, reviews, dec)
	if err := r.synthesise(ctx, res, settings); err != nil {
		r.rec.emit(events.Event{Phase: events.Phase7, Kind: events.Failure, Role: commanders.RoleSynthesizer, Message: err.Error(), Data: events.FailureData{FailureClass: string(providers.ClassOf(err))}})
	}
	r.rec.leave(events.Phase7, nil)

	// Phase 8: output.
	r.rec.enter(events.Phase8, "action report and telemetry")
	if r.opts.Replays > 1 && r.sb != nil && res.ShadowValid {
		inc, reason, err := r.replayIncoherence(ctx, res, r.opts.Replays)
		if err != nil {
			r.rec.emit(events.Event{Phase: events.Phase8, Kind: events.Failure, Message: "replays: " + err.Error()})
		} else {
			r.sb.bridge.SetIncoherence(inc, reason)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.conclude(res, nil)
	r.writeFinal(res)
	r.rec.leave(events.Phase8, events.Phase8End{Status: res.Status})
	return nil
}
