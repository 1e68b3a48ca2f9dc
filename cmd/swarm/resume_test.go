package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/internal/journalkeytest"
)

// envRunMain makes the test binary run swarm's main instead of the tests,
// so the kill-and-resume tests run `swarm run` as a real process (to
// SIGKILL it) without building the binary.
const envRunMain = "SWARM_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		main()
		return
	}
	// Every run signs its journal with the user's journal key: the tests'
	// key lives in a temporary directory (inherited by the processes they
	// start), never in the user's config directory.
	os.Exit(journalkeytest.Run(m))
}

const (
	resumeConfig  = "testdata/resume/config.yml" // four commanders, mock latency 30ms
	resumeMission = "testdata/golden/mission.md"
)

// runOutcome is what a run directory says about how the run ended.
type runOutcome struct {
	Status     string
	SealedHash string
	Scores     map[string]string // bundle -> shadow score ("unscored" when none)
	Bundles    map[string]string // bundles/<name> -> content
	Calls      int
	Resume     *struct {
		Attempt       int   `json:"attempt"`
		ReplayedCalls int64 `json:"replayed_calls"`
		FreshCalls    int64 `json:"fresh_calls"`
	}
}

func readOutcome(t *testing.T, dir string) runOutcome {
	t.Helper()
	var res struct {
		Status     string `json:"status"`
		SealedHash string `json:"sealed_hash"`
		Bundles    []struct {
			ID          string   `json:"id"`
			ShadowScore *float64 `json:"shadow_score"`
		} `json:"bundles"`
	}
	if err := json.Unmarshal(readFile(t, dir, "result.json"), &res); err != nil {
		t.Fatal(err)
	}
	out := runOutcome{Status: res.Status, SealedHash: res.SealedHash, Scores: map[string]string{}, Bundles: map[string]string{}}
	for _, b := range res.Bundles {
		out.Scores[b.ID] = "unscored"
		if b.ShadowScore != nil {
			out.Scores[b.ID] = fmt.Sprintf("%.1f", *b.ShadowScore)
		}
	}
	names, err := filepath.Glob(filepath.Join(dir, "bundles", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range names {
		out.Bundles[filepath.Base(p)] = string(readFile(t, filepath.Dir(p), filepath.Base(p)))
	}
	var tel struct {
		Calls  int `json:"calls"`
		Resume *struct {
			Attempt       int   `json:"attempt"`
			ReplayedCalls int64 `json:"replayed_calls"`
			FreshCalls    int64 `json:"fresh_calls"`
		} `json:"resume"`
	}
	if err := json.Unmarshal(readFile(t, dir, "telemetry.json"), &tel); err != nil {
		t.Fatal(err)
	}
	out.Calls, out.Resume = tel.Calls, tel.Resume
	return out
}

// journaled counts the whole records of dir's journal (a torn last line,
// which the resume drops, is not one).
func journaled(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "journal.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 || !json.Valid(b[:i]) {
			break
		}
		n++
		b = b[i+1:]
	}
	return n
}

// startRun starts `swarm run` of the resume fixture into dir as a process
// of its own, streaming events as JSON, and stops it with sig once it has
// seen the llm_call event number at. It returns the exit code.
func startRun(t *testing.T, dir string, at int, sig os.Signal) int {
	t.Helper()
	return stopAfterCalls(t, at, sig, "--config", resumeConfig, "run", resumeMission, "--out", dir, "--json")
}

// stopAfterCalls runs swarm with args (which must stream events as JSON) as
// a process of its own and stops it with sig once it has seen the llm_call
// event number at. It returns the exit code.
func stopAfterCalls(t *testing.T, at int, sig os.Signal, args ...string) int {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), envRunMain+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	calls, sent := 0, false
	for sc.Scan() {
		var e struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Kind != "llm_call" {
			continue
		}
		calls++
		if calls == at && !sent {
			sent = true
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal())
		}
		return ee.ExitCode()
	}
	t.Fatalf("swarm run: %v: %s", err, stderr.String())
	return 0
}

