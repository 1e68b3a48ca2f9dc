package redact_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/internal/redact"
)

// TestBytesScansInPlace: Bytes reads its argument without copying it. What
// it returns must be what String returns for the same text, a clean text
// must come back as the very slice it was given (the logs write it from
// their buffer), and the caller's bytes must never change.
func TestBytesScansInPlace(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ordinary words of a report, nothing secret in them. ", 10) // past the clean cache's minimum
	tests := []struct {
		name string
		why  string
		in   string
	}{
		{"clean short", "the common case: nothing to remove", `{"kind":"llm_call","input_tokens":12}`},
		{"clean long, twice", "the second pass is answered by the clean cache, keyed by the bytes' content", long},
		{"clean long again", "the same text seen before", long},
		{"a password", "a secret is removed into a new slice", `{"message":"DB_PASSWORD=hunter2hunter2"}`},
		{"a key in a long text", "a text past the cache minimum with a secret in it", long + "OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz012345"},
		{"empty", "nothing to scan", ""},
	}
	for _, tt := range tests {
		in := []byte(tt.in)
		orig := string(in)
		got := redact.Bytes(in)
		if diff := cmp.Diff(redact.String(tt.in), string(got)); diff != "" {
			t.Errorf("%s (%s): Bytes (-want String's +got):\n%s", tt.name, tt.why, diff)
		}
		if diff := cmp.Diff(orig, string(in)); diff != "" {
			t.Errorf("%s (%s): the argument changed (-want +got):\n%s", tt.name, tt.why, diff)
		}
		if same := len(got) > 0 && len(in) > 0 && &got[0] == &in[0]; same != (string(got) == orig && len(in) > 0) {
			t.Errorf("%s (%s): returned its argument: %v, want it exactly when nothing was removed", tt.name, tt.why, same)
		}
	}
}
