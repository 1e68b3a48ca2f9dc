package history_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/history"
	"github.com/swarm-dev/swarm/internal/runfixture"
	"github.com/swarm-dev/swarm/runfiles"
)

// fixture is a runs directory made once by TestMain with runfixture.Build:
// real mock runs and the odd directories a runs directory may hold. Tests
// that index it work on a copy (copyRuns).
var fixture string

func TestMain(m *testing.M) {
	cleanup, err := runfixture.JournalKey()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "history-fixture-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := runfixture.Build(context.Background(), dir); err != nil {
		fmt.Fprintln(os.Stderr, "building the fixture runs directory:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	fixture = dir
	code := m.Run()
	os.RemoveAll(dir)
	cleanup()
	os.Exit(code)
}

// copyRuns copies the fixture runs directory into a new temporary one.
func copyRuns(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "runs")
	if err := os.CopyFS(dst, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func open(t *testing.T, runs string) *history.Index {
	t.Helper()
	ix, err := history.Open(t.Context(), runs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// row is what TestReindexFixture checks of each run: whether each
// optional number is present, and the status.
type row struct {
	Status                                         string
	Error, Shadow, Evidence, Recall, Cost, Started bool
	Duration                                       bool
}

func summarize(r history.Run) row {
	return row{Status: r.Status, Error: r.Error != "", Shadow: r.ShadowMedian != nil, Evidence: r.EvidenceVerified != nil,
		Recall: r.Recall != nil, Cost: r.CostUSD != nil, Started: r.Started != nil, Duration: r.DurationMS != nil}
}

// TestReindexFixture indexes real runs and the odd directories: each is a
// row, absent numbers are absent (never 0), a forged directory is a row
// with its error.
func TestReindexFixture(t *testing.T) {
	t.Parallel()
	runs := copyRuns(t)
	ix := open(t, runs)
	st, err := ix.Reindex(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != 6 || st.Total != 6 || st.Errors != 1 {
		t.Errorf("stats %+v: want 6 indexed, 6 in all, 1 with an error (the forged directory)", st)
	}
	want := map[string]row{
		// A run without a workspace or ground truth: no evidence, no recall.
		runfixture.OK: {Status: "complete", Shadow: true, Cost: true, Started: true, Duration: true},
		// A workspace run with ground truth: evidence and recall.
		runfixture.Workspace: {Status: "complete", Shadow: true, Evidence: true, Recall: true, Cost: true, Started: true, Duration: true},
		// Nothing judged: no Shadow median (not 0).
		runfixture.Failed: {Status: "failed", Cost: true, Started: true, Duration: true},
		// Planted text is data: the run reads as the OK run.
		runfixture.Planted: {Status: "complete", Shadow: true, Cost: true, Started: true, Duration: true},
		// run.json and one event: unfinished, started known, nothing else.
		runfixture.Unfinished: {Status: history.StatusUnfinished, Started: true},
		// Not JSON: unreadable, with the error, not a crash.
		runfixture.Forged: {Status: history.StatusUnreadable, Error: true},
	}
	p, err := ix.List(t.Context(), history.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]row{}
	for _, r := range p.Runs {
		got[r.Dir] = summarize(r)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	forged, err := ix.Get(t.Context(), runfixture.Forged)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"run.json", "result.json"} {
		if !strings.Contains(forged.Error, file) {
			t.Errorf("forged run's error %q does not name %s", forged.Error, file)
		}
	}
	failed, _ := ix.Get(t.Context(), runfixture.Failed)
	if failed.Reason == "" {
		t.Errorf("failed run has no reason")
	}
	ws, _ := ix.Get(t.Context(), runfixture.Workspace)
	if ws.EvidenceVerified == nil || *ws.EvidenceVerified == 0 || ws.TaskHash == "" || !slices.Contains(ws.Models, "mock:honest") {
		t.Errorf("workspace run: %+v", ws)
	}
}

// TestSyncReadsOnlyWhatChanged: a second Sync reads nothing, a changed
// result.json is read again, a deleted directory's row goes.
func TestSyncReadsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	runs := copyRuns(t)
	ix := open(t, runs)
	if _, err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	st, err := ix.Sync(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(history.Stats{Unchanged: 6, Total: 6}, st); d != "" {
		t.Errorf("second sync (-want +got):\n%s", d)
	}
	// The forged run is repaired: its row is read again.
	if err := os.WriteFile(filepath.Join(runs, runfixture.Forged, "result.json"), []byte(`{"status":"failed","error":"boom"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(runs, runfixture.Unfinished)); err != nil {
		t.Fatal(err)
	}
	st, err = ix.Sync(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(history.Stats{Indexed: 1, Unchanged: 4, Removed: 1, Total: 5, Errors: 1}, st); d != "" {
		t.Errorf("sync after a change (-want +got):\n%s", d)
	}
	r, err := ix.Get(t.Context(), runfixture.Forged)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "failed" || r.Reason != "boom" {
		t.Errorf("repaired run: status %q reason %q", r.Status, r.Reason)
	}
}

// TestGC removes rows whose directory is gone, and never a directory.
func TestGC(t *testing.T) {
	t.Parallel()
	runs := copyRuns(t)
	ix := open(t, runs)
	if _, err := ix.Reindex(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(runs, runfixture.Failed)); err != nil {
		t.Fatal(err)
	}
	gone, err := ix.GC(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{runfixture.Failed}, gone); d != "" {
		t.Errorf("dry run (-want +got):\n%s", d)
	}
	if _, err := ix.Get(t.Context(), runfixture.Failed); err != nil {
		t.Errorf("a dry run removed the row: %v", err)
	}
	if gone, err = ix.GC(t.Context(), false); err != nil || len(gone) != 1 {
		t.Fatalf("gc: %v, %v", gone, err)
	}
	if _, err := ix.Get(t.Context(), runfixture.Failed); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("row still there after gc: %v", err)
	}
	for _, d := range []string{runfixture.OK, runfixture.Forged} {
		if _, err := os.Stat(filepath.Join(runs, d)); err != nil {
			t.Errorf("gc touched a run directory: %v", err)
		}
	}
}

// TestListQueries checks filters, order and pages over the fixture.
func TestListQueries(t *testing.T) {
	t.Parallel()
	runs := copyRuns(t)
	ix := open(t, runs)
	if _, err := ix.Reindex(t.Context()); err != nil {
		t.Fatal(err)
	}
	ws, _ := ix.Get(t.Context(), runfixture.Workspace)
	cases := []struct {
		name string // why the case exists
		q    history.Query
		want []string // directories, in order; nil: compare as a set
		set  []string
	}{
		{name: "status matches exactly", q: history.Query{Status: "failed"}, want: []string{runfixture.Failed}},
		{name: "mission matches the title, any case", q: history.Query{Mission: "TINYNOTES"}, want: []string{runfixture.Workspace}},
		{name: "mission matches the task hash exactly", q: history.Query{Mission: ws.TaskHash}, want: []string{runfixture.Workspace}},
		{name: "search reaches the error column", q: history.Query{Search: "invalid character"}, want: []string{runfixture.Forged}},
		{name: "model matches a model the run used", q: history.Query{Model: "mock:honest"},
			set: []string{runfixture.OK, runfixture.Workspace, runfixture.Failed, runfixture.Planted, runfixture.Unfinished}},
		{name: "an unknown model matches nothing", q: history.Query{Model: "mock:nobody"}, want: []string{}},
		{name: "runs without a Shadow median come last, ascending too", q: history.Query{Sort: "shadow", Asc: true, Limit: 100},
			set: nil},
		{name: "a date range excludes what started before", q: history.Query{Since: time.Now().Add(time.Hour)}, want: []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ix.List(t.Context(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range p.Runs {
				got = append(got, r.Dir)
			}
			switch {
			case tc.want != nil:
				if d := cmp.Diff(tc.want, append([]string{}, got...)); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			case tc.set != nil:
				slices.Sort(got)
				slices.Sort(tc.set)
				if d := cmp.Diff(tc.set, got); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			default:
				// Shadow ascending: the measured first, then the absent.
				seenNil := false
				for _, r := range p.Runs {
					if r.ShadowMedian == nil {
						seenNil = true
					} else if seenNil {
						t.Errorf("%s has a Shadow median after a run without one: %v", r.Dir, got)
					}
				}
			}
		})
	}
	t.Run("pages partition the runs", func(t *testing.T) {
		var all []string
		for page := 1; page <= 3; page++ {
			p, err := ix.List(t.Context(), history.Query{Limit: 2, Page: page})
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != 6 || p.Pages != 3 {
				t.Errorf("page %d: total %d pages %d", page, p.Total, p.Pages)
			}
			for _, r := range p.Runs {
				all = append(all, r.Dir)
			}
		}
		slices.Sort(all)
		if len(slices.Compact(all)) != 6 {
			t.Errorf("three pages of two hold %v", all)
		}
	})
	t.Run("an unknown sort key is a bad query", func(t *testing.T) {
		if _, err := ix.List(t.Context(), history.Query{Sort: "nope"}); !errors.Is(err, history.ErrBadQuery) {
			t.Errorf("got %v", err)
		}
	})
}

// TestFind names runs by directory, id or prefix.
func TestFind(t *testing.T) {
	t.Parallel()
	runs := copyRuns(t)
	ix := open(t, runs)
	if _, err := ix.Reindex(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r, err := ix.Find(t.Context(), runfixture.Workspace); err != nil || r.Dir != runfixture.Workspace {
		t.Errorf("by directory: %v %v", r.Dir, err)
	}
	if _, err := ix.Find(t.Context(), "nope-nope"); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("unknown: %v", err)
	}
	// OK and Planted and Failed share their run id's date prefix: a
	// prefix of several is refused, naming them.
	if _, err := ix.Find(t.Context(), "2"); err == nil || !strings.Contains(err.Error(), "several") {
		t.Errorf("ambiguous prefix: %v", err)
	}
}

// TestCompareMembership: runs below a directory with compare.json belong
// to it; Update of the compare directory indexes every run below it.
func TestCompareMembership(t *testing.T) {
	t.Parallel()
	runs := filepath.Join(t.TempDir(), "runs")
	cmpDir := filepath.Join(runs, "compare-x")
	for _, d := range []string{"runs/mock-honest/rep-0", "runs/mock-honest/rep-1", "seal"} {
		if err := os.MkdirAll(filepath.Join(cmpDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cmpDir, d, "result.json"), []byte(`{"status":"complete","shadow_aggregate":{"median":12.5}}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cmpDir, "compare.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := open(t, runs)
	if err := ix.Update(t.Context(), cmpDir); err != nil {
		t.Fatal(err)
	}
	p, err := ix.List(t.Context(), history.Query{Sort: "id", Asc: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range p.Runs {
		got = append(got, r.Dir+" in "+r.Compare)
	}
	want := []string{"compare-x/runs/mock-honest/rep-0 in compare-x", "compare-x/runs/mock-honest/rep-1 in compare-x", "compare-x/seal in compare-x"}
	slices.Sort(got)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// Update of one run inside the compare finds its compare too.
	if err := ix.Update(t.Context(), filepath.Join(cmpDir, "runs", "mock-honest", "rep-1")); err != nil {
		t.Fatal(err)
	}
	if r, _ := ix.Get(t.Context(), "compare-x/runs/mock-honest/rep-1"); r.Compare != "compare-x" {
		t.Errorf("one run's update: compare %q", r.Compare)
	}
	if err := ix.Update(t.Context(), t.TempDir()); err == nil {
		t.Errorf("a directory outside the runs directory was indexed")
	}
}

// TestSchemaVersion: the schema is versioned; an index of a newer swarm is
// refused, not misread.
func TestSchemaVersion(t *testing.T) {
	t.Parallel()
	runs := t.TempDir()
	ix := open(t, runs)
	ix.Close()
	db, err := sql.Open("sqlite", filepath.Join(runs, history.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != 1 {
		t.Errorf("user_version %d (%v), want 1", v, err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := history.Open(t.Context(), runs); !errors.Is(err, history.ErrNewerIndex) {
		t.Errorf("newer index: got %v, want ErrNewerIndex", err)
	}
}

// TestParseTime reads the --since/--until forms.
func TestParseTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string // each form a user may type
		want time.Time
		bad  bool
	}{
		{in: "2026-11-01", want: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		{in: "2026-11-01T10:00:00Z", want: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)},
		{in: "7d", want: now.Add(-7 * 24 * time.Hour)},
		{in: "36h", want: now.Add(-36 * time.Hour)},
		{in: "yesterday", bad: true},
		{in: "-3h", bad: true},
	}
	for _, tc := range cases {
		got, err := history.ParseTime(tc.in, now)
		if (err != nil) != tc.bad {
			t.Errorf("%q: error %v, want bad=%v", tc.in, err, tc.bad)
		}
		if !tc.bad && !got.Equal(tc.want) {
			t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestReadDetail reads a workspace run as its page shows it: finding
// cards with verified, numbered lines, the revealed criteria checked
// against the commitment; a changed criterion is caught.
func TestReadDetail(t *testing.T) {
	t.Parallel()
	runs := copyRuns(t)
	d, err := history.ReadDetail(runs, runfixture.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Problems) > 0 {
		t.Errorf("problems: %v", d.Problems)
	}
	if !d.Sealed || len(d.Criteria) == 0 {
		t.Errorf("sealed %v (%s), %d criteria", d.Sealed, d.SealedProblem, len(d.Criteria))
	}
	var cites int
	for _, b := range d.Bundles {
		if _, ok := b.Verdict(d.Criteria[0].ID); !ok {
			t.Errorf("bundle %s has no verdict on %s", b.ID, d.Criteria[0].ID)
		}
		for _, f := range b.Findings {
			for _, c := range f.Citations {
				cites++
				if c.State != "verified" {
					t.Errorf("%s: state %q", c.Ref(), c.State)
				}
				lines := c.Lines()
				if lines[0].N != c.StartLine || lines[len(lines)-1].N != c.EndLine {
					t.Errorf("%s: lines numbered %d..%d", c.Ref(), lines[0].N, lines[len(lines)-1].N)
				}
			}
		}
	}
	if cites == 0 {
		t.Error("no citation on any finding")
	}
	if !slices.ContainsFunc(d.Files, func(f history.File) bool { return f.Path == "sealed/envelope.json" }) {
		t.Errorf("files do not list the envelope: %v", d.Files)
	}

	// A criterion edited after the run: the page must not vouch for it.
	env := filepath.Join(runs, runfixture.Workspace, "sealed", "envelope.json")
	b, err := os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env, []byte(strings.Replace(string(b), `"assertion": "`, `"assertion": "EDITED `, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err = history.ReadDetail(runs, runfixture.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	if d.Sealed || d.SealedProblem == "" {
		t.Errorf("an edited criterion still reads as sealed")
	}
}

// TestVelocity: the velocity across runs of one task hash and one set of
// models counts complete runs with a Shadow median, oldest first.
func TestVelocity(t *testing.T) {
	t.Parallel()
	runs := t.TempDir()
	write := func(dir, result string, minute int) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(runs, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		event := fmt.Sprintf(`{"seq":1,"time":"2026-11-27T10:%02d:00Z","phase":"0","kind":"phase_start"}`+"\n", minute)
		for name, body := range map[string]string{"result.json": result, "events.jsonl": event} {
			if err := os.WriteFile(filepath.Join(runs, dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	const same = `"task_hash":"sha256:t","plan":{"models":{"judge":"mock:honest"}}`
	write("a", `{"status":"complete",`+same+`,"shadow_aggregate":{"median":30}}`, 1)
	write("b", `{"status":"complete",`+same+`,"shadow_aggregate":{"median":25}}`, 2)
	// Not counted: a failed run, a run of other models, a run of another mission.
	write("c", `{"status":"failed",`+same+`}`, 3)
	write("d", `{"status":"complete","task_hash":"sha256:t","plan":{"models":{"judge":"openai:gpt-4.1"}},"shadow_aggregate":{"median":90}}`, 4)
	write("e", `{"status":"complete","task_hash":"sha256:other","plan":{"models":{"judge":"mock:honest"}},"shadow_aggregate":{"median":0}}`, 5)
	write("f", `{"status":"complete",`+same+`,"shadow_aggregate":{"median":10}}`, 6)
	ix := open(t, runs)
	if _, err := ix.Reindex(t.Context()); err != nil {
		t.Fatal(err)
	}
	r, err := ix.Get(t.Context(), "f")
	if err != nil {
		t.Fatal(err)
	}
	v, err := ix.Velocity(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	want := []history.VelocityRun{{Dir: "a", ShadowMedian: 30}, {Dir: "b", ShadowMedian: 25}, {Dir: "f", ShadowMedian: 10}}
	if d := cmp.Diff(want, v.Runs); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}
	if v.Value == nil || *v.Value != 10 {
		t.Errorf("velocity %v, want +10 points per run ((30-10)/2)", v.Value)
	}
	if !strings.Contains(v.Text(), "+10.0 points per run over 3 runs") {
		t.Errorf("text %q", v.Text())
	}
	other, _ := ix.Get(t.Context(), "e")
	if v, _ := ix.Velocity(t.Context(), other); v.Value != nil || v.Absent == "" {
		t.Errorf("one run: %+v, want absent with a reason", v)
	}
}

// TestMeasuresRankCompleteRunsFirst: sorted by a measure of the work
// (shadow, recall, verified), a run that did not complete never ranks
// beside or above a complete one, in either direction, whatever its
// partial figure (the synthetic runs give incomplete, partial, invalid and
// interrupted runs the same spread of values as complete ones).
func TestMeasuresRankCompleteRunsFirst(t *testing.T) {
	t.Parallel()
	runs := filepath.Join(t.TempDir(), "runs")
	if err := runfixture.Synthetic(runs, 64); err != nil {
		t.Fatal(err)
	}
	ix := open(t, runs)
	if _, err := ix.Reindex(t.Context()); err != nil {
		t.Fatal(err)
	}
	measured := map[string]func(history.Run) bool{
		"shadow":   func(r history.Run) bool { return r.ShadowMedian != nil },
		"recall":   func(r history.Run) bool { return r.Recall != nil },
		"verified": func(r history.Run) bool { return r.EvidenceVerified != nil },
	}
	for key, has := range measured {
		for _, asc := range []bool{true, false} {
			p, err := ix.List(t.Context(), history.Query{Sort: key, Asc: asc, Limit: history.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			var order []string
			complete, other := 0, 0
			for _, r := range p.Runs {
				if !has(r) {
					continue // runs without the value come last (TestListQueries)
				}
				order = append(order, r.Status)
				if r.Status == runfiles.StatusComplete {
					if other > 0 {
						t.Errorf("sort %s (asc %v): a complete run after %d of other statuses: %v", key, asc, other, order)
						break
					}
					complete++
				} else {
					other++
				}
			}
			if complete == 0 || other == 0 {
				t.Errorf("sort %s (asc %v): %d complete, %d other: nothing to rank", key, asc, complete, other)
			}
		}
	}
}

// TestShadowCell: a runs-list row never shows a median over part of the
// work as if it were the whole run's.
func TestShadowCell(t *testing.T) {
	t.Parallel()
	f := func(x float64) *float64 { return &x }
	n := func(x int) *int { return &x }
	cases := []struct {
		name string // why the case exists
		r    history.Run
		want string
	}{
		{"every bundle judged: the median alone", history.Run{ShadowMedian: f(12), BundlesPlanned: n(5), BundlesScored: n(5)}, "12.0%"},
		{"one of five judged: says so", history.Run{ShadowMedian: f(0), BundlesPlanned: n(5), BundlesScored: n(1)}, "0.0% (1 of 5)"},
		{"nothing judged: absent, never 0", history.Run{BundlesPlanned: n(5), BundlesScored: n(0)}, history.NotMeasured},
		{"counts unknown: the median alone", history.Run{ShadowMedian: f(3.5)}, "3.5%"},
	}
	for _, tc := range cases {
		if got := tc.r.ShadowCell(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
