package commanders

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/vocab"
)

// Roles.
const (
	RoleNexus       = "nexus"
	RoleSealAuthor  = "seal_author"
	RoleJudge       = "judge"
	RoleCommander   = "commander"
	RoleSquadLead   = "squad_lead"
	RoleWorker      = "worker"
	RoleReviewer    = "reviewer"
	RoleSynthesizer = "synthesizer"
)

// Agent is a model seat: who it is and which provider serves it.
type Agent struct {
	ID       string
	Role     string
	Ref      providers.Ref
	Provider providers.Provider
}

// Settings are per-call knobs shared by a run.
type Settings struct {
	Seed        int64
	Temperature *float64
	MaxTokens   int
}

// SeedFor derives a stable per-agent seed so every call is reproducible and
// identical in-process and over HTTP.
func SeedFor(run int64, parts ...string) int64 {
	h := sha256.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(run))
	h.Write(b[:])
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return int64(binary.BigEndian.Uint64(h.Sum(nil)[:8]) >> 1)
}

func (a Agent) request(s Settings, user string, extra ...string) providers.Request {
	system, _ := prompts.Render("system", nil)
	return providers.Request{
		Messages: []providers.Message{
			{Role: providers.RoleSystem, Content: system},
			{Role: providers.RoleUser, Content: user},
		},
		Temperature: s.Temperature,
		MaxTokens:   s.MaxTokens,
		Seed:        providers.Int64(SeedFor(s.Seed, append([]string{a.ID}, extra...)...)),
		Caller:      providers.Caller{Role: a.Role, AgentID: a.ID},
	}
}

// worker is a leaf. It holds a provider and a brief and can only answer:
// there is no way for a worker to spawn anything.
type worker struct {
	agent   Agent
	domain  string
	briefID string
	brief   string
	aspects []string
	cons    Constraints // already tightened by every layer above
	tools   ToolSet     // what it may read (nil: nothing)
}

// AtomResult is one worker's outcome.
type AtomResult struct {
	AgentID string          `json:"agent_id"`
	Model   string          `json:"model"`
	BriefID string          `json:"brief_id"`
	Atom    Atom            `json:"atom"`
	Failed  bool            `json:"failed"`
	Class   providers.Class `json:"failure_class,omitempty"`
	Error   string          `json:"error,omitempty"`
	Usage   providers.Usage `json:"usage"`
	Retries int             `json:"repairs"`
	// Constraints are what this worker ran under: its commander's (and
	// squad lead's) constraints tightened with its own.
	Constraints Constraints `json:"constraints"`
	Skipped     bool        `json:"skipped,omitempty"` // not launched (cost ceiling or cancellation)
	// Leaks are the secrets redacted from the atom (Hooks.Redact): kind and
	// place only.
	Leaks []Leak                      `json:"leaks,omitempty"`
	Raw   *providers.StructuredResult `json:"-"`
	// Degraded: the atom is salvage from an answer that failed its schema
	// (the recovery ladder's last step): kept, marked, never a success.
	Degraded bool `json:"degraded,omitempty"`
	err      error
}

// ClassNoFinishedAtoms is the failure class of a bundle none of whose
// workers finished an atom (they all failed, or a breaker, the cost
// ceiling or a cancellation kept them from starting): the bundle is never
// assembled, judged or scored.
const ClassNoFinishedAtoms providers.Class = "no_finished_atoms"

// Finished says whether the atom is work a bundle may rest on: its worker
// ran, did not fail, did not report its own brief failed, and wrote
// something. A degraded atom (salvage) with content counts: it is kept and
// marked.
func (a AtomResult) Finished() bool {
	return !a.Failed && a.Atom.Status != StatusFailed && strings.TrimSpace(a.Atom.Content) != ""
}

// FinishedAtoms is how many of atoms finished (AtomResult.Finished).
func FinishedAtoms(atoms []AtomResult) int {
	n := 0
	for _, a := range atoms {
		if a.Finished() {
			n++
		}
	}
	return n
}

// atomFailureSummary says why atoms did not finish, by failure class
// ("skipped 12, timeout 3"), for a commander's error.
func atomFailureSummary(atoms []AtomResult) string {
	if len(atoms) == 0 {
		return "no worker ran"
	}
	counts := map[string]int{}
	var order []string
	for _, a := range atoms {
		k := string(a.Class)
		switch {
		case a.Skipped && a.Error != "":
			k = "not launched (" + a.Error + ")"
		case a.Skipped:
			k = "not launched"
		case k == "":
			k = "no content"
		}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	return strings.Join(parts, ", ")
}

// do makes the worker's one call, under its own timeout.
func (w worker) do(ctx context.Context, s Settings) AtomResult {
	if w.cons.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.cons.Timeout)
		defer cancel()
	}
	res := AtomResult{AgentID: w.agent.ID, Model: w.agent.Ref.String(), BriefID: w.briefID, Constraints: w.cons}
	user, err := prompts.Render("atom", map[string]any{"Domain": w.domain, "BriefID": w.briefID, "Brief": w.brief, "Aspects": w.aspects, "FileScope": w.cons.FileScope,
		"Workspace": w.tools != nil})
	if err != nil {
		res.Failed, res.Class, res.Error = true, providers.ClassPermanent, err.Error()
		return res
	}
	atom, sr, err := providers.Structured[Atom](ctx, WithTools(w.agent.Provider, w.tools), w.agent.request(s.within(w.cons), user, w.briefID))
	res.Usage = sr.Usage()
	if sr.Repaired {
		res.Retries = 1
	}
	if err != nil {
		res.Failed, res.Class, res.Error, res.err = true, providers.ClassOf(err), err.Error(), err
		res.Atom = Atom{Status: StatusFailed}
		return res
	}
	res.Atom = atom
	return res
}

