package nexus

import (
	"context"
	"fmt"
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

// runInputs are what a run is given once Phase 0 prepared it: the
// options, the plan, the loaded ground truth, the previous run of a
// follow-up and, for a resumed run, the envelope it had sealed. The
// Mission holds them from Prepare on; the run's parts (deps) get them
// when the run directory opens.
type runInputs struct {
	opts Options
	plan Plan
	ev   evidenceSetup  // ground truth and a test's verifier (evidence.go)
	fu   *followUpSetup // the previous run of a follow-up; nil without one (followup.go)
	// storedEnv is the envelope a resumed run had sealed (nil otherwise):
	// Phase 1.5 must seal the same again before it writes anything.
	storedEnv *shadow.Envelope
}

// deps are the shared parts of one run under way, and nothing a phase
// returns: what it was given (runInputs, config, run directory) and its
// parts, each with one job: the recorder (phases, events, transcripts),
// the meter (usage, cost ceiling, launches), the provider pool
// (providers, breakers, limits, built once), the sandbox bridge, the
// workspace. Phase functions are methods
// on it that take their inputs as parameters and return their outputs;
// the pipeline (run.go) passes one phase's output to the next and the
// run's one ending assembles the Result from them.
type deps struct {
	runInputs
	cfg    *config.Config
	dir    rundir.Dir
	lock   *rundir.Lock // the run directory's lock, released when the run ends
	rec    *recorder
	meter  *meter
	pool   *providerPool
	factor float64 // the personality's timeout factor (timeoutFactor)
	start  time.Time

	sb *missionSandbox // the sandbox bridge; nil when the sandbox is off
	ws *workspace.FS   // the workspace the agents read; nil without one

	resumed *ResumeInfo // a resumed run's attempt and journal (journal_resume.go); nil otherwise

	// runSealed runs another mission against a sealed envelope (Prepare
	// with this run's provider wrap and limits, then RunSealed): Phase 8's
	// replays. The Mission API provides it.
	runSealed func(ctx context.Context, o Options, s *Sealed) (*Result, error)
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

// scaled applies the personality's timeout factor.
func (r *deps) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * r.factor)
}

func (r *deps) settings() commanders.Settings {
	s := commanders.Settings{Seed: r.plan.Seed}
	if pers, ok := r.cfg.Personalities[r.plan.Personality]; ok {
		s.Temperature = providers.Float(pers.Temperature)
	}
	return s
}

func (r *deps) agent(role, id string, ref providers.Ref) (commanders.Agent, error) {
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

// recovery records one attempt of a recovery ladder's step of a unit agent
// a works on: a recovery event (a model_swap event first for a model
// swap) and the telemetry's counts.
func (r *deps) recovery(ph events.Phase, a commanders.Agent, s commanders.RecoveryStep) {
	if s.Step == commanders.StepModelSwap {
		r.rec.emit(events.Event{Phase: ph, Kind: events.ModelSwap, Role: a.Role, AgentID: a.ID, Model: s.To.String(),
			Message: fmt.Sprintf("%s %s: %s -> %s (recovery ladder, %s %s)", a.Role, a.ID, s.From, s.To, s.Unit, s.UnitID),
			Data:    events.ModelSwapData{Role: a.Role, AgentID: a.ID, From: s.From.String(), To: s.To.String(), Reason: events.SwapLadder}})
	}
	r.meter.noteRecovery(s.Unit, s.Step, s.OK)
	model := a.Ref
	if !s.To.IsZero() {
		model = s.To
	}
	outcome := "failed"
	if s.OK {
		outcome = "recovered"
	}
	r.rec.emit(events.Event{Phase: ph, Kind: events.Recovery, Role: a.Role, AgentID: a.ID, Model: model.String(),
		Message: fmt.Sprintf("%s %s: %s #%d %s", s.Unit, s.UnitID, s.Step, s.Attempt, outcome),
		Data:    events.RecoveryData{Unit: s.Unit, UnitID: s.UnitID, Step: s.Step, Attempt: s.Attempt, OK: s.OK, Detail: s.Detail}})
}

// writeBundle writes bundles/<id>.json: the outcome, its plan and atoms
// and, once evidence was measured (o.checks, Phase 7 with a workspace),
// the counts of the bundle and of each atom that finished.
func (r *deps) writeBundle(o *BundleOutcome) {
	rec := map[string]any{
		"id": o.ID, "domain": o.Domain, "commander": o.Commander, "model": o.Model, "failed": o.Failed,
		"salvaged": o.Salvaged, "failure_class": o.FailureClass, "error": o.Error, "bundle": o.Bundle,
		"plan": o.result.Plan, "atoms": o.result.Atoms, "leaks": o.LeakReport,
	}
	if len(o.Degraded) > 0 {
		rec["degraded"] = o.Degraded
	}
	if len(o.DroppedShards) > 0 {
		rec["dropped_shards"] = o.DroppedShards
	}
	rec["atoms_planned"], rec["atoms_finished"] = o.AtomsPlanned, o.AtomsFinished
	if o.BelowAtomShare {
		rec["below_atom_share"] = true
	}
	if o.checks != nil {
		rec["evidence"], rec["atom_evidence"] = o.Evidence, atomCountsOf(o)
	}
	_ = r.dir.WriteJSON("bundles/"+o.ID+".json", rec)
}

// resumeInfo is the run's resume record, with the call counts so far; nil
// for a run that was not resumed.
func (r *deps) resumeInfo() (*ResumeInfo, *runfiles.ResumeTelemetry) {
	if r.resumed == nil {
		return nil, nil
	}
	ri := *r.resumed
	ri.ReplayedCalls, ri.FreshCalls = r.pool.replayedCalls.Load(), r.pool.freshCalls.Load()
	return &ri, &runfiles.ResumeTelemetry{Attempt: ri.Attempt, ReplayedCalls: ri.ReplayedCalls, FreshCalls: ri.FreshCalls}
}
