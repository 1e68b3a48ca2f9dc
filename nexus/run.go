package nexus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"
)

// ErrBadInput marks errors caused by the user's input (mission, flags,
// config): the CLI exits with code 2 for them.
var ErrBadInput = errors.New("bad input")

// ErrInterrupted is returned when the run was cancelled; what existed was written.
var ErrInterrupted = errors.New("run interrupted")

// Options configure one mission run. Config and Registry are required.
type Options struct {
	Config   *Config
	Registry *providers.Registry

	Mission     string // the mission text
	MissionName string // used in the run id (e.g. the file name)
	Scale       string // default: config default_scale
	Personality string // default: config run.personality

	// Provider, when set (Kind != ""), serves every role ("mock:honest").
	Provider providers.Ref
	// Models overrides one role's model: role -> its model (a pool for
	// commander and worker, one or two for reviewer). Roles: nexus,
	// seal_author, judge, commander, squad_lead, worker, reviewer, synthesizer.
	Models map[string][]providers.Ref

	// FileScope, when set, limits the files the mission's agents may touch
	// (paths or directories). It is every capsule's file-scope constraint,
	// which only narrows going down (squad leads, workers) and is shown to
	// the commanders and workers.
	FileScope []string

	OutDir string // the run directory; default <run.out_dir>/<run-id>
	// Force lets a run write into a non-empty OutDir: the entries an earlier
	// run left there (events.jsonl, bundles/, ...) are removed first; other
	// files are left alone. Without it a non-empty directory is refused.
	Force bool
	Seed  *int64 // default: config run.seed

	// Observers receive every event as it happens.
	Observers []Observer
	// KeepPrompts keeps every prompt in memory (Result.Transcripts) for audits
	// such as the leak scan.
	KeepPrompts bool
	// KeepEvents keeps every event in memory (Result.Events) for tests and
	// audits; otherwise events are only streamed (events.jsonl, Observers).
	KeepEvents bool
	// Wrap, when set, wraps every provider before recording, so what it
	// answers (say, the compare command's cache) is still recorded as a
	// call with its tokens, cost and latency.
	Wrap func(ref providers.Ref, p providers.Provider) providers.Provider
	// Limits, when set, holds each provider kind's concurrency cap and rate
	// limit, so runs going on at once (compare) share them. Default: one set
	// per run, shared by every model of a kind within it.
	Limits *providers.LimitSet
	// Preset reuses an earlier decomposition and sealed envelope (compare
	// seals once per mission). Phases 1 and 1.5 then make no LLM calls.
	Preset *Preset
	// StopAfterSeal ends the run after Phase 1.5 (compare seals once and
	// reuses the decomposition and envelope for every contender).
	StopAfterSeal bool
	// Replays, when > 1, runs the mission that many times in all (same
	// envelope, seeds seed..seed+K−1) to measure incoherence.
	Replays int
	// Now is the clock (tests).
	Now func() time.Time
}

// Plan is what a run will deploy, known before any LLM call (the briefing).
type Plan struct {
	RunID          string          `json:"run_id"`
	Scale          string          `json:"scale"`
	Personality    string          `json:"personality"`
	Domains        []string        `json:"domains"`
	Commanders     int             `json:"commanders"`
	SquadLeads     int             `json:"squad_leads"`
	Workers        int             `json:"workers"`
	Reviewers      int             `json:"reviewers"`
	Agents         int             `json:"agents"`
	Criteria       int             `json:"criteria"`
	CostCeilingUSD float64         `json:"cost_ceiling_usd"`
	Seed           int64           `json:"seed"`
	Roster         Roster          `json:"models"`
	MissionTitle   string          `json:"mission"`
	ChildrenPerCmd int             `json:"children_per_commander"`
	WorkersPerLead int             `json:"workers_per_squad_lead"`
	Hardening      HardeningConfig `json:"hardening"`
}

var slugRe = regexp.MustCompile(`[^a-z0-9]+`)

