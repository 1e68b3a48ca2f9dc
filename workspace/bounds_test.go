package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// hangGuard is how long a call that must not block may take before the
// test fails rather than hangs (on main a FIFO blocked these forever).
const hangGuard = 30 * time.Second

// within runs fn and fails the test when it does not return within
// hangGuard (fn is then left blocked: the test binary ends with it).
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatalf("%s blocked for %s: a FIFO or a device was read", what, hangGuard)
	}
}

// TestSwarmignoreNotRegularOrTooLarge: a .swarmignore is read only when it
// is a regular file of at most 1 MiB; anything else makes Open fail,
// naming it (on main a FIFO hung the run past every signal).
func TestSwarmignoreNotRegularOrTooLarge(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		make func(t *testing.T, p string) bool // false: cannot be made here
		want string
	}{
		{"a FIFO", func(t *testing.T, p string) bool { return mkfifo(p) == nil }, "not a regular file"},
		{"a directory", func(t *testing.T, p string) bool { return os.Mkdir(p, 0o755) == nil }, "not a regular file"},
		{"over 1 MiB", func(t *testing.T, p string) bool {
			return os.WriteFile(p, []byte(strings.Repeat("a\n", 1<<19)+"x"), 0o644) == nil
		}, "over the limit of 1048576"},
		{"a symlink to /dev/zero (outside the root)", func(t *testing.T, p string) bool { return os.Symlink("/dev/zero", p) == nil }, ".swarmignore"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if !tc.make(t, filepath.Join(dir, ".swarmignore")) {
				t.Skipf("%s cannot be made here", tc.name)
			}
			var err error
			within(t, "Open", func() {
				var f *FS
				if f, err = Open(dir, Options{}); err == nil {
					f.Close()
				}
			})
			if err == nil || !strings.Contains(err.Error(), ".swarmignore") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open = %v, want an error naming .swarmignore: %s", err, tc.want)
			}
		})
	}
}

// TestNestedGitignoreNotRegularOrTooLarge: a .gitignore that is a FIFO, a
// directory or over 1 MiB is skipped with one warning naming it; the tools
// finish, and what it would have hidden stays visible (on main a FIFO
// hung every grep, glob and list_dir; a 2 MiB one was read whole).
func TestNestedGitignoreNotRegularOrTooLarge(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		make func(p string) error
		want string
	}{
		{"a FIFO", mkfifo, "sub/.gitignore skipped: not a regular file"},
		{"a directory", func(p string) error { return os.Mkdir(p, 0o755) }, "sub/.gitignore skipped: not a regular file"},
		{"2 MiB", func(p string) error { return os.WriteFile(p, []byte(strings.Repeat("gen.go\n", 300000)), 0o644) }, "sub/.gitignore skipped: 2100000 bytes, over the limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{"sub/gen.go": "package sub // hit\n", "a.go": "package a // hit\n"})
			if err := tc.make(filepath.Join(dir, "sub", ".gitignore")); err != nil {
				t.Skipf("cannot make %s: %v", tc.name, err)
			}
			f := open(t, dir, Options{})
			s := f.Session(nil)
			within(t, "the tools", func() {
				for _, c := range []struct{ tool, args, want string }{
					{ToolGrep, `{"pattern":"hit"}`, `"path":"sub/gen.go"`},
					{ToolGlob, `{"pattern":"**/*.go"}`, `"sub/gen.go"`},
					{ToolListDir, `{"path":"sub"}`, `"name":"gen.go"`},
				} {
					if o := callRaw(t.Context(), s, c.tool, c.args); !o.OK || !strings.Contains(o.Result, c.want) {
						t.Errorf("%s %s: %s, want %s in it", c.tool, c.args, o.Result, c.want)
					}
				}
			})
			w := f.Warnings()
			if len(w) != 1 || !strings.HasPrefix(w[0], tc.want) {
				t.Errorf("warnings %q, want one starting %q", w, tc.want)
			}
		})
	}
}

