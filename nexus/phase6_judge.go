package nexus

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"
)

// shadowJudging runs Phase 6 beside Phases 4 and 5. Judging a bundle needs
// only that bundle and the verified envelope, not the cross-review: so the
// envelope is verified (from the stored file) when the first bundle exists,
// and every bundle is judged, and hardened when weak, as soon as it exists.
// finish waits for all of them, applies the audit, aggregates the scores
// and writes one report per bundle; Phase 7 starts only after both finish
// and the cross-review are done.
type shadowJudging struct {
	r      *deps
	ctx    context.Context
	sealed *shadow.Envelope
	hcfg   shadow.HardeningConfig

	// Touched only by the goroutine that hands bundles over (arrived) and,
	// after it is done, by finish.
	started  bool
	env      *shadow.Envelope // the verified envelope; nil when judging is off or impossible
	judge    *shadow.Judge
	invalid  string // why shadow scoring is invalid ("" while valid)
	tampered bool   // the envelope check failed
	wg       sync.WaitGroup
}

func (r *deps) newShadowJudging(ctx context.Context, sealed *shadow.Envelope) *shadowJudging {
	return &shadowJudging{r: r, ctx: withPhase(ctx, events.Phase6), sealed: sealed, hcfg: r.plan.Hardening}
}

// start enters Phase 6 and verifies the envelope, once.
func (j *shadowJudging) start() {
	if j.started {
		return
	}
	j.started = true
	r := j.r
	if !r.cfg.ShadowScoring.Enabled {
		r.rec.enter(events.Phase6, "shadow validation and hardening")
		j.invalid = "shadow scoring disabled in config"
		return
	}
	r.rec.enter(events.Phase6, "shadow validation and hardening (each bundle as it arrives, beside cross-review)")
	// Re-read the envelope from disk: what is judged is what was committed.
	env, err := shadow.LoadSealed(r.dir.EnvelopePath())
	if err == nil {
		err = env.Verify()
	}
	if err == nil && env.SealedHash != j.sealed.SealedHash {
		err = fmt.Errorf("%w: stored envelope hash %s differs from the hash committed in Phase 1.5 (%s)", shadow.ErrTampered, env.SealedHash, j.sealed.SealedHash)
	}
	if err != nil {
		j.invalid, j.tampered = err.Error(), true
		r.rec.emit(events.Event{Phase: events.Phase6, Kind: events.EnvelopeCheck, Message: "envelope verification failed: shadow scoring aborted", Data: events.EnvelopeCheckData{OK: false, Reason: err.Error()}})
		return
	}
	r.rec.emit(events.Event{Phase: events.Phase6, Kind: events.EnvelopeCheck, Message: "envelope hash verified", Data: events.EnvelopeCheckData{OK: true, SealedHash: env.SealedHash}})
	jp, err := r.pool.forRole(commanders.RoleJudge, r.plan.Roster.Judge)
	if err != nil {
		j.invalid = err.Error()
		return
	}
	mode := shadow.PerBundle
	if r.cfg.ShadowScoring.JudgeMode == "per_criterion" {
		mode = shadow.PerCriterion
	}
	j.env = env
	// With judge in workspace.roles the judge reads the workspace to check
	// the bundles' claims against it.
	jp = r.withTools(jp, commanders.Agent{ID: "judge", Role: commanders.RoleJudge, Ref: r.plan.Roster.Judge})
	j.judge = shadow.NewJudge(shadow.JudgeConfig{Provider: jp, Ref: r.plan.Roster.Judge, Mode: mode,
		Samples: max(1, r.cfg.ShadowScoring.JudgeSamples), Seed: providers.Int64(commanders.SeedFor(r.plan.Seed, "judge"))})
}

// arrived starts judging o. It is called from one goroutine, in arrival
// order, after o's outcome is complete.
func (j *shadowJudging) arrived(o *BundleOutcome) {
	if o.Failed {
		return
	}
	j.start()
	if j.judge == nil {
		return
	}
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		j.r.judgeAndHarden(j.ctx, j.judge, j.env, o, j.hcfg)
	}()
}

// wait waits for the judgements under way (an interrupted run).
func (j *shadowJudging) wait() { j.wg.Wait() }

