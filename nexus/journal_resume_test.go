package nexus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/builtin"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/vocab"
)

// resumeFixture copies the resume test's mission and config into a fresh
// directory (so a test may change them) and returns their paths.
func resumeFixture(t *testing.T) (mission, config string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "resume"))); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "mission.md"), filepath.Join(dir, "config.yml")
}

// prepareResumeRun prepares a run of the fixture into out, as swarm run
// does (mission and config paths recorded).
func prepareResumeRun(t *testing.T, mission, configPath, out string, edit func(*nexus.Options), opts ...nexus.Option) *nexus.Mission {
	t.Helper()
	reg := builtin.Registry(mock.Options{})
	cfg, err := config.Load(configPath, reg)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(mission)
	if err != nil {
		t.Fatal(err)
	}
	o := nexus.Options{Config: cfg, Registry: reg, Mission: string(text), MissionName: mission, MissionPath: mission,
		MissionDir: filepath.Dir(mission), ConfigPath: configPath, OutDir: out}
	if edit != nil {
		edit(&o)
	}
	m, err := nexus.Prepare(o, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func journalKeys(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, runfiles.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var r nexus.JournalRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, r.Role+" "+r.AgentID+" "+r.Key)
	}
	slices.Sort(keys)
	return keys
}

// callOrder holds calls back until others returned: a call of agent id
// with schema S ("id/S") waits until every call named in waits["id/S"] has
// returned once. It forces an order of arrival on otherwise concurrent
// agents, without sleeping.
type callOrder struct {
	waits map[string][]string
	mu    sync.Mutex
	done  map[string]chan struct{}
	seen  map[string]bool
}

func newCallOrder(waits map[string][]string) *callOrder {
	o := &callOrder{waits: waits, done: map[string]chan struct{}{}, seen: map[string]bool{}}
	for _, deps := range waits {
		for _, d := range deps {
			o.done[d] = make(chan struct{})
		}
	}
	return o
}

func (o *callOrder) wrap(_ providers.Ref, p providers.Provider) providers.Provider {
	return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		if req.Schema == nil {
			return p.Complete(ctx, req)
		}
		key := req.Caller.AgentID + "/" + req.Schema.Name
		for _, d := range o.waits[key] {
			select {
			case <-o.done[d]:
			case <-ctx.Done():
				return providers.Response{}, ctx.Err()
			}
		}
		resp, err := p.Complete(ctx, req)
		o.mu.Lock()
		if ch := o.done[key]; ch != nil && !o.seen[key] {
			o.seen[key] = true
			close(ch)
		}
		o.mu.Unlock()
		return resp, err
	})
}

// arrivalOrder makes the bundles arrive in the order of domains (or the
// reverse) and, within each commander, its two squad leads finish in
// order (or the reverse): the second one plans only once the first one's
// workers answered.
func arrivalOrder(domains []string, reverse bool) map[string][]string {
	ds := slices.Clone(domains)
	leads := []string{"01", "02"}
	if reverse {
		slices.Reverse(ds)
		slices.Reverse(leads)
	}
	waits := map[string][]string{}
	for i, d := range ds {
		if i > 0 {
			waits["commander-"+d+"/"+vocab.SchemaBundle] = []string{"commander-" + ds[i-1] + "/" + vocab.SchemaBundle}
		}
		waits["squadlead-"+d+"-"+leads[1]+"/"+vocab.SchemaMicroBriefs] = []string{
			"worker-" + d + "-" + leads[0] + "-01/" + vocab.SchemaAtom, "worker-" + d + "-" + leads[0] + "-02/" + vocab.SchemaAtom}
	}
	return waits
}

