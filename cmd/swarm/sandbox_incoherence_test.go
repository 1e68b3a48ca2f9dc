package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/sandbox"
)

// TestSandboxIncoherenceLongLines: a line longer than bufio.Scanner's
// default 64 KiB used to end the input silently (the scanner's error was
// never read), so the records after it were lost with exit code 0.
func TestSandboxIncoherenceLongLines(t *testing.T) {
	t.Parallel()
	rec := func(id, action string) string {
		return `{"task_family":"f","decision_id":"` + id + `","replay":0,"action":"` + action + `"}` + "\n"
	}
	for _, tc := range []struct {
		why      string
		in       string
		wantIDs  []string // decision points reported
		wantCode int
		wantErr  string // the error's prefix after the file name
	}{
		{"a 100 KiB line is one record, and the records after it count",
			rec("a", "x") + rec("b", strings.Repeat("y", 100<<10)) + rec("c", "z"), []string{"a", "b", "c"}, 0, ""},
		{"a line over 16 MiB is an error naming its line, not the end of the input",
			rec("a", "x") + rec("b", strings.Repeat("y", 16<<20)) + rec("c", "z"), nil, 2, ":2: line too long: over 16777216 bytes"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			f := writeFile(t, "dec.jsonl", tc.in)
			app, out, _ := testApp()
			err := runSandboxIncoherence(app, SandboxIncoherenceOptions{File: f, Format: "json"})
			if got := code(err); got != tc.wantCode {
				t.Fatalf("exit code %d (%v), want %d", got, err, tc.wantCode)
			}
			if tc.wantErr != "" {
				if want := f + tc.wantErr; err.Error() != want {
					t.Errorf("error %q, want %q", err, want)
				}
				if out.Len() != 0 {
					t.Errorf("printed a report for a bad file:\n%s", out)
				}
				return
			}
			var r sandbox.IncoherenceReport
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, p := range r.Points {
				ids = append(ids, p.DecisionID)
			}
			if d := cmp.Diff(tc.wantIDs, ids); d != "" {
				t.Errorf("decision points (-want +got):\n%s", d)
			}
		})
	}
}
