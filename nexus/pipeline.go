package nexus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/vocab"
)

// Preset carries a decomposition and sealed envelope made earlier, so several
// runs are judged against the same criteria (compare).
type Preset struct {
	Decomposition Decomposition
	Envelope      *shadow.Envelope
}

// BundleOutcome is everything a run learned about one domain's bundle.
type BundleOutcome struct {
	ID           string                  `json:"id"`
	Domain       string                  `json:"domain"`
	Commander    string                  `json:"commander"`
	Model        string                  `json:"model"`
	Bundle       commanders.Bundle       `json:"bundle"`
	Salvaged     bool                    `json:"salvaged"`
	Failed       bool                    `json:"failed"`
	FailureClass providers.Class         `json:"failure_class,omitempty"`
	Error        string                  `json:"error,omitempty"`
	Atoms        int                     `json:"atoms"`
	AtomsFailed  int                     `json:"atoms_failed"`
	Repairs      int                     `json:"repairs"`
	SchemaFails  int                     `json:"schema_violations"`
	Refusals     int                     `json:"depth_guard_refusals"`
	Initial      *shadow.Evaluation      `json:"initial_evaluation,omitempty"`
	Final        *shadow.Evaluation      `json:"final_evaluation,omitempty"`
	Hardening    *shadow.HardeningResult `json:"hardening,omitempty"`
	ShadowScore  *float64                `json:"shadow_score,omitempty"`
	Level        string                  `json:"level,omitempty"`
	Gate         *shadow.GateDecision    `json:"gate,omitempty"`
	Review       MetaReview              `json:"review"`
	Tier         string                  `json:"tier"`
	Formula      FormulaInputs           `json:"formula_inputs"`
	FormulaScore float64                 `json:"formula_score"`
	InSynthesis  bool                    `json:"in_synthesis"`
	Leaks        int                     `json:"leakage_hits"`
	// LeakReport lists every secret redacted from the bundle, its revisions
	// and its workers' results: kind and place, never the secret.
	LeakReport []commanders.Leak `json:"leaks,omitempty"`

	result    commanders.Result
	commander *commanders.Commander
	ref       providers.Ref // the commander's model (Model is its text)
}

// Result is a finished (or interrupted) run. Its Status says how the run
// ended; only a complete run (OK) judged every planned bundle.
type Result struct {
	// OK is true when the run completed and judged every planned bundle
	// with valid shadow scoring (or, with StopAfterSeal, sealed).
	OK bool `json:"ok"`
	// Status is one of the Status* constants.
	Status string `json:"status"`
	// Error says why the run is not OK; FailureClass classifies it and
	// Phase is the phase the run ended in.
	Error        string          `json:"error,omitempty"`
	FailureClass providers.Class `json:"failure_class,omitempty"`
	Phase        string          `json:"phase"`

	Plan          Plan             `json:"plan"`
	Dir           string           `json:"dir"`
	SealedHash    string           `json:"sealed_hash"`
	TaskHash      string           `json:"task_hash"`
	Decomposition Decomposition    `json:"decomposition"`
	Bundles       []*BundleOutcome `json:"bundles"`
	Reviews       []ReviewRecord   `json:"reviews"`
	Corrections   []Correction     `json:"corrections"`
	Synthesis     *Synthesis       `json:"synthesis,omitempty"`
	ShadowValid   bool             `json:"shadow_valid"`
	ShadowReason  string           `json:"shadow_invalid_reason,omitempty"`
	Aggregate     ShadowAggregate  `json:"shadow_aggregate"`
	Telemetry     Telemetry        `json:"telemetry"`
	Interrupted   bool             `json:"interrupted"`
	Transcripts   []Transcript     `json:"-"`
	Events        []Event          `json:"-"` // only with Options.KeepEvents
	Sandbox       any              `json:"-"`
}

