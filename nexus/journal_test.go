package nexus

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
)

func writeJournal(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), runfiles.JournalFile)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	body1     = `{"seq":1,"key":"k1","role":"worker","agent_id":"w1","ref":"mock:honest","response":{"text":"one","usage":{"input_tokens":3,"output_tokens":1},"model":"honest","finish_reason":"stop","latency_ns":5}}`
	body2     = `{"seq":2,"key":"k2","role":"worker","agent_id":"w2","ref":"mock:honest","response":{"text":"two","usage":{"input_tokens":3,"output_tokens":1},"model":"honest","finish_reason":"stop","latency_ns":5}}`
	testRunID = "20260101-000000-test-ss-12"
)

// testKey is a fixed journal key: records signed with it verify under it.
var testKey = &journalKey{path: "test journal.key", key: []byte("0123456789abcdef0123456789abcdef")}

// testOpen verifies and signs as a run does, under testKey.
var testOpen = journalOpen{key: testKey, runID: testRunID}

// rec1 and rec2 are body1 and body2 signed and chained (rec1 first).
var rec1, rec2 = func() (string, string) {
	l1, m1 := testKey.sign(testRunID, "", []byte(body1))
	l2, _ := testKey.sign(testRunID, m1, []byte(body2))
	return string(l1), string(l2)
}()

// A journal read back after SIGKILL or a crash: the last line may be torn;
// it is dropped and cut off so the next record starts a line of its own. A
// bad line anywhere else is damage, never skipped.
func TestOpenJournalTornTailAndBadMiddleLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		content     string
		wantRecords int
		wantTorn    bool
		wantErr     string // substring; "" = no error
		wantFile    string // the file after open ("" = unchanged)
	}{
		{"clean journal", rec1 + "\n" + rec2 + "\n", 2, false, "", ""},
		{"empty journal (a fresh run)", "", 0, false, "", ""},
		{"last line cut mid-write (no newline): dropped and cut off", rec1 + "\n" + rec2[:40], 1, true, "", rec1 + "\n"},
		{"last line whole but not JSON: dropped", rec1 + "\n" + "{garbage\n", 1, true, "", rec1 + "\n"},
		{"only a torn line", rec1[:10], 0, true, "", ""},
		{"bad line in the middle names the file and line", rec1 + "\n{garbage\n" + rec2 + "\n", 0, false, "journal.jsonl line 2", ""},
		{"record without a key in the middle", rec1 + "\n{\"seq\":2}\n" + rec2 + "\n", 0, false, "journal.jsonl line 2: a record without a key", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeJournal(t, tc.content)
			j, load, err := openJournal(path, testOpen)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrJournal) {
					t.Fatalf("err = %v, want ErrJournal naming %q", err, tc.wantErr)
				}
				if b, _ := os.ReadFile(path); string(b) != tc.content {
					t.Errorf("a refused journal was changed: %q", b)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer j.close()
			if diff := cmp.Diff(journalLoad{Records: tc.wantRecords, Torn: tc.wantTorn}, load); diff != "" {
				t.Errorf("load (-want +got):\n%s", diff)
			}
			want := tc.wantFile
			if want == "" && !tc.wantTorn {
				want = tc.content
			}
			if b, _ := os.ReadFile(path); string(b) != want {
				t.Errorf("file after open = %q, want %q", b, want)
			}
			// The next record starts on a line of its own and reads back.
			j.append("k3", providers.Caller{Role: "judge", AgentID: "judge"}, "mock:honest", providers.Response{Text: "three"})
			if err := j.close(); err != nil {
				t.Fatal(err)
			}
			j2, load2, err := openJournal(path, testOpen)
			if err != nil {
				t.Fatal(err)
			}
			defer j2.close()
			if load2.Torn || load2.Records != tc.wantRecords+1 {
				t.Errorf("after append: %+v, want %d records, none torn", load2, tc.wantRecords+1)
			}
			if r, ok := j2.take("k3"); !ok || r.Response.Text != "three" || r.Seq != int64(tc.wantRecords+1) {
				t.Errorf("appended record = %+v, %v", r, ok)
			}
		})
	}
}

