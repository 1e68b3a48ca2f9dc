package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// tamperingServer serves the mock over HTTP and, on the first shard plan it
// is asked for (after sealing, before judging), rewrites a criterion's id in
// the run's sealed envelope.
func tamperingServer(t *testing.T, runDir string) *httptest.Server {
	t.Helper()
	var once sync.Once
	return interceptedMock(t, func(_ http.ResponseWriter, _ *http.Request, body []byte) bool {
		if bytes.Contains(body, []byte(`"shard_plan"`)) {
			once.Do(func() {
				path := filepath.Join(runDir, "sealed", "envelope.json")
				b, err := os.ReadFile(path)
				if err != nil {
					t.Error(err)
					return
				}
				_ = os.WriteFile(path, []byte(strings.Replace(string(b), `"sc-01"`, `"sc-1"`, 1)), 0o600)
			})
		}
		return false
	})
}

// The exit codes of `swarm run` (README "Exit codes"), each through runRun.
func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	mission := "../../examples/missions/auth-migration.md"
	tests := []struct {
		name   string
		why    string
		config func(t *testing.T, out string) string // YAML; "" for none
		o      RunOptions
		want   int
		says   []string // in stdout
		never  []string // never in stdout
		status string   // result.json status ("" = no run directory)
	}{
		{name: "every bundle judged", why: "the one exit 0",
			o: RunOptions{MissionArg: mission}, want: 0, says: []string{"Run complete", "5 of 5 scored"}, status: "complete"},
		{name: "every bundle failed", why: "issue 9.1: printed 'median 0.0% (perfect) over 0 bundles' and exited 0",
			config: func(t *testing.T, _ string) string {
				s := writeFile(t, "script.yaml", "rules: [{schema: bundle, fault: malformed_json}]\n")
				// Without the recovery ladder, which would salvage every bundle
				// from its atoms (degraded: still exit 3).
				return "providers:\n  mock:\n    options:\n      script: " + s + "\nrecovery:\n  enabled: false\n"
			},
			o: RunOptions{MissionArg: mission}, want: 3, says: []string{"INCOMPLETE", "no bundle was judged: 0 of 5 scored"},
			never: []string{"perfect", "0.0%"}, status: "incomplete"},
		{name: "cost ceiling", why: "issue 9.5: a run the ceiling stopped exited 0 'perfect' over 0 bundles",
			config: func(t *testing.T, _ string) string {
				// spent before the commanders launch
				return "providers:\n  mock:\n    input_per_mtok: 1000\n    output_per_mtok: 4000\n"
			},
			o: RunOptions{MissionArg: "../../examples/missions/api-design.md"}, want: 3,
			says: []string{"PARTIAL", "cost ceiling", "no bundle was judged: 0 of 5 scored", "failed (cancelled)"}, never: []string{"perfect"}, status: "partial"},
		{name: "tampered mid-run", why: "issue 9.4: printed 'Shadow scoring INVALID' and exited 0",
			config: func(t *testing.T, out string) string {
				srv := tamperingServer(t, out)
				return "providers:\n  openai-compatible:\n    base_url: " + srv.URL + "/v1\n"
			},
			o: RunOptions{MissionArg: mission, Scale: "ss-50", Models: []string{"commander=openai-compatible:honest"}}, want: 4,
			says: []string{"Shadow scoring INVALID", "hash mismatch", "no bundle was judged: 0 of 3 scored"}, status: "invalid"},
		{name: "every worker fails", why: "issue 20: behind a server that failed 54 of 54 atoms the run said complete, 0.0% (perfect), exit 0; " +
			"a bundle with no finished atom is failed (no_finished_atoms), never judged",
			config: func(t *testing.T, _ string) string {
				s := writeFile(t, "script.yaml", "rules: [{schema: atom, fault: server_error}]\n")
				// Waves off: the canary would stop the run first (exit 1, the next case).
				return "providers:\n  mock:\n    retries: 0\n    options:\n      script: " + s + "\n" +
					"scales:\n  ss-100:\n    waves: {enabled: false}\n"
			},
			o: RunOptions{MissionArg: mission}, want: 3,
			says:  []string{"INCOMPLETE", "no bundle was judged: 0 of 5 scored", "failed (no_finished_atoms)", "5 of 5 bundles have no finished atom"},
			never: []string{"perfect", "0.0%"}, status: "incomplete"},
		{name: "every worker fails, waves on", why: "issue 20: all workers failing never ends complete, with the default waves too " +
			"(the canary's probe passes on its commander's plan call)",
			config: func(t *testing.T, _ string) string {
				s := writeFile(t, "script.yaml", "rules: [{schema: atom, fault: server_error}]\n")
				return "providers:\n  mock:\n    retries: 0\n    options:\n      script: " + s + "\n"
			},
			o: RunOptions{MissionArg: mission}, want: 3, says: []string{"INCOMPLETE", "failed (no_finished_atoms)"},
			never: []string{"perfect", "Run complete"}, status: "incomplete"},
		{name: "breaker cuts most agents", why: "issue 20: the sandbox breaker left most agents unlaunched and the run said complete, exit 0",
			// One call at a time: the breaker trips after its window of
			// atoms whatever the scheduling, so most workers find it open.
			config: func(*testing.T, string) string { return "scales:\n  ss-100:\n    concurrency: 1\n" },
			o:      RunOptions{MissionArg: "../../examples/missions/security-review-tinynotes.md", Provider: "mock:sloppy"}, want: 3,
			says: []string{"INCOMPLETE", "never launched: sandbox circuit breaker tripped on mock:sloppy", "failed (no_finished_atoms)"}, status: "incomplete"},
		{name: "shadow scoring off", why: "issue 20: the seed's own shadow_scoring block with enabled: false exited 3 with nothing judged",
			config: func(*testing.T, string) string {
				return "shadow_scoring:\n  enabled: false\n  conformance_level: 3\n  sealed_criteria_count: 8\n" +
					"  categories: [happy_path, edge_case, error_handling, security, completeness]\n"
			},
			o: RunOptions{MissionArg: mission}, want: 0, says: []string{"Run complete", "shadow scoring is off: nothing was judged", "5 of 5 bundles delivered"},
			never: []string{"perfect", "0.0%", "Shadow Score"}, status: "complete"},
		{name: "negative replays", why: "--replays -3 was accepted",
			o: RunOptions{MissionArg: mission, Replays: -3}, want: 2},
		{name: "force without out", why: "--force applies only to --out",
			o: RunOptions{MissionArg: mission, Force: true}, want: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			app, out, errb := testApp()
			out.Reset()
			tc.o.Quiet = true
			if !tc.o.Force {
				tc.o.Out = filepath.Join(t.TempDir(), "run")
			}
			if tc.config != nil {
				app.ConfigPath = writeFile(t, "config.yml", tc.config(t, tc.o.Out))
			}
			err := runRun(t.Context(), app, tc.o)
			if got := code(err); got != tc.want {
				t.Fatalf("%s: exit %d, want %d (err %v)\n%s\n%s", tc.why, got, tc.want, err, out, errb)
			}
			for _, s := range tc.says {
				if !strings.Contains(out.String(), s) {
					t.Errorf("%s: the summary does not say %q:\n%s", tc.why, s, out)
				}
			}
			for _, s := range tc.never {
				if strings.Contains(out.String(), s) {
					t.Errorf("%s: the summary says %q:\n%s", tc.why, s, out)
				}
			}
			if tc.status == "" {
				if _, err := os.Stat(tc.o.Out); tc.o.Out != "" && !os.IsNotExist(err) {
					t.Errorf("bad input left a run directory (stat: %v)", err)
				}
				return
			}
			var r struct {
				Status string `json:"status"`
			}
			b, _ := os.ReadFile(filepath.Join(tc.o.Out, "result.json"))
			if err := json.Unmarshal(b, &r); err != nil || r.Status != tc.status {
				t.Errorf("result.json status %q, want %q (%v)", r.Status, tc.status, err)
			}
		})
	}
}

