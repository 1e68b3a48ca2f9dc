package nexus

import (
	"context"
	"time"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// runState is one run under way: what it was given (options, config,
// plan, run directory) and its parts, each with one job: the recorder
// (phases, events, transcripts), the meter (usage, cost ceiling, launches)
// and the provider pool (providers, breakers, limits, built once). Phase
// functions read from it and write their outputs to the Result.
type runState struct {
	opts   Options
	cfg    *config.Config
	plan   Plan
	dir    rundir.Dir
	lock   *rundir.Lock // the run directory's lock, released when the run ends
	rec    *recorder
	meter  *meter
	pool   *providerPool
	factor float64 // the personality's timeout factor (timeoutFactor)
	start  time.Time

	sb     *missionSandbox
	sbDone bool

	ws *workspace.FS // the workspace the agents read; nil without one

	preset   *Sealed // Phases 1 and 1.5 reuse it (RunSealed)
	sealOnly bool    // the mission was closed after sealing

	// storedEnv is the envelope a resumed run had sealed (nil otherwise):
	// Phase 1.5 must seal the same again before it writes anything.
	storedEnv *shadow.Envelope
	resumed   *ResumeInfo // a resumed run's attempt and journal (journal_resume.go); nil otherwise

	ev      evidenceSetup // ground truth and a test's verifier (evidence.go)
	arrived arrivedChecks // the atoms' checked citations (checkArrived)

	waves *runfiles.WavesTelemetry // how the commanders were deployed in waves; nil when they were not (waves.go)
	fu    *followUpSetup           // the previous run of a follow-up; nil without one (followup.go)
}

// timeoutFactor is the personality's timeout factor (1 when unset): every
// timeout of a run (calls, workers, squad leads, commanders, the mission)
// is scaled by it.
func timeoutFactor(cfg *config.Config, personality string) float64 {
	if f := cfg.Personalities[personality].TimeoutFactor; f > 0 {
		return f
	}
	return 1
}

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

// scaled applies the personality's timeout factor.
func (r *runState) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * r.factor)
}

func (r *runState) settings() commanders.Settings {
	s := commanders.Settings{Seed: r.plan.Seed}
	if pers, ok := r.cfg.Personalities[r.plan.Personality]; ok {
		s.Temperature = providers.Float(pers.Temperature)
	}
	return s
}

func (r *runState) agent(role, id string, ref providers.Ref) (commanders.Agent, error) {
	p, err := r.pool.forRole(role, ref)
	if err != nil {
		return commanders.Agent{}, err
	}
	return commanders.Agent{ID: id, Role: role, Ref: ref, Provider: p}, nil
}

func agentRequest(a commanders.Agent, s commanders.Settings, user string, tag string) providers.Request {
	system, _ := prompts.Render("system", nil)
	return providers.Request{
		Messages:    []providers.Message{{Role: providers.RoleSystem, Content: system}, {Role: providers.RoleUser, Content: user}},
		Temperature: s.Temperature,
		Seed:        providers.Int64(commanders.SeedFor(s.Seed, a.ID, tag)),
		Caller:      providers.Caller{Role: a.Role, AgentID: a.ID},
	}
}
