//go:build unix

package nexus_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/safeio"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/builtin"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// killedRun runs the resume fixture into a fresh directory and removes its
// result.json, as a SIGKILL would have left it; it returns the directory
// and the user's config file.
func killedRun(t *testing.T) (dir, config string) {
	t.Helper()
	mission, config := resumeFixture(t)
	dir = filepath.Join(t.TempDir(), "run")
	if _, err := prepareResumeRun(t, mission, config, dir, nil).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "result.json")); err != nil {
		t.Fatal(err)
	}
	return dir, config
}

// A judge answer edited in the journal of a real run (a gate's rejection
// turned into a pass) is refused on resume, naming the file, line and
// record, before anything in the directory is touched.
func TestResumeRefusesAnEditedJudgeAnswer(t *testing.T) {
	t.Parallel()
	dir, configPath := killedRun(t)
	path := filepath.Join(dir, runfiles.JournalFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	edited := -1
	for i, l := range lines {
		var r nexus.JournalRecord
		if json.Unmarshal([]byte(l), &r) != nil || r.Role != "judge" {
			continue
		}
		after := strings.Replace(l, `\"status\":\"fail\"`, `\"status\":\"pass\"`, 1) // a failed criterion now passes
		if after != l {
			lines[i], edited = after, i
			break
		}
	}
	if edited < 0 {
		t.Fatal("fixture: no judge verdict in the journal")
	}
	var rec nexus.JournalRecord
	_ = json.Unmarshal([]byte(lines[edited]), &rec)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	_, err = nexus.Resume(dir, nexus.ResumeOptions{Registry: builtin.Registry(mock.Options{}), ConfigPath: configPath})
	want := fmt.Sprintf("journal.jsonl line %d (seq %d)", edited+1, rec.Seq)
	if !errors.Is(err, nexus.ErrJournalTampered) || !errors.Is(err, config.ErrBadInput) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Resume: %v; want a refusal naming %q", err, want)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("a refused resume changed the directory (-before +after):\n%s", diff)
	}
	if _, err := nexus.VerifyJournal(dir, false); !errors.Is(err, nexus.ErrJournalTampered) || !strings.Contains(err.Error(), want) {
		t.Errorf("VerifyJournal: %v; want it to name %q", err, want)
	}
}

