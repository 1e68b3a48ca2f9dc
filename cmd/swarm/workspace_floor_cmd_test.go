//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestVerifyEvidenceFIFOSwarmignore: a FIFO named .swarmignore in the
// workspace is refused (exit 2, naming it) instead of hanging
// verify-evidence past every signal, as it did on main.
func TestVerifyEvidenceFIFOSwarmignore(t *testing.T) {
	t.Parallel()
	run, ws := copyFixture(t)
	if err := syscall.Mkfifo(filepath.Join(ws, ".swarmignore"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	type result struct {
		code      int
		out, errb string
	}
	done := make(chan result, 1)
	go func() {
		c, o, e := execCLIWithError(t, "verify-evidence", run, "--workspace", ws)
		done <- result{c, o, e}
	}()
	select {
	case r := <-done:
		if r.code != 2 || !strings.Contains(r.errb, ".swarmignore") || !strings.Contains(r.errb, "not a regular file") {
			t.Errorf("exit %d (want 2 naming .swarmignore)\nstdout: %s\nstderr: %s", r.code, r.out, r.errb)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("verify-evidence blocked on a FIFO .swarmignore")
	}
}

// TestVerifyEvidenceTakesNoAllowFromTheRunDirectory: a run directory
// someone handed you cannot lower the default deny list through its
// config.effective.yml (workspace.allow); --allow can, explicitly.
func TestVerifyEvidenceTakesNoAllowFromTheRunDirectory(t *testing.T) {
	t.Parallel()
	run, ws := copyFixture(t)
	if err := os.WriteFile(filepath.Join(run, "config.effective.yml"), []byte("workspace:\n  allow: ['.env*']\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("KEY=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The fixture's citations do not name .env: the run re-checks as
	// before, and the allow in the run's config changed nothing.
	got, out, errb := execCLIWithError(t, "verify-evidence", run, "--workspace", ws)
	if got != 0 {
		t.Errorf("exit %d (want 0)\nstdout: %s\nstderr: %s", got, out, errb)
	}
	opts, err := runWorkspaceOptions(run)
	if err != nil || len(opts.Allow) != 0 {
		t.Errorf("the run directory's allow reached the options: %v %v", opts.Allow, err)
	}
}

// TestRunRefusesAHomeWorkspace: a mission whose front matter points the
// workspace at / is refused with exit 2, naming the reason and
// --allow-home-workspace, before a run directory exists (on main it ran).
func TestRunRefusesAHomeWorkspace(t *testing.T) {
	t.Parallel()
	mission := writeFile(t, "m.md", "---\nworkspace: /\n---\n# Review\n\nFind the security defects of the session handling.\n")
	out := filepath.Join(t.TempDir(), "run")
	got, stdout, errb := execCLIWithError(t, "run", mission, "--provider", "mock:honest", "--out", out, "-q")
	if got != 2 || !strings.Contains(errb, "is the file system's root") || !strings.Contains(errb, "--allow-home-workspace") {
		t.Errorf("exit %d (want 2)\nstdout: %s\nstderr: %s", got, stdout, errb)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a run directory exists after the refusal (stat: %v)", err)
	}
	checkParse(t, newRunCmd, RunOptions{MissionArg: "m.md", AllowHomeWorkspace: true}, "m.md", "--allow-home-workspace")
}
