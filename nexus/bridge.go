package nexus

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/sandbox/boundary"
	"github.com/swarm-dev/swarm/sandbox/governance"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// missionSandbox connects a run to the sandbox: leakage scanning, the
// circuit breaker on real agents, audits, and the bridge to interactions.
type missionSandbox struct {
	mu       sync.Mutex
	bridge   *sandbox.Bridge
	detector *boundary.Detector
	breaker  *governance.CircuitBreaker
	leaks    map[string]int // per agent
	tripped  map[string]bool
	models   map[string]string // agent -> model

	emit   func(events.Event) // the run's events
	onTrip func()             // counts a breaker trip in the run's telemetry
}

// newMissionSandbox builds the run's sandbox from its config; emit receives
// its events and onTrip is called when its circuit breaker trips.
func newMissionSandbox(c config.Sandbox, cb config.CircuitBreaker, emit func(events.Event), onTrip func()) (*missionSandbox, error) {
	proxy, pay, key, err := config.SandboxSettings(c)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", config.ErrBadInput, key, err)
	}
	det, err := boundary.NewDetector(boundary.Config{})
	if err != nil {
		return nil, err
	}
	ms := &missionSandbox{bridge: sandbox.NewBridge(proxy, pay), detector: det, leaks: map[string]int{}, tripped: map[string]bool{}, models: map[string]string{},
		emit: emit, onTrip: onTrip}
	if cb.ToxicityThreshold > 0 {
		ms.breaker = governance.NewCircuitBreaker(governance.BreakerConfig{Enabled: true, Window: cb.Window, Threshold: cb.ToxicityThreshold, Violations: 3})
	}
	return ms, nil
}

// redactLeaks is the run's commanders.Redactor: every credential, private
// key and piece of personal data becomes "[REDACTED:<name>]" before the text
// is stored or shown to another agent; only its kind and place are kept.
// It is the module's one redaction pass (internal/redact) with the run's
// secret set, personal data included.
func redactLeaks(sec *redact.Secrets) func(string) (string, []commanders.Leak) {
	return func(text string) (string, []commanders.Leak) { return findLeaks(sec, text) }
}

func findLeaks(sec *redact.Secrets, text string) (string, []commanders.Leak) {
	ms := sec.Find(text, true)
	if len(ms) == 0 {
		return text, nil
	}
	leaks := make([]commanders.Leak, 0, len(ms))
	for _, m := range ms {
		name := m.Rule
		if name == "" {
			name = "configured_secret"
		}
		leaks = append(leaks, commanders.Leak{Name: name, Kind: m.Kind, Severity: m.Severity, Offset: m.Start})
	}
	return redact.Apply(text, ms), leaks
}

// redactText returns the pass that removes the run's secrets (sec), every
// credential and personal data from a text, keeping nothing about them.
func redactText(sec *redact.Secrets) func(string) string {
	return func(text string) string { return sec.Text(text, true) }
}

// redactAnswer is the pass an answer goes through as it enters the run,
// before anything parses, stores or forwards it: its tool calls'
// arguments always, and its text unless a commander, squad lead or worker
// wrote it (their atoms and bundles are redacted field by field as they are
// parsed, by commanders.Hooks.Redact, which records each leak against the
// agent for the sandbox and the Shadow Gate). It is the journal's pass
// (journalResponse), so a resumed run replays exactly what the fresh run
// used: the same decomposition, the same criteria, the same sealed hash.
func redactAnswer(sec *redact.Secrets, role string, resp providers.Response) providers.Response {
	redactText := redactText(sec)
	switch role {
	case commanders.RoleCommander, commanders.RoleSquadLead, commanders.RoleWorker:
	default:
		resp.Text = redactText(resp.Text)
	}
	if calls, changed := redactArgs(resp.ToolCalls, redactText); changed {
		resp.ToolCalls = calls
	}
	return resp
}

