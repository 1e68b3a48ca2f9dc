package nexus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
)

// Mission is a prepared mission: Phase 0 (intake, roster, plan) is done,
// no LLM call was made and nothing was written. Seal runs Phases 1 and
// 1.5; Run runs the mission to its end (sealing first when Seal was not
// called); RunSealed runs it against an envelope sealed by another mission
// (several contenders judged against the same criteria). A Mission runs
// once; its methods are safe to call from one goroutine at a time.
type Mission struct {
	runInputs // options, plan, ground truth, follow-up, a resumed run's envelope
	wrap      func(providers.Ref, providers.Provider) providers.Provider
	limits    *providers.LimitSet
	observers []events.Observer
	// missionRaw is the mission text as given (front matter included): its
	// hash goes to run.json.
	missionRaw string
	// resume is set by Resume: the run continues in its directory.
	resume *resumeState
	clock  breakerClock // the circuit breakers' time (nil: the wall clock; tests inject one)

	mu    sync.Mutex
	r     *deps        // the run's shared parts; nil until the run directory exists
	out   phaseOutputs // what the phases returned so far (Seal, then Run)
	res   *Result      // assembled by the run's ending; nil until it ended
	ended bool
	err   error
}

// LoadSealed reads what a run directory sealed (decomposition.json and
// sealed/envelope.json) and verifies the envelope's hash, so a sealed
// mission can be reused after the process that sealed it ended (compare
// --resume).
func LoadSealed(runDir string) (*Sealed, error) {
	envPath := runfiles.EnvelopePath(runDir)
	env, err := shadow.LoadSealed(envPath)
	if err != nil {
		return nil, err
	}
	if err := env.Verify(); err != nil {
		return nil, fmt.Errorf("stored envelope %s: %w", envPath, err)
	}
	var dec Decomposition
	decPath := filepath.Join(runDir, runfiles.DecompositionFile)
	b, err := rundir.ReadFile(decPath)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &dec); err != nil {
		return nil, fmt.Errorf("%s: %w", decPath, err)
	}
	return &Sealed{Decomposition: dec, Envelope: env}, nil
}

// Option configures Prepare beyond Options.
type Option func(*Mission)

// WithProviderWrap wraps every provider of the mission before recording,
// so what it answers (say, a cache) is still recorded as a call with its
// tokens, cost and latency.
func WithProviderWrap(wrap func(ref providers.Ref, p providers.Provider) providers.Provider) Option {
	return func(m *Mission) { m.wrap = wrap }
}

// WithLimits makes the mission use ls for each provider kind's
// concurrency cap and rate limit, so missions going on at once share them.
// Default: one set per mission, shared by every model of a kind within it.
func WithLimits(ls *providers.LimitSet) Option {
	return func(m *Mission) { m.limits = ls }
}

// Prepare is Phase 0: it validates the mission and options and computes the
// plan (Plan: what a briefing shows). It makes no LLM call and writes
// nothing.
func Prepare(o Options, opts ...Option) (*Mission, error) {
	raw := o.Mission
	o, err := resolveWorkspace(o)
	if err != nil {
		return nil, err
	}
	plan, err := intake(o)
	if err != nil {
		return nil, err
	}
	// Opened once now: a .swarmignore that cannot be read is bad input
	// before the briefing, and the lines it drops are in the plan.
	ws, err := openWorkspace(o)
	if err != nil {
		return nil, err
	}
	if ws != nil {
		plan.WorkspaceWarnings = ws.Warnings()
		closeWorkspace(ws)
	}
	m := &Mission{runInputs: runInputs{opts: o, plan: plan}, observers: append([]events.Observer(nil), o.Observers...), missionRaw: raw}
	if m.ev, err = prepareEvidence(o, o.Workspace); err != nil { // o.Workspace is resolved (flag, front matter, config)
		return nil, err
	}
	if m.fu, err = prepareFollowUp(o); err != nil {
		return nil, err
	}
	for _, f := range opts {
		f(m)
	}
	if m.limits == nil {
		m.limits = &providers.LimitSet{}
	}
	return m, nil
}

// Plan is what the mission will deploy.
func (m *Mission) Plan() Plan { return m.plan }

// Observe adds an observer of every event (see Observer). Call it before
// Seal or Run.
func (m *Mission) Observe(o events.Observer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.observers = append(m.observers, o)
}

// Seal runs Phases 1 and 1.5: the decomposition and the sealed envelope,
// written to the run directory (which it creates). The mission then either
// runs (Run) or ends sealed (Close: result.json says "sealed"). On failure
// the mission is over: its result is written and Run returns the same error.
func (m *Mission) Seal(ctx context.Context) (*Sealed, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.sealLocked(ctx); err != nil {
		return nil, err
	}
	return m.out.sealed, nil
}

