package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/history"
	"github.com/swarm-dev/swarm/internal/runfixture"
)

// fixtureRuns builds a runs directory of real mock runs and odd
// directories (runfixture.Build).
func fixtureRuns(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "runs")
	if err := runfixture.Build(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRunsCommands runs `swarm runs` over a fixture: --json shapes, filters,
// pages, show by id and by path, gc, and bad flags as usage errors.
func TestRunsCommands(t *testing.T) {
	t.Parallel()
	runs := fixtureRuns(t)

	t.Run("reindex --json", func(t *testing.T) {
		c, out, errs := execCLI(t, "runs", "reindex", runs, "--json")
		if c != 0 {
			t.Fatalf("exit %d: %s", c, errs)
		}
		var st history.Stats
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(history.Stats{Indexed: 6, Errors: 1, Total: 6}, st); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})

	t.Run("list --json with a filter keeps absent numbers null", func(t *testing.T) {
		c, out, errs := execCLI(t, "runs", "list", runs, "--status", "failed", "--json")
		if c != 0 {
			t.Fatalf("exit %d: %s", c, errs)
		}
		var page struct {
			Runs  []map[string]any `json:"runs"`
			Total int              `json:"total"`
		}
		if err := json.Unmarshal([]byte(out), &page); err != nil {
			t.Fatal(err)
		}
		if page.Total != 1 || page.Runs[0]["dir"] != runfixture.Failed {
			t.Fatalf("got %s", out)
		}
		for _, key := range []string{"shadow_median", "evidence_verified", "recall"} {
			if v, ok := page.Runs[0][key]; !ok || v != nil {
				t.Errorf("%s = %v (present %v), want null", key, v, ok)
			}
		}
	})

	t.Run("list pages", func(t *testing.T) {
		_, out, _ := execCLI(t, "runs", "list", runs, "--limit", "2", "--page", "3", "--sort", "id", "--asc", "--json")
		var p history.Page
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		if p.Page != 3 || p.Pages != 3 || len(p.Runs) != 2 || p.Total != 6 {
			t.Errorf("page %d of %d, %d runs of %d", p.Page, p.Pages, len(p.Runs), p.Total)
		}
	})

	t.Run("list as a table says absent as a dash", func(t *testing.T) {
		c, out, _ := execCLI(t, "runs", "list", runs, "--mission", "tinynotes")
		if c != 0 || !strings.Contains(out, "STARTED (UTC)") || !strings.Contains(out, runfixture.Workspace) || !strings.Contains(out, "page 1 of 1 (1 run)") {
			t.Errorf("exit %d:\n%s", c, out)
		}
		_, out, _ = execCLI(t, "runs", "list", runs, "--status", "failed")
		if !strings.Contains(out, "–") {
			t.Errorf("a failed run's absent Shadow median is not a dash:\n%s", out)
		}
	})

	t.Run("bad flags are usage errors", func(t *testing.T) {
		for _, args := range [][]string{
			{"runs", "list", runs, "--sort", "bogus"},
			{"runs", "list", runs, "--since", "someday"},
			{"runs", "list", runs, "--limit", "0"},
			{"runs", "list", runs, "--page", "0"},
			{"runs", "show", "no-such-run", runs},
			{"runs", "list", filepath.Join(runs, "nope")},
		} {
			if c, _, _ := execCLI(t, args...); c != 2 {
				t.Errorf("%v: exit %d", args, c)
			}
		}
	})

	t.Run("show by id --json and by path", func(t *testing.T) {
		_, out, _ := execCLI(t, "runs", "list", runs, "--mission", "tinynotes", "--json")
		var p history.Page
		if err := json.Unmarshal([]byte(out), &p); err != nil || len(p.Runs) != 1 {
			t.Fatalf("%v: %s", err, out)
		}
		c, out, errs := execCLI(t, "runs", "show", p.Runs[0].ID, runs, "--json")
		if c != 0 {
			t.Fatalf("exit %d: %s", c, errs)
		}
		var shown struct {
			Dir   string   `json:"dir"`
			Files []string `json:"files"`
		}
		if err := json.Unmarshal([]byte(out), &shown); err != nil {
			t.Fatal(err)
		}
		if shown.Dir != runfixture.Workspace || !strings.Contains(strings.Join(shown.Files, " "), "evidence.json") {
			t.Errorf("show --json: %s", out)
		}
		// OK and Planted are two complete runs of one task hash and models.
		_, out, _ = execCLI(t, "runs", "show", runfixture.OK, runs, "--json")
		var vel struct {
			Velocity history.Velocity `json:"velocity_across_runs"`
		}
		if err := json.Unmarshal([]byte(out), &vel); err != nil {
			t.Fatal(err)
		}
		if v := vel.Velocity; v.Value == nil || *v.Value != 0 || len(v.Runs) != 2 {
			t.Errorf("velocity across runs: %+v", v)
		}
		_, out, _ = execCLI(t, "runs", "show", runfixture.OK, runs)
		if !strings.Contains(out, "velocity   +0.0 points per run over 2 runs") {
			t.Errorf("show does not print the velocity:\n%s", out)
		}
		c, out, _ = execCLI(t, "runs", "show", filepath.Join(runs, runfixture.Forged))
		if c != 0 || !strings.Contains(out, "unreadable") || !strings.Contains(out, "error") {
			t.Errorf("show of a forged directory: exit %d\n%s", c, out)
		}
	})

	t.Run("gc --dry-run then gc", func(t *testing.T) {
		if err := os.RemoveAll(filepath.Join(runs, runfixture.Unfinished)); err != nil {
			t.Fatal(err)
		}
		_, out, _ := execCLI(t, "runs", "gc", runs, "--dry-run", "--json")
		if !strings.Contains(out, `"removed": [`) || !strings.Contains(out, runfixture.Unfinished) || !strings.Contains(out, `"dry_run": true`) {
			t.Errorf("dry run: %s", out)
		}
		c, out, _ := execCLI(t, "runs", "gc", runs)
		if c != 0 || !strings.Contains(out, "removed 1 rows") {
			t.Errorf("gc: exit %d: %s", c, out)
		}
		if _, err := os.Stat(filepath.Join(runs, runfixture.OK)); err != nil {
			t.Errorf("gc removed a run directory: %v", err)
		}
	})
}

// TestRunUpdatesTheIndex: a run into a runs directory that has an index
// is indexed when it ends; a run elsewhere creates no index; an index that
// cannot be opened is a warning, and the run still succeeds.
func TestRunUpdatesTheIndex(t *testing.T) {
	t.Parallel()
	runs := t.TempDir()
	ix, err := history.Open(t.Context(), runs)
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	app, _, errb := testApp()
	if err := runRun(t.Context(), app, RunOptions{MissionArg: "../../examples/missions/api-design.md", Scale: "ss-50", Out: filepath.Join(runs, "r1"), Quiet: true}); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	if strings.Contains(errb.String(), "index") {
		t.Errorf("a run that indexed fine said: %s", errb)
	}
	ix, err = history.Open(t.Context(), runs)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ix.Get(t.Context(), "r1")
	ix.Close()
	if err != nil || r.Status != "complete" {
		t.Errorf("the run's row: %+v, %v", r, err)
	}

	elsewhere := t.TempDir()
	app, _, _ = testApp()
	if err := runRun(t.Context(), app, RunOptions{MissionArg: "../../examples/missions/api-design.md", Scale: "ss-50", Out: filepath.Join(elsewhere, "r"), Quiet: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, history.IndexFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run with --out elsewhere made an index: %v", err)
	}

	// An index file that is not a database: the run is not affected.
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, history.IndexFile), []byte("not a database, not at all, no header here"), 0o644); err != nil {
		t.Fatal(err)
	}
	app, _, errb = testApp()
	if err := runRun(t.Context(), app, RunOptions{MissionArg: "../../examples/missions/api-design.md", Scale: "ss-50", Out: filepath.Join(broken, "r"), Quiet: true}); err != nil {
		t.Fatalf("a broken index failed the run: %v", err)
	}
	if !strings.Contains(errb.String(), "warning: the run index was not updated") {
		t.Errorf("no warning for a broken index: %q", errb)
	}
}