// The content of every request depends only on the mission, config, seed
// and earlier answers, never on which agent finished first: two runs whose
// bundles (and squad leads' atoms) arrive in opposite orders ask exactly
// the same questions (the same multiset of replay keys). Cross-review
// pairing by arrival order, and a commander's atoms gathered in the order
// its squad leads finished, broke this.
func TestSameSeedSameRequestsWhateverTheArrivalOrder(t *testing.T) {
	t.Parallel()
	mission, config := resumeFixture(t)
	domains := []string{"architecture", "implementation", "documentation", "integration"}
	var keys [][]string
	for _, reverse := range []bool{false, true} {
		order := newCallOrder(arrivalOrder(domains, reverse))
		out := filepath.Join(t.TempDir(), "run")
		m := prepareResumeRun(t, mission, config, out, nil, nexus.WithProviderWrap(order.wrap))
		res, err := m.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != runfiles.StatusComplete {
			t.Fatalf("run %s: %s", res.Status, res.Error)
		}
		if want := 3*len(domains) - 1; len(order.seen) != want {
			t.Fatalf("ordered %d calls (%v), want %d: the fixture's domains or team changed", len(order.seen), order.seen, want)
		}
		keys = append(keys, journalKeys(t, out))
	}
	if diff := cmp.Diff(keys[0], keys[1]); diff != "" {
		t.Errorf("the requests depend on the arrival order (-in order +reversed):\n%s", diff)
	}
}

