package commanders

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/vocab"
)

// answer is what a test model says to one request: its text, or an error.
// user is the request's user message.
type answer func(schema, user string) (string, error)

var countLine = regexp.MustCompile(vocab.CountPrefix + `(\d+)`)

// honest answers every schema validly. A plan's shards say "part i of n"
// (n from the Count line) and carry two brief lines and four aspects, so
// simplification has something to cut.
func honest(schema, user string) (string, error) {
	n := 1
	if m := countLine.FindStringSubmatch(user); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	var v any
	switch schema {
	case vocab.SchemaShardPlan:
		var ss []Shard
		for i := range n {
			ss = append(ss, Shard{BriefID: fmt.Sprintf("testing-%02d", i+1), Brief: fmt.Sprintf("Write part %d of %d.\nDETAIL: every edge case.", i+1, n), Aspects: []string{"a", "b", "c", "d"}})
		}
		v = ShardPlan{Shards: ss}
	case vocab.SchemaMicroBriefs:
		var bs []MicroBrief
		for i := range n {
			bs = append(bs, MicroBrief{BriefID: fmt.Sprintf("m%d", i+1), Brief: "Do it.\nDETAIL: all of it.", Aspects: []string{"a", "b"}})
		}
		v = MicroBriefs{Briefs: bs}
	case vocab.SchemaAtom:
		v = Atom{Status: StatusComplete, Content: "done: " + strings.Repeat("x", 700) + " END-OF-ATOM", Confidence: 0.8, Evidence: []citation.Citation{}, SelfScore: 8}
	case vocab.SchemaBundle:
		v = Bundle{Domain: "testing", Status: StatusComplete, Content: "c", Findings: []Finding{}, Evidence: []citation.Citation{}, CoveredAspects: []string{}, Confidence: 0.8}
	}
	b, _ := json.Marshal(v)
	return string(b), nil
}

var errDown = &providers.Error{Class: providers.ClassPermanent, Msg: "model down"}

// failing answers like honest except for schema, where it fails while
// cond holds for the user message.
func failing(schema string, cond func(user string) bool, fail func() (string, error)) answer {
	return func(s, user string) (string, error) {
		if s == schema && cond(user) {
			return fail()
		}
		return honest(s, user)
	}
}

func always(string) bool { return true }

func down() (string, error) { return "", errDown }

// invalid is an answer that fails its schema (status out of the enum) but
// has content to salvage.
func invalid() (string, error) {
	return `{"status":"bogus","content":"half of the work","summary":"half","confidence":0.9}`, nil
}

func model(a answer) providers.Provider {
	return providers.ProviderFunc(func(_ context.Context, r providers.Request) (providers.Response, error) {
		text, err := a(r.Schema.Name, r.Messages[len(r.Messages)-1].Content)
		if err != nil {
			return providers.Response{}, err
		}
		return providers.Response{Text: text}, nil
	})
}

var (
	primaryRef  = providers.Ref{Kind: "test", Model: "primary"}
	fallbackRef = providers.Ref{Kind: "test", Model: "fallback"}
)

// steps collects the recovery steps a commander reports (hooks run
// concurrently).
type steps struct {
	mu  sync.Mutex
	all []RecoveryStep
}

func (s *steps) event(e AgentEvent) {
	if e.Kind != AgentRecovery {
		return
	}
	s.mu.Lock()
	s.all = append(s.all, *e.Recovery)
	s.mu.Unlock()
}

// of lists unit's steps as "step#attempt:ok".
func (s *steps) of(unit string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.all {
		if r.Unit == unit {
			out = append(out, fmt.Sprintf("%s %s#%d:%v", r.UnitID, r.Step, r.Attempt, r.OK))
		}
	}
	return out
}

var fullLadder = Recovery{Enabled: true, Simplify: true, ModelSwap: true, ScopeReduction: true, Degrade: true, Attempts: 2}

// ladderCommander is a commander whose every role answers with primary, and
// whose fallback model (every role's one) answers with fallback (nil: no
// fallback).
func ladderCommander(primary, fallback answer, lim Limits, rec Recovery, st *steps) *Commander {
	p := model(primary)
	agent := func(id, role string) Agent { return Agent{ID: id, Role: role, Ref: primaryRef, Provider: p} }
	c := &Commander{Agent: agent("commander-testing", RoleCommander), Capsule: capsule(), Limits: lim, Recovery: rec,
		Hooks:     Hooks{Event: st.event},
		SquadLead: func(i int) Agent { return agent(fmt.Sprint("lead-", i+1), RoleSquadLead) },
		Worker:    func(i, j int) Agent { return agent(fmt.Sprint("worker-", i+1, "-", j+1), RoleWorker) },
	}
	if fallback != nil {
		fp := model(fallback)
		c.Hooks.Fallback = func(a Agent, n int) (Agent, bool) {
			if n > 0 {
				return Agent{}, false
			}
			a.Ref, a.Provider = fallbackRef, fp
			return a, true
		}
	}
	return c
}