// Limits bound a commander's children. They come from config, never from
// the model's plan.
type Limits struct {
	Children       int // workers (flat) or squad leads (ss-250)
	WorkersPerLead int // 0 = no squad leads
	// Timeouts of the layers below; each is further capped by the deadline
	// of the layer above (contexts only tighten going down).
	SquadLeadTimeout time.Duration
	WorkerTimeout    time.Duration
	// Token ceilings per call of the layers below (0 = the layer above's).
	SquadLeadMaxTokens int
	WorkerMaxTokens    int
}

// within returns the settings for a call made under cons: the token ceiling
// is the smaller of the run's and the constraints'.
func (s Settings) within(cons Constraints) Settings {
	if cons.MaxTokens > 0 && (s.MaxTokens == 0 || cons.MaxTokens < s.MaxTokens) {
		s.MaxTokens = cons.MaxTokens
	}
	return s
}

// childConstraints are the constraints of a child of a layer running under
// parent: never looser than parent (Constraints.Tighten).
func (c *Commander) childConstraints(parent Constraints, role string, fileScope []string) Constraints {
	own := Constraints{Timeout: c.Limits.WorkerTimeout, MaxTokens: c.Limits.WorkerMaxTokens, FileScope: fileScope}
	if role == RoleSquadLead {
		own.Timeout, own.MaxTokens = c.Limits.SquadLeadTimeout, c.Limits.SquadLeadMaxTokens
	}
	return parent.Tighten(own)
}

// Hooks let the caller follow a commander's work. Every field may be nil.
type Hooks struct {
	// Every hook may be called from several goroutines at once (squad leads
	// and workers run in parallel), so implementations must be safe for
	// concurrent use.
	//
	// Event receives what happens to the agents below the commander: an
	// agent started or finished (a worker with its atom, already
	// redacted), a depth-guard refusal. It is the one stream of what
	// happened; the other hooks are questions (MayLaunch, MayAssign) and a
	// transformation (Redact).
	Event func(AgentEvent)
	// MayLaunch is asked before launching each child; false stops launching
	// (cost ceiling, cancellation).
	MayLaunch func() bool
	// MayAssign is asked before a worker starts; false skips it (a circuit
	// breaker stopped giving work to its model).
	MayAssign func(a Agent) bool
	// Redact, when set, removes secrets from every atom as it arrives (before
	// Event sees it, before the atom is stored or shown to the commander) and from
	// every bundle the commander writes; what it removed is kept in
	// AtomResult.Leaks and Result.Leaks.
	Redact Redactor
	// Tools, when set, gives an agent working under cons the tools it may
	// use (nil: none); the calls it makes go through WithTools.
	Tools func(a Agent, cons Constraints) ToolSet
	// Fallback, when set, returns agent a on the n-th (from 0) fallback
	// model of its role: the recovery ladder's model swap. false: the role
	// has no n-th fallback (or none at all).
	Fallback func(a Agent, n int) (Agent, bool)
}

// fallback is a on its n-th fallback model (false: none).
func (c *Commander) fallback(a Agent, n int) (Agent, bool) {
	if c.Hooks.Fallback == nil {
		return Agent{}, false
	}
	return c.Hooks.Fallback(a, n)
}

// toolsFor is the tool set of a working under cons (nil without one).
func (c *Commander) toolsFor(a Agent, cons Constraints) ToolSet {
	if c.Hooks.Tools == nil {
		return nil
	}
	return c.Hooks.Tools(a, cons)
}

// AgentEventKind says what an AgentEvent reports.
type AgentEventKind int

// Agent event kinds.
const (
	// AgentStarted: the agent started (it was launched and assigned).
	AgentStarted AgentEventKind = iota + 1
	// AgentFinished: the agent finished, with Status and (when it failed)
	// Class; a worker that ran carries its Atom.
	AgentFinished
	// AgentRefused: the depth guard refused part of the agent's plan:
	// it asked for Asked children, Allowed were run.
	AgentRefused
	// AgentRecovery: one attempt of one step of the recovery ladder of a
	// unit the agent works on (Recovery).
	AgentRecovery
)

// AgentEvent is one thing that happened to an agent below the commander
// (Hooks.Event).
type AgentEvent struct {
	Kind  AgentEventKind
	Agent Agent // who (role, id, model)
	// Status and Class (AgentFinished): how the agent ended.
	Status string
	Class  providers.Class
	// Asked and Allowed (AgentRefused): children planned and allowed.
	Asked, Allowed int
	// Atom (AgentFinished of a worker that ran): what it produced, already
	// redacted (Hooks.Redact). The receiver must not modify it.
	Atom *AtomResult
	// Recovery (AgentRecovery): the ladder's step.
	Recovery *RecoveryStep
}

