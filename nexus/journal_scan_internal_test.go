package nexus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/swarm-dev/swarm/runfiles"
)

// TestScanJournalBufferFollowsTheFileSize: the journal's reader takes a
// buffer of the file's size when the file is smaller than a megabyte (a
// new run's journal is empty; it used to cost a megabyte per run). Every
// record must still be read back whatever its length against the buffer.
func TestScanJournalBufferFollowsTheFileSize(t *testing.T) {
	t.Parallel()
	line := func(seq int64, text string) string {
		b, err := json.Marshal(JournalRecord{Seq: seq, Key: "k", Response: JournalResponse{Text: text}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	tests := []struct {
		name  string
		why   string
		lines []string
		want  []string // texts read back
	}{
		{"empty", "a new run's journal: nothing to read, a small buffer", nil, nil},
		{"a few short records", "smaller than the minimum buffer of 4096 bytes", []string{line(1, "a"), line(2, "b")}, []string{"a", "b"}},
		{"one record over the minimum", "a file of 10 KB gets a buffer of its size", []string{line(1, strings.Repeat("x", 10_000))}, []string{strings.Repeat("x", 10_000)}},
		{"a record longer than the largest buffer", "a file over a megabyte keeps the 1 MiB buffer and reads a longer line in pieces",
			[]string{line(1, "a"), line(2, strings.Repeat("y", 1_500_000)), line(3, "c")}, []string{"a", strings.Repeat("y", 1_500_000), "c"}},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), runfiles.JournalFile)
		if err := os.WriteFile(path, []byte(strings.Join(tt.lines, "")), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		good, n, torn, err := scanJournal(f, runfiles.JournalFile, nil, func(r JournalRecord) { got = append(got, r.Response.Text) })
		f.Close()
		if err != nil || torn {
			t.Fatalf("%s: err %v, torn %v", tt.name, err, torn)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (%s): records (-want +got):\n%s", tt.name, tt.why, diff)
		}
		if want := int64(len(strings.Join(tt.lines, ""))); good != want || n != len(tt.want) {
			t.Errorf("%s (%s): good %d records %d, want %d and %d", tt.name, tt.why, good, n, want, len(tt.want))
		}
	}
}