// snapshot is every file under dir with its bytes and modification time.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == rundir.LockFile {
			// The lock every process using the directory takes (a refused
			// resume too), holding the last holder's pid.
			return nil
		}
		if d.IsDir() {
			out[rel+"/"] = fi.ModTime().String()
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = fi.ModTime().String() + " " + string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Resuming a finished run says so and touches nothing: every file keeps its
// bytes and modification time.
func TestResumeFinishedRunChangesNothing(t *testing.T) {
	t.Parallel()
	mission, config := resumeFixture(t)
	out := filepath.Join(t.TempDir(), "run")
	res, err := prepareResumeRun(t, mission, config, out, nil).Run(t.Context())
	if err != nil || res.Status != runfiles.StatusComplete {
		t.Fatalf("run: %v %v", err, res)
	}
	before := snapshot(t, out)
	m, err := nexus.Resume(out, nexus.ResumeOptions{Registry: builtin.Registry(mock.Options{}), ConfigPath: config})
	var fin *nexus.FinishedError
	if !errors.As(err, &fin) || !errors.Is(err, nexus.ErrRunFinished) || fin.Status != runfiles.StatusComplete || m != nil {
		t.Fatalf("Resume = %v, %v; want a FinishedError with status complete", m, err)
	}
	if want := "run already finished (status complete); nothing to do"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if diff := cmp.Diff(before, snapshot(t, out)); diff != "" {
		t.Errorf("resuming a finished run changed the directory (-before +after):\n%s", diff)
	}
}

// A resume whose mission, config, workspace or ground truth changed is
// refused with what changed (bad input), and nothing is written; --force
// resumes and says what changed in the run_resumed event.
func TestResumeRefusesWhatChanged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(t *testing.T, mission, configPath, ws, gt string)
		want   string
	}{
		{"mission text edited", func(t *testing.T, mission, _, _, _ string) { appendTo(t, mission, "\nAlso rotate the keys.\n") }, "mission text ("},
		{"config file edited", func(t *testing.T, _, configPath, _, _ string) { appendTo(t, configPath, "\n# a comment only\n") }, "config file ("},
		{"a workspace file edited", func(t *testing.T, _, _, ws, _ string) { appendTo(t, filepath.Join(ws, "app.py"), "# changed\n") }, "workspace "},
		{"a workspace file added", func(t *testing.T, _, _, ws, _ string) { appendTo(t, filepath.Join(ws, "new.py"), "x = 1\n") }, "workspace "},
		{"ground truth edited", func(t *testing.T, _, _, _, gt string) { appendTo(t, gt, "\n") }, "ground truth ("},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mission, configPath := resumeFixture(t)
			base := t.TempDir()
			ws := filepath.Join(base, "ws")
			if err := os.MkdirAll(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			appendTo(t, filepath.Join(ws, "app.py"), "def login(user):\n    return True\n")
			gt := filepath.Join(base, "truth.yml")
			appendTo(t, gt, "defects:\n  - id: D1\n    path: app.py\n    start_line: 1\n    end_line: 2\n    category: security\n    title: login accepts anyone\n")
			out := filepath.Join(base, "run")
			res, err := prepareResumeRun(t, mission, configPath, out, func(o *nexus.Options) { o.Workspace, o.GroundTruth = ws, gt }).Run(t.Context())
			if err != nil {
				t.Fatalf("run: %v (%v)", err, res)
			}
			// As after a SIGKILL: no result.json.
			if err := os.Remove(filepath.Join(out, "result.json")); err != nil {
				t.Fatal(err)
			}
			tc.change(t, mission, configPath, ws, gt)
			before := snapshot(t, out)
			_, err = nexus.Resume(out, nexus.ResumeOptions{Registry: builtin.Registry(mock.Options{}), ConfigPath: configPath})
			if !errors.Is(err, nexus.ErrResumeChanged) || !errors.Is(err, config.ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Resume: %v; want ErrResumeChanged naming %q", err, tc.want)
			}
			if strings.Count(err.Error(), " changed since") != 1 || strings.Contains(err.Error(), "; ") {
				t.Errorf("one change, listed once: %v", err)
			}
			if diff := cmp.Diff(before, snapshot(t, out)); diff != "" {
				t.Errorf("a refused resume changed the directory (-before +after):\n%s", diff)
			}
			m, err := nexus.Resume(out, nexus.ResumeOptions{Registry: builtin.Registry(mock.Options{}), ConfigPath: configPath, Force: true, KeepEvents: true})
			if err != nil {
				t.Fatal(err)
			}
			if ch := m.ResumeChanges(); len(ch) != 1 || !strings.Contains(ch[0], tc.want) {
				t.Errorf("ResumeChanges = %q, want one naming %q", ch, tc.want)
			}
			res, err = m.Run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var rd *events.ResumedData
			for _, e := range res.Events {
				if d, ok := e.Data.(events.ResumedData); ok {
					rd = &d
				}
			}
			if rd == nil || len(rd.Changed) != 1 || !strings.Contains(rd.Changed[0], tc.want) || rd.Attempt != 2 {
				t.Errorf("run_resumed = %+v, want attempt 2 and the change %q", rd, tc.want)
			}
		})
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	// The tree hash reads content, not times, but make sure a same-size
	// rewrite in the same second cannot hide behind a cached stat.
	_ = os.Chtimes(path, time.Now(), time.Now())
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// A resumed run replays every journaled answer and asks only for the rest:
// here the run is interrupted after its first answers (as Ctrl-C would),
// and the resumed run ends like an uninterrupted one (same seal, same
// per-bundle scores) with replayed + fresh = the uninterrupted run's calls.
func TestResumeAfterInterruptionReplaysAndMatches(t *testing.T) {
	t.Parallel()
	mission, config := resumeFixture(t)
	full := filepath.Join(t.TempDir(), "full")
	want, err := prepareResumeRun(t, mission, config, full, nil).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stopAfter := cancelAfter(want.Telemetry.Calls/2, cancel)
	got, err := prepareResumeRun(t, mission, config, out, nil, nexus.WithProviderWrap(stopAfter)).Run(ctx)
	if !errors.Is(err, nexus.ErrInterrupted) || got.Status != runfiles.StatusInterrupted {
		t.Fatalf("interrupted run: %v, status %s", err, got.Status)
	}
	journaled := len(journalKeys(t, out))
	m, err := nexus.Resume(out, nexus.ResumeOptions{Registry: builtin.Registry(mock.Options{}), ConfigPath: config})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.SealedHash != want.SealedHash {
		t.Errorf("sealed %s, want %s", res.SealedHash, want.SealedHash)
	}
	if diff := cmp.Diff(bundleScores(want), bundleScores(res)); diff != "" {
		t.Errorf("per-bundle scores (-uninterrupted +resumed):\n%s", diff)
	}
	r := res.Resumed
	if r == nil || res.Telemetry.Resume == nil {
		t.Fatalf("result.json does not say the run was resumed: %+v", r)
	}
	if diff := cmp.Diff(nexus.ResumeInfo{Attempt: 2, JournalRecords: journaled, ReplayedCalls: int64(journaled), FreshCalls: int64(want.Telemetry.Calls - journaled)}, *r); diff != "" {
		t.Errorf("resume record (-want +got):\n%s", diff)
	}
	for _, name := range []string{"events.jsonl", "transcripts.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, "attempts", "1", name)); err != nil {
			t.Errorf("the first attempt's %s was not kept: %v", name, err)
		}
	}
	if n := len(journalKeys(t, out)); n != want.Telemetry.Calls {
		t.Errorf("journal holds %d answers after the resume, want %d (appended, never rewritten)", n, want.Telemetry.Calls)
	}
}