// Identical requests (same key) replay in the order they were journaled;
// each answer replays once.
func TestJournalReplaysIdenticalKeysInOrder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), runfiles.JournalFile)
	j, _, err := openJournal(path, testOpen)
	if err != nil {
		t.Fatal(err)
	}
	c := providers.Caller{Role: "synthesizer", AgentID: "synthesizer"}
	for _, text := range []string{"first", "second", "third"} {
		j.append("same", c, "mock:honest", providers.Response{Text: text})
	}
	j.append("other", c, "mock:honest", providers.Response{Text: "other"})
	j.close()
	j, load, err := openJournal(path, testOpen)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	if load.Records != 4 {
		t.Fatalf("%d records, want 4", load.Records)
	}
	var got []string
	for {
		r, ok := j.take("same")
		if !ok {
			break
		}
		got = append(got, r.Response.Text)
	}
	if diff := cmp.Diff([]string{"first", "second", "third"}, got); diff != "" {
		t.Errorf("replay order (-want +got):\n%s", diff)
	}
	if _, ok := j.take("never"); ok {
		t.Error("a key never journaled replayed")
	}
}

// An answer that contained a configured secret is journaled redacted (and
// so replays redacted); the journal holds no prompt text (keys are hashes).
func TestJournalRedactsSecrets(t *testing.T) {
	t.Parallel()
	const secret = "sk-journal-test-secret-0123456789"
	path := filepath.Join(t.TempDir(), runfiles.JournalFile)
	j, _, err := openJournal(path, testOpen)
	if err != nil {
		t.Fatal(err)
	}
	j.secrets = redact.NewSecrets(secret) // the run's set
	req := providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: "the prompt text " + secret}}}
	j.append(replayKey(req), providers.Caller{Role: "worker", AgentID: "w"}, "mock:honest", providers.Response{Text: "the key is " + secret,
		ToolCalls: []providers.ToolCall{{ID: "c1", Name: "grep", Arguments: `{"pattern":"` + secret + `"}`}}})
	j.close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) {
		t.Fatalf("journal holds the secret: %s", b)
	}
	if strings.Contains(string(b), "the prompt text") {
		t.Errorf("journal holds prompt text: %s", b)
	}
	j, _, err = openJournal(path, testOpen)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	r, ok := j.take(replayKey(req))
	if !ok || !strings.HasPrefix(r.Response.Text, "the key is ") || r.Response.Text == "the key is "+secret {
		t.Errorf("replayed answer = %q, want it redacted", r.Response.Text)
	}
}

// The replay key is the request without the model it is sent to: who asks
// and what they ask.
func TestReplayKeyIgnoresTheModelButNotTheCaller(t *testing.T) {
	t.Parallel()
	base := providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: "q"}}, Seed: providers.Int64(1),
		Caller: providers.Caller{Role: "worker", AgentID: "w1"}}
	k := replayKey(base)
	other := base
	other.Caller.AgentID = "w2"
	seed := base
	seed.Seed = providers.Int64(2)
	tokens := base
	tokens.MaxTokens = 10
	for name, req := range map[string]providers.Request{"agent id": other, "seed": seed, "max tokens": tokens} {
		if replayKey(req) == k {
			t.Errorf("a different %s gives the same key", name)
		}
	}
	if replayKey(base) != k {
		t.Error("the key is not stable")
	}
}

// Issue 22 (point 14): the canary's passing verdict is a decision record in
// the journal. Read back, it is known as decided (so a resume does not judge
// the canary again), is never replayed as an answer, is not counted among
// the answers, and is written once: a second decide keeps the first.
func TestJournalDecisionIsReadBackAndNotReplayed(t *testing.T) {
	t.Parallel()
	path := writeJournal(t, rec1+"\n")
	j, _, err := openJournal(path, testOpen)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := j.decision(decisionCanary); ok {
		t.Fatal("a journal without a decision record says the canary was decided")
	}
	j.decide(JournalDecision{Name: decisionCanary, OK: true, Attempt: 1})
	j.decide(JournalDecision{Name: decisionCanary, OK: true, Attempt: 2}) // already decided: not written again
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	j, load, err := openJournal(path, testOpen)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	d, ok := j.decision(decisionCanary)
	if diff := cmp.Diff(JournalDecision{Name: decisionCanary, OK: true, Attempt: 1}, d); !ok || diff != "" {
		t.Errorf("decision read back (found %v) (-want +got):\n%s", ok, diff)
	}
	if load.Records != 1 {
		t.Errorf("journal_records = %d, want 1 (the answer; a decision is not one)", load.Records)
	}
	if _, ok := j.take(decisionKeyPrefix + decisionCanary); ok {
		t.Error("a decision record was replayed as an answer")
	}
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Errorf("the journal has %d lines, want 2 (one answer, one decision):\n%s", n, b)
	}
}
