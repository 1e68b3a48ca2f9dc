package nexus

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/swarm-dev/swarm/events"
)

// TestLineEncoderWritesWhatMarshalWrites: the logs' lines come from a
// reused buffer now; each must be byte for byte json.Marshal's output and
// a newline, whatever was encoded before it.
func TestLineEncoderWritesWhatMarshalWrites(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", maxKeptLine+1)
	tests := []struct {
		name string
		why  string
		v    any
	}{
		{"event", "the plain case: an events.jsonl line", events.Event{Seq: 3, Kind: events.LLMCall, Role: "worker", Data: events.CallData{InputTokens: 12, Outcome: "ok"}}},
		{"html characters", "Marshal escapes <, > and &; the encoder must too", map[string]string{"a": "<b> & </b>"}},
		{"invalid UTF-8", "Marshal writes U+FFFD for a bad byte", "ok\xffok"},
		{"longer than the kept buffer", "a line past maxKeptLine is encoded whole", big},
		{"short after long", "the buffer dropped after a long line leaves no trace in the next", "short"},
		{"empty slice after a long one", "nothing of the previous line survives a Reset", []int{}},
	}
	var l lineEncoder
	for _, tt := range tests {
		want, err := json.Marshal(tt.v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.encode(tt.v)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(string(want)+"\n", string(got)); diff != "" {
			t.Errorf("%s (%s): line (-want +got):\n%s", tt.name, tt.why, diff)
		}
	}
}

// TestLineEncoderError: a value Marshal refuses is refused, and the
// encoder still works after it.
func TestLineEncoderError(t *testing.T) {
	t.Parallel()
	var l lineEncoder
	if _, err := l.encode(make(chan int)); err == nil {
		t.Fatal("a channel was encoded")
	}
	got, err := l.encode(map[string]int{"n": 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("{\"n\":1}\n", string(got)); diff != "" {
		t.Errorf("line after an error (-want +got):\n%s", diff)
	}
}