// TestIgnoreFileDevice: a character device (like /dev/zero) named
// .swarmignore or .gitignore is never read: on main it was read without
// end (gigabytes). Needs the privilege to make a device node. Do not run
// this on main: it would exhaust the memory rather than fail.
func TestIgnoreFileDevice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"sub/a.go": "package sub // hit\n"})
	if err := mkzero(filepath.Join(dir, "sub", ".gitignore")); err != nil {
		t.Skipf("cannot make a device node here: %v", err)
	}
	f := open(t, dir, Options{})
	within(t, "grep", func() {
		if o := callRaw(t.Context(), f.Session(nil), ToolGrep, `{"pattern":"hit"}`); !strings.Contains(o.Result, "sub/a.go") {
			t.Errorf("grep: %s", o.Result)
		}
	})
	if w := f.Warnings(); len(w) != 1 || !strings.Contains(w[0], "sub/.gitignore skipped: not a regular file") {
		t.Errorf("warnings %q", w)
	}
	if err := mkzero(filepath.Join(dir, ".swarmignore")); err != nil {
		t.Fatal(err)
	}
	within(t, "Open", func() {
		if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), ".swarmignore") {
			t.Errorf("Open = %v, want an error naming .swarmignore", err)
		}
	})
}

// TestFingerprintGitFIFO: the fingerprint reads .git/HEAD and the refs
// without blocking on a FIFO (on main it hung).
func TestFingerprintGitFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{".git/refs/heads/main": strings.Repeat("a", 40) + "\n", "a.go": "package a\n"})
	if err := mkfifo(filepath.Join(dir, ".git", "HEAD")); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	f := open(t, dir, Options{})
	var fp Fingerprint
	within(t, "Fingerprint", func() { fp = f.Fingerprint() })
	if fp.Kind != "files" || fp.GitHead != "" {
		t.Errorf("fingerprint %+v, want kind files (HEAD cannot be read)", fp)
	}
}

