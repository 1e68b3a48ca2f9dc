package nexus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// deployment is what Phases 3 and 4 return: one outcome per capsule, in
// capsule order, how the commanders were deployed in waves (nil: all at
// once) and the checked citations of every atom that arrived.
type deployment struct {
	bundles []*BundleOutcome
	waves   *runfiles.WavesTelemetry
	atoms   *arrivedChecks
}

// deploy runs Phase 3 (commander deployment) and Phase 4 (execution and
// monitoring).
//
// startReview starts Phase 5 (the cross-review, which hands each bundle
// to Phase 6) without waiting for it: it is called once, when the
// commanders' bundles may be reviewed (at once, or once the canary passed;
// never when the canary failed), with the outcomes and the channel that
// says, in arrival order, which of them ended (-1: one was not launched).
// The channel is closed when every commander has ended.
func (r *deps) deploy(ctx context.Context, capsules []commanders.Capsule, s commanders.Settings, scale config.Scale,
	startReview func(bundles []*BundleOutcome, arrived <-chan int)) (deployment, error) {
	p := r.plan
	r.rec.enter(events.Phase3, "commander deployment")
	conc := effectiveConcurrency(r.cfg, p, scale)
	sem := semaphore.NewWeighted(int64(conc.N))
	outs := make([]*BundleOutcome, len(capsules))
	arrived := &arrivedChecks{}
	workerIdx := 0
	for i, c := range capsules {
		cref := p.Roster.Commanders[i%len(p.Roster.Commanders)]
		ca, err := r.agent(commanders.RoleCommander, commanderID(c.Domain), cref)
		if err != nil {
			return deployment{}, err
		}
		cmd := &commanders.Commander{Agent: ca, Capsule: c, Settings: s, Sem: sem,
			Limits: commanders.Limits{Children: p.ChildrenPerCmd, WorkersPerLead: p.WorkersPerLead,
				SquadLeadTimeout: r.scaled(scale.Timeouts.SquadLead), WorkerTimeout: r.scaled(scale.Timeouts.Worker),
				SquadLeadMaxTokens: r.cfg.Run.MaxTokens[commanders.RoleSquadLead], WorkerMaxTokens: r.cfg.Run.MaxTokens[commanders.RoleWorker]},
			Hooks: r.hooks(ca.ID, arrived), Recovery: r.cfg.Recovery.Ladder(),
		}
		base := workerIdx
		domain := c.Domain
		cmd.SquadLead = func(j int) commanders.Agent {
			a, _ := r.agent(commanders.RoleSquadLead, squadLeadID(domain, j), p.Roster.SquadLead)
			return a
		}
		cmd.Worker = func(lead, j int) commanders.Agent {
			n := base + lead*max(1, p.WorkersPerLead) + j
			id := workerID(domain, -1, j)
			if p.WorkersPerLead > 0 {
				id = workerID(domain, lead, j)
			}
			// Providers were built in Phase 0, so this cannot fail here.
			a, _ := r.agent(commanders.RoleWorker, id, p.Roster.Workers[n%len(p.Roster.Workers)])
			return a
		}
		if p.WorkersPerLead > 0 {
			workerIdx += p.ChildrenPerCmd * p.WorkersPerLead
		} else {
			workerIdx += p.ChildrenPerCmd
		}
		outs[i] = &BundleOutcome{ID: c.Domain, Domain: c.Domain, Commander: ca.ID, Model: cref.String(), ref: cref, commander: cmd}
	}
	r.rec.leave(events.Phase3, events.Phase3End{Commanders: len(outs), Concurrency: conc.N, ConcurrencyRule: conc.Rule, ConcurrencyDetail: conc.Detail})

	r.rec.enter(events.Phase4, "execution and monitoring")
	done := make(chan int, len(outs)) // buffered: a commander never waits for the cross-review to start
	var g errgroup.Group
	launch := func(i int, finished func(*BundleOutcome)) bool {
		o := outs[i]
		if ctx.Err() != nil || !r.meter.mayLaunch() {
			o.Failed, o.FailureClass, o.Error = true, ClassCancelled, "not launched: the cost ceiling stopped new launches"
			if ctx.Err() != nil && !errors.Is(context.Cause(ctx), errCostCeiling) {
				o.Error = "not launched: the run was interrupted"
			}
			done <- -1
			return false
		}
		g.Go(func() error {
			res := o.commander.Run(withPhase(ctx, events.Phase4))
			r.absorb(ctx, o, res)
			if finished != nil {
				finished(o)
			}
			done <- i
			return nil
		})
		return true
	}
	review := func() { startReview(outs, done) }
	var (
		waves *runfiles.WavesTelemetry
		werr  error
	)
	if w := scale.Waves; w.Enabled && len(outs) > 1 {
		waves, werr = r.deployWaves(ctx, w, outs, conc, launch, review)
	} else {
		review()
		for i := range outs {
			launch(i, nil)
		}
	}
	_ = g.Wait()
	close(done)
	r.rec.leave(events.Phase4, events.Phase4End{Bundles: countOK(outs)})
	// A failed canary (werr): no cross-review started, nothing is judged.
	return deployment{bundles: outs, waves: waves, atoms: arrived}, werr
}