// judgement is what Phase 6 returns besides the judged bundles (their
// evaluations, hardening and gate are in their outcomes): whether shadow
// scoring is valid.
type judgement struct {
	invalid string // why shadow scoring is invalid; "" while it is valid
}

// valid says whether shadow scoring is valid.
func (j judgement) valid() bool { return j.invalid == "" }

// finish ends Phase 6 once every bundle (of bundles) has arrived: it waits
// for the judgements, runs the sandbox audit and writes the reports. The
// scores are aggregated when the run concludes (every ending).
func (j *shadowJudging) finish(bundles []*BundleOutcome) judgement {
	r := j.r
	j.start() // no bundle arrived: the phase still runs (and checks the envelope)
	j.wg.Wait()
	out := judgement{invalid: j.invalid}
	defer r.rec.leave(events.Phase6, events.Phase6End{Valid: out.valid()})
	if !out.valid() {
		if j.tampered {
			r.writeReports(bundles, j.sealed, out) // every report says why it is invalid
		}
		return out
	}
	if r.sb != nil {
		r.sb.audit(j.ctx, j.judge, j.env, bundles, r.cfg.Sandbox.AuditRate, r.plan.Seed, r.finalInput)
	}
	r.writeReports(bundles, j.env, out)
	return out
}

func (r *deps) judgeAndHarden(ctx context.Context, judge *shadow.Judge, env *shadow.Envelope, o *BundleOutcome, hcfg shadow.HardeningConfig) {
	in := r.judgeInput(o, o.Bundle)
	ev, err := r.judgeWithLadder(ctx, judge, env, in, o)
	if err != nil {
		r.rec.emit(events.Event{Phase: events.Phase6, Kind: events.Failure, Role: commanders.RoleJudge, Message: fmt.Sprintf("judging %s: %v", o.ID, err),
			Data: events.FailureData{FailureClass: string(providers.ClassOf(err)), BundleID: o.ID}})
		return
	}
	o.Initial, o.Final = &ev, &ev
	o.judged = &in
	r.rec.emit(events.Event{Phase: events.Phase6, Kind: events.Judged, Role: commanders.RoleJudge, Data: events.JudgedData{
		BundleID: o.ID, ShadowScore: ev.Score, Level: string(ev.Level), Passed: ev.Passed, Failed: ev.Failed, Disagreement: ev.Disagreement}})
	if hcfg.Enabled && ev.Score > hcfg.Threshold {
		cmd := o.commander
		// Every revision is kept by its rendered text, so the bundle that
		// Harden keeps (never a worse one) is the one we report. A
		// revision's citations are checked against the workspace as
		// revised (judgeInput): its ledger is its own.
		revisions := map[string]commanders.Bundle{in.Content: o.Bundle}
		cur := o.Bundle
		revise := func(ctx context.Context, b shadow.BundleInput, feedback string) (shadow.BundleInput, error) {
			nb, leaks, err := cmd.Revise(ctx, cur, feedback)
			o.LeakReport = append(o.LeakReport, leaks...)
			o.Leaks = len(o.LeakReport)
			if err != nil {
				return b, err
			}
			cur = nb
			nin := r.judgeInput(o, nb)
			revisions[nin.Content] = nb
			return nin, nil
		}
		hr, err := shadow.Harden(ctx, shadow.HardeningConfig{Enabled: true, MaxCycles: hcfg.MaxCycles, Threshold: hcfg.Threshold}, judge, env, in, ev, revise)
		if err != nil {
			r.rec.emit(events.Event{Phase: events.Phase6, Kind: events.Failure, Role: commanders.RoleCommander, AgentID: o.Commander, Message: "hardening: " + err.Error(),
				Data: events.FailureData{FailureClass: string(providers.ClassOf(err)), BundleID: o.ID}})
		} else {
			o.Hardening = &hr
			o.Final = &hr.Final
			if b, ok := revisions[hr.FinalBundle.Content]; ok {
				o.Bundle = b
				fin := hr.FinalBundle
				o.judged = &fin
			}
			r.rec.emit(events.Event{Phase: events.Phase6, Kind: events.Hardening, Role: commanders.RoleCommander, AgentID: o.Commander, Data: events.HardeningData{
				BundleID: o.ID, Cycles: hr.Cycles, Initial: hr.InitialScore, Final: hr.FinalScore, Velocity: hr.Velocity}})
		}
	}
	score := o.Final.Score
	o.ShadowScore = &score
	o.Level = string(o.Final.Level)
	g := shadow.Gate(score)
	r.gate(o, &g)
}