// Commander runs one domain: plans shards, runs its children (squad leads and
// workers), and assembles the bundle.
type Commander struct {
	Agent    Agent
	Capsule  Capsule
	Limits   Limits
	Settings Settings
	Hooks    Hooks
	// SquadLead returns the agent for squad lead i; Worker the agent for
	// worker j of child i. Both are set by the Nexus from the model roster.
	SquadLead func(i int) Agent
	Worker    func(i, j int) Agent
	// Sem bounds concurrent LLM calls across the whole run.
	Sem *semaphore.Weighted
	// Recovery is the ladder a failing atom, shard or bundle climbs (the
	// zero value: none).
	Recovery Recovery
}

// Result is a commander's outcome.
type Result struct {
	CommanderID string          `json:"commander_id"`
	Domain      string          `json:"domain"`
	Model       string          `json:"model"`
	Plan        []Shard         `json:"plan"`
	Atoms       []AtomResult    `json:"atoms"`
	Bundle      Bundle          `json:"bundle"`
	Salvaged    bool            `json:"salvaged"`
	Failed      bool            `json:"failed"`
	Class       providers.Class `json:"failure_class,omitempty"`
	Error       string          `json:"error,omitempty"`
	Refusals    int             `json:"depth_guard_refusals"`
	Repairs     int             `json:"repairs"`
	SchemaFails int             `json:"schema_violations"`
	// Leaks are the secrets redacted from the bundle itself (its atoms'
	// are in Atoms[i].Leaks).
	Leaks []Leak `json:"leaks,omitempty"`
	// Degraded lists the units of this commander that ended on the
	// recovery ladder's degrade step (salvage, never a success); Dropped
	// the shards scope reduction left out because every atom of theirs
	// failed.
	Degraded []Degraded `json:"degraded,omitempty"`
	Dropped  []string   `json:"dropped_shards,omitempty"`
}

// Run executes the commander. It never returns an error: failures are
// recorded in the Result so a failed commander does not fail the mission.
func (c *Commander) Run(ctx context.Context) Result {
	res := Result{CommanderID: c.Agent.ID, Domain: c.Capsule.Domain, Model: c.Agent.Ref.String()}
	c.started(c.Agent)
	if c.Capsule.Constraints.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Capsule.Constraints.Timeout)
		defer cancel()
	}
	childRole := RoleWorker
	if c.Limits.WorkersPerLead > 0 {
		childRole = RoleSquadLead
	}
	plan, err := c.planWithLadder(ctx, childRole, &res)
	if err != nil {
		res.Failed, res.Class, res.Error = true, providers.ClassOf(err), c.redactText("plan: "+err.Error())
		c.finished(c.Agent, "failed", res.Class)
		return res
	}
	res.Plan = plan
	res.Atoms = c.reduceScope(ctx, childRole, c.runChildren(ctx, plan, &res), &res)
	if FinishedAtoms(res.Atoms) == 0 {
		// Nothing below the commander produced anything: a bundle
		// assembled from nothing would be the commander's invention,
		// judged as if it were the team's work. It is a failure of its own
		// class, with no assembly call.
		res.Failed, res.Class = true, ClassNoFinishedAtoms
		res.Error = fmt.Sprintf("no finished atom: none of the %d workers' atoms finished (%s)", len(res.Atoms), atomFailureSummary(res.Atoms))
		c.finished(c.Agent, "failed", res.Class)
		return res
	}
	b, salvaged, err := c.assembleWithLadder(ctx, res.Atoms, &res)
	if err != nil {
		res.Failed, res.Class, res.Error = true, providers.ClassOf(err), c.redactText("bundle: "+err.Error())
		c.finished(c.Agent, "failed", res.Class)
		return res
	}
	res.Bundle, res.Salvaged = b, salvaged
	status := b.Status
	c.finished(c.Agent, status, providers.ClassNone)
	return res
}

// runChildren runs the plan's children: squad leads (each with its
// workers) or workers. The atoms are grouped by shard, in plan order.
func (c *Commander) runChildren(ctx context.Context, plan []Shard, res *Result) [][]AtomResult {
	if c.Limits.WorkersPerLead > 0 {
		return c.runSquadLeads(ctx, plan, res)
	}
	atoms := c.runWorkers(ctx, plan, func(i int) Agent { return c.Worker(0, i) }, c.Capsule.Constraints)
	out := make([][]AtomResult, len(atoms))
	for i := range atoms {
		out[i] = atoms[i : i+1]
	}
	return out
}

// halted says whether the run itself stops this commander's work: its
// context is done (cancellation, a deadline, the cost ceiling's stop) or
// the cost ceiling stopped launches. Such a failure is the run's own and
// never climbs the recovery ladder.
func (c *Commander) halted(ctx context.Context) bool {
	return ctx.Err() != nil || (c.Hooks.MayLaunch != nil && !c.Hooks.MayLaunch())
}

// ladder is the recovery ladder of one unit agent a works on.
func (c *Commander) ladder(ctx context.Context, a Agent, unit, id string) Ladder {
	return Ladder{Recovery: c.Recovery, Unit: unit, ID: id, Halted: func() bool { return c.halted(ctx) },
		Report: func(s RecoveryStep) {
			s.Detail = c.redactText(s.Detail) // it quotes failures, which may quote the model
			c.emit(AgentEvent{Kind: AgentRecovery, Agent: a, Recovery: &s})
		}}
}