func countOK(outs []*BundleOutcome) int {
	n := 0
	for _, o := range outs {
		if !o.Failed {
			n++
		}
	}
	return n
}

// hooks are the callbacks of the commander whose agent id is commander;
// its atoms' checked citations go to arrived.
// Their events belong to Phase 4, the commanders' execution, whichever phase
// was entered last (5 and 6 run beside it).
//
// The commander's one stream of what happened (Event) feeds the run's
// events and, with each worker's atom, the sandbox bridge. MayLaunch and
// MayAssign are questions asked before an agent starts (the cost ceiling;
// the sandbox breaker), not events, so they stay direct calls.
func (r *deps) hooks(commander string, arrived *arrivedChecks) commanders.Hooks {
	h := commanders.Hooks{
		Event:     func(e commanders.AgentEvent) { r.agentEvent(commander, arrived, e) },
		MayLaunch: r.meter.mayLaunch,
		Redact:    redactLeaks(r.rec.secrets),
	}
	if r.ws != nil {
		h.Tools = func(a commanders.Agent, cons commanders.Constraints) commanders.ToolSet {
			return r.toolsFor(a, cons.FileScope)
		}
	}
	if r.sb != nil {
		h.MayAssign = r.sb.mayAssign
	}
	h.Fallback = r.fallback
	return h
}

// fallback is agent a on the n-th (from 0) fallback model of its role
// (Roster.FallbacksFor), its own model left out: the recovery ladder's
// model swap. The agent keeps its id, so its requests keep their seeds.
func (r *deps) fallback(a commanders.Agent, n int) (commanders.Agent, bool) {
	var refs []providers.Ref
	for _, x := range r.plan.Roster.FallbacksFor(a.Role) {
		if x != a.Ref {
			refs = append(refs, x)
		}
	}
	if n < 0 || n >= len(refs) {
		return commanders.Agent{}, false
	}
	fa, err := r.agent(a.Role, a.ID, refs[n])
	if err != nil { // every fallback was built in Phase 0: not expected
		return commanders.Agent{}, false
	}
	return fa, true
}

// agentEvent turns what a commander reports into the run's events (Phase
// 4), counts the agents that started, checks each worker's atom's
// citations (checkArrived, into arrived) and hands the atom and its checks to the
// sandbox bridge (before the worker's agent_finish event: the leakage and
// breaker events it may emit come first).
func (r *deps) agentEvent(commander string, arrived *arrivedChecks, e commanders.AgentEvent) {
	a := e.Agent
	switch e.Kind {
	case commanders.AgentStarted:
		r.meter.noteLaunch(a.Role, a.ID)
		r.rec.emit(events.Event{Phase: events.Phase4, Kind: events.AgentStart, Role: a.Role, AgentID: a.ID, Model: a.Ref.String()})
	case commanders.AgentFinished:
		if e.Atom != nil {
			checks := r.checkArrived(arrived, *e.Atom)
			if r.sb != nil {
				r.sb.atomDone(commander, *e.Atom, checks)
			}
		}
		r.rec.emit(events.Event{Phase: events.Phase4, Kind: events.AgentFinish, Role: a.Role, AgentID: a.ID, Model: a.Ref.String(),
			Data: events.AgentFinishData{Status: e.Status, FailureClass: string(e.Class)}})
	case commanders.AgentRecovery:
		r.recovery(events.Phase4, a, *e.Recovery)
	case commanders.AgentRefused:
		r.rec.emit(events.Event{Phase: events.Phase4, Kind: events.DepthGuard, AgentID: a.ID,
			Message: fmt.Sprintf("plan asked for %d children; config allows %d", e.Asked, e.Allowed),
			Data:    events.DepthGuardData{Asked: e.Asked, Allowed: e.Allowed}})
	}
}

