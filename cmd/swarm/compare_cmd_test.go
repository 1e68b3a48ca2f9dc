package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompareExitCodeSaysWhetherEveryBundleWasJudged(t *testing.T) {
	t.Parallel()
	// An OpenAI-compatible server that answers prose, never JSON: its
	// contender produces no bundle at all.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "model": "prose",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "Happy to help! Here are my thoughts in prose."}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 9, "total_tokens": 19}})
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close) // after the parallel subtests
	cfg := writeFile(t, "config.yml", "providers:\n  openai-compatible:\n    base_url: "+srv.URL+"/v1\n")
	mission, err := filepath.Abs("../../examples/missions/api-design.md")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		models   string
		wantCode int
		wantOut  []string
	}{
		{"every bundle judged: success", "mock:honest,mock:sloppy", 0, []string{" 0/"}},
		// The repro: the prose contender used to read shadow 0.0%,
		// share tier 1 with the working one and exit 0.
		{"a contender judged nothing: incomplete", "mock:sloppy,openai-compatible:prose", 3,
			[]string{"no result (nothing judged)", "[failed] openai-compatible:prose: no result"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "cmp")
			c, stdout, stderr := execCLI(t, "--config", cfg, "compare", mission, "--models", tc.models, "--repeats", "1", "--out", out)
			if c != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c, tc.wantCode, stdout, stderr)
			}
			for _, s := range tc.wantOut {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			if tc.wantCode == 3 && (!strings.Contains(stderr, "incomplete") || !strings.Contains(stderr, "no result: 0 of")) {
				t.Errorf("stderr does not say the comparison is incomplete:\n%s", stderr)
			}
		})
	}
}

// TestCompareWorkspaceBadInputIsUsage: a ground truth needs a workspace,
// and a workspace must be a directory: exit 2 naming the flag or the
// compare file's line, before any run (nothing is written under --out).
func TestCompareWorkspaceBadInputIsUsage(t *testing.T) {
	t.Parallel()
	mission, err := filepath.Abs("../../examples/missions/api-design.md")
	if err != nil {
		t.Fatal(err)
	}
	truth := writeFile(t, "truth.yaml", "defects: []\n")
	cmpFile := writeFile(t, "cmp.yaml", "missions: ["+mission+"]\nmodels: [mock:honest]\nground_truth: "+truth+"\n")
	for _, tc := range []struct {
		why  string
		args []string
		want string
	}{
		{"--ground-truth without --workspace", []string{"compare", mission, "--models", "mock:honest", "--ground-truth", truth}, "--ground-truth " + truth + ": needs a workspace"},
		{"the compare file's ground_truth without a workspace", []string{"compare", "--file", cmpFile}, cmpFile + ":3: ground_truth"},
		{"--workspace that is a file", []string{"compare", mission, "--models", "mock:honest", "--workspace", truth}, "--workspace " + truth + ": not a directory"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "cmp")
			c, _, stderr := execCLIWithError(t, append(tc.args, "--out", out)...)
			if c != 2 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q: want exit 2 and %q", c, stderr, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("bad input wrote %s (stat: %v)", out, err)
			}
		})
	}
}