func bundleScores(res *nexus.Result) map[string]any {
	out := map[string]any{}
	for _, b := range res.Bundles {
		if b.ShadowScore == nil {
			out[b.ID] = "unscored"
			continue
		}
		out[b.ID] = []any{*b.ShadowScore, b.Bundle.Text()}
	}
	return out
}

// A resumed run that seals another envelope than the one its directory
// holds is not the run that was interrupted: it fails, never goes on.
func TestResumeWithAnotherStoredEnvelopeFails(t *testing.T) {
	t.Parallel()
	mission, config := resumeFixture(t)
	out := filepath.Join(t.TempDir(), "run")
	if _, err := prepareResumeRun(t, mission, config, out, nil).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	otherMission, _ := resumeFixture(t)
	appendTo(t, otherMission, "\nAlso plan the rotation of the signing keys and the audit of refresh tokens.\n")
	if _, err := prepareResumeRun(t, otherMission, config, other, nil).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(other, "sealed", "envelope.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "sealed", "envelope.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(out, "result.json")); err != nil {
		t.Fatal(err)
	}
	m, err := nexus.Resume(out, nexus.ResumeOptions{Registry: builtin.Registry(mock.Options{}), ConfigPath: config})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Run(t.Context())
	if !errors.Is(err, nexus.ErrResumeMismatch) || res.Status != runfiles.StatusFailed {
		t.Fatalf("Run: %v (status %s), want ErrResumeMismatch and a failed run", err, res.Status)
	}
	if _, err := os.Stat(filepath.Join(out, "sealed", "envelope.attempt-1.json")); err != nil {
		t.Errorf("the stored envelope was not kept: %v", err)
	}
	// The failed resume did not overwrite it: a second resume compares
	// against the same envelope and fails the same way.
	if got, err := os.ReadFile(filepath.Join(out, "sealed", "envelope.json")); err != nil || !bytes.Equal(got, b) {
		t.Errorf("sealed/envelope.json changed by the failed resume (err %v)", err)
	}
	m, err = nexus.Resume(out, nexus.ResumeOptions{Registry: builtin.Registry(mock.Options{}), ConfigPath: config})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(t.Context()); !errors.Is(err, nexus.ErrResumeMismatch) {
		t.Errorf("second resume: %v, want ErrResumeMismatch again", err)
	}
}

// A journal damaged before its last line is refused, naming the file and
// line, before anything in the run directory is touched.
func TestResumeRefusesADamagedJournal(t *testing.T) {
	t.Parallel()
	mission, configPath := resumeFixture(t)
	out := filepath.Join(t.TempDir(), "run")
	if _, err := prepareResumeRun(t, mission, configPath, out, nil).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(out, "result.json")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, runfiles.JournalFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	lines[2] = "{not json\n"
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, out)
	_, err = nexus.Resume(out, nexus.ResumeOptions{Registry: builtin.Registry(mock.Options{}), ConfigPath: configPath})
	if !errors.Is(err, config.ErrBadInput) || !errors.Is(err, nexus.ErrJournal) || !strings.Contains(err.Error(), "journal.jsonl line 3") {
		t.Fatalf("Resume: %v; want bad input naming journal.jsonl line 3", err)
	}
	if diff := cmp.Diff(before, snapshot(t, out)); diff != "" {
		t.Errorf("a refused resume changed the directory (-before +after):\n%s", diff)
	}
}

// cancelAfter wraps every provider of a run so that the n-th answer of the
// run (counted over all of them) cancels it, as Ctrl-C would.
func cancelAfter(n int, cancel context.CancelFunc) func(providers.Ref, providers.Provider) providers.Provider {
	var mu sync.Mutex
	calls := 0
	return func(_ providers.Ref, p providers.Provider) providers.Provider {
		return providers.ProviderFunc(func(c context.Context, req providers.Request) (providers.Response, error) {
			resp, err := p.Complete(c, req)
			mu.Lock()
			calls++
			if calls == n {
				cancel()
			}
			mu.Unlock()
			return resp, err
		})
	}
}