// THE acceptance test of resume: a run killed with SIGKILL at points spread
// over it and resumed ends exactly like the uninterrupted run (same sealed
// hash, same per-bundle Shadow Scores and bundles), and the resumed run
// asks the provider only for what the journal did not hold: its fresh
// calls are the uninterrupted run's calls minus the answers journaled
// before the kill. The kill points are call counts (the k-th llm_call event
// the process streams, k spread from 1/6 to 5/6 of the uninterrupted run's
// calls), not wall times, so every kill lands inside the run whatever the
// machine's speed; one landing after the run finished is the no-op case.
func TestResumeAfterSIGKILLMatchesUninterruptedRun(t *testing.T) {
	t.Parallel()
	full := filepath.Join(t.TempDir(), "full")
	if c, _, stderr := execCLI(t, "--config", resumeConfig, "run", resumeMission, "--out", full, "-q"); c != 0 {
		t.Fatalf("uninterrupted run: exit %d: %s", c, stderr)
	}
	want := readOutcome(t, full)
	if want.Status != "complete" || want.Calls < 12 {
		t.Fatalf("uninterrupted run: %s with %d calls: the fixture must complete with enough calls to kill between", want.Status, want.Calls)
	}
	for k := 1; k <= 5; k++ {
		at := want.Calls * k / 6
		t.Run(fmt.Sprintf("kill after call %d of %d", at, want.Calls), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "run")
			code := startRun(t, dir, at, syscall.SIGKILL)
			checkResume(t, dir, code, want)
		})
	}
}

// The same with Ctrl-C: the run writes an interrupted result.json (exit
// 130), and the resume finishes it.
func TestResumeAfterSIGINTMatchesUninterruptedRun(t *testing.T) {
	t.Parallel()
	full := filepath.Join(t.TempDir(), "full")
	if c, _, stderr := execCLI(t, "--config", resumeConfig, "run", resumeMission, "--out", full, "-q"); c != 0 {
		t.Fatalf("uninterrupted run: exit %d: %s", c, stderr)
	}
	want := readOutcome(t, full)
	dir := filepath.Join(t.TempDir(), "run")
	code := startRun(t, dir, want.Calls/2, os.Interrupt)
	if code == 130 {
		if got := readOutcome(t, dir).Status; got != "interrupted" {
			t.Errorf("after Ctrl-C result.json says %q, want interrupted", got)
		}
	}
	checkResume(t, dir, code, want)
}

// checkResume resumes the run in dir, stopped with exit code code, and
// checks it ends as want did, asking only for what was not journaled.
func checkResume(t *testing.T, dir string, code int, want runOutcome) {
	t.Helper()
	if code == 0 {
		// The signal landed after the run finished: resuming is a no-op.
		before := readFile(t, dir, "result.json")
		c, _, stderr := execCLI(t, "--config", resumeConfig, "run", "--resume", dir)
		if c != 0 || !strings.Contains(stderr, "run already finished (status complete); nothing to do") {
			t.Fatalf("resume of a finished run: exit %d: %s", c, stderr)
		}
		if !bytes.Equal(before, readFile(t, dir, "result.json")) {
			t.Error("resuming a finished run rewrote result.json")
		}
		return
	}
	if code != -int(syscall.SIGKILL) && code != 130 {
		t.Fatalf("stopped run exited %d, want killed or 130", code)
	}
	j := journaled(t, dir)
	c, _, stderr := execCLI(t, "--config", resumeConfig, "run", "--resume", dir, "-q")
	if c != 0 {
		t.Fatalf("swarm run --resume: exit %d: %s", c, stderr)
	}
	got := readOutcome(t, dir)
	if got.SealedHash != want.SealedHash {
		t.Errorf("sealed %s, want %s", got.SealedHash, want.SealedHash)
	}
	if diff := cmp.Diff(want.Scores, got.Scores); diff != "" {
		t.Errorf("per-bundle Shadow Scores (-uninterrupted +resumed):\n%s", diff)
	}
	if diff := cmp.Diff(want.Bundles, got.Bundles); diff != "" {
		t.Errorf("bundles (-uninterrupted +resumed):\n%s", diff)
	}
	if got.Resume == nil {
		t.Fatal("telemetry.json has no resume record")
	}
	if got.Resume.Attempt != 2 || got.Resume.ReplayedCalls != int64(j) || got.Resume.FreshCalls != int64(want.Calls-j) {
		t.Errorf("resume: attempt %d, %d replayed, %d fresh; want attempt 2, %d replayed (journaled before the stop) and %d fresh (%d calls − %d journaled)",
			got.Resume.Attempt, got.Resume.ReplayedCalls, got.Resume.FreshCalls, j, want.Calls-j, want.Calls, j)
	}
	if n := journaled(t, dir); n != want.Calls {
		t.Errorf("the journal holds %d answers after the resume, want %d", n, want.Calls)
	}
	if _, err := os.Stat(filepath.Join(dir, "attempts", "1", "events.jsonl")); err != nil {
		t.Errorf("the first attempt's events were not kept: %v", err)
	}
}

