package nexus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
)

// seamPool is a pool over kind "fake" whose provider answers with answer
// (counting its calls), a journal at a fresh path, and the llm_call events
// it records.
type seamPool struct {
	pp     *providerPool
	calls  atomic.Int64
	mu     sync.Mutex
	events []events.Event
}

func newSeamPool(t *testing.T, journalPath string, answer string) *seamPool {
	t.Helper()
	sp := &seamPool{}
	rec := testRecorder(t, func(e events.Event) {
		if e.Kind == events.LLMCall {
			sp.mu.Lock()
			sp.events = append(sp.events, e)
			sp.mu.Unlock()
		}
	})
	reg := &providers.Registry{}
	reg.Register(providers.KindInfo{Kind: "fake", Description: "test"}, func(providers.Ref, providers.KindConfig) (providers.Provider, error) {
		return providers.ProviderFunc(func(context.Context, providers.Request) (providers.Response, error) {
			sp.calls.Add(1)
			return providers.Response{Text: answer}, nil
		}), nil
	})
	var j *journal
	if journalPath != "" {
		var err error
		if j, _, err = openJournal(journalPath, testOpen); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = j.close() })
	}
	cfg := &config.Config{Providers: map[string]providers.KindConfig{"fake": {}}}
	sp.pp = &providerPool{cfg: cfg, reg: reg, limits: &providers.LimitSet{}, rec: rec, meter: newMeter(cfg.PriceOf, 0, rec), journal: j}
	return sp
}

// The layers a call goes through are the ones stack.go declares, in its
// order: a reordering (the recorder outside the retries, the replay inside
// routing) changes what a run records and must be seen here.
func TestCallStackOrder(t *testing.T) {
	t.Parallel()
	sp := newSeamPool(t, filepath.Join(t.TempDir(), runfiles.JournalFile), "{}")
	ref := providers.Ref{Kind: "fake", Model: "m"}
	ms, err := sp.pp.provider(ref)
	if err != nil {
		t.Fatal(err)
	}
	got := append(sp.pp.roleStack(nil).Names(), ms.Names()...)
	want := []string{layerReplay, layerConcurrency, layerRetry, layerAdaptive, layerRateLimit, layerTimeout, layerRecord, layerTokenCeiling}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stack order (-want +got):\n%s", diff)
	}
}

// A schema-invalid answer's outcome is reported on the call (and on the
// response the Structured call gets), not hidden; the event says
// invalid_output, in the phase the call carries (Call.Phase), whichever
// phase the run entered last.
func TestRecordReportsTheValidationOutcome(t *testing.T) {
	t.Parallel()
	sp := newSeamPool(t, "", `{"name":"a","score":30,"tags":[]}`)
	sp.pp.rec.enter(events.Phase6, "entered last")
	type out struct {
		Name  string   `json:"name"`
		Score int      `json:"score" jsonschema:"minimum=0,maximum=10"`
		Tags  []string `json:"tags"`
	}
	schema, err := providers.SchemaFor[out]("out")
	if err != nil {
		t.Fatal(err)
	}
	ref := providers.Ref{Kind: "fake", Model: "m"}
	ms, err := sp.pp.provider(ref)
	if err != nil {
		t.Fatal(err)
	}
	c := &providers.Call{Request: providers.Request{Schema: schema, Caller: providers.Caller{Role: "worker", AgentID: "w"}}, Ref: ref, Phase: string(events.Phase4)}
	ms.Run(t.Context(), c)
	if c.Err != nil {
		t.Fatalf("err %v: an invalid answer is not a transport error", c.Err)
	}
	if c.Validation == nil || c.Validation.Err == nil || c.Validation.Err.Class != providers.ClassSchemaInvalid {
		t.Fatalf("validation %+v, want a schema_invalid outcome", c.Validation)
	}
	if c.Response.Validation != c.Validation {
		t.Error("the response does not carry the outcome the call reports: Structured would validate again")
	}
	if len(sp.events) != 1 {
		t.Fatalf("%d llm_call events, want 1", len(sp.events))
	}
	e := sp.events[0]
	d := e.Data.(events.CallData)
	if diff := cmp.Diff([]string{string(events.Phase4), "invalid_output", "schema_invalid"}, []string{string(e.Phase), d.Outcome, d.FailureClass}); diff != "" {
		t.Errorf("llm_call event (-want +got):\n%s", diff)
	}
}

