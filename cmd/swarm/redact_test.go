package main

import (
	"bytes"
	"crypto/sha256"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/swarm-dev/swarm/mock"
)

// interceptedMock serves the honest mock over HTTP. before sees each
// request and its body first; when it returns true it has answered the
// request itself, else the mock answers it.
func interceptedMock(t *testing.T, before func(w http.ResponseWriter, r *http.Request, body []byte) bool) *httptest.Server {
	t.Helper()
	h, err := mock.NewServer(mock.ServerOptions{Persona: mock.Honest})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if before(w, r, body) {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// echoingServer is an OpenAI-compatible server that puts the request's
// Authorization header into its error text. fail decides, per request
// body and how often that body was seen before, which status to answer
// with instead of the mock's answer (0: answer).
func echoingServer(t *testing.T, fail func(seen int) int) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	seen := map[[32]byte]int{}
	return interceptedMock(t, func(w http.ResponseWriter, r *http.Request, b []byte) bool {
		k := sha256.Sum256(b)
		mu.Lock()
		n := seen[k]
		seen[k]++
		mu.Unlock()
		st := fail(n)
		if st == 0 {
			return false
		}
		w.WriteHeader(st)
		// A string "error" (the shape go-openai mis-reads) echoing the key
		// in several forms.
		io.WriteString(w, `{"error":"denied for Authorization: `+r.Header.Get("Authorization")+` (key `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`)"}`)
		return true
	})
}

// TestAPIKeyNeverLeavesTheProcess runs missions against servers that echo
// the Authorization header in their errors, and checks that the key is in
// no byte of standard error, standard output or any file of the run
// directory.
func TestAPIKeyNeverLeavesTheProcess(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	const key = "swarm-e2e-fake-key-7f3a9c2b1d"
	tests := []struct {
		name     string
		fail     func(seen int) int
		wantCode int
	}{
		// Every first attempt fails with a retryable 500, so the errors land
		// in events and transcripts of a run that completes and writes its
		// reports.
		{"500 on every first attempt, run completes", func(seen int) int {
			if seen == 0 {
				return 500
			}
			return 0
		}, 0},
		// Every call is refused: the run fails and the error is printed.
		{"401 on every call, run fails", func(int) int { return 401 }, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SWARM_E2E_API_KEY", key)
			srv := echoingServer(t, tc.fail)
			// Every first attempt fails; the retries fix them, so the provider
			// breaker (which sees what a call returns after its retries) stays
			// closed.
			cfg := writeFile(t, "config.yml", "providers:\n  openai-compatible:\n    base_url: "+srv.URL+"/v1\n    api_key_env: SWARM_E2E_API_KEY\n    retries: 2\n"+smallTeams)
			dir := filepath.Join(t.TempDir(), "run")
			var stdout, stderr bytes.Buffer
			code := runCLI(t.Context(), []string{"run", "--config", cfg, "--log-level", "debug", "--mission", "Design a token rotation scheme for the session store.",
				"--provider", "openai-compatible:honest", "--scale", "ss-50", "--out", dir}, strings.NewReader(""), &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String()+stdout.String(), "[REDACTED]") && tc.wantCode != 0 {
				t.Errorf("the error printed does not show where the key was scrubbed:\n%s", stderr.String())
			}
			for name, text := range map[string]string{"stderr": stderr.String(), "stdout": stdout.String()} {
				if strings.Contains(text, key) {
					t.Errorf("the key is in %s:\n%s", name, text)
				}
			}
			files := 0
			var sawError bool
			err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				files++
				b, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				if bytes.Contains(b, []byte(key)) {
					t.Errorf("the key is in %s", path)
				}
				if bytes.Contains(b, []byte("denied for Authorization")) {
					sawError = true
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// The test means something only if the echoed errors reached the
			// run directory.
			if files == 0 || !sawError {
				t.Errorf("%d files in the run directory, echoed error recorded: %v", files, sawError)
			}
			if tc.wantCode == 0 {
				for _, f := range []string{"events.jsonl", "transcripts.jsonl", "result.json", "report.md"} {
					if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
						t.Errorf("a completed run wrote no %s: %v", f, err)
					}
				}
			}
		})
	}
}