// swapRung is the model swap step of a unit agent a works on: attempt n
// asks (ask) a's n-th fallback model, until none is left. what prefixes
// the detail ("plan: ", or "").
func (c *Commander) swapRung(what string, a Agent, ask func(fa Agent) error) Rung {
	return Rung{Step: StepModelSwap, On: c.Recovery.ModelSwap, Try: func(n int) Attempt {
		fa, ok := c.fallback(a, n-1)
		if !ok {
			return Attempt{}
		}
		at := Tried(fmt.Sprintf("%s%s -> %s", what, a.Ref, fa.Ref), ask(fa))
		at.From, at.To = a.Ref, fa.Ref
		return at
	}}
}

// planWithLadder asks for the shard plan; a plan that keeps failing is
// asked of the commander's fallback models (the bundle's ladder: the plan
// is the bundle's first call).
func (c *Commander) planWithLadder(ctx context.Context, childRole string, res *Result) ([]Shard, error) {
	plan, err := c.plan(ctx, c.Agent, childRole, c.Limits.Children, "plan", res)
	if err == nil {
		return plan, nil
	}
	c.ladder(ctx, c.Agent, UnitBundle, c.Capsule.Domain).Because(err).Climb("plan: "+FailureText(err),
		c.swapRung("plan: ", c.Agent, func(fa Agent) error {
			var e error
			plan, e = c.plan(ctx, fa, childRole, c.Limits.Children, "plan", res)
			if e == nil {
				err = nil
			}
			return e
		}))
	return plan, err
}

func (c *Commander) plan(ctx context.Context, a Agent, childRole string, n int, tag string, res *Result) ([]Shard, error) {
	if n <= 0 {
		return nil, errors.New("commander has no children allowed")
	}
	user, err := prompts.Render("shard_plan", map[string]any{
		"Capsule": c.Capsule, "Children": n, "ChildRole": strings.ReplaceAll(childRole, "_", " "),
		"CountLine": vocab.CountPrefix + fmt.Sprint(n),
	})
	if err != nil {
		return nil, err
	}
	plan, sr, err := call(ctx, c, func(ctx context.Context) (ShardPlan, providers.StructuredResult, error) {
		return providers.Structured[ShardPlan](ctx, WithTools(a.Provider, c.toolsFor(a, c.Capsule.Constraints)), a.request(c.Settings.within(c.Capsule.Constraints), user, tag))
	})
	if sr.Repaired {
		res.Repairs++
	}
	if err != nil {
		if providers.ClassOf(err) == providers.ClassSchemaInvalid {
			res.SchemaFails++
		}
		return nil, err
	}
	shards := plan.Shards
	if len(shards) > n {
		// Depth guard: the plan asked for more children than config allows.
		res.Refusals++
		c.emit(AgentEvent{Kind: AgentRefused, Agent: a, Asked: len(shards), Allowed: n})
		shards = shards[:n]
	}
	// Fewer shards than seats: spread the capsule's aspects over the rest so
	// every seat has a brief.
	for i := len(shards); i < n; i++ {
		src := shards[i%max(1, len(plan.Shards))]
		shards = append(shards, Shard{
			BriefID: fmt.Sprintf("%s-%02d", c.Capsule.Domain, i+1),
			Title:   src.Title, Brief: src.Brief, Aspects: src.Aspects,
		})
	}
	return shards, nil
}

// failedShard says whether every atom of a shard failed after its own
// ladder. A shard with no atom (not launched) or with an atom skipped by
// the run itself (cost ceiling, cancellation) has not failed: that is the
// run's doing.
func failedShard(atoms []AtomResult) bool {
	if len(atoms) == 0 {
		return false
	}
	for _, a := range atoms {
		if !a.Failed || a.Skipped {
			return false
		}
	}
	return true
}

// reduceScope is scope reduction, the ladder's step for shards that keep
// failing: a shard every atom of which failed is dropped and the bundle is
// assembled from the others; when every shard failed, the commander
// re-plans with fewer shards (half, then a quarter, ...) and runs them. It
// returns the atoms to assemble from (every atom run, failed ones
// included: they are part of the record).
func (c *Commander) reduceScope(ctx context.Context, childRole string, byShard [][]AtomResult, res *Result) []AtomResult {
	var atoms []AtomResult
	var failed []string
	for i, as := range byShard {
		atoms = append(atoms, as...)
		if failedShard(as) {
			failed = append(failed, res.Plan[i].BriefID)
		}
	}
	if !c.Recovery.Enabled || !c.Recovery.ScopeReduction || len(failed) == 0 || c.halted(ctx) {
		return atoms
	}
	if len(failed) < len(byShard) {
		for _, id := range failed {
			c.emit(AgentEvent{Kind: AgentRecovery, Agent: c.Agent, Recovery: &RecoveryStep{Unit: UnitShard, UnitID: id, Step: StepScopeReduction, Attempt: 1, OK: true,
				Detail: fmt.Sprintf("dropped: every atom of the shard failed; the bundle is assembled from the other %d shards", len(byShard)-len(failed))}})
		}
		res.Dropped = append(res.Dropped, failed...)
		return atoms
	}
	n := len(byShard)
	c.ladder(ctx, c.Agent, UnitBundle, c.Capsule.Domain).Climb("",
		Rung{Step: StepScopeReduction, On: true, Try: func(k int) Attempt {
			m := halved(n, k)
			if m >= n || (k > 1 && m == halved(n, k-1)) {
				return Attempt{}
			}
			plan, err := c.plan(ctx, c.Agent, childRole, m, fmt.Sprintf("plan-reduced-%d", m), res)
			if err != nil {
				return Attempt{Made: true, Detail: fmt.Sprintf("every shard failed; re-plan with %d shards: %s", m, FailureText(err)), Err: err}
			}
			res.Plan = append(res.Plan, plan...)
			ok, degraded := 0, 0
			for _, as := range c.runChildren(ctx, plan, res) {
				atoms = append(atoms, as...)
				for _, a := range as {
					switch {
					case a.Degraded: // salvage, never a success
						degraded++
					case !a.Failed:
						ok++
					}
				}
			}
			d := fmt.Sprintf("every shard failed; re-planned with %d shards: %d atoms finished", m, ok)
			if degraded > 0 {
				d += fmt.Sprintf(", %d degraded", degraded)
			}
			return Attempt{Made: true, OK: ok > 0, Detail: d}
		}})
	return atoms
}