// Run runs the mission to its end (phases 1-8, or 2-8 after Seal). Every
// file is written to the run directory as it happens; on cancellation what
// exists is written and ErrInterrupted is returned with the partial Result.
func (m *Mission) Run(ctx context.Context) (*Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runLocked(ctx, nil)
}

// RunSealed runs the mission against s, sealed by another mission (the
// same mission text): Phases 1 and 1.5 make no LLM call, and the bundles
// are judged against s's criteria. It is how several contenders are
// compared under one envelope.
func (m *Mission) RunSealed(ctx context.Context, s *Sealed) (*Result, error) {
	if s == nil || s.Envelope == nil {
		return nil, fmt.Errorf("%w: RunSealed needs a sealed envelope", config.ErrBadInput)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.r != nil {
		return nil, fmt.Errorf("%w: RunSealed on a mission that already started", config.ErrBadInput)
	}
	return m.runLocked(ctx, s)
}

// Close ends a mission that was sealed and will not run: it writes
// result.json (status sealed) and telemetry.json and closes the logs. It
// does nothing for a mission that ran or never started (but releases the
// run directory of a resumed mission that never started).
func (m *Mission) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.r == nil && m.resume != nil {
		m.resume.lock.Unlock() // a resumed mission that never ran lets its directory go
		m.resume.lock = nil
	}
	if m.r == nil || m.ended {
		return nil
	}
	m.end(context.Background(), nil, true)
	return m.err
}

// sealLocked runs the pipeline to the end of Phase 1.5 (Seal); a failure
// ends the mission.
func (m *Mission) sealLocked(ctx context.Context) error {
	if m.ended {
		if m.err != nil {
			return m.err
		}
		return fmt.Errorf("%w: the mission has ended", config.ErrBadInput)
	}
	if m.out.sealed != nil {
		return nil
	}
	return m.pipeline(ctx, pipelineInput{sealOnly: true})
}

// runLocked runs the pipeline to its end (from Phase 2 after Seal; with
// preset, Phases 1 and 1.5 reuse it) and ends the mission.
func (m *Mission) runLocked(ctx context.Context, preset *Sealed) (*Result, error) {
	if m.ended {
		return m.res, m.err
	}
	if err := m.pipeline(ctx, pipelineInput{preset: preset}); err != nil {
		return m.res, err
	}
	m.end(ctx, nil, false)
	return m.res, m.err
}

// pipeline opens the run when it is not open yet and runs the pipeline
// (run.go) under ctx, keeping what the phases returned; an error ends the
// mission (and is the mission's error). in.sealOnly leaves it open.
func (m *Mission) pipeline(ctx context.Context, in pipelineInput) error {
	if m.r == nil {
		if err := m.open(); err != nil {
			return err
		}
	}
	// The caller's cancellation is an interruption; a failed journal
	// write (guard) stops the run too, but is not one.
	m.r.rec.watch(ctx.Done())
	ctx, release := m.r.rec.guard(ctx)
	defer release()
	out, err := m.r.pipeline(ctx, m.out, in)
	m.out = out
	if err != nil {
		m.end(ctx, err, false)
		return m.err
	}
	return nil
}

