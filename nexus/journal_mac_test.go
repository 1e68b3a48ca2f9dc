package nexus

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// body3 is a third record, signed after rec2 by signed3.
const body3 = `{"seq":3,"key":"k3","role":"judge","agent_id":"judge","ref":"mock:honest","response":{"text":"{\"verdicts\":[{\"id\":\"sc-1\",\"pass\":false}]}","usage":{"input_tokens":3,"output_tokens":1},"model":"honest","finish_reason":"stop","latency_ns":5}}`

func signed3() (r1, r2, r3 string) {
	l1, m1 := testKey.sign(testRunID, "", []byte(body1))
	l2, m2 := testKey.sign(testRunID, m1, []byte(body2))
	l3, _ := testKey.sign(testRunID, m2, []byte(body3))
	return string(l1), string(l2), string(l3)
}

// The journal is tamper-evident: a record edited, deleted, moved,
// inserted or taken from another run fails verification, naming the file,
// line and seq; a journal without MACs is refused unless trusted; a torn
// last line is still dropped as the durability contract says.
func TestJournalMACRefusesTampering(t *testing.T) {
	t.Parallel()
	r1, r2, r3 := signed3()
	otherRun := journalOpen{key: testKey, runID: "another-run"}
	otherKey := journalOpen{key: &journalKey{path: "another user's key", key: []byte("fedcba9876543210fedcba9876543210")}, runID: testRunID}
	for _, tc := range []struct {
		why       string
		content   string
		jo        journalOpen
		wantErr   error  // nil: opens
		wantWhere string // substring of the error
		wantRecs  int
		wantTorn  bool
	}{
		{"an untouched journal verifies", r1 + "\n" + r2 + "\n" + r3 + "\n", testOpen, nil, "", 3, false},
		{"a judge verdict edited (fail -> pass)", r1 + "\n" + r2 + "\n" + strings.Replace(r3, `\"pass\":false`, `\"pass\":true`, 1) + "\n", testOpen,
			ErrJournalTampered, "journal.jsonl line 3 (seq 3)", 0, false},
		{"the first record deleted", r2 + "\n" + r3 + "\n", testOpen, ErrJournalTampered, "journal.jsonl line 1 (seq 2)", 0, false},
		{"a record in the middle deleted", r1 + "\n" + r3 + "\n", testOpen, ErrJournalTampered, "journal.jsonl line 2 (seq 3)", 0, false},
		{"two records swapped", r1 + "\n" + r3 + "\n" + r2 + "\n", testOpen, ErrJournalTampered, "journal.jsonl line 2 (seq 3)", 0, false},
		{"a record inserted twice (replayed twice)", r1 + "\n" + r2 + "\n" + r2 + "\n" + r3 + "\n", testOpen, ErrJournalTampered, "journal.jsonl line 3 (seq 2)", 0, false},
		{"records copied from another run", r1 + "\n" + r2 + "\n", otherRun, ErrJournalTampered, "line 1 (seq 1)", 0, false},
		{"a run written under another user's key", r1 + "\n", otherKey, ErrJournalTampered, "another user's key", 0, false},
		{"a MAC field removed from a signed journal", r1 + "\n" + body2 + "\n", testOpen, ErrJournalTampered, "line 2 (seq 2) has no MAC, after signed records", 0, false},
		{"a journal from before MACs is refused", body1 + "\n" + body2 + "\n", testOpen, ErrJournalUnsigned, "line 1 (seq 1) has no MAC", 0, false},
		{"a journal from before MACs, trusted by the user", body1 + "\n" + body2 + "\n", journalOpen{key: testKey, runID: testRunID, trustUnsigned: true}, nil, "", 2, false},
		{"a signed last line that fails is tampering, not a torn line", r1 + "\n" + r2 + "\n" + strings.Replace(r3, "judge", "jvdge", 1) + "\n", testOpen,
			ErrJournalTampered, "line 3 (seq 3)", 0, false},
		{"a torn last line is still dropped", r1 + "\n" + r2 + "\n" + r3[:len(r3)/2], testOpen, nil, "", 2, true},
	} {
		t.Run(tc.why, func(t *testing.T) {
			path := writeJournal(t, tc.content)
			j, load, err := openJournal(path, tc.jo)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), tc.wantWhere) {
					t.Fatalf("err = %v; want %v naming %q", err, tc.wantErr, tc.wantWhere)
				}
				if b, _ := os.ReadFile(path); string(b) != tc.content {
					t.Error("a refused journal was changed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer j.close()
			want := journalLoad{Records: tc.wantRecs, Torn: tc.wantTorn}
			if tc.jo.trustUnsigned {
				want.Unsigned = tc.wantRecs // the only trusted case holds no signed record
			}
			if diff := cmp.Diff(want, load); diff != "" {
				t.Errorf("load (-want +got):\n%s", diff)
			}
		})
	}
}