// runWorkers runs one worker per brief under parent's constraints (the
// commander's capsule, or a squad lead's), each tightened with the worker
// layer's own timeout and token ceiling and the brief's file scope.
//
// A worker's goroutine starts once it holds its slot of the run's
// concurrency (Sem), not before: at 20 000 workers under a smaller cap,
// goroutines waiting for a slot were most of the run's memory. Which
// workers run is decided for all of them first, as when every goroutine
// started at once (the launch check, the tools), and each result lands at
// its brief's index, so results keep their order whatever order slots
// free in.
func (c *Commander) runWorkers(ctx context.Context, briefs []Shard, agent func(i int) Agent, parent Constraints) []AtomResult {
	out := make([]AtomResult, len(briefs))
	todo := make([]int, 0, len(briefs))
	agents := make([]Agent, len(briefs))
	var tools []ToolSet // per brief, when the run gives workers tools
	if c.Hooks.Tools != nil {
		tools = make([]ToolSet, len(briefs))
	}
	for i, sh := range briefs {
		a := agent(i)
		cons := c.childConstraints(parent, RoleWorker, sh.FileScope)
		out[i] = AtomResult{AgentID: a.ID, Model: a.Ref.String(), BriefID: sh.BriefID, Constraints: cons, Skipped: true, Failed: true, Atom: Atom{Status: StatusFailed}}
		if c.halted(ctx) {
			continue
		}
		agents[i] = a
		if tools != nil {
			tools[i] = c.toolsFor(a, cons)
		}
		todo = append(todo, i)
	}
	var g errgroup.Group
	for _, i := range todo {
		if err := c.acquire(ctx); err != nil {
			out[i].Class, out[i].Error = providers.ClassOf(err), err.Error()
			continue
		}
		sh, a := briefs[i], agents[i]
		w := worker{agent: a, domain: c.Capsule.Domain, briefID: sh.BriefID, brief: sh.Brief, aspects: sh.Aspects, cons: out[i].Constraints}
		if tools != nil {
			w.tools, tools[i] = tools[i], nil
		}
		g.Go(func() error {
			defer c.release()
			if c.Hooks.MayAssign != nil && !c.Hooks.MayAssign(a) {
				out[i].Class, out[i].Error = providers.ClassRefused, "not assigned: circuit breaker open for "+a.Ref.String()
				return nil
			}
			c.started(a)
			r := c.runAtom(ctx, w)
			RedactAtom(&r, c.Hooks.Redact)
			status := r.Atom.Status
			if r.Failed {
				status = "failed"
			}
			c.emit(AgentEvent{Kind: AgentFinished, Agent: a, Status: status, Class: r.Class, Atom: &r})
			out[i] = r
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// runAtom runs worker w, and climbs the atom's ladder while it fails:
// simplify (its brief cut to its first lines, its aspects halved), model
// swap (the worker role's fallbacks, with the simplified brief), degrade
// (the content of an answer that failed its schema, kept as a partial atom
// marked degraded). Each attempt has the worker's own timeout.
func (c *Commander) runAtom(ctx context.Context, w worker) AtomResult {
	r := w.do(ctx, c.Settings)
	if !r.Failed {
		return r
	}
	first, cur, lastErr := w, w, r.err
	try := func(next worker) error {
		nr := next.do(ctx, c.Settings)
		nr.Retries += r.Retries
		r = nr
		if r.Failed {
			lastErr = r.err
			return r.err
		}
		return nil
	}
	c.ladder(ctx, w.agent, UnitAtom, w.briefID).Because(r.err).Climb(FailureText(r.err),
		Rung{Step: StepSimplify, On: c.Recovery.Simplify, Try: func(n int) Attempt {
			next := cur
			next.brief, next.aspects = essentialBrief(first.brief, n), halveAspects(first.aspects, n)
			if next.brief == cur.brief && len(next.aspects) == len(cur.aspects) {
				return Attempt{} // nothing simpler to ask
			}
			cur = next
			return Tried(fmt.Sprintf("brief %d -> %d characters, aspects %d -> %d", len(first.brief), len(cur.brief), len(first.aspects), len(cur.aspects)), try(cur))
		}},
		c.swapRung("", first.agent, func(fa Agent) error {
			cur.agent, cur.tools = fa, c.toolsFor(fa, cur.cons)
			return try(cur)
		}),
		Rung{Step: StepDegrade, On: c.Recovery.Degrade, Once: true, Try: func(int) Attempt {
			atom, ok := salvageAtom(lastErr)
			if !ok {
				return Attempt{Made: true, Detail: "nothing to salvage: no answer with content (" + FailureText(lastErr) + ")"}
			}
			r.Atom, r.Failed, r.Degraded = atom, false, true
			return Attempt{Made: true, OK: true, Detail: "kept the content of an answer that failed its schema, as a partial atom"}
		}})
	return r
}

func (c *Commander) runSquadLeads(ctx context.Context, shards []Shard, res *Result) [][]AtomResult {
	var mu sync.Mutex
	// In plan order, whatever order the leads finish in.
	byShard := make([][]AtomResult, len(shards))
	degraded := make([]*Degraded, len(shards))
	var g errgroup.Group
	for i, sh := range shards {
		if c.halted(ctx) {
			continue
		}
		lead := squadLead{agent: c.SquadLead(i), domain: c.Capsule.Domain, shard: sh, workers: c.Limits.WorkersPerLead,
			cons: c.childConstraints(c.Capsule.Constraints, RoleSquadLead, sh.FileScope)}
		g.Go(func() error {
			atoms, refused, d := lead.run(ctx, c, i)
			byShard[i], degraded[i] = atoms, d
			mu.Lock()
			res.Refusals += refused
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	for _, d := range degraded {
		if d != nil {
			res.Degraded = append(res.Degraded, *d)
		}
	}
	return byShard
}

// squadLead turns a shard into micro-briefs and runs exactly the workers its
// commander allows.
type squadLead struct {
	agent   Agent
	domain  string
	shard   Shard
	workers int
	cons    Constraints // the commander's, tightened with the squad lead layer's
}

// microBriefs asks agent a for the split of shard, under the lead's own
// timeout.
func (l squadLead) microBriefs(ctx context.Context, c *Commander, a Agent, shard Shard) (MicroBriefs, error) {
	if l.cons.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.cons.Timeout)
		defer cancel()
	}
	user, err := prompts.Render("micro_briefs", map[string]any{
		"Shard": shard, "Workers": l.workers, "Domain": l.domain,
		"CountLine": vocab.CountPrefix + fmt.Sprint(l.workers),
	})
	if err != nil {
		return MicroBriefs{}, err
	}
	mb, _, err := call(ctx, c, func(ctx context.Context) (MicroBriefs, providers.StructuredResult, error) {
		return providers.Structured[MicroBriefs](ctx, WithTools(a.Provider, c.toolsFor(a, l.cons)), a.request(c.Settings.within(l.cons), user, l.shard.BriefID))
	})
	return mb, err
}

// splitWithLadder asks for the micro-briefs and climbs the shard's ladder
// while that fails: simplify (the shard's brief cut, its aspects halved),
// model swap (the squad lead role's fallbacks), degrade (the workers run on
// the shard itself: what the lead would have split, unsplit). degraded is
// set when the split ended degraded.
func (l squadLead) splitWithLadder(ctx context.Context, c *Commander) (mb MicroBriefs, degraded *Degraded, err error) {
	mb, err = l.microBriefs(ctx, c, l.agent, l.shard)
	if err == nil {
		return mb, nil, nil
	}
	cur := l.shard
	attempt := func(a Agent, sh Shard) error {
		mb, err = l.microBriefs(ctx, c, a, sh)
		return err
	}
	step := c.ladder(ctx, l.agent, UnitShard, l.shard.BriefID).Because(err).Climb(FailureText(err),
		Rung{Step: StepSimplify, On: c.Recovery.Simplify, Try: func(n int) Attempt {
			next := l.shard
			next.Brief, next.Aspects = essentialBrief(l.shard.Brief, n), halveAspects(l.shard.Aspects, n)
			if next.Brief == cur.Brief && len(next.Aspects) == len(cur.Aspects) {
				return Attempt{}
			}
			cur = next
			return Tried(fmt.Sprintf("shard brief %d -> %d characters, aspects %d -> %d", len(l.shard.Brief), len(cur.Brief), len(l.shard.Aspects), len(cur.Aspects)), attempt(l.agent, cur))
		}},
		c.swapRung("", l.agent, func(fa Agent) error { return attempt(fa, cur) }),
		Rung{Step: StepDegrade, On: c.Recovery.Degrade, Once: true, Try: func(int) Attempt {
			return Attempt{Made: true, OK: true, Detail: "the workers run on the shard itself, unsplit"}
		}})
	if step == StepDegrade {
		degraded = &Degraded{Unit: UnitShard, UnitID: l.shard.BriefID, Detail: "squad lead failed: its workers ran on the shard itself (" + FailureText(err) + ")"}
		return MicroBriefs{}, degraded, err
	}
	return mb, nil, err
}

func (l squadLead) run(ctx context.Context, c *Commander, idx int) ([]AtomResult, int, *Degraded) {
	c.started(l.agent)
	mb, degraded, err := l.splitWithLadder(ctx, c)
	if err != nil {
		// The lead failed: its workers run on the shard itself, so the
		// commander still gets results.
		c.finished(l.agent, "failed", providers.ClassOf(err))
		mb = MicroBriefs{}
	} else {
		c.finished(l.agent, "complete", providers.ClassNone)
	}
	refused := 0
	if len(mb.Briefs) > l.workers {
		refused = 1
		c.emit(AgentEvent{Kind: AgentRefused, Agent: l.agent, Asked: len(mb.Briefs), Allowed: l.workers})
		mb.Briefs = mb.Briefs[:l.workers]
	}
	briefs := make([]Shard, l.workers)
	for j := range briefs {
		if j < len(mb.Briefs) {
			briefs[j] = Shard{BriefID: mb.Briefs[j].BriefID, Brief: mb.Briefs[j].Brief, Aspects: mb.Briefs[j].Aspects}
		} else {
			briefs[j] = Shard{BriefID: fmt.Sprintf("%s-%02d", l.shard.BriefID, j+1), Brief: l.shard.Brief, Aspects: l.shard.Aspects}
		}
	}
	// The workers run under the lead's deadline (contexts only tighten
	// going down).
	if l.cons.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.cons.Timeout)
		defer cancel()
	}
	return c.runWorkers(ctx, briefs, func(j int) Agent { return c.Worker(idx, j) }, l.cons), refused, degraded
}

// AtomView is what the bundle prompt shows of an atom.
type AtomView struct {
	BriefID    string
	Status     string
	Confidence float64
	Content    string
	// Evidence is the atom's citations, shown to the commander in an
	// evidence block (none without a workspace).
	Evidence []citation.Citation
}

const maxAtomChars = 1200

// assembleWithLadder assembles the bundle and climbs the bundle's ladder
// while that fails: simplify (shorter atom excerpts: half, then a quarter,
// ... of maxAtomChars), model swap (the commander role's fallbacks, with
// the shorter excerpts), degrade (a schema-invalid bundle's content
// (Salvage), else the atoms that finished, unedited (SalvageAtoms);
// salvaged and marked degraded). Without the ladder a schema-invalid bundle
// is salvaged at once, as it always was.
func (c *Commander) assembleWithLadder(ctx context.Context, atoms []AtomResult, res *Result) (Bundle, bool, error) {
	b, err := c.assembleOnce(ctx, c.Agent, atoms, maxAtomChars, "", "", "bundle", res)
	if err == nil {
		return b, false, nil
	}
	if !c.Recovery.Enabled {
		return c.salvage(err, res)
	}
	errs := []error{err} // every failed answer, for the degrade step
	excerpt := maxAtomChars
	var salvaged bool
	attempt := func(a Agent, excerpt int) error {
		b, err = c.assembleOnce(ctx, a, atoms, excerpt, "", "", "bundle", res)
		if err != nil {
			errs = append(errs, err)
		}
		return err
	}
	c.ladder(ctx, c.Agent, UnitBundle, c.Capsule.Domain).Because(err).Climb(FailureText(err),
		Rung{Step: StepSimplify, On: c.Recovery.Simplify, Try: func(n int) Attempt {
			next := maxAtomChars >> n
			if !longerThan(atoms, next) {
				return Attempt{} // no excerpt to shorten
			}
			excerpt = next
			return Tried(fmt.Sprintf("atom excerpts %d -> %d characters", maxAtomChars, excerpt), attempt(c.Agent, excerpt))
		}},
		c.swapRung("", c.Agent, func(fa Agent) error { return attempt(fa, excerpt) }),
		Rung{Step: StepDegrade, On: c.Recovery.Degrade, Once: true, Try: func(int) Attempt {
			for _, e := range errs {
				if s, ok, _ := c.salvage(e, res); ok {
					b, err, salvaged = s, nil, true
					return Attempt{Made: true, OK: true, Detail: "kept the content of a bundle that failed its schema"}
				}
			}
			if s, k := SalvageAtoms(c.Capsule.Domain, atoms, "the commander could not assemble its bundle"); k > 0 {
				res.Leaks = append(res.Leaks, RedactBundle(&s, c.Agent.ID, c.Hooks.Redact)...)
				b, err, salvaged = s, nil, true
				return Attempt{Made: true, OK: true, Detail: fmt.Sprintf("kept the %d atoms that finished, unedited", k)}
			}
			return Attempt{Made: true, Detail: "nothing to salvage: no bundle content and no atom finished"}
		}})
	if err != nil {
		return Bundle{}, false, err
	}
	if salvaged {
		res.Degraded = append(res.Degraded, Degraded{Unit: UnitBundle, UnitID: c.Capsule.Domain, Detail: "salvaged after the commander's assembly failed: " + FailureText(errs[len(errs)-1])})
	}
	return b, salvaged, nil
}

// longerThan says whether some atom that finished has content longer than n
// characters (the bundle prompt shows it cut to n).
func longerThan(atoms []AtomResult, n int) bool {
	for _, a := range atoms {
		if !a.Failed && len(a.Atom.Content) > n {
			return true
		}
	}
	return false
}

// salvage is the bundle of a schema-invalid answer (Salvage), or err.
func (c *Commander) salvage(err error, res *Result) (Bundle, bool, error) {
	if s, ok := Salvage(err, c.Capsule.Domain); ok {
		res.Leaks = append(res.Leaks, RedactBundle(&s, c.Agent.ID, c.Hooks.Redact)...)
		return s, true, nil
	}
	return Bundle{}, false, err
}

// assemble is one assembly (or revision) by the commander, a schema-invalid
// answer salvaged.
func (c *Commander) assemble(ctx context.Context, atoms []AtomResult, previous, feedback string, res *Result) (Bundle, bool, error) {
	tag := "bundle"
	if feedback != "" {
		tag = "revise:" + feedback
	}
	b, err := c.assembleOnce(ctx, c.Agent, atoms, maxAtomChars, previous, feedback, tag, res)
	if err != nil {
		return c.salvage(err, res)
	}
	return b, false, nil
}

// assembleOnce asks agent a for the bundle, showing each atom that
// finished cut to excerpt characters.
func (c *Commander) assembleOnce(ctx context.Context, a Agent, atoms []AtomResult, excerpt int, previous, feedback, tag string, res *Result) (Bundle, error) {
	views := make([]AtomView, 0, len(atoms))
	for _, at := range atoms {
		if at.Failed {
			continue
		}
		content := at.Atom.Content
		if len(content) > excerpt {
			content = content[:excerpt] + " [...]"
		}
		views = append(views, AtomView{BriefID: at.BriefID, Status: at.Atom.Status, Confidence: at.Atom.Confidence, Content: content, Evidence: at.Atom.Evidence})
	}
	tools := c.toolsFor(a, c.Capsule.Constraints)
	user, err := prompts.Render("bundle", map[string]any{"Capsule": c.Capsule, "Atoms": views, "Feedback": feedback, "Previous": previous,
		"Workspace": tools != nil})
	if err != nil {
		return Bundle{}, err
	}
	b, sr, err := call(ctx, c, func(ctx context.Context) (Bundle, providers.StructuredResult, error) {
		return providers.Structured[Bundle](ctx, WithTools(a.Provider, tools), a.request(c.Settings.within(c.Capsule.Constraints), user, tag))
	})
	if sr.Repaired {
		res.Repairs++
	}
	if err != nil {
		if providers.ClassOf(err) == providers.ClassSchemaInvalid {
			res.SchemaFails++
		}
		return Bundle{}, err
	}
	if b.Domain == "" {
		b.Domain = c.Capsule.Domain
	}
	res.Leaks = append(res.Leaks, RedactBundle(&b, c.Agent.ID, c.Hooks.Redact)...)
	return b, nil
}

// redactText removes secrets from a message (an error may quote the
// model's answer).
func (c *Commander) redactText(s string) string {
	if c.Hooks.Redact == nil {
		return s
	}
	s, _ = c.Hooks.Redact(s)
	return s
}

// Revise asks the commander to revise its bundle given hardening feedback
// (only "- [sc-ID] message" lines under a heading). It returns the revision
// (redacted with Hooks.Redact) and the secrets redacted from it.
func (c *Commander) Revise(ctx context.Context, prev Bundle, feedback string) (Bundle, []Leak, error) {
	var r Result
	b, _, err := c.assemble(ctx, nil, prev.Text(), feedback, &r)
	return b, r.Leaks, err
}

// Salvage recovers a schema-invalid bundle that still has usable content: it
// becomes "partial" with confidence 0.5. Unparseable output is not salvaged.
func Salvage(err error, domain string) (Bundle, bool) {
	loose, ok := looseAnswer(err)
	if !ok {
		return Bundle{}, false
	}
	str := func(k string) string { s, _ := loose[k].(string); return s }
	b := Bundle{Domain: domain, Status: StatusPartial, Summary: str("summary"), Content: str("content"), Confidence: 0.5}
	if strings.TrimSpace(b.Content+b.Summary) == "" {
		return Bundle{}, false
	}
	if fs, ok := loose["findings"].([]any); ok {
		for _, f := range fs {
			if m, ok := f.(map[string]any); ok {
				t, _ := m["title"].(string)
				d, _ := m["detail"].(string)
				if t != "" {
					b.Findings = append(b.Findings, Finding{Title: t, Detail: d, Priority: "medium", Effort: "deep"})
				}
			}
		}
	}
	return b, true
}

// looseAnswer is the JSON object of an answer that failed its schema,
// read loosely (false: not a schema failure, or no JSON object in it).
func looseAnswer(err error) (map[string]any, bool) {
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.ClassSchemaInvalid {
		return nil, false
	}
	doc, ok := providers.ExtractJSON(pe.Raw)
	if !ok {
		return nil, false
	}
	var loose map[string]any
	if json.Unmarshal([]byte(doc), &loose) != nil {
		return nil, false
	}
	return loose, true
}

// call runs one LLM call under the run-wide concurrency bound.
func call[T any](ctx context.Context, c *Commander, f func(context.Context) (T, providers.StructuredResult, error)) (T, providers.StructuredResult, error) {
	if err := c.acquire(ctx); err != nil {
		var zero T
		return zero, providers.StructuredResult{}, err
	}
	defer c.release()
	return f(ctx)
}

func (c *Commander) acquire(ctx context.Context) error {
	if c.Sem == nil {
		return ctx.Err()
	}
	return c.Sem.Acquire(ctx, 1)
}

func (c *Commander) release() {
	if c.Sem != nil {
		c.Sem.Release(1)
	}
}

// emit hands e to Hooks.Event, when set.
func (c *Commander) emit(e AgentEvent) {
	if c.Hooks.Event != nil {
		c.Hooks.Event(e)
	}
}

func (c *Commander) started(a Agent) { c.emit(AgentEvent{Kind: AgentStarted, Agent: a}) }

func (c *Commander) finished(a Agent, status string, class providers.Class) {
	c.emit(AgentEvent{Kind: AgentFinished, Agent: a, Status: status, Class: class})
}