// open checks that every model of the roster can be built, creates the run
// directory and its logs, and writes mission.md and config.effective.yml.
func (m *Mission) open() error {
	o, plan := m.opts, m.plan
	if o.Registry == nil {
		return fmt.Errorf("%w: no provider registry", config.ErrBadInput)
	}
	// A missing API key or an unknown model is bad input: say so before a
	// run directory exists or anything is spent.
	var unusable []string // every one, so a user fixes them in one go
	// The run's secret set: every key the config names, scrubbed from the
	// first file on, from every provider's errors, event and record.
	secrets := redact.NewSecrets(o.Config.KeyValues(o.Registry)...)
	built := map[string]providers.Provider{}
	for _, ref := range plan.Roster.Refs() {
		kc := o.Config.Providers[ref.Kind]
		kc.Redactor = secrets
		p, err := o.Registry.New(ref, kc)
		if err != nil {
			unusable = append(unusable, fmt.Sprintf("%s: %v", ref, err))
			continue
		}
		built[ref.String()] = p
	}
	if len(unusable) > 0 {
		return fmt.Errorf("%w: %s", config.ErrBadInput, strings.Join(unusable, "; "))
	}
	now := o.clock()
	// Without --out the run claims <run.out_dir>/<run-id> below, just
	// before writing to it; --out (and a resumed run's directory) is
	// checked now.
	dirPath := o.OutDir
	if m.resume == nil && dirPath != "" {
		if err := checkOutDir(dirPath, o.Force); err != nil {
			return err
		}
	}
	ws, err := openWorkspace(o)
	if err != nil {
		return err
	}
	defer func() {
		if m.r == nil { // the run did not open: end will not close it
			closeWorkspace(ws)
		}
	}()
	var mf *runfiles.Manifest
	if m.resume != nil {
		mf = m.resume.now // Resume made it (workspace tree hash included) from these options
	} else if mf, err = manifestFor(o, m.missionRaw, ws); err != nil {
		return err
	}
	if dirPath == "" {
		// Claimed exclusively: a run of the same mission started in the
		// same second gets <run-id>-2 (its run id too), never this
		// directory.
		var id string
		if dirPath, id, err = rundir.Claim(o.Config.Run.OutDir, plan.RunID); err != nil {
			return err
		}
		plan.RunID, m.plan.RunID = id, id
	}
	mf.RunID = plan.RunID
	var dir rundir.Dir
	var resumed *ResumeInfo
	// One process at a time in a run directory: a resumed run holds the
	// lock since Resume; a new one takes it as soon as its directory
	// exists, before writing anything else in it.
	var lock *rundir.Lock
	jo := journalOpen{runID: plan.RunID}
	if m.resume != nil {
		lock, jo = m.resume.lock, m.resume.journal
		m.resume.lock = nil
	} else {
		if err := os.MkdirAll(dirPath, 0o755); err != nil {
			return fmt.Errorf("create run directory: %w", err)
		}
		if lock, err = rundir.Acquire(dirPath); err != nil {
			return fmt.Errorf("%w: %w", config.ErrBadInput, err)
		}
		if jo.key, err = loadJournalKey(true); err != nil {
			lock.Unlock()
			return fmt.Errorf("%w: %w", config.ErrBadInput, err)
		}
	}
	opened := false
	defer func() {
		if !opened {
			lock.Unlock()
		}
	}()
	if m.resume != nil {
		if dir, resumed, err = m.reopen(dirPath, mf); err != nil {
			return err
		}
	} else if dir, err = rundir.Create(dirPath, o.Force); err != nil {
		return err
	}
	dir = dir.WithSecrets(secrets)
	if err := dir.WriteJSON(runfiles.ManifestFile, mf); err != nil {
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	jr, load, err := openJournal(dir.Join(runfiles.JournalFile), jo)
	if err != nil {
		if errors.Is(err, ErrJournal) {
			err = fmt.Errorf("%w: %w", config.ErrBadInput, err)
		}
		return err
	}
	evlog, err := newEventLog(dir.Join(runfiles.EventsFile), now, o.KeepEvents, m.observers...)
	if err != nil {
		jr.close()
		return err
	}
	transcripts, err := newTranscriptLog(dir.Join(runfiles.TranscriptsFile), o.KeepPrompts)
	if err != nil {
		jr.close()
		evlog.close()
		return err
	}
	evlog.secrets, transcripts.secrets, jr.secrets = secrets, secrets, secrets
	rec := &recorder{secrets: secrets, events: evlog, transcripts: transcripts, journal: jr}
	jr.onFail = rec.writeFailed
	if resumed != nil {
		resumed.JournalRecords, resumed.TornLineDropped, resumed.UnsignedRecords = load.Records, load.Torn, load.Unsigned
		rec.emit(events.Event{Phase: events.Phase0, Kind: events.RunResumed, Message: resumeMessage(resumed),
			Data: events.ResumedData{Attempt: resumed.Attempt, JournalRecords: load.Records, TornLineDropped: load.Torn, UnsignedRecords: load.Unsigned, EnvelopeStored: m.storedEnv != nil, Changed: resumed.Changed}})
	}
	cfg := o.Config
	r := &deps{runInputs: m.runInputs, cfg: cfg, dir: dir, rec: rec, factor: timeoutFactor(cfg, plan.Personality), start: now(),
		meter: newMeter(cfg.PriceOf, plan.CostCeilingUSD, rec), ws: ws}
	r.plan = plan // with its run id (claimed above)
	wrap, limits := m.wrap, m.limits
	r.runSealed = func(ctx context.Context, o Options, s *Sealed) (*Result, error) {
		sub, err := Prepare(o, WithProviderWrap(wrap), WithLimits(limits))
		if err != nil {
			return nil, err
		}
		return sub.RunSealed(ctx, s)
	}
	r.pool = &providerPool{cfg: cfg, reg: o.Registry, built: built, wrap: m.wrap, limits: m.limits, personality: plan.Personality,
		factor: r.factor, rec: rec, meter: r.meter, provs: map[string]*providers.Stack{}, journal: jr,
		fallbacks: plan.Roster.Fallbacks, clock: m.clock}
	r.resumed = resumed
	if scale, err := cfg.ScaleFor(plan.Scale); err == nil {
		r.pool.scaleCall = scale.Timeouts.Call
	}
	r.meter.noteLaunch(commanders.RoleNexus, "nexus")
	if err := dir.WriteFile(runfiles.MissionFile, []byte(strings.TrimSpace(o.Mission)+"\n"), 0o644); err != nil {
		rec.close()
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	if eff, err := cfg.Effective(); err == nil {
		if err := dir.WriteFile(runfiles.EffectiveConfigFile, eff, 0o644); err != nil {
			rec.close()
			return fmt.Errorf("%w: %w", ErrWrite, err)
		}
	}
	if cfg.Sandbox.Enabled {
		if r.sb, err = newMissionSandbox(cfg.Sandbox, cfg.CircuitBreaker, rec.emit, r.meter.noteTrip); err != nil {
			rec.close()
			return err
		}
	}
	r.lock, opened = lock, true
	m.r = r
	return nil
}

// end finishes the run however it ended (err; sealOnly: closed after
// sealing): it maps a cancellation to ErrInterrupted, goes through the
// run's one ending (the Result assembled from the phases' outputs,
// concluded and written with the final files), emits run_end and closes
// the logs.
func (m *Mission) end(ctx context.Context, err error, sealOnly bool) {
	r := m.r
	defer r.lock.Unlock() // after the logs are closed (below)
	defer closeWorkspace(r.ws)
	m.ended = true
	if werr := r.writeFailure(false); werr != nil {
		// A write failed: the journal's stopped the run; any other ends
		// it as failed, whatever else happened (said too).
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrInterrupted) {
			werr = fmt.Errorf("%w; the run had failed too: %v", werr, err)
		}
		err = werr
	} else if ctx.Err() != nil && err == nil {
		err = ErrInterrupted
	}
	if err != nil && errors.Is(err, context.Canceled) {
		err = ErrInterrupted
	}
	// Every ending (complete, a failure in any phase, an interruption, a
	// mission closed after sealing) writes the final files here, so
	// result.json always exists.
	res := r.ending(m.out, err, sealOnly)
	m.res = res
	if werr := r.writeFailure(false); werr != nil && err == nil {
		err = werr // a final file could not be written: result.json says failed
	}
	// Nothing is said to be complete that is not on disk: the final files
	// were synced as they were written; the logs are synced now.
	if werr := r.writeFailure(true); werr != nil && !errors.Is(err, ErrWrite) {
		err = werr
		res.Interrupted = false
	}
	res.Events = r.rec.events.events()
	res.Transcripts = r.rec.transcripts.prompts
	end := events.RunEndData{OK: res.OK && err == nil, Status: res.Status, Phase: res.Phase, Dir: r.dir.Path,
		BundlesPlanned: res.Aggregate.Planned, BundlesScored: res.Aggregate.Scored, FailureClass: string(res.FailureClass)}
	m.err = err
	msg := "run complete"
	switch {
	case err != nil:
		msg = err.Error()
	case !res.OK:
		msg = "run " + res.Status + ": " + res.Error
	}
	r.rec.emit(events.Event{Kind: events.RunEnd, Message: msg, Data: end})
	if cerr := r.rec.close(); cerr != nil && !errors.Is(m.err, ErrWrite) {
		// The last lines (run_end) did not reach the disk.
		m.err = fmt.Errorf("%w: %w", ErrWrite, cerr)
		res.Interrupted = false
	}
}

// Run executes a mission end to end (Prepare, then Mission.Run): phases
// 0-8. Everything is written to the run directory as it happens; on
// cancellation what exists is written and ErrInterrupted is returned with
// the partial Result.
func Run(ctx context.Context, o Options) (*Result, error) {
	m, err := Prepare(o)
	if err != nil {
		return nil, err
	}
	return m.Run(ctx)
}

// FollowUpInfo is what a prepared mission passes on from the previous run
// (its Chain holds the predecessors only); nil without Options.FollowUp.
func (m *Mission) FollowUpInfo() *runfiles.FollowUp {
	if m.fu == nil {
		return nil
	}
	fu := m.fu.info
	return &fu
}