// redactTranscript returns tr as transcripts.jsonl keeps it: a copy with
// secrets redacted from every message (and tool call), the answer and the
// error, and each tool result cut at maxTranscriptToolResult bytes. The cut
// comes after every redaction (the recorder's, then this one): a secret
// across the cut would keep its start and match no pattern.
func redactTranscript(sec *redact.Secrets, tr Transcript) Transcript {
	redactText := redactText(sec)
	msgs := make([]providers.Message, len(tr.Messages))
	for i, m := range tr.Messages {
		m.Content = redactText(m.Content)
		if m.Role == providers.RoleTool {
			m.Content = textsafe.Truncate(m.Content, maxTranscriptToolResult)
		}
		m.ToolCalls, _ = redactArgs(m.ToolCalls, redactText)
		msgs[i] = m
	}
	tr.Messages = msgs
	tr.Answer, tr.Error = redactText(tr.Answer), redactText(tr.Error)
	tr.ToolCalls, _ = redactArgs(tr.ToolCalls, redactText)
	return tr
}

// scan records leakage in an agent's output, already redacted: the hits
// still in text (code patterns, which are reported, not removed) and the
// secrets redacted from it. It returns the hit count. phase is the phase
// the output belongs to (atoms arrive in Phase 4 while 5 and 6 run).
func (m *missionSandbox) scan(phase events.Phase, role, agent, model, text string, redacted []commanders.Leak) int {
	hits := m.detector.Scan(text)
	for _, l := range redacted {
		h := boundary.Hit{Kind: l.Kind, Name: l.Name}
		_ = h.Severity.UnmarshalText([]byte(l.Severity)) // a name redactLeaks wrote
		h.Redacted = h.Placeholder()
		hits = append(hits, h)
	}
	if len(hits) == 0 {
		return 0
	}
	m.mu.Lock()
	m.leaks[agent] += len(hits)
	for _, h := range hits {
		m.bridge.Leak(sandbox.LeakRecord{Agent: agent, Model: model, Kind: h.Kind, Name: h.Name, Severity: h.Severity.String(), Excerpt: h.Redacted})
	}
	m.mu.Unlock()
	names := make([]string, 0, len(hits))
	for _, h := range hits {
		names = append(names, h.Name)
	}
	m.emit(events.Event{Phase: phase, Kind: events.Leakage, Role: role, AgentID: agent, Model: model,
		Message: fmt.Sprintf("%d leakage hits: %s", len(hits), strings.Join(names, ", ")), Data: events.LeakageData{Hits: len(hits), MaxSeverity: boundary.MaxSeverity(hits).String()}})
	return len(hits)
}

// atomDone bridges a worker's atom and feeds the breaker keyed by model;
// checks are its citations' verdicts (nil without a workspace).
func (m *missionSandbox) atomDone(parent string, a commanders.AtomResult, checks []workspace.Check) {
	leaks := m.scan(events.Phase4, commanders.RoleWorker, a.AgentID, a.Model, a.Atom.Content, a.Leaks)
	schema := 0
	if a.Class == providers.ClassSchemaInvalid || a.Class == providers.ClassUnparseable {
		schema = 1
	}
	status := a.Atom.Status
	if a.Failed {
		status = commanders.StatusFailed
	}
	in := sandbox.AtomInteraction(m.bridge.Proxy(), sandbox.MissionAtom{Agent: a.AgentID, Parent: parent, Model: a.Model, Status: status,
		Confidence: a.Atom.Confidence, SelfScore: a.Atom.SelfScore, Repairs: a.Retries, SchemaViolations: schema, LeakHits: leaks})
	if checks != nil {
		lowerForFabrication(m.bridge.Proxy(), &in, workspace.CountChecks(checks))
	}
	m.mu.Lock()
	m.bridge.Add(in, a.Model)
	m.models[a.AgentID] = a.Model
	trip := m.breaker != nil && m.breaker.Observe(a.Model, in.P, in.Accepted)
	if trip {
		m.tripped[a.Model] = true
		m.bridge.Trip(a.Model)
	}
	m.mu.Unlock()
	if trip {
		m.onTrip()
		m.emit(events.Event{Phase: events.Phase4, Kind: events.BreakerTrip, Model: a.Model,
			Message: fmt.Sprintf("sandbox circuit breaker: rolling toxicity of %s crossed the threshold; no more work for it in this run", a.Model)})
	}
}