// absorb records a commander's result in its outcome and writes the bundle.
// ctx is the commanders' context: a commander cut off by its cancellation
// is cancelled, not failed with a provider's class (see cutOff).
func (r *deps) absorb(ctx context.Context, o *BundleOutcome, res commanders.Result) {
	o.result = res
	o.Bundle, o.Salvaged, o.Failed = res.Bundle, res.Salvaged, res.Failed
	o.FailureClass, o.Error = res.Class, res.Error
	o.Atoms, o.Repairs, o.SchemaFails, o.Refusals = len(res.Atoms), res.Repairs, res.SchemaFails, res.Refusals
	o.Degraded, o.DroppedShards = nil, res.Dropped
	for _, a := range res.Atoms {
		if a.Failed {
			o.AtomsFailed++
		}
		if a.Degraded {
			o.Degraded = append(o.Degraded, commanders.Degraded{Unit: commanders.UnitAtom, UnitID: a.BriefID, Detail: "salvaged from an answer that failed its schema: " + a.Error})
		}
		o.LeakReport = append(o.LeakReport, a.Leaks...)
	}
	o.Degraded = append(o.Degraded, res.Degraded...)
	o.LeakReport = append(o.LeakReport, res.Leaks...)
	o.Leaks = len(o.LeakReport)
	r.cutOff(ctx, o, res)
	r.measureCompleteness(o, res.Atoms)
	if o.Failed {
		r.rec.emit(events.Event{Phase: events.Phase4, Kind: events.Failure, Role: commanders.RoleCommander, AgentID: res.CommanderID, Model: res.Model,
			Message: o.Error, Data: events.FailureData{FailureClass: string(o.FailureClass), Domain: res.Domain}})
	}
	r.writeBundle(o)
}

// measureCompleteness records how many of its planned atoms the bundle
// rests on and marks it below its atom share (completeness.min_atom_share)
// when it exists on fewer. Only a bundle whose plan gave it atoms is
// subject; a failed one has nothing to measure.
func (r *deps) measureCompleteness(o *BundleOutcome, atoms []commanders.AtomResult) {
	o.AtomsPlanned, o.AtomsFinished = teamWidth(r.plan), commanders.FinishedAtoms(atoms)
	share := r.cfg.Completeness.MinAtomShare
	o.BelowAtomShare = !o.Failed && o.AtomsPlanned > 0 && share > 0 &&
		float64(min(o.AtomsFinished, o.AtomsPlanned)) < share*float64(o.AtomsPlanned)
}

// cutOff reclassifies a commander that failed because the run's execution
// context was cancelled: by Ctrl-C (class cancelled), or by the cost ceiling,
// in which case the atoms its workers finished become a salvaged bundle
// (no LLM call: the ceiling is spent) and the bundle is not failed. A
// mission timeout keeps its timeout class.
func (r *deps) cutOff(ctx context.Context, o *BundleOutcome, res commanders.Result) {
	if !o.Failed || ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return
	}
	if !errors.Is(context.Cause(ctx), errCostCeiling) {
		o.FailureClass, o.Error = ClassCancelled, "cancelled: the run was interrupted ("+res.Error+")"
		return
	}
	if b, n := commanders.SalvageAtoms(o.Domain, res.Atoms, "the cost ceiling stopped the commander before it assembled its bundle"); n > 0 {
		o.Bundle, o.Salvaged, o.Failed, o.FailureClass, o.Error = b, true, false, providers.ClassNone, ""
		return
	}
	o.FailureClass, o.Error = ClassCancelled, "stopped by the cost ceiling before any worker finished ("+res.Error+")"
}

// The agent IDs of a domain's team. The domain is part of each ID so that
// events name it; Plan.DomainOf reads it back, so no consumer parses IDs.
const (
	commanderPrefix = "commander-"
	squadLeadPrefix = "squadlead-"
	workerPrefix    = "worker-"
)

func commanderID(domain string) string { return commanderPrefix + domain }

// squadLeadID is the j-th (from 0) squad lead of domain.
func squadLeadID(domain string, j int) string {
	return fmt.Sprintf("%s%s-%02d", squadLeadPrefix, domain, j+1)
}

// workerID is the j-th (from 0) worker of a domain's squad lead lead (from
// 0), or of the commander itself when lead < 0.
func workerID(domain string, lead, j int) string {
	if lead < 0 {
		return fmt.Sprintf("%s%s-%02d", workerPrefix, domain, j+1)
	}
	return fmt.Sprintf("%s%s-%02d-%02d", workerPrefix, domain, lead+1, j+1)
}

// DomainOf returns the domain of the plan whose team (commander, squad
// leads, workers) agentID belongs to, and false for an agent of no domain
// (nexus, seal author, judge, reviewers, synthesizer).
func (p Plan) DomainOf(agentID string) (string, bool) {
	for _, d := range p.Domains {
		if agentID == commanderID(d) {
			return d, true
		}
		for _, prefix := range []string{squadLeadPrefix, workerPrefix} {
			if rest, ok := strings.CutPrefix(agentID, prefix+d+"-"); ok && rest != "" {
				return d, true
			}
		}
	}
	return "", false
}
