package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/shadow"
)

// execCLIWithError runs the command line exactly as main does (runCLI),
// so the error main prints is in the captured stderr.
func execCLIWithError(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := runCLI(t.Context(), args, strings.NewReader(""), &out, &errb)
	return c, out.String(), errb.String()
}

func TestShadowScoreRefusesNonFiniteThresholdsAndEmptySuites(t *testing.T) {
	t.Parallel()
	sealed := writeFile(t, "s.json", specTests(4, 1, "edge_case"))
	empty := writeFile(t, "e.json", `{}`)
	emptyList := writeFile(t, "l.json", `{"tests": []}`)
	for _, tc := range []struct {
		why     string
		args    []string
		want    int
		wantErr string // in stderr
		wantOut string // in stdout
	}{
		{"NaN compares false with every score, so it would always pass", []string{"--sealed", sealed, "--threshold", "NaN"}, 2, "finite number", ""},
		{"+Inf would always pass", []string{"--sealed", sealed, "--threshold", "Inf"}, 2, "finite number", ""},
		{"+Inf spelled out", []string{"--sealed", sealed, "--threshold", "+Infinity"}, 2, "finite number", ""},
		{"-Inf would always fail", []string{"--sealed", sealed, "--threshold", "-Inf"}, 2, "finite number", ""},
		{"a finite threshold still works", []string{"--sealed", sealed, "--threshold", "25"}, 0, "", `"shadow_score": 25.0`},
		{"{} is an empty suite, not a perfect one", []string{"--sealed", empty}, 2, "--allow-empty", ""},
		{"an empty test list too", []string{"--sealed", emptyList, "--format", "summary"}, 2, "no sealed tests", ""},
		{"--allow-empty scores it as the reference does", []string{"--sealed", empty, "--allow-empty", "--threshold", "0"}, 0, "", `"shadow_score": 0.0`},
		{"an empty open suite is fine: the implementer wrote no tests", []string{"--sealed", sealed, "--open", emptyList}, 0, "", `"open_tests"`},
	} {
		t.Run(tc.why, func(t *testing.T) {
			got, out, errb := execCLIWithError(t, append([]string{"shadow", "score"}, tc.args...)...)
			if got != tc.want || !strings.Contains(errb, tc.wantErr) || !strings.Contains(out, tc.wantOut) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant stderr to hold %q, stdout %q", got, tc.want, out, errb, tc.wantErr, tc.wantOut)
			}
			if tc.want == 2 && out != "" {
				t.Errorf("bad input printed a result: %s", out)
			}
		})
	}
}