// lowerForFabrication lowers an atom's or bundle's interaction's observables for the
// fabricated citations n counts (only with a workspace): each fabricated
// citation is one verifier rejection (the mechanical check rejected it),
// and the task progress drops by twice the fabricated share of the atom's
// citations (an atom whose every citation is fabricated loses the whole
// [-1, 1] range), floored at -1. v̂ and p are recomputed. Verified and
// unverifiable citations change nothing.
func lowerForFabrication(p *sandbox.Proxy, in *sandbox.Interaction, n workspace.Counts) {
	if n.Fabricated == 0 || in.Observables == nil {
		return
	}
	o := *in.Observables
	o.VerifierRejections += float64(n.Fabricated)
	o.TaskProgress = math.Max(-1, o.TaskProgress-2*float64(n.Fabricated)/float64(n.Cited))
	in.Observables = &o
	in.VHat, in.P = p.VHat(o), p.P(o)
}

// trippedModels are the models the sandbox's breaker stopped giving work
// to in this run, sorted.
func (m *missionSandbox) trippedModels() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.tripped))
}

func (m *missionSandbox) mayAssign(a commanders.Agent) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.tripped[a.Ref.String()]
}

// finish bridges the bundles and returns sandbox.json's content; th is the
// hardening threshold, phase the phase the run is in.
func (m *missionSandbox) finish(res *Result, th float64, phase events.Phase) sandbox.MissionReport {
	for _, o := range res.Bundles {
		mb := sandbox.MissionBundle{ID: o.ID, Agent: o.Commander, Model: o.Model, Failed: o.Failed, Salvaged: o.Salvaged,
			Coverage: o.Formula.Coverage, Retries: o.Repairs, ReviewerConflicts: o.Review.Conflicts, SchemaViolations: o.SchemaFails,
			DepthRefusals: o.Refusals, ReviewScore: o.Review.Score, Accepted: o.InSynthesis}
		if !o.Failed {
			var own []commanders.Leak // the bundle's own; its atoms' were counted as they arrived
			for _, l := range o.LeakReport {
				if !strings.HasPrefix(l.Source, "atom:") {
					own = append(own, l)
				}
			}
			mb.LeakHits = m.scan(phase, commanders.RoleCommander, o.Commander, o.Model, o.Bundle.Text(), own)
		}
		if o.Final != nil && res.ShadowValid {
			mb.Scored, mb.SealedPassed, mb.SealedTotal = true, o.Final.Passed, o.Final.Total
			mb.WithinThreshold = o.Final.Score <= th
		}
		if o.Hardening != nil {
			mb.HardeningCycles = o.Hardening.Cycles
		}
		in := sandbox.BundleInteraction(m.bridge.Proxy(), mb)
		if c := o.checks; c != nil && !o.Failed {
			// The bundle's own and its findings' citations (its atoms'
			// lowered their own interactions).
			n := workspace.CountChecks(c.own)
			for _, f := range c.findings {
				n = n.Plus(workspace.CountChecks(f))
			}
			lowerForFabrication(m.bridge.Proxy(), &in, n)
		}
		m.mu.Lock()
		m.bridge.Add(in, o.Model)
		m.mu.Unlock()
	}
	return m.bridge.Report()
}

// audit re-judges a random sample of scored bundles (rate from config) with
// a fresh judge seed and records how far the verdicts agree.
// seed seeds the sample; input is what the judge reads of a bundle (with
// its ledger in a run with a workspace).
func (m *missionSandbox) audit(ctx context.Context, judge *shadow.Judge, env *shadow.Envelope, bundles []*BundleOutcome, rate float64, seed int64, input func(*BundleOutcome) shadow.BundleInput) {
	if rate <= 0 || judge == nil {
		return
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0xa0d17))
	for _, o := range bundles {
		if o.Final == nil || rng.Float64() >= rate {
			continue
		}
		in := input(o)
		in.ID += "-audit"
		ev, err := judge.Evaluate(ctx, env, in)
		if err != nil {
			continue
		}
		agree := 0
		for i, v := range ev.Verdicts {
			if i < len(o.Final.Verdicts) && o.Final.Verdicts[i].Status == v.Status {
				agree++
			}
		}
		rec := sandbox.AuditRecord{BundleID: o.ID, Original: o.Final.Score, Audited: ev.Score, Agree: float64(agree) / float64(max(1, len(ev.Verdicts)))}
		m.mu.Lock()
		m.bridge.Audit(rec)
		m.mu.Unlock()
		m.emit(events.Event{Phase: events.Phase6, Kind: events.Audit, Data: events.AuditData{BundleID: o.ID, Original: rec.Original, Audited: rec.Audited, Agreement: rec.Agree}})
	}
}