// ShadowAggregate summarises per-bundle Shadow Scores against the bundles
// planned (one per commander). Planned = Scored + Failed + Unjudged.
type ShadowAggregate struct {
	// Median and Mean are null when no bundle was judged.
	Median *float64 `json:"median"`
	Mean   *float64 `json:"mean"`
	// Level is the median's level, or "none" when no bundle was judged.
	Level    string `json:"level"`
	Planned  int    `json:"planned"`
	Scored   int    `json:"scored"`
	Failed   int    `json:"failed"`   // no bundle to judge (the commander failed or never ran)
	Unjudged int    `json:"unjudged"` // a bundle exists but was not judged
	Salvaged int    `json:"salvaged"` // of the bundles, built from finished atoms after the cost ceiling
}

// Run executes a mission end to end: phases 0-8. Everything is written to
// the run directory as it happens; on cancellation what exists is written
// and ErrInterrupted is returned with the partial Result.
func Run(ctx context.Context, o Options) (*Result, error) {
	plan, err := Intake(o)
	if err != nil {
		return nil, err
	}
	if o.Registry == nil {
		return nil, fmt.Errorf("%w: no provider registry", ErrBadInput)
	}
	// A missing API key or an unknown model is bad input: say so before a
	// run directory exists or anything is spent.
	var unusable []string // every one, so a user fixes them in one go
	built := map[string]providers.Provider{}
	for _, ref := range plan.Roster.Refs() {
		p, err := o.Registry.New(ref, o.Config.Providers[ref.Kind])
		if err != nil {
			unusable = append(unusable, fmt.Sprintf("%s: %v", ref, err))
			continue
		}
		built[ref.String()] = p
	}
	if len(unusable) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrBadInput, strings.Join(unusable, "; "))
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	dirPath := o.OutDir
	if dirPath == "" {
		dirPath = o.Config.Run.OutDir + string(os.PathSeparator) + plan.RunID
	}
	dir, err := prepareDir(dirPath, o.Force)
	if err != nil {
		return nil, err
	}
	r := &runState{opts: o, cfg: o.Config, plan: plan, dir: dir, built: built, byRole: map[string]*usageStats{}, byModel: map[string]*usageStats{},
		classes: map[providers.Class]int{}, provs: map[string]providers.Provider{}, breakers: map[string]*breaker{}, start: now()}
	r.noteLaunch(commanders.RoleNexus, "nexus")
	r.events, err = newEventLog(dir.Join("events.jsonl"), now, o.KeepEvents, o.Observers...)
	if err != nil {
		return nil, err
	}
	defer r.events.close()
	r.transcripts, err = newTranscriptLog(dir.Join("transcripts.jsonl"), o.KeepPrompts)
	if err != nil {
		return nil, err
	}
	defer r.transcripts.close()
	if err := dir.WriteFile("mission.md", []byte(strings.TrimSpace(o.Mission)+"\n"), 0o644); err != nil {
		return nil, err
	}
	if eff, err := o.Config.Effective(); err == nil {
		_ = dir.WriteFile("config.effective.yml", eff, 0o644)
	}
	if o.Config.Sandbox.Enabled {
		if r.sb, err = newMissionSandbox(o.Config.Sandbox, o.Config.CircuitBreaker); err != nil {
			return nil, err
		}
	}
	r.limits = o.Limits
	if r.limits == nil {
		r.limits = &providers.LimitSet{}
	}
	res := &Result{Plan: plan, Dir: dir.Path, ShadowValid: true}
	r.done = ctx.Done()
	err = r.run(ctx, res)
	if ctx.Err() != nil && err == nil {
		err = ErrInterrupted
	}
	if err != nil && errors.Is(err, context.Canceled) {
		err = ErrInterrupted
	}
	res.Interrupted = errors.Is(err, ErrInterrupted)
	if err != nil || res.Status == "" {
		// Phase 8 wrote the final files of a run that got there; any other
		// ending (a failure in any phase, an interruption, StopAfterSeal)
		// writes them here, so result.json always exists.
		r.conclude(res, err)
		r.writeFinal(res)
	}
	res.Events = r.events.events()
	res.Transcripts = r.transcripts.prompts
	end := map[string]any{"ok": res.OK, "status": res.Status, "phase": res.Phase, "dir": dir.Path,
		"bundles_planned": res.Aggregate.Planned, "bundles_scored": res.Aggregate.Scored}
	if res.FailureClass != "" {
		end["failure_class"] = string(res.FailureClass)
	}
	if err != nil {
		r.events.emit(Event{Kind: EvRunEnd, Message: err.Error(), Data: end})
		return res, err
	}
	msg := "run complete"
	if !res.OK {
		msg = "run " + res.Status + ": " + res.Error
	}
	r.events.emit(Event{Kind: EvRunEnd, Message: msg, Data: end})
	return res, nil
}