// Intake is Phase 0: it validates the mission and options and computes the
// plan. It makes no LLM call and writes nothing.
func Intake(o Options) (Plan, error) {
	if o.Config == nil {
		return Plan{}, fmt.Errorf("%w: no configuration", ErrBadInput)
	}
	if err := CheckMission(o.MissionName, o.Mission, o.Config.Run.MissionLimit()); err != nil {
		return Plan{}, err
	}
	mission := strings.TrimSpace(o.Mission)
	if mission == "" {
		return Plan{}, fmt.Errorf("%w: the mission is empty", ErrBadInput)
	}
	if o.Replays < 0 {
		return Plan{}, fmt.Errorf("%w: replays %d is negative: want 0 (one run) or the number of runs in all", ErrBadInput, o.Replays)
	}
	if o.OutDir != "" {
		if err := checkOutDir(o.OutDir, o.Force); err != nil {
			return Plan{}, err
		}
	}
	scaleName := o.Scale
	if scaleName == "" {
		scaleName = o.Config.DefaultScale
	}
	scale, err := o.Config.ScaleFor(scaleName)
	if err != nil {
		return Plan{}, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	pname := o.Personality
	if pname == "" {
		pname = o.Config.Run.Personality
	}
	pers, ok := o.Config.Personalities[pname]
	if pname != "" && !ok {
		return Plan{}, fmt.Errorf("%w: unknown personality %q (known: %s)", ErrBadInput, pname, strings.Join(sortedKeys(o.Config.Personalities), ", "))
	}
	roster, err := ResolveRoster(o.Config, o.Provider, o.Models)
	if err != nil {
		return Plan{}, err
	}
	if o.Registry != nil {
		for _, ref := range roster.Refs() {
			if !o.Registry.Has(ref.Kind) {
				return Plan{}, fmt.Errorf("%w: model %s: %v %q", ErrBadInput, ref, providers.ErrUnknownKind, ref.Kind)
			}
		}
	}
	seed := o.Config.Run.Seed
	if o.Seed != nil {
		seed = *o.Seed
	}
	p := Plan{Scale: scaleName, Personality: pname, Seed: seed, Roster: roster,
		Criteria: scale.SealedCriteria, CostCeilingUSD: scale.CostCeilingUSD, Reviewers: scale.Reviewers,
		Hardening: o.Config.ShadowFor(scaleName)}
	p.Domains = SelectDomains(mission, scale.Commanders, max(1, scale.MinCommanders))
	p.Commanders = len(p.Domains)
	factor := pers.WorkerFactor
	if factor <= 0 {
		factor = 1
	}
	if scale.SquadLeadsPerCommander > 0 {
		p.ChildrenPerCmd = scale.SquadLeadsPerCommander
		p.WorkersPerLead = max(1, int(math.Round(float64(scale.WorkersPerSquadLead)*factor)))
		p.SquadLeads = p.Commanders * p.ChildrenPerCmd
		p.Workers = p.SquadLeads * p.WorkersPerLead
	} else {
		p.ChildrenPerCmd = max(1, int(math.Round(float64(scale.WorkersPerCommander)*factor)))
		p.Workers = p.Commanders * p.ChildrenPerCmd
	}
	p.Agents = 1 + p.Commanders + p.SquadLeads + p.Workers + p.Reviewers
	p.MissionTitle = missionTitle(mission)
	name := o.MissionName
	if name == "" {
		name = p.MissionTitle
	}
	slug := strings.Trim(slugRe.ReplaceAllString(strings.ToLower(strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))), "-"), "-")
	if len(slug) > 40 {
		slug = slug[:40]
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	p.RunID = fmt.Sprintf("%s-%s-%s", now().UTC().Format("20060102-150405"), slug, scaleName)
	return p, nil
}