func TestLadderPerUnit(t *testing.T) {
	t.Parallel()
	flat := Limits{Children: 1}
	squads := Limits{Children: 1, WorkersPerLead: 1}
	tests := []struct {
		name     string
		why      string
		primary  answer
		fallback answer
		limits   Limits
		rec      Recovery
		unit     string
		want     []string // the unit's steps, in order
		check    func(t *testing.T, r Result)
	}{
		{name: "atom fails until its brief is simplified",
			why:     "simplify: the brief cut to its first line is what the worker can answer",
			primary: failing(vocab.SchemaAtom, func(u string) bool { return strings.Contains(u, "DETAIL") }, down),
			limits:  flat, rec: fullLadder, unit: UnitAtom,
			want: []string{"testing-01 retry#1:false", "testing-01 simplify#1:true"},
			check: func(t *testing.T, r Result) {
				if r.Atoms[0].Failed || r.Atoms[0].Degraded {
					t.Errorf("atom failed %v degraded %v, want a success", r.Atoms[0].Failed, r.Atoms[0].Degraded)
				}
			}},
		{name: "atom's primary always fails: the fallback answers",
			why:     "model swap: simplification (brief to one line, aspects 4 -> 2 -> 1) cannot help a model that is down",
			primary: failing(vocab.SchemaAtom, always, down), fallback: honest,
			limits: flat, rec: fullLadder, unit: UnitAtom,
			want: []string{"testing-01 retry#1:false", "testing-01 simplify#1:false", "testing-01 simplify#2:false", "testing-01 model_swap#1:true"},
			check: func(t *testing.T, r Result) {
				if a := r.Atoms[0]; a.Failed || a.Model != fallbackRef.String() {
					t.Errorf("atom failed %v by %s, want a success by %s", a.Failed, a.Model, fallbackRef)
				}
			}},
		{name: "atom fails every step: its salvage is degraded",
			why:     "degrade: an answer with content that failed its schema is kept, marked, not a success",
			primary: failing(vocab.SchemaAtom, always, invalid), fallback: failing(vocab.SchemaAtom, always, invalid),
			limits: flat, rec: fullLadder, unit: UnitAtom,
			want: []string{"testing-01 retry#1:false", "testing-01 simplify#1:false", "testing-01 simplify#2:false", "testing-01 model_swap#1:false", "testing-01 degrade#1:true"},
			check: func(t *testing.T, r Result) {
				a := r.Atoms[0]
				if !a.Degraded || a.Atom.Status != StatusPartial || a.Atom.Content != "half of the work" || a.Atom.Confidence > 0.5 {
					t.Errorf("atom %+v degraded %v, want a degraded partial salvage of confidence <= 0.5", a.Atom, a.Degraded)
				}
			}},
		{name: "atom fails every step with nothing to salvage",
			why:     "degrade fails without content: the atom stays failed",
			primary: failing(vocab.SchemaAtom, always, down),
			limits:  flat, rec: fullLadder, unit: UnitAtom,
			want: []string{"testing-01 retry#1:false", "testing-01 simplify#1:false", "testing-01 simplify#2:false", "testing-01 degrade#1:false"},
			check: func(t *testing.T, r Result) {
				if !r.Atoms[0].Failed || r.Atoms[0].Degraded {
					t.Errorf("atom failed %v degraded %v, want failed", r.Atoms[0].Failed, r.Atoms[0].Degraded)
				}
			}},
		{name: "ladder off: a failure is recorded as it happens",
			why:     "recovery.enabled false keeps the behaviour before the ladder",
			primary: failing(vocab.SchemaAtom, always, invalid), fallback: honest,
			limits: flat, rec: Recovery{}, unit: UnitAtom,
			want: nil,
			check: func(t *testing.T, r Result) {
				if !r.Atoms[0].Failed {
					t.Error("atom recovered with the ladder off")
				}
			}},
		{name: "switched-off steps are skipped",
			why:     "each step has its own switch: only model swap on",
			primary: failing(vocab.SchemaAtom, always, down), fallback: honest,
			limits: flat, rec: Recovery{Enabled: true, ModelSwap: true}, unit: UnitAtom,
			want: []string{"testing-01 retry#1:false", "testing-01 model_swap#1:true"}},
		{name: "shard: the squad lead fails until its shard is simplified",
			why:     "simplify for a shard: its brief cut, its aspects halved",
			primary: failing(vocab.SchemaMicroBriefs, func(u string) bool { return strings.Contains(u, "DETAIL") }, down),
			limits:  squads, rec: fullLadder, unit: UnitShard,
			want: []string{"testing-01 retry#1:false", "testing-01 simplify#1:true"}},
		{name: "shard: the squad lead's primary is down, its fallback splits",
			primary: failing(vocab.SchemaMicroBriefs, always, down), fallback: honest,
			limits: squads, rec: fullLadder, unit: UnitShard,
			want: []string{"testing-01 retry#1:false", "testing-01 simplify#1:false", "testing-01 simplify#2:false", "testing-01 model_swap#1:true"}},
		{name: "shard: every step fails, the workers run on the shard itself, marked",
			why:     "degrade for a shard: unsplit work, listed in Result.Degraded",
			primary: failing(vocab.SchemaMicroBriefs, always, down),
			limits:  squads, rec: fullLadder, unit: UnitShard,
			want: []string{"testing-01 retry#1:false", "testing-01 simplify#1:false", "testing-01 simplify#2:false", "testing-01 degrade#1:true"},
			check: func(t *testing.T, r Result) {
				if len(r.Degraded) != 1 || r.Degraded[0].Unit != UnitShard || r.Atoms[0].Failed {
					t.Errorf("degraded %+v, atom failed %v: want the shard marked and its worker's atom", r.Degraded, r.Atoms[0].Failed)
				}
			}},
		{name: "bundle: assembly fails until the atom excerpts are shorter",
			why:     "simplify for a bundle: atoms shown cut to 600 characters, the atom's tail is gone",
			primary: failing(vocab.SchemaBundle, func(u string) bool { return strings.Contains(u, "END-OF-ATOM") }, down),
			limits:  flat, rec: fullLadder, unit: UnitBundle,
			want: []string{"testing retry#1:false", "testing simplify#1:true"},
			check: func(t *testing.T, r Result) {
				if r.Failed || r.Salvaged || len(r.Degraded) != 0 {
					t.Errorf("failed %v salvaged %v degraded %v, want an assembled bundle", r.Failed, r.Salvaged, r.Degraded)
				}
			}},
		{name: "bundle: the commander's primary is down at assembly, the fallback assembles",
			primary: failing(vocab.SchemaBundle, always, down), fallback: honest,
			limits: flat, rec: fullLadder, unit: UnitBundle,
			want: []string{"testing retry#1:false", "testing simplify#1:false", "testing simplify#2:false", "testing model_swap#1:true"}},
		{name: "bundle: every step fails, the finished atoms are salvaged and marked",
			why:     "degrade for a bundle: SalvageAtoms, Result.Salvaged and Degraded, never a success",
			primary: failing(vocab.SchemaBundle, always, down), fallback: failing(vocab.SchemaBundle, always, down),
			limits: flat, rec: fullLadder, unit: UnitBundle,
			want: []string{"testing retry#1:false", "testing simplify#1:false", "testing simplify#2:false", "testing model_swap#1:false", "testing degrade#1:true"},
			check: func(t *testing.T, r Result) {
				if r.Failed || !r.Salvaged || len(r.Degraded) != 1 || r.Degraded[0].Unit != UnitBundle || r.Bundle.Status != StatusPartial {
					t.Errorf("failed %v salvaged %v degraded %+v status %q, want a salvaged partial bundle marked degraded", r.Failed, r.Salvaged, r.Degraded, r.Bundle.Status)
				}
			}},
		{name: "bundle: the plan's model is down, the fallback plans",
			why:     "the plan is the bundle's first call: model swap",
			primary: failing(vocab.SchemaShardPlan, always, down), fallback: honest,
			limits: flat, rec: fullLadder, unit: UnitBundle,
			want: []string{"testing retry#1:false", "testing model_swap#1:true"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st steps
			r := ladderCommander(tc.primary, tc.fallback, tc.limits, tc.rec, &st).Run(t.Context())
			if d := cmp.Diff(tc.want, st.of(tc.unit)); d != "" {
				t.Errorf("%s: steps (-want +got)\n%s", tc.why, d)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func TestLadderScopeReduction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		why      string
		primary  answer
		want     []string
		dropped  []string
		atomsOK  int
		planSize int
		degrade  bool // the ladder's degrade step is on
	}{
		{name: "one shard of two fails: it is dropped",
			why:     "the bundle is assembled from the shards that worked",
			primary: failing(vocab.SchemaAtom, func(u string) bool { return strings.Contains(u, "part 2 of 2") }, down),
			want:    []string{"testing-02 scope_reduction#1:true"}, dropped: []string{"testing-02"}, atomsOK: 1, planSize: 2},
		{name: "every shard fails: re-plan with fewer shards",
			why:     "half the shards (one) is a plan the workers can do",
			primary: failing(vocab.SchemaAtom, func(u string) bool { return strings.Contains(u, "of 2.") }, down),
			want:    []string{"testing scope_reduction#1:true"}, atomsOK: 1, planSize: 3},
		{name: "every shard fails, the re-plan's atoms only degrade",
			why: "a degraded atom is salvage: the re-plan did not recover the bundle",
			primary: func(s, u string) (string, error) {
				switch {
				case s == vocab.SchemaAtom && strings.Contains(u, "of 2."):
					return down()
				case s == vocab.SchemaAtom:
					return invalid()
				}
				return honest(s, u)
			},
			want: []string{"testing scope_reduction#1:false"}, atomsOK: 1, planSize: 3, degrade: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st steps
			rec := Recovery{Enabled: true, ScopeReduction: true, Degrade: tc.degrade, Attempts: 2}
			r := ladderCommander(tc.primary, nil, Limits{Children: 2}, rec, &st).Run(t.Context())
			var got []string
			for _, u := range []string{UnitShard, UnitBundle} {
				for _, s := range st.of(u) {
					if !strings.Contains(s, "retry") {
						got = append(got, s)
					}
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s: steps (-want +got)\n%s", tc.why, d)
			}
			ok := 0
			for _, a := range r.Atoms {
				if !a.Failed {
					ok++
				}
			}
			if d := cmp.Diff(tc.dropped, r.Dropped); d != "" || ok != tc.atomsOK || len(r.Plan) != tc.planSize || r.Failed {
				t.Errorf("dropped (-want +got) %s; %d atoms ok (want %d), plan of %d (want %d), failed %v", d, ok, tc.atomsOK, len(r.Plan), tc.planSize, r.Failed)
			}
		})
	}
}

// A failure of the run's own (cancellation) never climbs the ladder.
func TestLadderNeverClimbsOnCancellation(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var st steps
	p := func(s, user string) (string, error) {
		if s == vocab.SchemaAtom {
			cancel()
			return "", context.Canceled
		}
		return honest(s, user)
	}
	c := ladderCommander(p, honest, Limits{Children: 1}, fullLadder, &st)
	r := c.Run(ctx)
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.all) != 0 {
		t.Errorf("steps %+v after a cancellation, want none", st.all)
	}
	if !r.Atoms[0].Failed {
		t.Error("the cancelled atom did not fail")
	}
}

// The simplified request depends on the brief and the attempt only.
func TestEssentialBrief(t *testing.T) {
	t.Parallel()
	tests := []struct {
		why   string
		brief string
		n     int
		want  string
	}{
		{"lines: the first half", "one\ntwo\nthree\nfour", 1, "one\ntwo"},
		{"lines: a quarter on the second attempt", "one\ntwo\nthree\nfour", 2, "one"},
		{"one line: by sentences", "First. Second. Third.", 1, "First. Second."},
		{"never empty", "Only.", 3, "Only."},
	}
	for _, tc := range tests {
		if got := essentialBrief(tc.brief, tc.n); got != tc.want {
			t.Errorf("%s: essentialBrief(%q, %d) = %q, want %q", tc.why, tc.brief, tc.n, got, tc.want)
		}
	}
	if d := cmp.Diff([]string{"a", "b"}, halveAspects([]string{"a", "b", "c"}, 1)); d != "" {
		t.Errorf("halveAspects (-want +got)\n%s", d)
	}
}

// Climb makes each rung's attempts up to Recovery.Attempts, a Once rung's
// one, and stops at the first attempt that recovers the unit.
func TestClimbBounds(t *testing.T) {
	t.Parallel()
	var got []string
	l := Ladder{Recovery: Recovery{Enabled: true, Attempts: 3}, Unit: UnitAtom, ID: "a", Halted: func() bool { return false },
		Report: func(s RecoveryStep) { got = append(got, fmt.Sprintf("%s#%d ok=%v", s.Step, s.Attempt, s.OK)) }}
	fail := func(int) Attempt { return Tried("x", fmt.Errorf("no")) }
	step := l.Climb("first failed",
		Rung{Step: StepSimplify, On: true, Try: fail},
		Rung{Step: StepModelSwap, On: true, Once: true, Try: fail},
		Rung{Step: StepScopeReduction, On: false, Try: fail},
		Rung{Step: StepDegrade, On: true, Try: func(n int) Attempt { return Tried("kept", nil) }})
	want := []string{"retry#1 ok=false", "simplify#1 ok=false", "simplify#2 ok=false", "simplify#3 ok=false", "model_swap#1 ok=false", "degrade#1 ok=true"}
	if d := cmp.Diff(want, got); d != "" || step != StepDegrade {
		t.Errorf("Climb returned %q (want degrade); reports (-want +got)\n%s", step, d)
	}
}

// When every model a unit could go to has an open circuit breaker
// (providers.ErrCircuitOpen: the unit's own failure, or an attempt's), no
// simpler request, other model or smaller scope can be answered either:
// the ladder goes straight to degrade instead of making attempts that are
// refused or wait for a cooldown each.
func TestClimbSkipsToDegradeWhenNoModelIsAvailable(t *testing.T) {
	t.Parallel()
	circuitOpen := providers.NewError(providers.ClassTransient, "m in layer workers, no fallback", providers.ErrCircuitOpen)
	tests := []struct {
		name   string
		cause  error
		simple func(n int) Attempt
		want   []string
	}{
		{name: "the unit's failure was the open breaker", cause: circuitOpen,
			simple: func(int) Attempt { return Tried("x", fmt.Errorf("no")) },
			want:   []string{"retry#1 ok=false", "degrade#1 ok=true"}},
		{name: "a simplification was refused by the open breaker", cause: fmt.Errorf("timeout"),
			simple: func(int) Attempt { return Tried("shorter", circuitOpen) },
			want:   []string{"retry#1 ok=false", "simplify#1 ok=false", "degrade#1 ok=true"}},
		{name: "another failure climbs every rung", cause: fmt.Errorf("timeout"),
			simple: func(int) Attempt { return Tried("shorter", fmt.Errorf("no")) },
			want:   []string{"retry#1 ok=false", "simplify#1 ok=false", "simplify#2 ok=false", "model_swap#1 ok=false", "scope_reduction#1 ok=false", "degrade#1 ok=true"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			l := Ladder{Recovery: Recovery{Enabled: true, Attempts: 2}, Unit: UnitAtom, ID: "a", Halted: func() bool { return false },
				Report: func(s RecoveryStep) { got = append(got, fmt.Sprintf("%s#%d ok=%v", s.Step, s.Attempt, s.OK)) }}
			fail := func(int) Attempt { return Tried("x", fmt.Errorf("no")) }
			step := l.Because(tc.cause).Climb(FailureText(tc.cause),
				Rung{Step: StepSimplify, On: true, Try: tc.simple},
				Rung{Step: StepModelSwap, On: true, Once: true, Try: fail},
				Rung{Step: StepScopeReduction, On: true, Once: true, Try: fail},
				Rung{Step: StepDegrade, On: true, Once: true, Try: func(int) Attempt { return Tried("kept", nil) }})
			if d := cmp.Diff(tc.want, got); d != "" || step != StepDegrade {
				t.Errorf("Climb returned %q (want degrade); reports (-want +got)\n%s", step, d)
			}
		})
	}
}

// A recovery step's detail quotes the failure, which may quote the model or
// its provider: it is redacted like the commander's own errors.
func TestLadderDetailRedacted(t *testing.T) {
	t.Parallel()
	var st steps
	leaky := func() (string, error) {
		return "", &providers.Error{Class: providers.ClassPermanent, Msg: "rejected key SECRET-123"}
	}
	c := ladderCommander(failing(vocab.SchemaAtom, always, leaky), nil, Limits{Children: 1}, fullLadder, &st)
	c.Hooks.Redact = func(s string) (string, []Leak) {
		return strings.ReplaceAll(s, "SECRET-123", "[REDACTED:test]"), nil
	}
	c.Run(t.Context())
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.all) == 0 {
		t.Fatal("no recovery step reported")
	}
	for _, s := range st.all {
		if strings.Contains(s.Detail, "SECRET-123") || (s.Unit == UnitAtom && !strings.Contains(s.Detail, "[REDACTED:test]")) {
			t.Errorf("%s %s#%d detail %q: want the secret redacted", s.Unit, s.Step, s.Attempt, s.Detail)
		}
	}
}

// FailureText names the failure's class once.
func TestFailureText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want string
	}{
		{errDown, "permanent: model down"},
		{fmt.Errorf("plan: %w", errDown), "permanent: plan: permanent: model down"},
		{fmt.Errorf("boom"), string(providers.ClassOf(fmt.Errorf("boom"))) + ": boom"},
		{nil, ""},
	}
	for _, tc := range tests {
		if got := FailureText(tc.err); got != tc.want {
			t.Errorf("FailureText(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
