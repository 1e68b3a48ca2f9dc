package commanders

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/vocab"
)

// fake answers by schema name.
func fake(shards int, calls *atomic.Int32) providers.Provider {
	return providers.ProviderFunc(func(_ context.Context, r providers.Request) (providers.Response, error) {
		calls.Add(1)
		var v any
		switch r.Schema.Name {
		case vocab.SchemaShardPlan:
			var ss []Shard
			for i := 0; i < shards; i++ {
				ss = append(ss, Shard{BriefID: fmt.Sprintf("s%d", i), Brief: "do it", Aspects: []string{"a"}})
			}
			v = ShardPlan{Shards: ss}
		case vocab.SchemaMicroBriefs:
			var bs []MicroBrief
			for i := 0; i < shards; i++ {
				bs = append(bs, MicroBrief{BriefID: fmt.Sprintf("m%d", i), Brief: "do it", Aspects: []string{}})
			}
			v = MicroBriefs{Briefs: bs}
		case vocab.SchemaAtom:
			v = Atom{Status: StatusComplete, Content: "done", Confidence: 0.8, Evidence: []citation.Citation{}, SelfScore: 8}
		case vocab.SchemaBundle:
			v = Bundle{Domain: "testing", Status: StatusComplete, Content: "c", Findings: []Finding{}, Evidence: []citation.Citation{}, CoveredAspects: []string{}, Confidence: 0.8}
		}
		b, _ := json.Marshal(v)
		return providers.Response{Text: string(b)}, nil
	})
}

func capsule() Capsule {
	return Capsule{ID: "capsule-testing", Domain: "testing", Brief: "brief", Aspects: []string{"a"}, Constraints: Constraints{Timeout: time.Minute}}
}

func TestDepthGuardCapsChildrenWhateverThePlanSays(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		planned      int
		limits       Limits
		wantWorkers  int32
		wantRefusals int
		wantAtoms    int
	}{
		{"plan asks for more workers than allowed", 40, Limits{Children: 15}, 15, 1, 15},
		{"fewer shards than seats: every seat still gets a brief", 3, Limits{Children: 5}, 5, 0, 5},
		{"squad leads: children and workers per lead both capped", 12, Limits{Children: 2, WorkersPerLead: 3}, 6, 3, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			var workers atomic.Int32
			p := fake(tc.planned, &calls)
			var refused atomic.Int32 // squad leads refuse concurrently
			c := &Commander{Agent: Agent{ID: "commander-testing", Role: RoleCommander, Provider: p}, Capsule: capsule(), Limits: tc.limits,
				Hooks: Hooks{Event: func(e AgentEvent) {
					switch {
					case e.Kind == AgentRefused:
						refused.Add(1)
					case e.Kind == AgentStarted && e.Agent.Role == RoleWorker:
						workers.Add(1)
					}
				}},
				SquadLead: func(i int) Agent { return Agent{ID: fmt.Sprint("lead", i), Role: RoleSquadLead, Provider: p} },
				Worker:    func(i, j int) Agent { return Agent{ID: fmt.Sprint("w", i, j), Role: RoleWorker, Provider: p} },
			}
			res := c.Run(t.Context())
			if res.Failed {
				t.Fatal(res.Error)
			}
			if workers.Load() != tc.wantWorkers || len(res.Atoms) != tc.wantAtoms || int(refused.Load()) != tc.wantRefusals || res.Refusals != tc.wantRefusals {
				t.Errorf("workers %d atoms %d refusals %d/%d", workers.Load(), len(res.Atoms), refused.Load(), res.Refusals)
			}
		})
	}
}

func TestCapsuleValidationAndConstraints(t *testing.T) {
	t.Parallel()
	c := capsule()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Brief = strings.Repeat("x", MaxBriefChars+1)
	c.Domain = "marketing"
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "1501 characters") || !strings.Contains(err.Error(), "marketing") {
		t.Errorf("err = %v", err)
	}
	parent := Constraints{Timeout: time.Minute, MaxTokens: 1000, FileScope: []string{"a", "b"}}
	got := parent.Tighten(Constraints{Timeout: time.Hour, MaxTokens: 500, FileScope: []string{"b", "c"}})
	if got.Timeout != time.Minute || got.MaxTokens != 500 || len(got.FileScope) != 1 || got.FileScope[0] != "b" {
		t.Errorf("constraints loosened going down: %+v", got)
	}
}