func missionTitle(m string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(m), "\n")
	line = strings.TrimSpace(strings.TrimLeft(line, "# "))
	if len(line) > 80 {
		line = line[:80]
	}
	return line
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// usage accounting per role and model.
type usageStats struct {
	Calls        int                     `json:"calls"`
	Errors       int                     `json:"errors"`
	InputTokens  int                     `json:"input_tokens"`
	OutputTokens int                     `json:"output_tokens"`
	CostUSD      float64                 `json:"cost_usd"`
	LatencyMS    []float64               `json:"-"`
	Classes      map[providers.Class]int `json:"failure_classes,omitempty"`
}

type runState struct {
	opts        Options
	cfg         *Config
	plan        Plan
	dir         RunDir
	events      *eventLog
	transcripts *transcriptLog
	limits      *providers.LimitSet
	built       map[string]providers.Provider // the roster's providers, built once before the run

	mu         sync.Mutex
	curPhase   string
	byRole     map[string]*usageStats
	byModel    map[string]*usageStats
	classes    map[providers.Class]int
	cost       float64
	warned     bool
	stopLaunch bool
	stopAll    context.CancelFunc
	// ceilingStopped is set when the cost ceiling kept an agent from
	// launching or stopped running commanders: the run is partial.
	ceilingStopped bool
	// launched holds, per role, the ids of the agents that really started.
	launched map[string]map[string]bool
	// interruptedIn is the phase the run was in when its context was
	// cancelled (done): the first phase change after it records it.
	interruptedIn string
	done          <-chan struct{}
	provs         map[string]providers.Provider
	breakers      map[string]*breaker
	trips         int
	start         time.Time
	sb            *missionSandbox
	sbDone        bool
}

func (r *runState) phase() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.curPhase
}

func (r *runState) enter(phase, msg string) {
	r.mu.Lock()
	select {
	case <-r.done:
		if r.interruptedIn == "" {
			r.interruptedIn = r.curPhase
		}
	default:
	}
	r.curPhase = phase
	r.mu.Unlock()
	r.events.emit(Event{Phase: phase, Kind: EvPhaseStart, Message: msg})
}

func (r *runState) leave(phase string, data map[string]any) {
	r.events.emit(Event{Phase: phase, Kind: EvPhaseEnd, Data: data})
}

// account records a call's usage and enforces the cost ceiling.
func (r *runState) account(ref providers.Ref, role string, u providers.Usage, lat time.Duration, err error) float64 {
	kc := r.cfg.Providers[ref.Kind]
	cost := (float64(u.InputTokens)*kc.InputPerMTok + float64(u.OutputTokens)*kc.OutputPerMTok) / 1e6
	r.mu.Lock()
	for _, s := range []*usageStats{r.stats(r.byRole, role), r.stats(r.byModel, ref.String())} {
		s.Calls++
		s.InputTokens += u.InputTokens
		s.OutputTokens += u.OutputTokens
		s.CostUSD += cost
		s.LatencyMS = append(s.LatencyMS, float64(lat.Microseconds())/1000)
		if err != nil {
			s.Errors++
			s.Classes[providers.ClassOf(err)]++
		}
	}
	if err != nil {
		r.classes[providers.ClassOf(err)]++
	}
	r.cost += cost
	r.mu.Unlock()
	r.enforceCeiling()
	return cost
}

// enforceCeiling applies the cost ceiling to the cost so far: warn at 80%,
// stop launching at 90%, stop the commanders and synthesise at 100%.
func (r *runState) enforceCeiling() {
	r.mu.Lock()
	total, ceiling := r.cost, r.plan.CostCeilingUSD
	var warn, stopLaunch, stopAll bool
	if ceiling > 0 {
		if total >= 0.8*ceiling && !r.warned {
			r.warned, warn = true, true
		}
		if total >= 0.9*ceiling && !r.stopLaunch {
			r.stopLaunch, stopLaunch = true, true
		}
		if total >= ceiling && r.stopAll != nil {
			stopAll = true
		}
	}
	cancel := r.stopAll
	if stopAll {
		r.stopAll = nil
	}
	r.mu.Unlock()
	if warn {
		r.events.emit(Event{Phase: r.phase(), Kind: EvCostWarning, Message: fmt.Sprintf("cost $%.4f reached 80%% of the $%.2f ceiling", total, ceiling)})
	}
	if stopLaunch {
		r.events.emit(Event{Phase: r.phase(), Kind: EvCostStop, Message: fmt.Sprintf("cost $%.4f reached 90%% of the ceiling: no new agents are launched", total), Data: map[string]any{"level": 0.9}})
	}
	if stopAll && cancel != nil {
		r.mu.Lock()
		r.ceilingStopped = true
		r.mu.Unlock()
		r.events.emit(Event{Phase: r.phase(), Kind: EvCostStop, Message: fmt.Sprintf("cost $%.4f reached the $%.2f ceiling: stopping and synthesising what exists", total, ceiling), Data: map[string]any{"level": 1.0}})
		cancel()
	}
}