func (r *runState) run(ctx context.Context, res *Result) error {
	p := r.plan
	r.enter("0", "intake")
	r.events.emit(Event{Phase: "0", Kind: EvBriefing, Message: p.MissionTitle, Data: map[string]any{
		"run_id": p.RunID, "scale": p.Scale, "personality": p.Personality, "agents": p.Agents, "domains": p.Domains,
		"commanders": p.Commanders, "squad_leads": p.SquadLeads, "workers": p.Workers, "reviewers": p.Reviewers,
		"criteria": p.Criteria, "cost_ceiling_usd": p.CostCeilingUSD, "models": p.Roster, "seed": p.Seed,
	}})
	// Build (and cache) every provider of the roster now; Run has already
	// checked that each can be built.
	for _, ref := range p.Roster.Refs() {
		if _, err := r.provider(ref); err != nil {
			return err
		}
	}
	r.leave("0", nil)

	settings := r.settings()
	// Phase 1: decomposition.
	r.enter("1", "decomposition")
	var dec Decomposition
	if pre := r.opts.Preset; pre != nil {
		dec = pre.Decomposition.clone()
	} else {
		nexus, err := r.agent(commanders.RoleNexus, "nexus", p.Roster.Nexus)
		if err != nil {
			return err
		}
		user, err := prompts.Render("decomposition", map[string]any{
			"Mission": r.opts.Mission, "Scale": p.Scale,
			"DomainsLine": vocab.DomainsPrefix + strings.Join(p.Domains, ", "),
			"CountLine":   vocab.CountPrefix + fmt.Sprint(min(p.ChildrenPerCmd, 5)),
		})
		if err != nil {
			return err
		}
		dec, _, err = providers.StructuredRetry[Decomposition](ctx, nexus.Provider, agentRequest(nexus, settings, user, "decomposition"), 3)
		if err != nil {
			return fmt.Errorf("phase 1 decomposition: %w", err)
		}
	}
	if err := dec.normalise(p.Domains); err != nil {
		return fmt.Errorf("phase 1 decomposition: %w", err)
	}
	res.Decomposition = dec
	_ = r.dir.WriteJSON("decomposition.json", dec)
	r.leave("1", map[string]any{"domains": len(dec.Domains), "aspects": len(dec.Aspects)})

	// Phase 1.5: seal.
	r.enter("1.5", "seal acceptance criteria")
	env, err := r.seal(ctx, dec)
	if err != nil {
		return fmt.Errorf("phase 1.5 seal: %w", err)
	}
	res.SealedHash, res.TaskHash = env.SealedHash, env.TaskHash
	r.events.emit(Event{Phase: "1.5", Kind: EvSealed, Message: "criteria sealed before any commander starts",
		Data: map[string]any{"sealed_hash": env.SealedHash, "task_hash": env.TaskHash, "criteria_count": env.CriteriaCount}})
	r.leave("1.5", nil)
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.opts.StopAfterSeal {
		return nil
	}

	// Phase 2: capsules.
	r.enter("2", "context capsules")
	scale, _ := r.cfg.ScaleFor(p.Scale)
	tf := r.cfg.Personalities[p.Personality].TimeoutFactor
	if tf <= 0 {
		tf = 1
	}
	cons := commanders.Constraints{Timeout: time.Duration(float64(scale.Timeouts.Commander) * tf), MaxTokens: r.cfg.Run.MaxTokens[commanders.RoleCommander],
		FileScope: r.opts.FileScope}
	var capsules []commanders.Capsule
	for _, dom := range dec.Domains {
		c := buildCapsule(dec, dom, cons)
		if err := c.Validate(); err != nil {
			return fmt.Errorf("phase 2: %w", err)
		}
		capsules = append(capsules, c)
		_ = r.dir.WriteJSON("capsules/"+dom.Name+".json", c)
	}
	r.leave("2", map[string]any{"capsules": len(capsules)})

	// Phases 3-5: commanders run; cross-review starts when two bundles exist.
	execCtx, stopExec := context.WithCancelCause(ctx)
	defer stopExec(nil)
	stopAll := func() { stopExec(errCostCeiling) }
	if scale.Timeouts.Mission > 0 {
		var c context.CancelFunc
		execCtx, c = context.WithTimeout(execCtx, time.Duration(float64(scale.Timeouts.Mission)*tf))
		defer c()
	}
	r.mu.Lock()
	r.stopAll = stopAll
	r.mu.Unlock()
	r.enforceCeiling() // the ceiling may have been reached before any commander started
	// Phase 6 (shadow validation and hardening) runs beside Phases 4 and 5:
	// each bundle is judged as soon as it exists. Judging runs under ctx,
	// not execCtx: the cost ceiling never cancels it.
	judging := r.newShadowJudging(ctx, env)
	outcomes, reviews, err := r.deploy(execCtx, capsules, dec, settings, scale, judging.arrived)
	// The ceiling stops the commanders only: past this point it no longer
	// cancels anything (judging and synthesis use what exists).
	r.mu.Lock()
	r.stopAll = nil
	r.mu.Unlock()
	if err != nil {
		return err
	}
	res.Bundles = outcomes
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
	r.enter("7", "consensus and synthesis")
	r.consensus(res, reviews, dec)
	if err := r.synthesise(ctx, res, settings); err != nil {
		r.events.emit(Event{Phase: "7", Kind: EvFailure, Role: commanders.RoleSynthesizer, Message: err.Error(), Data: map[string]any{"failure_class": string(providers.ClassOf(err))}})
	}
	r.leave("7", nil)

	// Phase 8: output.
	r.enter("8", "action report and telemetry")
	if r.opts.Replays > 1 && r.sb != nil && res.ShadowValid {
		inc, reason, err := r.replayIncoherence(ctx, res, r.opts.Replays)
		if err != nil {
			r.events.emit(Event{Phase: "8", Kind: EvFailure, Message: "replays: " + err.Error()})
		} else {
			r.sb.bridge.SetIncoherence(inc, reason)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.conclude(res, nil)
	r.writeFinal(res)
	r.leave("8", map[string]any{"status": res.Status})
	return nil
}

// scaled applies the personality's timeout factor.
func (r *runState) scaled(d time.Duration) time.Duration {
	f := r.cfg.Personalities[r.plan.Personality].TimeoutFactor
	if f <= 0 {
		f = 1
	}
	return time.Duration(float64(d) * f)
}

func (r *runState) settings() commanders.Settings {
	s := commanders.Settings{Seed: r.plan.Seed}
	if pers, ok := r.cfg.Personalities[r.plan.Personality]; ok {
		s.Temperature = providers.Float(pers.Temperature)
	}
	return s
}

func (r *runState) agent(role, id string, ref providers.Ref) (commanders.Agent, error) {
	p, err := r.provider(ref)
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

// deploy runs Phase 3 (commander deployment), Phase 4 (execution and
// monitoring) and Phase 5 (cross-review, streaming as bundles arrive).
//
// onBundle is called with each bundle that exists (not failed), in arrival
// order, from one goroutine (Phase 6 starts judging it).
func (r *runState) deploy(ctx context.Context, capsules []commanders.Capsule, dec Decomposition, s commanders.Settings, scale Scale, onBundle func(*BundleOutcome)) ([]*BundleOutcome, []ReviewRecord, error) {
	p := r.plan
	r.enter("3", "commander deployment")
	conc := EffectiveConcurrency(r.cfg, p, scale)
	sem := semaphore.NewWeighted(int64(conc.N))
	outs := make([]*BundleOutcome, len(capsules))
	workerIdx := 0
	for i, c := range capsules {
		cref := p.Roster.Commanders[i%len(p.Roster.Commanders)]
		ca, err := r.agent(commanders.RoleCommander, "commander-"+c.Domain, cref)
		if err != nil {
			return nil, nil, err
		}
		cmd := &commanders.Commander{Agent: ca, Capsule: c, Settings: s, Sem: sem,
			Limits: commanders.Limits{Children: p.ChildrenPerCmd, WorkersPerLead: p.WorkersPerLead,
				SquadLeadTimeout: r.scaled(scale.Timeouts.SquadLead), WorkerTimeout: r.scaled(scale.Timeouts.Worker),
				SquadLeadMaxTokens: r.cfg.Run.MaxTokens[commanders.RoleSquadLead], WorkerMaxTokens: r.cfg.Run.MaxTokens[commanders.RoleWorker]},
			Hooks: r.hooks(),
		}
		if r.sb != nil {
			parent := ca.ID
			cmd.Hooks.MayAssign = r.sb.mayAssign
			cmd.Hooks.AtomDone = func(a commanders.AtomResult) { r.sb.atomDone(r, parent, a) }
		}
		base := workerIdx
		domain := c.Domain
		cmd.SquadLead = func(j int) commanders.Agent {
			a, _ := r.agent(commanders.RoleSquadLead, fmt.Sprintf("squadlead-%s-%02d", domain, j+1), p.Roster.SquadLead)
			return a
		}
		cmd.Worker = func(lead, j int) commanders.Agent {
			n := base + lead*max(1, p.WorkersPerLead) + j
			id := fmt.Sprintf("worker-%s-%02d", domain, j+1)
			if p.WorkersPerLead > 0 {
				id = fmt.Sprintf("worker-%s-%02d-%02d", domain, lead+1, j+1)
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
	r.leave("3", map[string]any{"commanders": len(outs), "concurrency": conc.N, "concurrency_rule": conc.Rule, "concurrency_detail": conc.Detail})

	r.enter("4", "execution and monitoring")
	done := make(chan int, len(outs))
	var g errgroup.Group
	for i, o := range outs {
		if ctx.Err() != nil || !r.mayLaunch() {
			o.Failed, o.FailureClass, o.Error = true, ClassCancelled, "not launched: the cost ceiling stopped new launches"
			if ctx.Err() != nil && !errors.Is(context.Cause(ctx), errCostCeiling) {
				o.Error = "not launched: the run was interrupted"
			}
			done <- -1
			continue
		}
		g.Go(func() error {
			res := o.commander.Run(withPhase(ctx, "4"))
			r.absorb(ctx, o, res)
			done <- i
			return nil
		})
	}
	reviewsCh := make(chan []ReviewRecord, 1)
	go func() { reviewsCh <- r.crossReview(ctx, outs, done, dec.Aspects, s, onBundle) }()
	_ = g.Wait()
	close(done)
	r.leave("4", map[string]any{"bundles": countOK(outs)})
	reviews := <-reviewsCh
	r.leave("5", map[string]any{"reviews": len(reviews)})
	return outs, reviews, nil
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

// hooks are the commanders' callbacks. Their events belong to Phase 4, the
// commanders' execution, whichever phase was entered last (5 and 6 run beside
// it).
func (r *runState) hooks() commanders.Hooks {
	return commanders.Hooks{
		AgentStarted: func(role, id, model string) {
			r.noteLaunch(role, id)
			r.events.emit(Event{Phase: "4", Kind: EvAgentStart, Role: role, AgentID: id, Model: model})
		},
		AgentFinished: func(role, id, model, status string, class providers.Class) {
			d := map[string]any{"status": status}
			if class != "" {
				d["failure_class"] = string(class)
			}
			r.events.emit(Event{Phase: "4", Kind: EvAgentFinish, Role: role, AgentID: id, Model: model, Data: d})
		},
		MayLaunch: r.mayLaunch,
		Redact:    redactLeaks,
		Refused: func(id string, asked, allowed int) {
			r.events.emit(Event{Phase: "4", Kind: EvDepthGuard, AgentID: id,
				Message: fmt.Sprintf("plan asked for %d children; config allows %d", asked, allowed),
				Data:    map[string]any{"asked": asked, "allowed": allowed}})
		},
	}
}

// absorb records a commander's result in its outcome and writes the bundle.
// ctx is the commanders' context: a commander cut off by its cancellation
// is cancelled, not failed with a provider's class (see cutOff).
func (r *runState) absorb(ctx context.Context, o *BundleOutcome, res commanders.Result) {
	o.result = res
	o.Bundle, o.Salvaged, o.Failed = res.Bundle, res.Salvaged, res.Failed
	o.FailureClass, o.Error = res.Class, res.Error
	o.Atoms, o.Repairs, o.SchemaFails, o.Refusals = len(res.Atoms), res.Repairs, res.SchemaFails, res.Refusals
	for _, a := range res.Atoms {
		if a.Failed {
			o.AtomsFailed++
		}
		o.LeakReport = append(o.LeakReport, a.Leaks...)
	}
	o.LeakReport = append(o.LeakReport, res.Leaks...)
	o.Leaks = len(o.LeakReport)
	r.cutOff(ctx, o, res)
	if o.Failed {
		r.events.emit(Event{Phase: "4", Kind: EvFailure, Role: commanders.RoleCommander, AgentID: res.CommanderID, Model: res.Model,
			Message: o.Error, Data: map[string]any{"failure_class": string(o.FailureClass), "domain": res.Domain}})
	}
	_ = r.dir.WriteJSON("bundles/"+o.ID+".json", map[string]any{
		"id": o.ID, "domain": o.Domain, "commander": o.Commander, "model": o.Model, "failed": o.Failed,
		"salvaged": o.Salvaged, "failure_class": o.FailureClass, "error": o.Error, "bundle": o.Bundle,
		"plan": res.Plan, "atoms": res.Atoms, "leaks": o.LeakReport,
	})
}

// crossReview scores bundle pairs as they arrive: when bundle k (k ≥ 1 in
// arrival order) exists it is paired with the bundle before it; at the end
// the last is paired with the first, closing the ring so every bundle gets
// two pairs. Each pair is scored by one reviewer pair (two models). Each
// bundle is handed to onBundle as it arrives (Phase 6 judges it meanwhile);
// reviewers score the bundle as it arrived, never a hardened revision.
func (r *runState) crossReview(ctx context.Context, outs []*BundleOutcome, done <-chan int, aspects []string, s commanders.Settings, onBundle func(*BundleOutcome)) []ReviewRecord {
	var (
		mu      sync.Mutex
		records []ReviewRecord
		wg      sync.WaitGroup
		arrived []int
		pairN   int
		started bool
		texts   = make([]string, len(outs)) // each bundle as it arrived
	)
	pairs := ReviewerPairs(r.reviewers())
	ctx = withPhase(ctx, "5")
	launch := func(a, b int) {
		if len(pairs) == 0 || ctx.Err() != nil {
			return
		}
		pair := pairs[pairN%len(pairs)]
		pairN++
		views := []commanders.BundleView{{ID: outs[a].ID, Text: texts[a]}, {ID: outs[b].ID, Text: texts[b]}}
		for _, rv := range pair {
			wg.Add(1)
			go func() {
				defer wg.Done()
				recs := r.review(ctx, rv, aspects, views, "")
				mu.Lock()
				records = append(records, recs...)
				mu.Unlock()
			}()
		}
	}
	for i := range done {
		if i < 0 || outs[i].Failed {
			continue
		}
		// Read before Phase 6 gets the bundle: hardening may replace it.
		texts[i] = outs[i].Bundle.Text()
		if onBundle != nil {
			onBundle(outs[i])
		}
		arrived = append(arrived, i)
		if len(arrived) == 2 && !started {
			started = true
			r.enter("5", "cross-review (two bundles exist)")
		}
		if len(arrived) >= 2 {
			launch(arrived[len(arrived)-2], arrived[len(arrived)-1])
		}
	}
	if !started {
		r.enter("5", "cross-review (fewer than two bundles: nothing to compare)")
	}
	if len(arrived) >= 3 {
		launch(arrived[len(arrived)-1], arrived[0])
	}
	wg.Wait()
	sort.SliceStable(records, func(i, j int) bool {
		if records[i].BundleID != records[j].BundleID {
			return records[i].BundleID < records[j].BundleID
		}
		return records[i].Reviewer < records[j].Reviewer
	})
	return records
}

// ReviewerPairs forms the reviewer pairs that score bundle pairs (used in
// turn). Going through the reviewers in order, each one not yet paired takes
// as partner the next unpaired reviewer (in ring order) of a different model
// family, or the next unpaired one when none is of another family. An odd
// reviewer left over is paired with the next reviewer of another family
// (already paired, so it works twice). So reviewers work in pairs of
// different families wherever the roster allows, and every reviewer works.
// A single reviewer forms a pair of one.
func ReviewerPairs(rs []commanders.Reviewer) [][]commanders.Reviewer {
	n := len(rs)
	if n == 0 {
		return nil
	}
	if n == 1 {
		return [][]commanders.Reviewer{{rs[0]}}
	}
	fam := make([]string, n)
	for i, rv := range rs {
		fam[i] = providers.Family(rv.Agent.Ref)
	}
	used := make([]bool, n)
	// partner finds, in ring order after i, a reviewer satisfying ok: first
	// one of another family, then any.
	partner := func(i int, ok func(j int) bool) int {
		for _, other := range []bool{true, false} {
			for d := 1; d < n; d++ {
				j := (i + d) % n
				if ok(j) && (!other || fam[j] != fam[i]) {
					return j
				}
			}
		}
		return -1
	}
	var out [][]commanders.Reviewer
	for i := range rs {
		if used[i] {
			continue
		}
		used[i] = true
		j := partner(i, func(j int) bool { return !used[j] })
		if j < 0 { // the odd one out
			j = partner(i, func(int) bool { return true })
		}
		used[j] = true
		out = append(out, []commanders.Reviewer{rs[i], rs[j]})
	}
	return out
}

func (r *runState) reviewers() []commanders.Reviewer {
	var out []commanders.Reviewer
	p := r.plan
	for i := 0; i < p.Reviewers; i++ {
		pair := p.Roster.Reviewers[(i/2)%len(p.Roster.Reviewers)]
		a, err := r.agent(commanders.RoleReviewer, fmt.Sprintf("reviewer-%02d", i+1), pair[i%2])
		if err != nil {
			continue
		}
		out = append(out, commanders.Reviewer{Agent: a, Settings: r.settings()})
	}
	return out
}

func (r *runState) review(ctx context.Context, rv commanders.Reviewer, aspects []string, views []commanders.BundleView, feedback string) []ReviewRecord {
	r.noteLaunch(commanders.RoleReviewer, rv.Agent.ID)
	phase, model := r.phaseOf(ctx), rv.Agent.Ref.String()
	r.events.emit(Event{Phase: phase, Kind: EvAgentStart, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model})
	cards, _, err := rv.Review(ctx, aspects, views, feedback)
	if err != nil {
		class := string(providers.ClassOf(err))
		r.events.emit(Event{Phase: phase, Kind: EvFailure, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model,
			Message: err.Error(), Data: map[string]any{"failure_class": class}})
		r.events.emit(Event{Phase: phase, Kind: EvAgentFinish, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model,
			Data: map[string]any{"status": "failed", "failure_class": class}})
		return nil
	}
	r.events.emit(Event{Phase: phase, Kind: EvAgentFinish, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model,
		Data: map[string]any{"status": "complete"}})
	var out []ReviewRecord
	for _, c := range cards.Reviews {
		rec := ReviewRecord{Reviewer: rv.Agent.ID, Model: model, BundleID: c.BundleID, Card: c, Total: c.Total()}
		out = append(out, rec)
		r.events.emit(Event{Phase: phase, Kind: EvReview, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model,
			Data: map[string]any{"bundle_id": c.BundleID, "total": c.Total(), "conflicts": len(c.Conflicts), "quarantine": feedback != ""}})
	}
	var name string
	if feedback != "" {
		name = fmt.Sprintf("reviews/%s-quarantine-%s.json", rv.Agent.ID, views[0].ID)
	} else {
		name = fmt.Sprintf("reviews/%s-%s.json", rv.Agent.ID, strings.Join(viewIDs(views), "-"))
	}
	_ = r.dir.WriteJSON(name, cards)
	return out
}

func viewIDs(vs []commanders.BundleView) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.ID)
	}
	return out
}