func TestSalvage(t *testing.T) {
	t.Parallel()
	bad := &providers.Error{Class: providers.ClassSchemaInvalid, Raw: `{"summary":"s","content":"usable","status":"done?","findings":[{"title":"t"}]}`}
	b, ok := Salvage(bad, "testing")
	if !ok || b.Status != StatusPartial || b.Confidence != 0.5 || b.Content != "usable" || len(b.Findings) != 1 {
		t.Errorf("salvage = %+v %v", b, ok)
	}
	if _, ok := Salvage(&providers.Error{Class: providers.ClassUnparseable, Raw: "nope"}, "testing"); ok {
		t.Error("unparseable output salvaged")
	}
	if _, ok := Salvage(&providers.Error{Class: providers.ClassSchemaInvalid, Raw: `{"x":1}`}, "testing"); ok {
		t.Error("content-free output salvaged")
	}
}

func TestBundleTextLeavesOutClaims(t *testing.T) {
	t.Parallel()
	b := Bundle{Domain: "d", Content: "real work", CoveredAspects: []string{"secret claim"}, Confidence: 0.99}
	if strings.Contains(b.Text(), "secret claim") || strings.Contains(b.Text(), "0.99") {
		t.Error("claims leaked into the judged text")
	}
}

func TestTightenNeverWidensFileScope(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		parent, child []string
		want          []string
	}{
		{"no parent scope: the child's applies", nil, []string{"src/auth"}, []string{"src/auth"}},
		{"no child scope: the parent's is kept", []string{"src/auth"}, nil, []string{"src/auth"}},
		{"a file inside the parent's directory narrows it", []string{"src/auth/"}, []string{"src/auth/token.go"}, []string{"src/auth/token.go"}},
		{"a broader child directory keeps the parent's narrower path", []string{"src/auth/token.go"}, []string{"src"}, []string{"src/auth/token.go"}},
		{"a disjoint child scope cannot open the scope: the parent's is kept", []string{"src/auth"}, []string{"deploy"}, []string{"src/auth"}},
		{"a prefix that is not a directory boundary is outside", []string{"src/auth"}, []string{"src/authz", "src/auth/x.go"}, []string{"src/auth/x.go"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Constraints{FileScope: tc.parent}.Tighten(Constraints{FileScope: tc.child}).FileScope
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("file scope = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestConstraintsReachEveryCall checks that the capsule's constraints are
// applied, tightened, to the calls of every layer below: the token ceiling
// of each request, the deadline of each call's context, and the file scope
// shown to workers.
func TestConstraintsReachEveryCall(t *testing.T) {
	t.Parallel()
	type seen struct {
		role      string
		maxTokens int
		left      time.Duration
		prompt    string
	}
	var mu sync.Mutex
	var got []seen
	var calls atomic.Int32
	inner := fake(3, &calls)
	p := providers.ProviderFunc(func(ctx context.Context, r providers.Request) (providers.Response, error) {
		dl, ok := ctx.Deadline()
		s := seen{role: r.Caller.Role, maxTokens: r.MaxTokens, prompt: r.Messages[len(r.Messages)-1].Content}
		if ok {
			s.left = time.Until(dl)
		}
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
		return inner.Complete(ctx, r)
	})
	cp := capsule()
	cp.Constraints = Constraints{Timeout: time.Minute, MaxTokens: 800, FileScope: []string{"src/auth"}}
	c := &Commander{Agent: Agent{ID: "commander-testing", Role: RoleCommander, Provider: p}, Capsule: cp,
		Limits: Limits{Children: 2, WorkersPerLead: 2,
			SquadLeadTimeout: time.Hour, SquadLeadMaxTokens: 600, // looser timeout than the capsule: must not loosen
			WorkerTimeout: 10 * time.Second, WorkerMaxTokens: 2000}, // looser token ceiling than the lead's: must not loosen
		SquadLead: func(i int) Agent { return Agent{ID: fmt.Sprint("lead", i), Role: RoleSquadLead, Provider: p} },
		Worker:    func(i, j int) Agent { return Agent{ID: fmt.Sprint("w", i, j), Role: RoleWorker, Provider: p} },
	}
	res := c.Run(t.Context())
	if res.Failed {
		t.Fatal(res.Error)
	}
	want := map[string]struct {
		maxTokens int
		maxLeft   time.Duration
	}{
		RoleCommander: {800, time.Minute},
		RoleSquadLead: {600, time.Minute},      // the capsule's minute, not the lead's hour
		RoleWorker:    {600, 10 * time.Second}, // the lead's 600, not the worker layer's 2000
	}
	roles := map[string]int{}
	for _, s := range got {
		roles[s.role]++
		w := want[s.role]
		if s.maxTokens != w.maxTokens {
			t.Errorf("%s call max_tokens = %d, want %d", s.role, s.maxTokens, w.maxTokens)
		}
		if s.left <= 0 || s.left > w.maxLeft {
			t.Errorf("%s call deadline in %v, want within %v", s.role, s.left, w.maxLeft)
		}
		if scope := prompts.BlocksOf(s.prompt, vocab.BlockFileScope); s.role == RoleWorker && (len(scope) != 1 || scope[0].Content != "src/auth") {
			t.Errorf("worker prompt lacks the file scope:\n%s", s.prompt)
		}
	}
	if roles[RoleCommander] != 2 || roles[RoleSquadLead] != 2 || roles[RoleWorker] != 4 {
		t.Errorf("calls per role = %v", roles)
	}
	for _, a := range res.Atoms {
		if a.Constraints.Timeout != 10*time.Second || a.Constraints.MaxTokens != 600 || fmt.Sprint(a.Constraints.FileScope) != "[src/auth]" {
			t.Errorf("atom %s ran under %+v", a.AgentID, a.Constraints)
		}
	}
}

// Each worker that ran finishes with its atom on the Event stream, already
// redacted: the one stream a caller follows (the sandbox bridge takes
// atoms from it) sees what the commander keeps, never the raw secret.
func TestWorkerFinishCarriesItsRedactedAtom(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	p := fake(3, &calls)
	var mu sync.Mutex // workers finish concurrently
	atoms := map[string]AtomResult{}
	redact := func(s string) (string, []Leak) {
		if s == "done" {
			return "[REDACTED:test]", []Leak{{Name: "test", Kind: "secret", Severity: "high"}}
		}
		return s, nil
	}
	c := &Commander{Agent: Agent{ID: "commander-testing", Role: RoleCommander, Provider: p}, Capsule: capsule(), Limits: Limits{Children: 3},
		Hooks: Hooks{Redact: redact, Event: func(e AgentEvent) {
			if e.Kind != AgentFinished {
				return
			}
			if (e.Atom != nil) != (e.Agent.Role == RoleWorker) {
				t.Errorf("%s (%s) finished with atom %v", e.Agent.ID, e.Agent.Role, e.Atom)
			}
			if e.Atom != nil {
				mu.Lock()
				atoms[e.Agent.ID] = *e.Atom
				mu.Unlock()
			}
		}},
		Worker: func(i, j int) Agent { return Agent{ID: fmt.Sprint("w", i, j), Role: RoleWorker, Provider: p} },
	}
	res := c.Run(t.Context())
	if res.Failed {
		t.Fatal(res.Error)
	}
	if len(atoms) != 3 || len(res.Atoms) != 3 {
		t.Fatalf("%d atoms on the stream, %d in the result; want 3", len(atoms), len(res.Atoms))
	}
	for _, r := range res.Atoms {
		got, ok := atoms[r.AgentID]
		if !ok {
			t.Errorf("%s: no atom on the stream", r.AgentID)
			continue
		}
		if got.Atom.Content != "[REDACTED:test]" || len(got.Leaks) != 1 || got.Atom.Content != r.Atom.Content {
			t.Errorf("%s: stream atom %q leaks %v, result atom %q", r.AgentID, got.Atom.Content, got.Leaks, r.Atom.Content)
		}
	}
}