// A journal from before journal MACs is refused unless the user trusts it
// explicitly; trusted, the run resumes and replays it.
func TestResumeOfAnUnsignedJournalNeedsTheUsersWord(t *testing.T) {
	t.Parallel()
	dir, config := killedRun(t)
	path := filepath.Join(dir, runfiles.JournalFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for l := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
		i := strings.LastIndex(l, `,"mac":"`)
		if i < 0 {
			t.Fatalf("fixture: a record without a MAC: %s", l)
		}
		out.WriteString(l[:i] + "}\n") // as a swarm before journal MACs wrote it
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := builtin.Registry(mock.Options{})
	_, err = nexus.Resume(dir, nexus.ResumeOptions{Registry: reg, ConfigPath: config})
	if !errors.Is(err, nexus.ErrJournalUnsigned) || !strings.Contains(err.Error(), "--trust-unsigned-journal") {
		t.Fatalf("Resume: %v; want ErrJournalUnsigned saying how to proceed", err)
	}
	m, err := nexus.Resume(dir, nexus.ResumeOptions{Registry: reg, ConfigPath: config, TrustUnsignedJournal: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Run(t.Context())
	if err != nil || res.Resumed == nil || res.Resumed.FreshCalls != 0 {
		t.Fatalf("trusted resume: %v, %+v; want every answer replayed", err, res.Resumed)
	}
	// The result says its answers were replayed unverified: trusted is not
	// the same as verified.
	if res.Resumed.UnsignedRecords == 0 || res.Resumed.UnsignedRecords != res.Resumed.JournalRecords {
		t.Errorf("result's resume record: %+v; want every journaled answer counted as unsigned", res.Resumed)
	}
	if jc, err := nexus.VerifyJournal(dir, true); err != nil || jc.Unsigned == 0 {
		t.Errorf("VerifyJournal(trusted) = %+v, %v", jc, err)
	}
}

// gate holds the run's calls after the first n until released.
type gate struct {
	n       int
	mu      sync.Mutex
	calls   int
	reached chan struct{}
	release chan struct{}
	once    sync.Once
}

func (g *gate) wrap(_ providers.Ref, p providers.Provider) providers.Provider {
	return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		g.mu.Lock()
		g.calls++
		hold := g.calls > g.n
		g.mu.Unlock()
		if hold {
			g.once.Do(func() { close(g.reached) })
			select {
			case <-g.release:
			case <-ctx.Done():
				return providers.Response{}, ctx.Err()
			}
		}
		return p.Complete(ctx, req)
	})
}

// One process at a time in a run directory: a resume beside the run still
// going, and a second resume beside a first, are refused naming the pid
// that holds the directory; once the holder ends, resume proceeds.
func TestSecondProcessOnARunDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	mission, configPath := resumeFixture(t)
	dir := filepath.Join(t.TempDir(), "run")
	g := &gate{n: 5, reached: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := prepareResumeRun(t, mission, configPath, dir, nil, nexus.WithProviderWrap(g.wrap)).Run(ctx)
		done <- err
	}()
	select {
	case <-g.reached:
	case <-time.After(60 * time.Second):
		t.Fatal("the run never reached its sixth call")
	}
	wantHolder := fmt.Sprintf("is in use by another swarm process (pid %d)", os.Getpid())
	reg := builtin.Registry(mock.Options{})
	_, err := nexus.Resume(dir, nexus.ResumeOptions{Registry: reg, ConfigPath: configPath})
	if !errors.Is(err, config.ErrBadInput) || !strings.Contains(err.Error(), wantHolder) {
		t.Errorf("resume beside the running run: %v; want a refusal naming %q", err, wantHolder)
	}
	cancel() // as Ctrl-C: the run ends interrupted and lets the directory go
	close(g.release)
	if err := <-done; !errors.Is(err, nexus.ErrInterrupted) {
		t.Fatalf("run: %v, want interrupted", err)
	}

	first, err := nexus.Resume(dir, nexus.ResumeOptions{Registry: reg, ConfigPath: configPath})
	if err != nil {
		t.Fatal(err)
	}
	_, err = nexus.Resume(dir, nexus.ResumeOptions{Registry: reg, ConfigPath: configPath})
	if err == nil || !strings.Contains(err.Error(), wantHolder) {
		t.Errorf("second resume: %v; want a refusal naming %q", err, wantHolder)
	}
	res, err := first.Run(t.Context())
	if err != nil || res.Status != runfiles.StatusComplete {
		t.Fatalf("first resume: %v (%v)", err, res)
	}
	if n := len(journalKeys(t, dir)); n != res.Telemetry.Calls {
		t.Errorf("journal holds %d records, want %d (no duplicates)", n, res.Telemetry.Calls)
	}
}

// A lock held by a process that was killed (SIGKILL) is released by the
// operating system: resume proceeds at once.
func TestKilledLockHolderDoesNotBlockResume(t *testing.T) {
	t.Parallel()
	dir, config := killedRun(t)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHoldLock+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper: %q", line)
	}
	reg := builtin.Registry(mock.Options{})
	want := fmt.Sprintf("(pid %d)", cmd.Process.Pid)
	if _, err := nexus.Resume(dir, nexus.ResumeOptions{Registry: reg, ConfigPath: config}); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("resume while the helper holds the lock: %v; want a refusal naming %s", err, want)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	m, err := nexus.Resume(dir, nexus.ResumeOptions{Registry: reg, ConfigPath: config})
	if err != nil {
		t.Fatalf("resume after the holder was killed: %v", err)
	}
	if res, err := m.Run(t.Context()); err != nil || res.Status != runfiles.StatusComplete {
		t.Fatalf("resumed run: %v (%v)", err, res)
	}
}

// withDeadline runs f and fails the test when it does not return in time
// (what would hang forever on a FIFO fails instead).
func withDeadline(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("still reading after 30s (blocked on a FIFO, or reading a huge file whole)")
		return nil
	}
}

// mkfifo replaces path with a FIFO; when the test ends it is opened for
// writing once, so a reader blocked on it (a failing test) is let go.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}