func (r *runState) stats(m map[string]*usageStats, k string) *usageStats {
	s, ok := m[k]
	if !ok {
		s = &usageStats{Classes: map[providers.Class]int{}}
		m[k] = s
	}
	return s
}

// mayLaunch says whether a new agent may start; a refusal (the cost
// ceiling's 90% mark) makes the run partial.
func (r *runState) mayLaunch() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopLaunch {
		r.ceilingStopped = true
	}
	return !r.stopLaunch
}

// noteLaunch records that an agent of role really started.
func (r *runState) noteLaunch(role, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.launched == nil {
		r.launched = map[string]map[string]bool{}
	}
	if r.launched[role] == nil {
		r.launched[role] = map[string]bool{}
	}
	r.launched[role][id] = true
}

// provider returns the provider for ref: built from the registry with the
// kind's config, recorded, protected by a circuit breaker, and wrapped with
// timeout, retries, rate limit and concurrency cap.
func (r *runState) provider(ref providers.Ref) (providers.Provider, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.provs[ref.String()]; ok {
		return p, nil
	}
	kc := r.cfg.Providers[ref.Kind]
	raw, ok := r.built[ref.String()] // built by Run's check of the roster
	var err error
	if !ok {
		raw, err = r.opts.Registry.New(ref, kc)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadInput, ref, err)
	}
	p := raw
	if r.opts.Wrap != nil {
		p = r.opts.Wrap(ref, p)
	}
	// The role's token ceiling applies before the cache looks the call up.
	p = r.recorded(ref, r.tokenCeiling(p))
	if r.cfg.CircuitBreaker.Enabled {
		b := &breaker{threshold: r.cfg.CircuitBreaker.FailureThreshold, cooldown: r.cfg.CircuitBreaker.Cooldown, onTrip: func(open bool) {
			r.mu.Lock()
			r.trips++
			r.mu.Unlock()
			r.events.emit(Event{Phase: r.phase(), Kind: EvBreakerTrip, Model: ref.String(), Message: "provider circuit breaker opened after consecutive failures"})
		}}
		r.breakers[ref.String()] = b
		p = b.wrap(p)
	}
	ck := kc
	ck.Timeout = r.callTimeout(kc.Timeout)
	p = stack(p, ck, r.plan.Personality, r.cfg, r.limits.For(ref.Kind, kc))
	r.provs[ref.String()] = p
	return p, nil
}

// callTimeout is the per-call (per attempt) timeout: the smaller of the
// provider kind's timeout and the scale's timeouts.call, scaled by the
// personality's timeout factor. Calls are further bounded by the deadline of
// the layer that makes them (worker, squad lead, commander, mission), so
// timeouts only tighten going down.
func (r *runState) callTimeout(kind time.Duration) time.Duration {
	d := kind
	if scale, err := r.cfg.ScaleFor(r.plan.Scale); err == nil && scale.Timeouts.Call > 0 && (d <= 0 || scale.Timeouts.Call < d) {
		d = scale.Timeouts.Call
	}
	if d <= 0 {
		return 0
	}
	return r.scaled(d)
}