// Records appended after reopening (a resume) continue the chain: the
// whole journal verifies, including after a trusted unsigned prefix.
func TestJournalAppendsContinueTheChain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		why     string
		content string
		jo      journalOpen
	}{
		{"signed journal", rec1 + "\n" + rec2 + "\n", testOpen},
		{"unsigned journal trusted once", body1 + "\n" + body2 + "\n", journalOpen{key: testKey, runID: testRunID, trustUnsigned: true}},
	} {
		t.Run(tc.why, func(t *testing.T) {
			path := writeJournal(t, tc.content)
			j, _, err := openJournal(path, tc.jo)
			if err != nil {
				t.Fatal(err)
			}
			j.append("k3", callerFor("judge"), "mock:honest", respText("three"))
			j.append("k4", callerFor("judge"), "mock:honest", respText("four"))
			if err := j.close(); err != nil {
				t.Fatal(err)
			}
			j, load, err := openJournal(path, tc.jo)
			if err != nil {
				t.Fatal(err)
			}
			j.close()
			if load.Records != 4 {
				t.Errorf("%d records, want 4", load.Records)
			}
		})
	}
}

// A torn tail larger than the line bound (a sparse file of 8 line bounds,
// 256 MiB, whose tail never ends its line) is dropped without being held
// in memory; an over-long line before the last is damage, named with the
// limit.
//
// Serial: the allocation figure is the whole process's. 8 line bounds, not
// 1 GiB as before: holding the tail would still allocate twice the 4 line
// bounds allowed, and scanning it costs a quarter of the time.
func TestJournalHugeTornTailIsDroppedNotRead(t *testing.T) {
	// Serial: counts the whole process's allocations.
	path := writeJournal(t, rec1+"\n"+rec2+"\n")
	good := int64(len(rec1) + len(rec2) + 2)
	if err := os.Truncate(path, 8*maxJournalLine); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	j, load, err := openJournal(path, testOpen)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	j.close()
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*maxJournalLine {
		t.Errorf("reading the journal allocated %d bytes; want at most a few line bounds (%d), not the tail", alloc, maxJournalLine)
	}
	if diff := cmp.Diff(journalLoad{Records: 2, Torn: true}, load); diff != "" {
		t.Errorf("load (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != good {
		t.Errorf("journal after open: %v, %v; want it cut to %d bytes", fi, err, good)
	}

	long := writeJournal(t, rec1+"\n"+strings.Repeat("x", maxJournalLine+10)+"\n"+rec2+"\n")
	_, _, err = openJournal(long, testOpen)
	if !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "journal.jsonl line 2: longer than the limit of 33554432 bytes") {
		t.Errorf("over-long middle line: %v; want ErrJournal naming line 2 and the limit", err)
	}
}

func callerFor(role string) providers.Caller { return providers.Caller{Role: role, AgentID: role} }

func respText(s string) providers.Response { return providers.Response{Text: s} }