// sparse replaces path with a sparse file of size bytes (no disk used).
func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.WriteFile(path, []byte(`{"status":"complete",`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// Every file read back from a run directory is checked to be a regular
// file (a FIFO would block the reader forever) and read with a bound (a
// 3 GB result.json must not cost 3 GB): resume, --follow-up, shadow
// verify's journal check and verify-evidence refuse them, naming the file
// and the limit.
func TestRunDirectoryFilesAreReadRegularAndBounded(t *testing.T) {
	t.Parallel()
	reg := builtin.Registry(mock.Options{})
	resume := func(dir, configPath string) error {
		m, err := nexus.Resume(dir, nexus.ResumeOptions{Registry: reg, ConfigPath: configPath})
		if err == nil {
			m.Close()
		}
		return err
	}
	followUp := func(dir, configPath string) error {
		mission, _ := resumeFixture(t)
		cfg, err := config.Load(configPath, reg)
		if err != nil {
			return err
		}
		text, err := os.ReadFile(mission)
		if err != nil {
			return err
		}
		_, err = nexus.Prepare(nexus.Options{Config: cfg, Registry: reg, Mission: string(text), MissionName: mission, MissionPath: mission,
			MissionDir: filepath.Dir(mission), ConfigPath: configPath, OutDir: filepath.Join(t.TempDir(), "next"), FollowUp: dir})
		return err
	}
	for _, tc := range []struct {
		why     string
		finish  bool // the run finished (result.json kept): a follow-up's previous run
		file    string
		huge    bool // a 3 GB sparse file instead of a FIFO
		call    func(dir, configPath string) error
		wantErr error
		want    string
	}{
		{"resume: result.json is a FIFO", false, "result.json", false, resume, safeio.ErrNotRegular, "result.json"},
		{"resume: a 3 GB result.json", false, "result.json", true, resume, safeio.ErrTooLarge, "over the limit of 67108864"},
		{"resume: run.json is a FIFO", false, "run.json", false, resume, safeio.ErrNotRegular, "run.json"},
		{"resume: journal.jsonl is a FIFO", false, "journal.jsonl", false, resume, safeio.ErrNotRegular, "journal.jsonl"},
		{"resume: the stored envelope is a FIFO", false, filepath.Join("sealed", "envelope.json"), false, func(dir, configPath string) error {
			m, err := nexus.Resume(dir, nexus.ResumeOptions{Registry: reg, ConfigPath: configPath})
			if err != nil {
				return err
			}
			_, err = m.Run(t.Context())
			return err
		}, safeio.ErrNotRegular, "envelope.json"},
		{"--follow-up: the previous result.json is a FIFO", true, "result.json", false, followUp, config.ErrBadInput, "result.json: not a regular file"},
		{"--follow-up: a 3 GB previous result.json", true, "result.json", true, followUp, config.ErrBadInput, "result.json: 3221225472 bytes, over the limit of 67108864"},
		{"shadow verify: events.jsonl is a FIFO", true, "events.jsonl", false, func(dir, _ string) error {
			return runfiles.VerifyCommitment(dir, mustEnvelope(t, dir))
		}, safeio.ErrNotRegular, "events.jsonl"},
		{"shadow verify: journal.jsonl is a FIFO", true, "journal.jsonl", false, func(dir, _ string) error {
			_, err := nexus.VerifyJournal(dir, false)
			return err
		}, safeio.ErrNotRegular, "journal.jsonl"},
		{"verify-evidence: evidence.json is a FIFO", true, "evidence.json", false, func(dir, _ string) error {
			ws, err := workspace.Open(t.TempDir(), workspace.Options{})
			if err != nil {
				return err
			}
			defer ws.Close()
			_, err = nexus.VerifyEvidence(dir, ws)
			return err
		}, safeio.ErrNotRegular, "evidence.json"},
		{"verify-evidence: a 3 GB bundle", true, filepath.Join("bundles", "huge.json"), true, func(dir, _ string) error {
			if err := os.WriteFile(filepath.Join(dir, "evidence.json"), []byte("{}"), 0o644); err != nil {
				return err
			}
			ws, err := workspace.Open(t.TempDir(), workspace.Options{})
			if err != nil {
				return err
			}
			defer ws.Close()
			_, err = nexus.VerifyEvidence(dir, ws)
			return err
		}, safeio.ErrTooLarge, "over the limit of 67108864"},
		{"shadow report: a 3 GB report", true, filepath.Join("reports", "huge.json"), true, func(dir, _ string) error {
			_, err := runfiles.ReadReports(dir)
			return err
		}, safeio.ErrTooLarge, "over the limit"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			t.Parallel()
			var dir, configPath string
			if tc.finish {
				mission, cfg := resumeFixture(t)
				dir, configPath = filepath.Join(t.TempDir(), "run"), cfg
				if _, err := prepareResumeRun(t, mission, configPath, dir, nil).Run(t.Context()); err != nil {
					t.Fatal(err)
				}
			} else {
				dir, configPath = killedRun(t)
			}
			path := filepath.Join(dir, tc.file)
			if tc.huge {
				sparse(t, path, 3<<30)
			} else {
				mkfifo(t, path)
			}
			err := withDeadline(t, func() error { return tc.call(dir, configPath) })
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want %v naming %q", err, tc.wantErr, tc.want)
			}
		})
	}
}

func mustEnvelope(t *testing.T, dir string) *shadow.Envelope {
	t.Helper()
	env, err := shadow.LoadSealed(runfiles.EnvelopePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	return env
}