// manyFiles makes dirs directories of per files each (dNN/fNNN.txt), and
// one file holding "needle".
func manyFiles(t *testing.T, dirs, per int) string {
	t.Helper()
	root := t.TempDir()
	for d := range dirs {
		dd := filepath.Join(root, fmt.Sprintf("d%02d", d))
		if err := os.Mkdir(dd, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range per {
			if err := os.WriteFile(filepath.Join(dd, fmt.Sprintf("f%03d.txt", i)), []byte("line\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(root, "d07", "f042.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestFilesPerCallBound: one list_dir, grep or glob examines at most
// max_files_per_call directory entries (counted, not timed: on main every
// call walked the whole tree, 300 000 files taking ~2 s each), says
// plainly that it stopped early and how to narrow the search; a search
// narrowed to one directory finds everything there.
func TestFilesPerCallBound(t *testing.T) {
	t.Parallel()
	root := manyFiles(t, 30, 100) // 3 000 files
	lim := DefaultLimits()
	lim.MaxFilesPerCall = 200
	lim.MaxListEntries = 1000
	f := open(t, root, Options{Limits: lim})
	s := f.Session(nil)
	cases := []struct {
		name, tool, args string
		maxVisited       int64
		stopped          bool
		want             string // in the answer
	}{
		{"glob over the whole tree stops", ToolGlob, `{"pattern":"**/*.txt"}`, 200, true, `rather than \"**/*.go\"`},
		{"grep over the whole tree stops", ToolGrep, `{"pattern":"needle"}`, 200, true, `narrow path_glob to one directory`},
		{"list_dir of a directory under the bound lists all of it", ToolListDir, `{"path":"d03"}`, 200, false, `"name":"f099.txt"`},
		{"glob narrowed to one directory finds all of it", ToolGlob, `{"pattern":"d07/*.txt"}`, 100, false, `"d07/f099.txt"`},
		{"grep narrowed to one directory finds the needle", ToolGrep, `{"pattern":"needle","path_glob":"d07/**"}`, 100, false, `"path":"d07/f042.txt"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := f.visited.Load()
			o := callRaw(t.Context(), s, tc.tool, tc.args)
			visited := f.visited.Load() - before
			if !o.OK || visited > tc.maxVisited || visited == 0 {
				t.Errorf("%s: ok %v, %d entries examined, want 1..%d", tc.tool, o.OK, visited, tc.maxVisited)
			}
			note := `stopped early: max_files_per_call (200 directory entries examined per call)`
			if got := strings.Contains(o.Result, note); got != tc.stopped {
				t.Errorf("says it stopped early: %v, want %v:\n%s", got, tc.stopped, o.Result)
			}
			if tc.stopped && !strings.Contains(o.Result, `"truncated":true`) {
				t.Errorf("stopped early but not truncated:\n%s", o.Result)
			}
			if !strings.Contains(o.Result, tc.want) {
				t.Errorf("answer lacks %s:\n%.600s", tc.want, o.Result)
			}
		})
	}
	// A directory with more entries than the bound.
	big := filepath.Join(root, "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if err := os.WriteFile(filepath.Join(big, fmt.Sprintf("x%03d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := f.visited.Load()
	o := callRaw(t.Context(), s, ToolListDir, `{"path":"big"}`)
	if v := f.visited.Load() - before; v != 200 {
		t.Errorf("list_dir big examined %d entries, want 200", v)
	}
	if n := strings.Count(o.Result, `"type":"file"`); n != 200 || !strings.Contains(o.Result, "stopped early: max_files_per_call") {
		t.Errorf("list_dir big: %d entries, want 200 and the note:\n%.300s", n, o.Result)
	}
}

// TestNarrowedSearchDoesNotFollowALink: the directory a glob names is
// walked only when it is a plain directory: a symlink to .git must not
// list git metadata under the link's name.
func TestNarrowedSearchDoesNotFollowALink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{".git/config": canary + "\n", "a.go": "package a\n"})
	if err := os.Symlink(".git", filepath.Join(dir, "meta")); err != nil {
		t.Skipf("symlink: %v", err)
	}
	s := open(t, dir, Options{}).Session(nil)
	for _, args := range []string{`{"pattern":"meta/*"}`, `{"pattern":"meta/**"}`} {
		o := callRaw(t.Context(), s, ToolGlob, args)
		if d := cmp.Diff(`{"ok":true,"pattern":"`+args[12:len(args)-2]+`","paths":[],"truncated":false}`, o.Result); d != "" {
			t.Errorf("glob %s (-want +got):\n%s", args, d)
		}
	}
	o := callRaw(t.Context(), s, ToolGrep, `{"pattern":"CANARY","path_glob":"meta/**"}`)
	noCanary(t, "grep in meta/", o.Result)
}

// TestAgentShareOfTheRunBudget: no agent takes more than
// max_tool_calls_per_agent of the run's tool calls, across all its
// sessions; its refused calls are not charged to the run, so the other
// agents keep theirs (on main one agent could spend the whole run's).
func TestAgentShareOfTheRunBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.go": "package a\n"})
	lim := DefaultLimits()
	lim.MaxToolCallsPerAgent = 3
	lim.MaxToolCalls = 5
	f := open(t, dir, Options{Limits: lim})
	greedy1, greedy2 := f.Session(nil).ForAgent("greedy"), f.Session(nil).ForAgent("greedy")
	var got []string
	for i := range 10 {
		s := greedy1
		if i%2 == 1 {
			s = greedy2
		}
		got = append(got, call(t, s, ToolReadFile, map[string]any{"path": "a.go"}).Refusal)
	}
	other := f.Session(nil).ForAgent("other")
	for range 3 {
		got = append(got, call(t, other, ToolReadFile, map[string]any{"path": "a.go"}).Refusal)
	}
	want := []string{"", "", "", "limit", "limit", "limit", "limit", "limit", "limit", "limit", "", "", "limit"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("refusals (-want +got):\n%s", d)
	}
	o := call(t, greedy1, ToolReadFile, map[string]any{"path": "a.go"})
	if !strings.Contains(o.Reason, "max_tool_calls_per_agent (3 tool calls per agent per run)") {
		t.Errorf("the agent's refusal: %s", o.Result)
	}
	o = call(t, f.Session(nil).ForAgent("third"), ToolReadFile, map[string]any{"path": "a.go"})
	if !strings.Contains(o.Reason, "max_tool_calls (5 tool calls per run)") {
		t.Errorf("the run's refusal: %s", o.Result)
	}
}

// TestSkipIsNotCharged: a call past max_calls_per_turn gets a refusal
// saying so, and costs neither the run's nor the agent's budget.
func TestSkipIsNotCharged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.go": "package a\n"})
	lim := DefaultLimits()
	lim.MaxToolCalls, lim.MaxToolCallsPerAgent, lim.MaxCallsPerTurn = 2, 2, 4
	f := open(t, dir, Options{Limits: lim})
	s := f.Session(nil).ForAgent("a")
	if s.CallsPerTurn() != 4 {
		t.Errorf("CallsPerTurn = %d", s.CallsPerTurn())
	}
	for range 100 {
		o := s.Skip(toolCall(ToolReadFile, `{"path":"a.go"}`))
		if o.Refusal != RefusalLimit || !strings.Contains(o.Reason, "max_calls_per_turn (4 tool calls per answer): this call was not run") {
			t.Fatalf("Skip: %s", o.Result)
		}
	}
	for range 2 {
		if o := call(t, s, ToolReadFile, map[string]any{"path": "a.go"}); !o.OK {
			t.Errorf("after 100 skipped calls: %s", o.Result)
		}
	}
}

func toolCall(name, args string) providers.ToolCall {
	return providers.ToolCall{ID: "c1", Name: name, Arguments: args}
}
