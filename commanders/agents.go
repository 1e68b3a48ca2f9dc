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

	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/vocab"
	"github.com/swarm-dev/swarm/workspace"
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
}

func (w worker) do(ctx context.Context, s Settings) AtomResult {
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
		res.Failed, res.Class, res.Error = true, providers.ClassOf(err), err.Error()
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
	plan, err := c.plan(ctx, childRole, &res)
	if err != nil {
		res.Failed, res.Class, res.Error = true, providers.ClassOf(err), c.redactText("plan: "+err.Error())
		c.finished(c.Agent, "failed", res.Class)
		return res
	}
	res.Plan = plan
	if c.Limits.WorkersPerLead > 0 {
		res.Atoms = c.runSquadLeads(ctx, plan, &res)
	} else {
		res.Atoms = c.runWorkers(ctx, plan, func(i int) Agent { return c.Worker(0, i) }, c.Capsule.Constraints)
	}
	b, salvaged, err := c.assemble(ctx, res.Atoms, "", "", &res)
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

func (c *Commander) plan(ctx context.Context, childRole string, res *Result) ([]Shard, error) {
	n := c.Limits.Children
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
		return providers.Structured[ShardPlan](ctx, WithTools(c.Agent.Provider, c.toolsFor(c.Agent, c.Capsule.Constraints)), c.Agent.request(c.Settings.within(c.Capsule.Constraints), user, "plan"))
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
		c.emit(AgentEvent{Kind: AgentRefused, Agent: c.Agent, Asked: len(shards), Allowed: n})
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

// runWorkers runs one worker per brief under parent's constraints (the
// commander's capsule, or a squad lead's), each tightened with the worker
// layer's own timeout and token ceiling and the brief's file scope.
func (c *Commander) runWorkers(ctx context.Context, briefs []Shard, agent func(i int) Agent, parent Constraints) []AtomResult {
	out := make([]AtomResult, len(briefs))
	var g errgroup.Group
	for i, sh := range briefs {
		a := agent(i)
		cons := c.childConstraints(parent, RoleWorker, sh.FileScope)
		out[i] = AtomResult{AgentID: a.ID, Model: a.Ref.String(), BriefID: sh.BriefID, Constraints: cons, Skipped: true, Failed: true, Atom: Atom{Status: StatusFailed}}
		if ctx.Err() != nil || (c.Hooks.MayLaunch != nil && !c.Hooks.MayLaunch()) {
			continue
		}
		w := worker{agent: a, domain: c.Capsule.Domain, briefID: sh.BriefID, brief: sh.Brief, aspects: sh.Aspects, cons: cons, tools: c.toolsFor(a, cons)}
		g.Go(func() error {
			if err := c.acquire(ctx); err != nil {
				out[i].Class, out[i].Error = providers.ClassOf(err), err.Error()
				return nil
			}
			defer c.release()
			if c.Hooks.MayAssign != nil && !c.Hooks.MayAssign(a) {
				out[i].Class, out[i].Error = providers.ClassRefused, "not assigned: circuit breaker open for "+a.Ref.String()
				return nil
			}
			c.started(a)
			wctx := ctx
			if cons.Timeout > 0 {
				var cancel context.CancelFunc
				wctx, cancel = context.WithTimeout(ctx, cons.Timeout)
				defer cancel()
			}
			r := w.do(wctx, c.Settings)
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

func (c *Commander) runSquadLeads(ctx context.Context, shards []Shard, res *Result) []AtomResult {
	var mu sync.Mutex
	// Each lead's atoms in its shard's slot, gathered in shard order: the
	// bundle request must not depend on which squad lead finished first
	// (a resumed run replays its answers only if it asks the same).
	perShard := make([][]AtomResult, len(shards))
	var g errgroup.Group
	for i, sh := range shards {
		if ctx.Err() != nil || (c.Hooks.MayLaunch != nil && !c.Hooks.MayLaunch()) {
			continue
		}
		lead := squadLead{agent: c.SquadLead(i), domain: c.Capsule.Domain, shard: sh, workers: c.Limits.WorkersPerLead,
			cons: c.childConstraints(c.Capsule.Constraints, RoleSquadLead, sh.FileScope)}
		g.Go(func() error {
			lctx := ctx
			if lead.cons.Timeout > 0 {
				var cancel context.CancelFunc
				lctx, cancel = context.WithTimeout(ctx, lead.cons.Timeout)
				defer cancel()
			}
			atoms, refused := lead.run(lctx, c, i)
			mu.Lock()
			perShard[i] = atoms
			res.Refusals += refused
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	var all []AtomResult
	for _, atoms := range perShard {
		all = append(all, atoms...)
	}
	return all
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

func (l squadLead) run(ctx context.Context, c *Commander, idx int) ([]AtomResult, int) {
	c.started(l.agent)
	user, err := prompts.Render("micro_briefs", map[string]any{
		"Shard": l.shard, "Workers": l.workers, "Domain": l.domain,
		"CountLine": vocab.CountPrefix + fmt.Sprint(l.workers),
	})
	var mb MicroBriefs
	if err == nil {
		mb, _, err = call(ctx, c, func(ctx context.Context) (MicroBriefs, providers.StructuredResult, error) {
			return providers.Structured[MicroBriefs](ctx, WithTools(l.agent.Provider, c.toolsFor(l.agent, l.cons)), l.agent.request(c.Settings.within(l.cons), user, l.shard.BriefID))
		})
	}
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
	return c.runWorkers(ctx, briefs, func(j int) Agent { return c.Worker(idx, j) }, l.cons), refused
}

// AtomView is what the bundle prompt shows of an atom.
type AtomView struct {
	BriefID    string
	Status     string
	Confidence float64
	Content    string
	// Evidence is the atom's citations, shown to the commander in an
	// evidence block (none without a workspace).
	Evidence []workspace.Citation
}

const maxAtomChars = 1200

func (c *Commander) assemble(ctx context.Context, atoms []AtomResult, previous, feedback string, res *Result) (Bundle, bool, error) {
	views := make([]AtomView, 0, len(atoms))
	for _, a := range atoms {
		if a.Failed {
			continue
		}
		content := a.Atom.Content
		if len(content) > maxAtomChars {
			content = content[:maxAtomChars] + " [...]"
		}
		views = append(views, AtomView{BriefID: a.BriefID, Status: a.Atom.Status, Confidence: a.Atom.Confidence, Content: content, Evidence: a.Atom.Evidence})
	}
	tools := c.toolsFor(c.Agent, c.Capsule.Constraints)
	user, err := prompts.Render("bundle", map[string]any{"Capsule": c.Capsule, "Atoms": views, "Feedback": feedback, "Previous": previous,
		"Workspace": tools != nil})
	if err != nil {
		return Bundle{}, false, err
	}
	tag := "bundle"
	if feedback != "" {
		tag = "revise:" + feedback
	}
	b, sr, err := call(ctx, c, func(ctx context.Context) (Bundle, providers.StructuredResult, error) {
		return providers.Structured[Bundle](ctx, WithTools(c.Agent.Provider, tools), c.Agent.request(c.Settings.within(c.Capsule.Constraints), user, tag))
	})
	if sr.Repaired {
		res.Repairs++
	}
	if err != nil {
		if providers.ClassOf(err) == providers.ClassSchemaInvalid {
			res.SchemaFails++
			if s, ok := Salvage(err, c.Capsule.Domain); ok {
				res.Leaks = append(res.Leaks, RedactBundle(&s, c.Agent.ID, c.Hooks.Redact)...)
				return s, true, nil
			}
		}
		return Bundle{}, false, err
	}
	if b.Domain == "" {
		b.Domain = c.Capsule.Domain
	}
	res.Leaks = append(res.Leaks, RedactBundle(&b, c.Agent.ID, c.Hooks.Redact)...)
	return b, false, nil
}

// Salvage recovers a schema-invalid bundle that still has usable content: it
// becomes "partial" with confidence 0.5. Unparseable output is not salvaged.
func Salvage(err error, domain string) (Bundle, bool) {
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.ClassSchemaInvalid {
		return Bundle{}, false
	}
	doc, ok := providers.ExtractJSON(pe.Raw)
	if !ok {
		return Bundle{}, false
	}
	var loose map[string]any
	if json.Unmarshal([]byte(doc), &loose) != nil {
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