// --out names a file or a non-empty directory: exit 2, nothing touched;
// --force writes into the directory.
func TestRunOutMustBeNewOrEmpty(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "report.md")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	used := filepath.Join(tmp, "used")
	if err := os.Mkdir(used, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(used, "report.md"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		why   string
		out   string
		force bool
		want  int
		check string // this file must still read "keep"
	}{
		{"existing file", "--out FILE exited 1: it is a usage error", file, false, 2, file},
		{"non-empty directory", "an existing report was silently overwritten", used, false, 2, filepath.Join(used, "report.md")},
		{"forced", "--force replaces the earlier run's files", used, true, 0, ""},
	}
	cfg := writeFile(t, "config.yml", smallTeams)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app, out, _ := testApp()
			app.ConfigPath = cfg
			err := runRun(t.Context(), app, RunOptions{MissionArg: "../../examples/missions/api-design.md", Scale: "ss-50", Out: tc.out, Force: tc.force, Quiet: true})
			if got := code(err); got != tc.want {
				t.Fatalf("%s: exit %d, want %d (%v)", tc.why, got, tc.want, err)
			}
			if err != nil && !strings.Contains(err.Error(), tc.out) {
				t.Errorf("the error does not name %s: %v", tc.out, err)
			}
			if tc.check != "" {
				if b, _ := os.ReadFile(tc.check); string(b) != "keep" {
					t.Errorf("%s: %s changed to %q", tc.why, tc.check, b)
				}
			} else if b, _ := os.ReadFile(filepath.Join(used, "report.md")); string(b) == "keep" || !strings.Contains(out.String(), "Run complete") {
				t.Errorf("%s: the forced run did not write its report", tc.why)
			}
		})
	}
}