// TestShadowScoreOutputValidatesAgainstSpecSchema checks the CLI's JSON
// against the Shadow Score Spec's published schema, and its number format.
func TestShadowScoreOutputValidatesAgainstSpecSchema(t *testing.T) {
	t.Parallel()
	ex := filepath.Join("..", "..", "examples", "shadow")
	for _, args := range [][]string{
		{"--sealed", filepath.Join(ex, "sealed.json")},
		{"--sealed", filepath.Join(ex, "sealed.json"), "--open", filepath.Join(ex, "open.json")},
		{"--sealed", writeFile(t, "60.json", specTests(15, 9, "security"))},
		{"--sealed", writeFile(t, "0.json", `{}`), "--allow-empty"},
	} {
		code, out, errb := execCLI(t, append([]string{"shadow", "score"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb)
		}
		if err := shadow.ValidateReport([]byte(out)); err != nil {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	_, out, _ := execCLI(t, "shadow", "score", "--sealed", writeFile(t, "60.json", specTests(15, 9, "security")))
	if !strings.Contains(out, `"shadow_score": 60.0,`) {
		t.Errorf("9 of 15 failed should print 60.0 as the reference does:\n%s", out)
	}
	_, out, _ = execCLI(t, "shadow", "score", "--sealed", filepath.Join(ex, "sealed.json"), "--open", filepath.Join(ex, "open.json"), "--format", "summary")
	if !strings.Contains(out, "\nSealed: 6/7 passed\nOpen:   3/3 passed\n") {
		t.Errorf("Open: does not line up under Sealed:\n%s", out)
	}
}

func TestShadowScoreSummaryNeverPrintsRawControls(t *testing.T) {
	t.Parallel()
	doc := `{"tests":[{"name":"a\u001b[2J\u001b]0;owned\u0007","status":"failed","message":"b\u009b31m\u202egnp.exe"}]}`
	sealed := writeFile(t, "evil.json", doc)
	_, out, _ := execCLI(t, "shadow", "score", "--sealed", sealed, "--format", "summary")
	if strings.ContainsAny(out, "\x1b\x07\u009b\u202e") {
		t.Errorf("summary prints raw control characters: %q", out)
	}
	if !strings.Contains(out, `a\x1b[2J\x1b]0;owned\x07: b\u009b31m\u202egnp.exe`) {
		t.Errorf("summary hides what the name was: %q", out)
	}
	_, out, _ = execCLI(t, "shadow", "score", "--sealed", sealed)
	var got shadow.ScoreOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Failures[0].TestName != "a\x1b[2J\x1b]0;owned\x07" {
		t.Errorf("JSON output is not faithful: %q", got.Failures[0].TestName)
	}
}

// TestShadowVerifyCoversTaskHashAndDecomposition tampers with each file of
// a finished run directory that the commitment covers.
func TestShadowVerifyCoversTaskHashAndDecomposition(t *testing.T) {
	t.Parallel()
	app, _, errb := testApp()
	run := filepath.Join(t.TempDir(), "run")
	if err := runRun(t.Context(), app, RunOptions{MissionArg: "../../examples/missions/test-gap-hunt.md", Scale: "ss-50", Out: run, Quiet: true}); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	edit := func(t *testing.T, path string, f func(string) string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		after := f(string(b))
		if after == string(b) {
			t.Fatalf("fixture: %s unchanged", path)
		}
		if err := os.WriteFile(path, []byte(after), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var env struct {
		TaskHash string `json:"task_hash"`
	}
	b, _ := os.ReadFile(filepath.Join(run, "sealed", "envelope.json"))
	_ = json.Unmarshal(b, &env)
	forged := "sha256:" + strings.Repeat("0", 64)
	for _, tc := range []struct {
		why    string
		tamper func(t *testing.T, dir string)
		want   int
	}{
		{"untouched run verifies", func(*testing.T, string) {}, 0},
		{"decomposition.json edited: a domain renamed", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "decomposition.json"), func(s string) string { return strings.Replace(s, `"testing"`, `"testingx"`, 1) })
		}, 4},
		{"decomposition.json deleted", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "decomposition.json")) }, 4},
		{"decomposition.json reformatted only: same document, still valid", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "decomposition.json"), func(s string) string { return "\n\n" + s + "\n" })
		}, 0},
		{"envelope's task_hash rewritten (outside the sealed hash)", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "sealed", "envelope.json"), func(s string) string { return strings.Replace(s, env.TaskHash, forged, 1) })
		}, 4},
		{"task_hash in the events rewritten", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "events.jsonl"), func(s string) string { return strings.Replace(s, env.TaskHash, forged, 1) })
		}, 4},
		{"events.jsonl deleted: nothing left to verify against", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "events.jsonl")) }, 4},
	} {
		t.Run(tc.why, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "copy")
			if err := os.CopyFS(dir, os.DirFS(run)); err != nil {
				t.Fatal(err)
			}
			tc.tamper(t, dir)
			got, out, errs := execCLI(t, "shadow", "verify", dir)
			if got != tc.want {
				t.Errorf("exit %d, want %d\n%s%s", got, tc.want, out, errs)
			}
			if tc.want == 4 && !strings.Contains(errs, "TAMPERED") {
				t.Errorf("no TAMPERED line: %s", errs)
			}
		})
	}
}