// judgeWithLadder judges in, and climbs the verdict's recovery ladder
// while judging fails (the judge's own call already retried: the
// providers' stack, and three structured attempts):
//
//   - simplify: one call per criterion instead of one per bundle (none
//     when judge_mode is already per_criterion or there is one criterion);
//   - model swap: the judge role's fallback models, in order (with the
//     simplification when it was tried);
//   - scope reduction: each criterion judged on its own, those whose call
//     still fails left out;
//   - degrade: the criteria that could be judged are recorded in the
//     bundle's degraded verdict; the bundle gets no Shadow Score (an
//     unjudged criterion is never counted as passed) and the run is not
//     complete.
//
// A tampered envelope, no criteria or the run's own cancellation never
// climb. The error is the last failure when the verdict did not recover.
func (r *deps) judgeWithLadder(ctx context.Context, judge *shadow.Judge, env *shadow.Envelope, in shadow.BundleInput, o *BundleOutcome) (shadow.Evaluation, error) {
	ev, err := judge.Evaluate(ctx, env, in)
	if err == nil || errors.Is(err, shadow.ErrTampered) || errors.Is(err, shadow.ErrNoCriteria) {
		return ev, err
	}
	first := judge.Config()
	cur := first
	agent := commanders.Agent{ID: "judge", Role: commanders.RoleJudge, Ref: first.Ref}
	evaluate := func(c shadow.JudgeConfig) error {
		ev, err = shadow.NewJudge(c).Evaluate(ctx, env, in)
		return err
	}
	var fallbacks []providers.Ref
	for _, x := range r.plan.Roster.FallbacksFor(commanders.RoleJudge) {
		if x != first.Ref {
			fallbacks = append(fallbacks, x)
		}
	}
	rec := r.cfg.Recovery.Ladder()
	var partial shadow.Evaluation
	var unjudged map[string]error
	step := commanders.Ladder{Recovery: rec, Unit: commanders.UnitVerdict, ID: o.ID,
		Halted: func() bool { return ctx.Err() != nil },
		Report: func(s commanders.RecoveryStep) { r.recovery(events.Phase6, agent, s) },
		Cause:  err,
	}.Climb(commanders.FailureText(err),
		commanders.Rung{Step: commanders.StepSimplify, On: rec.Simplify, Once: true, Try: func(int) commanders.Attempt {
			// The judge decides the criteria without a mechanical check
			// (code evaluates those): one call each.
			judged := env.CriteriaCount - env.Mechanical()
			if cur.Mode == shadow.PerCriterion || judged < 2 {
				return commanders.Attempt{}
			}
			cur.Mode = shadow.PerCriterion
			return commanders.Tried(fmt.Sprintf("one call per criterion (%d) instead of one per bundle", judged), evaluate(cur))
		}},
		commanders.Rung{Step: commanders.StepModelSwap, On: rec.ModelSwap, Try: func(n int) commanders.Attempt {
			if n > len(fallbacks) {
				return commanders.Attempt{}
			}
			to := fallbacks[n-1]
			p, e := r.pool.forRole(commanders.RoleJudge, to)
			if e != nil { // every fallback was built in Phase 0: not expected
				return commanders.Attempt{}
			}
			cur.Provider, cur.Ref = r.withTools(p, commanders.Agent{ID: "judge", Role: commanders.RoleJudge, Ref: to}), to
			at := commanders.Tried(fmt.Sprintf("%s -> %s", first.Ref, to), evaluate(cur))
			at.From, at.To = first.Ref, to
			return at
		}},
		commanders.Rung{Step: commanders.StepScopeReduction, On: rec.ScopeReduction, Once: true, Try: func(int) commanders.Attempt {
			e2, unj, e := shadow.NewJudge(cur).EvaluateEach(ctx, env, in)
			if e != nil {
				err = e
				return commanders.Tried("each criterion on its own", e)
			}
			if len(unj) == 0 {
				ev, err = e2, nil
				return commanders.Attempt{Made: true, OK: true, Detail: fmt.Sprintf("each criterion on its own: all %d judged", e2.Total)}
			}
			partial, unjudged = e2, unj
			ids := slices.Sorted(maps.Keys(unj))
			err = unj[ids[0]]
			return commanders.Attempt{Made: true, Detail: fmt.Sprintf("each criterion on its own: %d of %d judged; not judged: %s", e2.Total, env.CriteriaCount, strings.Join(ids, ", "))}
		}},
		commanders.Rung{Step: commanders.StepDegrade, On: rec.Degrade, Once: true, Try: func(int) commanders.Attempt {
			if partial.Total == 0 {
				return commanders.Attempt{Made: true, Detail: "nothing to keep: no criterion could be judged"}
			}
			return commanders.Attempt{Made: true, OK: true, Detail: fmt.Sprintf("kept the verdicts of %d of %d criteria; the bundle has no Shadow Score", partial.Total, env.CriteriaCount)}
		}})
	if step == commanders.StepDegrade {
		ids := slices.Sorted(maps.Keys(unjudged))
		o.Degraded = append(o.Degraded, commanders.Degraded{Unit: commanders.UnitVerdict, UnitID: o.ID,
			Detail: fmt.Sprintf("judged %d of %d criteria (%d passed, %d failed); not judged, never counted as passed: %s; no Shadow Score",
				partial.Total, env.CriteriaCount, partial.Passed, partial.Failed, strings.Join(ids, ", "))})
		r.writeBundle(o)
		return shadow.Evaluation{}, fmt.Errorf("verdict degraded: %d of %d criteria not judged: %w", len(ids), env.CriteriaCount, err)
	}
	return ev, err
}

