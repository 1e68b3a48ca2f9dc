package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/internal/rundir"
)

// A command that cannot write its outputs says so, naming the file and the
// reason, exits 5 and never prints a summary of what it did not record.
// On main, a run on a full disk printed "Run complete" and exited 0.
func TestFullDiskExitsFiveAndNeverSaysComplete(t *testing.T) {
	// Serial: rundir.FailWritesAfter fails every write of the process.
	mission := "../../examples/missions/api-design.md"
	for _, tc := range []struct {
		why   string
		limit int64
		args  func(out string) []string
		never []string
	}{
		{"run: nothing fits, not even run.json", 0,
			func(out string) []string {
				return []string{"run", mission, "--scale", "ss-50", "--out", out, "--quiet"}
			}, []string{"Run complete"}},
		{"run: the disk fills mid-run", 40 << 10,
			func(out string) []string {
				return []string{"run", mission, "--scale", "ss-50", "--out", out, "--quiet"}
			}, []string{"Run complete"}},
		{"run --json: the disk fills mid-run", 40 << 10,
			func(out string) []string { return []string{"run", mission, "--scale", "ss-50", "--out", out, "--json"} }, []string{"Run complete"}},
		{"compare: the disk fills in the first contender's run", 40 << 10,
			func(out string) []string {
				return []string{"compare", mission, "--models", "mock:honest,mock:sloppy", "--repeats", "1", "--scale", "ss-50", "--out", out}
			}, []string{"reports:"}},
		{"sandbox run: the disk fills while events.jsonl is written", 2 << 10,
			func(out string) []string {
				return []string{"sandbox", "run", "../../examples/scenarios/adverse_selection.yaml", "--out", out}
			}, []string{"output in"}},
	} {
		t.Run(tc.why, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			undo := rundir.FailWritesAfter(tc.limit)
			got := runCLI(t.Context(), tc.args(out), strings.NewReader(""), &stdout, &stderr)
			undo()
			if got != exitWrite {
				t.Errorf("exit %d, want %d\nstderr:\n%s", got, exitWrite, stderr.String())
			}
			if msg := stderr.String(); !strings.Contains(msg, "no space left on device") || !strings.Contains(msg, out+string(os.PathSeparator)) {
				t.Errorf("stderr does not name the file and the reason:\n%s", msg)
			}
			// No log is cut mid-line.
			logs, _ := filepath.Glob(filepath.Join(out, "*.jsonl"))
			more, _ := filepath.Glob(filepath.Join(out, "*", "*.jsonl"))
			for _, p := range append(logs, more...) {
				if b, _ := os.ReadFile(p); len(b) > 0 && b[len(b)-1] != '\n' {
					t.Errorf("%s ends mid-line", p)
				}
			}
			for _, s := range tc.never {
				if strings.Contains(stdout.String(), s) || strings.Contains(stderr.String(), s) {
					t.Errorf("printed %q on a full disk:\n%s", s, stdout.String())
				}
			}
		})
	}
}