// --resume takes the mission and options from the run directory: giving
// them again is refused (they would be ignored), and a directory that is
// not a run is bad input.
func TestResumeUsageErrors(t *testing.T) {
	t.Parallel()
	notRun := t.TempDir()
	for _, tc := range []struct {
		why  string
		args []string
		want string
	}{
		{"a mission argument", []string{"run", "--resume", notRun, "mission.md"}, "drop the mission argument"},
		{"a flag that shapes the run", []string{"run", "--resume", notRun, "--scale", "ss-50"}, "--scale cannot be given with it"},
		{"--follow-up (run.json records it)", []string{"run", "--resume", notRun, "--follow-up", notRun}, "--follow-up cannot be given with it"},
		{"a directory without run.json", []string{"run", "--resume", notRun}, "no run.json"},
		{"a directory that does not exist", []string{"run", "--resume", filepath.Join(notRun, "nope")}, "no such file"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			c, _, stderr := execCLIWithError(t, tc.args...)
			if c != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", c, stderr, tc.want)
			}
		})
	}
}

// A changed mission is refused with exit 2 naming it, and nothing is
// written; --force resumes and says what changed on stderr, and since this
// mission seals other criteria, the resumed run stops at Phase 1.5: its
// seal is not the stored one (never silently continued).
func TestResumeRefusesAChangedMission(t *testing.T) {
	t.Parallel()
	mission := writeFile(t, "mission.md", string(readFile(t, "testdata/golden", "mission.md")))
	dir := filepath.Join(t.TempDir(), "run")
	if c, _, stderr := execCLI(t, "--config", "testdata/golden/config.yml", "run", mission, "--scale", "ss-12", "--out", dir, "-q"); c != 0 {
		t.Fatalf("run: exit %d: %s", c, stderr)
	}
	if err := os.Remove(filepath.Join(dir, "result.json")); err != nil { // as after SIGKILL
		t.Fatal(err)
	}
	if err := os.WriteFile(mission, []byte("# Another mission\n\nPlan the migration of the billing service.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	events := readFile(t, dir, "events.jsonl")
	c, _, stderr := execCLIWithError(t, "--config", "testdata/golden/config.yml", "run", "--resume", dir)
	if c != 2 || !strings.Contains(stderr, "mission text ("+mission+") changed since the run started") {
		t.Fatalf("exit %d: %s; want 2 naming the mission", c, stderr)
	}
	if !bytes.Equal(events, readFile(t, dir, "events.jsonl")) {
		t.Error("a refused resume touched events.jsonl")
	}
	c, _, stderr = execCLIWithError(t, "--config", "testdata/golden/config.yml", "run", "--resume", dir, "--force", "-q")
	if c != 1 || !strings.Contains(stderr, "resuming with --force although these changed since the run started: mission text") ||
		!strings.Contains(stderr, "run failed in phase 1.5") || !strings.Contains(stderr, "does not match the stored run") {
		t.Fatalf("--force: exit %d: %s; want 1, the change named and the seal mismatch", c, stderr)
	}
}

// resumeFaultsConfig: three commanders deployed in waves (a canary, then
// the rest) on a mock failing 30% of its calls.
const resumeFaultsConfig = "testdata/resume/faults-config.yml"

// Issue 22 (point 14): a run on a flaky provider (30% of calls failing),
// SIGKILLed and resumed, finishes as the uninterrupted run did, however
// often it is killed. Before, the resume judged the canary again on its
// fresh calls alone, which are the calls that were failing when the run was
// killed (the answered ones replay), so the probe failed ("canary failed: 3
// of 3 probe calls failed") and every resume after it failed the same way.
// Now a canary that passed is recorded in the journal and not judged again.
// The kill points are call counts spread over the run (deterministic
// whatever the machine's speed); the mock's faults are drawn from each
// request and its attempt, so the runs are repeatable.
func TestResumeUnderFaultsAfterRepeatedSIGKILLs(t *testing.T) {
	t.Parallel()
	full := filepath.Join(t.TempDir(), "full")
	if c, _, stderr := execCLI(t, "--config", resumeFaultsConfig, "run", resumeMission, "--out", full, "-q"); c != 0 {
		t.Fatalf("uninterrupted run: exit %d: %s", c, stderr)
	}
	want := readOutcome(t, full)
	if want.Status != "complete" || want.Calls < 20 {
		t.Fatalf("uninterrupted run: %s with %d calls: the fixture must complete with enough calls to kill between", want.Status, want.Calls)
	}
	finish := func(t *testing.T, dir string) {
		t.Helper()
		c, _, stderr := execCLI(t, "--config", resumeFaultsConfig, "run", "--resume", dir, "-q")
		got := readOutcome(t, dir)
		if c != 0 || got.Status != want.Status {
			t.Fatalf("swarm run --resume: exit %d, status %s; want 0 and %s: %s", c, got.Status, want.Status, stderr)
		}
		if got.SealedHash != want.SealedHash {
			t.Errorf("sealed %s, want the uninterrupted run's %s", got.SealedHash, want.SealedHash)
		}
		if diff := cmp.Diff(want.Scores, got.Scores); diff != "" {
			t.Errorf("per-bundle Shadow Scores (-uninterrupted +resumed):\n%s", diff)
		}
	}
	kill := func(t *testing.T, at int, args ...string) {
		t.Helper()
		if code := stopAfterCalls(t, at, syscall.SIGKILL, args...); code != -int(syscall.SIGKILL) {
			t.Fatalf("swarm %s: exit %d, want killed after call %d", strings.Join(args, " "), code, at)
		}
	}
	for _, tc := range []struct {
		why   string
		kills []int // the call counts to SIGKILL the run, then each resume, at
	}{
		{"killed once while the canary's team still works", []int{want.Calls / 4}},
		{"killed once in the middle", []int{want.Calls / 2}},
		{"killed once near the end", []int{want.Calls * 3 / 4}},
		// A resume is killed too: it counts its replayed answers as calls,
		// so each kill lands further into the run.
		{"killed three times in a row", []int{want.Calls / 3, want.Calls / 2, want.Calls * 3 / 4}},
	} {
		t.Run(tc.why, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "run")
			kill(t, tc.kills[0], "--config", resumeFaultsConfig, "run", resumeMission, "--out", dir, "--json")
			for _, at := range tc.kills[1:] {
				kill(t, at, "--config", resumeFaultsConfig, "run", "--resume", dir, "--json")
			}
			finish(t, dir)
		})
	}
}