// Replay answers in Before: the provider is not called, and the answer is
// still recorded (After), as replayed, under the model the journal names.
// A fresh answer is journaled under the model that gave it (Call.Ref).
func TestReplaySkipsTheProviderAndStillRecords(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), runfiles.JournalFile)
	ref := providers.Ref{Kind: "fake", Model: "m"}
	req := providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: "q"}}, Caller: providers.Caller{Role: "worker", AgentID: "w"}}

	fresh := newSeamPool(t, path, "first answer")
	p, err := fresh.pp.forRole("worker", ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if err := fresh.pp.journal.close(); err != nil {
		t.Fatal(err)
	}

	resumed := newSeamPool(t, path, "a different answer")
	p, err = resumed.pp.forRole("worker", ref)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "first answer" || resumed.calls.Load() != 0 {
		t.Errorf("answer %q after %d provider calls; want the journal's answer and no call", resp.Text, resumed.calls.Load())
	}
	if len(resumed.events) != 1 {
		t.Fatalf("%d llm_call events, want the replayed call recorded once", len(resumed.events))
	}
	if d := resumed.events[0].Data.(events.CallData); !d.Replayed || resumed.events[0].Model != ref.String() {
		t.Errorf("event %+v: want a replayed call of %s", resumed.events[0], ref)
	}
}

// Two runs side by side, each with its own secret set, scrub their own
// keys from their events and transcripts and leave the other run's value
// alone: the set is the run's, not the process's. (With a process-global
// set each run would scrub both keys, and this test would fail.)
func TestRunsScrubOnlyTheirOwnSecrets(t *testing.T) {
	t.Parallel()
	runs := []struct{ name, own, other string }{
		{"run A", "run-a-secret-value-0123", "run-b-secret-value-4567"},
		{"run B", "run-b-secret-value-4567", "run-a-secret-value-0123"},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			var seen []string
			rec := testRecorder(t, func(e events.Event) { seen = append(seen, e.Message) })
			sec := redact.NewSecrets(r.own)
			rec.secrets, rec.events.secrets, rec.transcripts.secrets = sec, sec, sec
			for i := range 50 {
				rec.emit(events.Event{Kind: events.Failure, Message: fmt.Sprintf("call %d: own %s other %s", i, r.own, r.other)})
			}
			for _, m := range seen {
				if strings.Contains(m, r.own) || !strings.Contains(m, r.other) {
					t.Fatalf("event %q: want the run's own key scrubbed and the other run's value kept", m)
				}
			}
			if got := rec.scrub("path " + r.own + " " + r.other); got != "path [REDACTED] "+r.other {
				t.Errorf("scrub = %q", got)
			}
		})
	}
}

// Which model answered reaches the journal from routing (Call.Ref), not
// through the context: a call the primary's open breaker sends to the
// fallback is journaled under the fallback, and replays under it.
func TestJournalRecordsTheModelThatAnswered(t *testing.T) {
	t.Parallel()
	tp := newTestPool(t, config.CircuitBreaker{FailureRate: 0.5, CallWindow: 2, MinCalls: 1, Cooldown: time.Hour, HalfOpenProbes: 1},
		map[string][]providers.Ref{"worker": {upRef}})
	path := filepath.Join(t.TempDir(), runfiles.JournalFile)
	j, _, err := openJournal(path, testOpen)
	if err != nil {
		t.Fatal(err)
	}
	tp.pp.journal = j
	p, err := tp.pp.forRole("worker", downRef)
	if err != nil {
		t.Fatal(err)
	}
	// The first call fails on the primary, opens its breaker and is sent
	// on to the fallback, which answers.
	resp, err := ask(t, p, t.Context(), "worker", "w1")
	if err != nil || resp.Text != "answer from up:f" {
		t.Fatalf("answer %q, err %v: want the fallback's", resp.Text, err)
	}
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	var refs []string
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, _, err := scanJournal(f, runfiles.JournalFile, nil, func(r JournalRecord) { refs = append(refs, r.Ref) }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{upRef.String()}, refs); diff != "" {
		t.Errorf("journaled models (-want +got):\n%s", diff)
	}
}