// tokenCeiling caps every call's max_tokens at run.max_tokens for the
// caller's role (the smaller of the two when the call already sets one, as a
// capsule's constraints do).
func (r *runState) tokenCeiling(p providers.Provider) providers.Provider {
	if len(r.cfg.Run.MaxTokens) == 0 {
		return p
	}
	return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		if n := r.cfg.Run.MaxTokens[req.Caller.Role]; n > 0 && (req.MaxTokens == 0 || n < req.MaxTokens) {
			req.MaxTokens = n
		}
		return p.Complete(ctx, req)
	})
}

// Run statuses (result.json "status").
const (
	// StatusComplete: the run completed and every planned bundle was judged
	// with valid shadow scoring.
	StatusComplete = "complete"
	// StatusIncomplete: the run finished but judged fewer bundles than
	// planned (possibly none).
	StatusIncomplete = "incomplete"
	// StatusPartial: the cost ceiling stopped work; finished work was kept
	// (bundles built from finished atoms are marked salvaged).
	StatusPartial = "partial"
	// StatusInvalid: shadow scoring is invalid (the commitment hash did not
	// match: tampering), so nothing was judged.
	StatusInvalid = "invalid"
	// StatusFailed: the run failed (Result.Error, FailureClass and Phase say
	// how and where).
	StatusFailed = "failed"
	// StatusInterrupted: the run was cancelled (Ctrl-C).
	StatusInterrupted = "interrupted"
	// StatusSealed: the run stopped after Phase 1.5 as asked (StopAfterSeal).
	StatusSealed = "sealed"
)

// ClassCancelled is the failure class of work cut off by the run's own
// cancellation (Ctrl-C, or the cost ceiling stopping commanders): neither
// the provider's nor the agent's fault.
const ClassCancelled providers.Class = "cancelled"

// errCostCeiling is the cause of the execution context's cancellation when
// the cost ceiling stops the commanders.
var errCostCeiling = errors.New("the cost ceiling was reached")

// Complete reports whether every planned bundle was judged.
func (a ShadowAggregate) Complete() bool { return a.Scored > 0 && a.Scored >= a.Planned }

// Describe says in words what was judged: "no bundle was judged: 0 of 5
// scored", or the median and mean with "k of n scored".
func (a ShadowAggregate) Describe() string {
	if a.Scored == 0 || a.Median == nil || a.Mean == nil {
		return fmt.Sprintf("no bundle was judged: 0 of %d scored", a.Planned)
	}
	return fmt.Sprintf("Shadow Score median %.1f%% (%s), mean %.1f%% · %d of %d scored", *a.Median, a.Level, *a.Mean, a.Scored, a.Planned)
}

// aggregate summarises the bundles' Shadow Scores against the bundles planned.
func aggregate(bundles []*BundleOutcome, planned int) ShadowAggregate {
	var scores []float64
	a := ShadowAggregate{}
	for _, o := range bundles {
		switch {
		case o.ShadowScore != nil:
			scores = append(scores, *o.ShadowScore)
		case o.Failed:
			a.Failed++
		default:
			a.Unjudged++
		}
		if o.Salvaged {
			a.Salvaged++
		}
	}
	sum := shadow.Summarize(scores, max(planned, len(bundles)))
	a.Planned, a.Scored, a.Median, a.Mean, a.Level = sum.Planned, sum.Scored, sum.Median, sum.Mean, string(sum.Level)
	// Bundles planned but never deployed (the run stopped before Phase 3)
	// count as failed.
	a.Failed += a.Planned - len(bundles)
	return a
}

