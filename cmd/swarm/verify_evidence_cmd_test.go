package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/workspace"
)

// copyFixture copies testdata/verify-evidence (a run directory and the
// workspace it read) to a temporary directory the test may edit.
func copyFixture(t *testing.T) (runDir, ws string) {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", "verify-evidence"))); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dst, "run"), filepath.Join(dst, "ws")
}

// Bad usage and unreadable run directories exit 2 and name what is wrong,
// before anything is checked.
func TestVerifyEvidenceUsageAndBadRunDirectories(t *testing.T) {
	t.Parallel()
	run, ws := copyFixture(t)
	noEvidence := t.TempDir()
	if err := os.CopyFS(noEvidence, os.DirFS(run)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(noEvidence, "evidence.json")); err != nil {
		t.Fatal(err)
	}
	badBundle := t.TempDir()
	if err := os.CopyFS(badBundle, os.DirFS(run)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(badBundle, "bundles", "security.json"), []byte("{truncated"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		why     string
		args    []string
		wantErr string
	}{
		{"the workspace is required", []string{run}, "--workspace DIR is required"},
		{"the run directory is required", []string{"--workspace", ws}, "accepts 1 arg"},
		{"a missing run directory is named", []string{filepath.Join(run, "nope"), "--workspace", ws}, "nope"},
		{"a file is not a run directory", []string{filepath.Join(run, "evidence.json"), "--workspace", ws}, "not a run directory"},
		{"a run without evidence.json recorded no evidence", []string{noEvidence, "--workspace", ws}, "evidence.json: no evidence.json"},
		{"a bundle file that is not JSON is named", []string{badBundle, "--workspace", ws}, filepath.Join("bundles", "security.json")},
	} {
		t.Run(tc.why, func(t *testing.T) {
			got, out, errb := execCLIWithError(t, append([]string{"verify-evidence"}, tc.args...)...)
			if got != 2 || !strings.Contains(errb, tc.wantErr) || out != "" {
				t.Errorf("exit %d (want 2)\nstdout: %s\nstderr: %s\nwant stderr to hold %q", got, out, errb, tc.wantErr)
			}
		})
	}
}

// The exit code and the listing follow the report: 0 and "no citation
// changed state" when nothing changed, 1 and every change listed when a
// state changed; --json prints the report itself.
func TestVerifyEvidenceExitCodeAndOutput(t *testing.T) {
	t.Parallel()
	run, ws := copyFixture(t)
	unchanged := &nexus.EvidenceReport{RunDir: run, Workspace: nexus.WorkspaceInfo{Dir: ws},
		Counts: workspace.Counts{Cited: 3, Verified: 2, Fabricated: 1}, RecordedCounts: workspace.Counts{Cited: 3, Verified: 2, Fabricated: 1}, Changes: []nexus.EvidenceChange{}}
	changed := &nexus.EvidenceReport{RunDir: run, Workspace: nexus.WorkspaceInfo{Dir: ws},
		Counts: workspace.Counts{Cited: 3, Verified: 1, Fabricated: 2}, RecordedCounts: workspace.Counts{Cited: 3, Verified: 2, Fabricated: 1},
		Changes: []nexus.EvidenceChange{{Where: "bundle security finding 1 (Compare tokens)", Citation: citation.Citation{Path: "app.go", StartLine: 5, EndLine: 5},
			Was: workspace.Verified, Now: workspace.Fabricated, Reason: "quote mismatch\x1b[2J"}}}
	for _, tc := range []struct {
		why      string
		rep      *nexus.EvidenceReport
		json     bool
		wantCode int
		wantOut  []string
	}{
		{"nothing changed", unchanged, false, 0, []string{"3 citations re-checked", "recorded: 2 verified, 0 unverifiable, 1 fabricated (of 3)", "no citation changed state"}},
		{"a state changed: listed, control characters escaped", changed, false, 1, []string{"1 citations changed state", "bundle security finding 1 (Compare tokens): app.go:5 verified -> fabricated (quote mismatch\\x1b[2J)"}},
		{"--json prints the report", changed, true, 1, []string{`"was": "verified"`, `"now": "fabricated"`}},
	} {
		t.Run(tc.why, func(t *testing.T) {
			app, out, _ := testApp()
			var gotDir string
			err := runVerifyEvidence(app, VerifyEvidenceOptions{RunDir: run, Workspace: ws, JSON: tc.json}, func(dir string, fs *workspace.FS) (*nexus.EvidenceReport, error) {
				gotDir = dir
				if fs == nil {
					return nil, errors.New("no workspace opened")
				}
				return tc.rep, nil
			})
			if code(err) != tc.wantCode || gotDir != run {
				t.Errorf("exit %d (want %d), checked %q (want %q): %v", code(err), tc.wantCode, gotDir, run, err)
			}
			for _, s := range tc.wantOut {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			if tc.json {
				var back nexus.EvidenceReport
				if err := json.Unmarshal(out.Bytes(), &back); err != nil || len(back.Changes) != 1 {
					t.Errorf("--json output does not read back: %v\n%s", err, out)
				}
			}
		})
	}
}

// End to end over the fixture with the real workspace package: the run's
// evidence holds (exit 0) until the cited line is edited (exit 1, the
// citation named). It uses the real workspace package's Verify.
func TestVerifyEvidenceDetectsAnEditedFile(t *testing.T) {
	t.Parallel()
	run, ws := copyFixture(t)
	fs, err := workspace.Open(ws, workspace.Options{Limits: workspace.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	probe := fs.Verify(citation.Citation{Path: "app.go", StartLine: 5, EndLine: 5, Quote: "return a == b"})
	_ = fs.Close()
	if probe.State != workspace.Verified {
		t.Fatalf("fixture: the cited line does not verify before the edit: %+v", probe)
	}
	got, out, errb := execCLIWithError(t, "verify-evidence", run, "--workspace", ws)
	if got != 0 || !strings.Contains(out, "no citation changed state") {
		t.Fatalf("untouched workspace: exit %d\nstdout: %s\nstderr: %s", got, out, errb)
	}
	src := filepath.Join(ws, "app.go")
	b, _ := os.ReadFile(src)
	if err := os.WriteFile(src, []byte(strings.Replace(string(b), "return a == b", "return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	got, out, errb = execCLIWithError(t, "verify-evidence", run, "--workspace", ws)
	if got != 1 || !strings.Contains(out, "app.go:5 verified -> fabricated") || !strings.Contains(out, "app.go:4-5 verified -> fabricated") {
		t.Errorf("edited app.go: exit %d (want 1)\nstdout: %s\nstderr: %s", got, out, errb)
	}
}

// The run's own workspace.deny (config.effective.yml) applies when its
// evidence is re-checked: a file the run could not read stays unverifiable.
func TestVerifyEvidenceUsesTheRunsDenyList(t *testing.T) {
	t.Parallel()
	run, ws := copyFixture(t)
	if err := os.WriteFile(filepath.Join(run, "config.effective.yml"), []byte("workspace:\n  deny: [app.go]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, out, errb := execCLIWithError(t, "verify-evidence", run, "--workspace", ws)
	if got != 1 || !strings.Contains(out, "app.go:5 verified -> unverifiable") {
		t.Errorf("app.go denied by the run's config: exit %d (want 1)\nstdout: %s\nstderr: %s", got, out, errb)
	}
	if err := os.WriteFile(filepath.Join(run, "config.effective.yml"), []byte("workspace:\n  colour: blue\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _, errb := execCLIWithError(t, "verify-evidence", run, "--workspace", ws); got != 2 || !strings.Contains(errb, "config.effective.yml") {
		t.Errorf("a bad run config: exit %d (want 2 naming the file)\nstderr: %s", got, errb)
	}
}

// `swarm run --ground-truth FILE` reaches the options, and without a
// workspace it is a usage error naming the file, before anything runs.
func TestRunGroundTruthFlag(t *testing.T) {
	t.Parallel()
	checkParse(t, newRunCmd, RunOptions{MissionArg: "m.md", GroundTruth: "shop.truth.yaml"}, "m.md", "--ground-truth", "shop.truth.yaml")
	out := filepath.Join(t.TempDir(), "run")
	got, stdout, errb := execCLIWithError(t, "run", "../../examples/missions/auth-migration.md", "--ground-truth", "shop.truth.yaml", "--out", out, "-q")
	if got != 2 || !strings.Contains(errb, "shop.truth.yaml") || !strings.Contains(errb, "needs a workspace") {
		t.Errorf("exit %d (want 2)\nstdout: %s\nstderr: %s", got, stdout, errb)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a run directory exists after a usage error (stat: %v)", err)
	}
}

// Issue 20, "Ground truth checked at start": a defect whose file the
// workspace lacks, or whose lines are out of range, is bad input (exit 2)
// naming the ground truth's file:line, before any LLM call and before a
// run directory exists.
func TestRunChecksTheGroundTruthAgainstTheWorkspace(t *testing.T) {
	t.Parallel()
	calls := 0
	srv := interceptedMock(t, func(http.ResponseWriter, *http.Request, []byte) bool {
		calls++
		return false
	})
	cfg := writeFile(t, "config.yml", "providers:\n  openai-compatible:\n    base_url: "+srv.URL+"/v1\n")
	truth := writeFile(t, "tinynotes.truth.yaml", "defects:\n"+
		"  - id: D1\n    path: internal/auth/session.go\n    start_line: 79\n    end_line: 81\n"+
		"  - id: D2\n    path: internal/auth/sessions.go\n    start_line: 1\n    end_line: 2\n"+
		"  - id: D3\n    path: internal/auth/session.go\n    start_line: 79\n    end_line: 5000\n")
	out := filepath.Join(t.TempDir(), "run")
	got, stdout, errb := execCLIWithError(t, "run", "../../examples/missions/security-review-tinynotes.md", "--config", cfg,
		"--provider", "openai-compatible:honest", "--ground-truth", truth, "--out", out, "-q")
	if got != 2 {
		t.Fatalf("exit %d, want 2\nstdout: %s\nstderr: %s", got, stdout, errb)
	}
	for _, want := range []string{truth + ":7:5: defects[1].path: defect D2: the file does not exist",
		truth + ":13:5: defects[2].end_line: defect D3: lines 79-5000 of internal/auth/session.go are out of range"} {
		if !strings.Contains(errb, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb)
		}
	}
	if strings.Contains(errb, "defect D1") {
		t.Errorf("a defect in place is reported:\n%s", errb)
	}
	if calls != 0 {
		t.Errorf("%d LLM calls before the ground truth was checked", calls)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a run directory exists after bad input (stat: %v)", err)
	}
}