// gate sets o's gate decision: the score's decision g (nil for a bundle
// not judged) with o's critical leaks folded in
// (shadow_scoring.gate.on_critical_leak), and emits the gate event when
// there is a decision. A judged bundle's event carries its score and report.
func (r *deps) gate(o *BundleOutcome, g *shadow.GateDecision) {
	o.Gate = shadow.GateLeaks(g, commanders.Critical(o.LeakReport), r.cfg.ShadowScoring.Gate.OnCriticalLeak)
	if o.Gate == nil {
		return
	}
	d := events.GateData{BundleID: o.ID, Action: o.Gate.Action, Reason: o.Gate.Reason}
	if g != nil {
		d.ShadowScore, d.Report = o.ShadowScore, "reports/"+o.ID+".json"
	}
	r.rec.emit(events.Event{Phase: events.Phase6, Kind: events.Gate, Message: o.ID + ": " + d.Action + " (" + d.Reason + ")", Data: d})
}

// gateUnscored applies the leak policy to bundles that have no gate decision
// (not judged: shadow scoring off, invalid, or the judge failed).
func (r *deps) gateUnscored(bundles []*BundleOutcome) {
	for _, o := range bundles {
		if o.Failed || o.Gate != nil {
			continue
		}
		r.gate(o, nil)
	}
}

// writeReports writes one Shadow Report per bundle, invalid when j says
// shadow scoring is.
func (r *deps) writeReports(bundles []*BundleOutcome, env *shadow.Envelope, j judgement) {
	for _, o := range bundles {
		if o.Failed {
			continue
		}
		impl := o.ref
		opts := shadow.ReportOptions{
			ID: r.plan.RunID + "/" + o.ID, Timestamp: time.Now().UTC(), SpecVersion: r.cfg.ShadowScoring.SpecVersion,
			Envelope: env, Implementer: impl, Evaluation: o.Final, Hardening: o.Hardening,
			HardeningEnabled: r.plan.Hardening.Enabled, MaxCycles: r.plan.Hardening.MaxCycles, ConformanceCap: r.cfg.ShadowScoring.ConformanceLevel,
			Invalid: !j.valid(), InvalidReason: j.invalid,
		}
		rep := shadow.BuildReport(opts)
		_ = r.dir.WriteJSON("reports/"+o.ID+".json", rep)
	}
}