// TestViewCommand: loopback by default, a non-loopback --addr only with
// --allow-remote (and a warning), the URL printed, --open's failure a
// warning.
func TestViewCommand(t *testing.T) {
	t.Parallel()
	runs := t.TempDir()
	app, _, _ := testApp()
	err := runView(t.Context(), app, ViewOptions{RunsDir: runs, Addr: "0.0.0.0:0"})
	if code(err) != 2 || !strings.Contains(err.Error(), "--allow-remote") {
		t.Errorf("non-loopback without --allow-remote: %v", err)
	}
	if err := runView(t.Context(), app, ViewOptions{RunsDir: runs, Addr: "nonsense"}); code(err) != 2 {
		t.Errorf("bad --addr: %v", err)
	}

	for _, tc := range []struct {
		name, addr  string // why
		allowRemote bool
		warn        string
	}{
		{"loopback, a free port", "127.0.0.1:0", false, ""},
		{"every interface with --allow-remote warns", "0.0.0.0:0", true, "warning: the viewer listens on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			app, out, errb := testApp()
			done := make(chan error, 1)
			addrc := make(chan string, 1)
			go func() {
				done <- runView(ctx, app, ViewOptions{RunsDir: runs, Addr: tc.addr, AllowRemote: tc.allowRemote, Open: true,
					listening: func(a string) { addrc <- a },
					openURL:   func(context.Context, string) error { return errors.New("no display") }})
			}()
			var addr string
			select {
			case addr = <-addrc:
			case err := <-done:
				t.Fatalf("view ended: %v", err)
			case <-time.After(20 * time.Second):
				t.Fatal("view never listened")
			}
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1:"+port+"/", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET /: %d", resp.StatusCode)
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("view after Ctrl-C: %v", err)
			}
			if !strings.Contains(out.String(), "swarm view: http://") {
				t.Errorf("no URL printed: %q", out)
			}
			if !strings.Contains(errb.String(), "warning: --open: no display") {
				t.Errorf("--open's failure is not a warning: %q", errb)
			}
			if (tc.warn != "") != strings.Contains(errb.String(), "warning: the viewer listens on") {
				t.Errorf("remote warning: %q", errb)
			}
		})
	}
}