// conclude sets the run's status, ok, error, failure class and final phase
// from how it ended (runErr) and what it judged.
func (r *runState) conclude(res *Result, runErr error) {
	res.Aggregate = aggregate(res.Bundles, r.plan.Commanders)
	res.Error, res.FailureClass = "", ""
	r.mu.Lock()
	phase, interruptedIn, ceiling := r.curPhase, r.interruptedIn, r.ceilingStopped
	r.mu.Unlock()
	res.Phase = phase
	a := res.Aggregate
	switch {
	case errors.Is(runErr, ErrInterrupted):
		if interruptedIn != "" {
			res.Phase = interruptedIn
		}
		res.Status, res.FailureClass = StatusInterrupted, ClassCancelled
		res.Error = fmt.Sprintf("interrupted in phase %s: %s", res.Phase, a.counts())
	case runErr != nil:
		res.Status, res.FailureClass, res.Error = StatusFailed, providers.ClassOf(runErr), runErr.Error()
	case r.opts.StopAfterSeal:
		res.Status = StatusSealed
	case !res.ShadowValid && r.cfg.ShadowScoring.Enabled:
		res.Status, res.Error = StatusInvalid, "shadow scoring invalid: "+res.ShadowReason
	case ceiling:
		res.Status, res.Error = StatusPartial, "stopped by the cost ceiling: "+a.counts()
		if a.Salvaged > 0 {
			res.Error += fmt.Sprintf(" (%d salvaged from finished atoms)", a.Salvaged)
		}
	case !a.Complete():
		res.Status = StatusIncomplete
		res.Error = a.counts()
		if a.Scored > 0 {
			res.Error = "fewer bundles judged than planned: " + res.Error
		}
		if !res.ShadowValid {
			res.Error = res.ShadowReason + ": " + res.Error
		}
	default:
		res.Status = StatusComplete
	}
	res.OK = res.Status == StatusComplete || res.Status == StatusSealed
}

func (a ShadowAggregate) counts() string {
	if a.Scored == 0 {
		return fmt.Sprintf("no bundle was judged: 0 of %d scored", a.Planned)
	}
	return fmt.Sprintf("%d of %d scored", a.Scored, a.Planned)
}

// cutOff reclassifies a commander that failed because the run's execution
// context was cancelled: by Ctrl-C (class cancelled), or by the cost ceiling,
// in which case the atoms its workers finished become a salvaged bundle
// (no LLM call: the ceiling is spent) and the bundle is not failed. A
// mission timeout keeps its timeout class.
func (r *runState) cutOff(ctx context.Context, o *BundleOutcome, res commanders.Result) {
	if !o.Failed || ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return
	}
	if !errors.Is(context.Cause(ctx), errCostCeiling) {
		o.FailureClass, o.Error = ClassCancelled, "cancelled: the run was interrupted ("+res.Error+")"
		return
	}
	if b, n := salvageAtoms(o.Domain, res.Atoms); n > 0 {
		o.Bundle, o.Salvaged, o.Failed, o.FailureClass, o.Error = b, true, false, providers.ClassNone, ""
		return
	}
	o.FailureClass, o.Error = ClassCancelled, "stopped by the cost ceiling before any worker finished ("+res.Error+")"
}

// salvageAtoms builds a partial bundle from the atoms that finished, in brief
// order; n is how many went in.
func salvageAtoms(domain string, atoms []commanders.AtomResult) (b commanders.Bundle, n int) {
	var content strings.Builder
	var conf float64
	seen := map[string]bool{}
	for _, a := range atoms {
		if a.Failed || strings.TrimSpace(a.Atom.Content) == "" {
			continue
		}
		n++
		conf += a.Atom.Confidence
		fmt.Fprintf(&content, "### %s\n\n%s\n\n", a.BriefID, strings.TrimSpace(a.Atom.Content))
		for _, e := range a.Atom.Evidence {
			if !seen[e] {
				seen[e] = true
				b.Evidence = append(b.Evidence, e)
			}
		}
	}
	if n == 0 {
		return commanders.Bundle{}, 0
	}
	b.Domain, b.Status = domain, commanders.StatusPartial
	b.Summary = fmt.Sprintf("Salvaged: the cost ceiling stopped the commander before it assembled its bundle; this is the work of the %d of %d workers that finished, unedited.", n, len(atoms))
	b.Content = strings.TrimSpace(content.String())
	b.Confidence = min(0.5, conf/float64(n))
	return b, n
}
