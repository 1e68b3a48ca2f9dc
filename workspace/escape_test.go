package workspace

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/citation"
)

func TestHostilePaths(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	f := open(t, fx.root, Options{})
	s := f.Session(nil)
	absInside := filepath.Join(fx.root, "main.go")
	cases := []struct {
		name   string
		why    string
		tool   string
		path   string
		want   string // refusal kind; "" = allowed
		verify State  // state of a citation of line 1 of path
		links  bool
		fifo   bool
	}{
		{"dotdot", "the plainest escape", ToolReadFile, "../outside/canary.txt", RefusalEscape, Fabricated, false, false},
		{"dotdot bare", "parent of the root", ToolListDir, "..", RefusalEscape, Fabricated, false, false},
		{"inner dotdot", "a/../../x cleans to ../x: the root refuses it", ToolReadFile, "internal/../../outside/canary.txt", RefusalEscape, Fabricated, false, false},
		{"inner dotdot staying in", "a/../b stays inside and is allowed", ToolReadFile, "internal/../main.go", "", Verified, false, false},
		{"absolute outside", "absolute paths are refused by os.Root", ToolReadFile, "/etc/passwd", RefusalEscape, Fabricated, false, false},
		{"absolute canary", "absolute path of the canary", ToolReadFile, filepath.Join(fx.outside, "canary.txt"), RefusalEscape, Fabricated, false, false},
		{"absolute inside", "even an absolute path naming a file inside the root is refused", ToolReadFile, absInside, RefusalEscape, Fabricated, false, false},
		{"symlink to file outside", "os.Root refuses to follow it", ToolReadFile, "link_out_file", RefusalEscape, Fabricated, true, false},
		{"symlink to dir outside (absolute)", "absolute symlink targets escape", ToolListDir, "link_out_dir", RefusalEscape, Fabricated, true, false},
		{"file through symlinked dir outside", "a path through an escaping link", ToolReadFile, "link_out_dir/secret.txt", RefusalEscape, Fabricated, true, false},
		{"nested symlink to dir outside", "internal/up -> ../../outside", ToolReadFile, "internal/up/canary.txt", RefusalEscape, Fabricated, true, false},
		{"symlink chain", "chain1 -> chain2 -> link_out_file -> outside", ToolReadFile, "chain1", RefusalEscape, Fabricated, true, false},
		{"symlink inside", "a link to a file inside the root is fine", ToolReadFile, "link_in", "", Verified, true, false},
		{"absolute symlink to inside", "os.Root refuses absolute link targets even inside", ToolReadFile, "link_abs_in", RefusalEscape, Fabricated, true, false},
		{"symlink to denied", "a link must not launder a denied file", ToolReadFile, "link_env", RefusalDenied, Unverifiable, true, false},
		{".git/config", "git metadata is denied", ToolReadFile, ".git/config", RefusalDenied, Unverifiable, false, false},
		{".git dir", "listing .git is denied", ToolListDir, ".git", RefusalDenied, Unverifiable, false, false},
		{".env.local", ".env* is denied", ToolReadFile, ".env.local", RefusalDenied, Unverifiable, false, false},
		{"./.env.local", "a leading ./ does not dodge the deny list", ToolReadFile, "./.env.local", RefusalDenied, Unverifiable, false, false},
		{".env missing", "a denied name is denied whether or not it exists", ToolReadFile, ".env", RefusalDenied, Unverifiable, false, false},
		{"server.pem", "*.pem is denied", ToolReadFile, "server.pem", RefusalDenied, Unverifiable, false, false},
		{"nested key", "*.key is denied in subdirectories too", ToolReadFile, "tls/server.key", RefusalDenied, Unverifiable, false, false},
		{"id_rsa", "id_* is denied", ToolReadFile, "id_rsa", RefusalDenied, Unverifiable, false, false},
		{".swarmignore dir", ".swarmignore's private/ pattern", ToolReadFile, "private/notes.txt", RefusalDenied, Unverifiable, false, false},
		{".swarmignore dir listing", ".swarmignore's private/ pattern, listed", ToolListDir, "private", RefusalDenied, Unverifiable, false, false},
		{".swarmignore glob", ".swarmignore's *.secret pattern", ToolReadFile, "cfg.secret", RefusalDenied, Unverifiable, false, false},
		{"NUL byte", "the OS refuses a NUL in a path", ToolReadFile, "main.go\x00.txt", RefusalBadArguments, Unverifiable, false, false},
		{"missing", "absent files are not_found", ToolReadFile, "nope.go", RefusalNotFound, Fabricated, false, false},
		{"directory as file", "read_file of a directory", ToolReadFile, "internal", RefusalNotRegular, Fabricated, false, false},
		{"file as directory", "list_dir of a file", ToolListDir, "main.go", RefusalNotRegular, Verified, false, false},
		{"binary", "a NUL in the first 8 KiB", ToolReadFile, "bin.dat", RefusalBinary, Unverifiable, false, false},
		{"fifo", "a named pipe is not a regular file (and must not block)", ToolReadFile, "pipe", RefusalNotRegular, Unverifiable, false, true},
		{"gitignored read", "read_file of a gitignored file is allowed", ToolReadFile, "app.log", "", Verified, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.links && !fx.links {
				t.Skip("symlinks cannot be made here")
			}
			if tc.fifo && !fx.fifo {
				t.Skip("named pipes cannot be made here")
			}
			o := call(t, s, tc.tool, map[string]any{"path": tc.path})
			noCanary(t, tc.name, o.Result)
			noCanary(t, tc.name+" reason", o.Reason)
			m := decode(t, o)
			if tc.want == "" {
				if !o.OK || m["ok"] != true {
					t.Fatalf("%s: want allowed, got %s", tc.why, o.Result)
				}
			} else {
				got := map[string]any{"ok": m["ok"], "refusal": m["refusal"]}
				if d := cmp.Diff(map[string]any{"ok": false, "refusal": tc.want}, got); d != "" {
					t.Fatalf("%s (-want +got):\n%s\n%s", tc.why, d, o.Result)
				}
				if o.OK || o.Refusal != tc.want || o.Reason == "" || o.Reason != m["error"] {
					t.Errorf("outcome %+v does not mirror the answer %s", o, o.Result)
				}
				if strings.Contains(o.Reason, fx.outside) && !strings.Contains(tc.path, fx.outside) {
					t.Errorf("reason names a path outside the root the model did not give: %s", o.Reason)
				}
			}
			if tc.tool == ToolReadFile || tc.verify != Verified {
				quote := "package"
				if tc.name == "gitignored read" {
					quote = "password in a log"
				}
				ck := f.Verify(citation.Citation{Path: tc.path, StartLine: 1, EndLine: 1, Quote: quote})
				noCanary(t, tc.name+" verify", ck.Reason)
				if ck.State != tc.verify {
					t.Errorf("Verify: state %s (%s), want %s", ck.State, ck.Reason, tc.verify)
				}
			}
		})
	}
}

// TestNoCanaryInWalks runs every listing and search tool over the whole
// root: nothing outside it or denied may surface.
func TestNoCanaryInWalks(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	f := open(t, fx.root, Options{})
	s := f.Session(nil)
	for _, c := range []struct{ tool, args string }{
		{ToolGrep, `{"pattern":"CANARY","context":5}`},
		{ToolGrep, `{"pattern":"."}`},
		{ToolGrep, `{"pattern":"CANARY","path_glob":"**"}`},
		{ToolGlob, `{"pattern":"**"}`},
		{ToolGlob, `{"pattern":"../**"}`},
		{ToolGlob, `{"pattern":"/etc/*"}`},
		{ToolGrep, `{"pattern":"CANARY","path_glob":"../**"}`},
		{ToolGrep, `{"pattern":"CANARY","path_glob":"link_out_dir/**"}`},
		{ToolGlob, `{"pattern":"link_out_dir/**"}`},
		{ToolGlob, `{"pattern":"internal/up/**"}`},
		{ToolGlob, `{"pattern":"**/*.txt"}`},
		{ToolListDir, `{"path":"."}`},
		{ToolListDir, `{"path":"internal"}`},
	} {
		o := callRaw(t.Context(), s, c.tool, c.args)
		if !o.OK {
			t.Fatalf("%s %s: %s", c.tool, c.args, o.Result)
		}
		noCanary(t, c.tool+" "+c.args, o.Result)
		for _, bad := range []string{`".env.local"`, `"server.pem"`, `"id_rsa"`, `"private/notes.txt"`, `"name":"private"`, `"cfg.secret"`,
			`".git/`, `"name":".git"`, `canary.txt`, `secret.txt`, `server.key"`, `"pipe"`, `"bin.dat","line"`, `build/out.go`, `"app.log"`, `sub/gen.go`} {
			if strings.Contains(o.Result, bad) {
				t.Errorf("%s %s names %s:\n%s", c.tool, c.args, bad, o.Result)
			}
		}
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"file.txt": "x"})
	bad := DefaultLimits()
	bad.MaxGrepMatches = 0
	cases := []struct {
		name, dir string
		opts      Options
		want      string
	}{
		{"missing dir", filepath.Join(dir, "nope"), Options{Limits: DefaultLimits()}, "nope"},
		{"a file", filepath.Join(dir, "file.txt"), Options{Limits: DefaultLimits()}, "not a directory"},
		{"bad limits", dir, Options{Limits: bad}, "max_grep_matches must be positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(tc.dir, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// Zero limits mean the defaults (a library user's Options{}), not a
// workspace that can read nothing.
func TestOpenZeroLimitsAreTheDefaults(t *testing.T) {
	t.Parallel()
	f, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Limits() != DefaultLimits() {
		t.Errorf("limits %+v, want the defaults %+v", f.Limits(), DefaultLimits())
	}
}

func TestExtraDeny(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.go": "x\n", "vendor/v.go": "v\n"})
	f := open(t, dir, Options{Deny: []string{"vendor/"}})
	s := f.Session(nil)
	if o := call(t, s, ToolReadFile, map[string]any{"path": "vendor/v.go"}); o.Refusal != RefusalDenied {
		t.Errorf("Options.Deny vendor/: %s", o.Result)
	}
	if o := call(t, s, ToolReadFile, map[string]any{"path": "a.go"}); !o.OK {
		t.Errorf("a.go: %s", o.Result)
	}
}

// TestGitFileDenied: in a linked worktree or a submodule .git is a file
// naming the git directory, often by an absolute path outside the root;
// it is git metadata like the .git directory and must not reach a model.
func TestGitFileDenied(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const hostPath = "/home/someone/" + canary + "/.git/worktrees/wt"
	write(t, dir, map[string]string{".git": "gitdir: " + hostPath + "\n", "sub/.git": "gitdir: ../" + canary + "/modules/sub\n", "a.go": "package a\n"})
	f := open(t, dir, Options{})
	s := f.Session(nil)
	for _, p := range []string{".git", "sub/.git"} {
		if o := call(t, s, ToolReadFile, map[string]any{"path": p}); o.Refusal != RefusalDenied {
			t.Errorf("read_file %s: %s, want denied", p, o.Result)
		}
		if ck := f.Verify(citation.Citation{Path: p, StartLine: 1, EndLine: 1, Quote: "gitdir"}); ck.State != Unverifiable {
			t.Errorf("Verify %s: %+v, want unverifiable", p, ck)
		}
	}
	for _, c := range []struct{ tool, args string }{
		{ToolListDir, `{"path":"."}`},
		{ToolListDir, `{"path":"sub"}`},
		{ToolGrep, `{"pattern":"gitdir"}`},
		{ToolGlob, `{"pattern":"**"}`},
	} {
		o := callRaw(t.Context(), s, c.tool, c.args)
		noCanary(t, c.tool+" "+c.args, o.Result)
		if !o.OK || strings.Contains(o.Result, `.git"`) {
			t.Errorf("%s %s shows the .git file: %s", c.tool, c.args, o.Result)
		}
	}
}

// TestDenyIgnoresCase: on a case-insensitive file system (macOS, Windows)
// ".ENV.local" opens .env.local, so the deny list must match names in any
// case. Here the files are made with those names, which works on every
// file system.
func TestDenyIgnoresCase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{".ENV.local": canary, "ID_RSA": canary, "tls/Server.PEM": canary, "Private/notes.txt": canary,
		".swarmignore": "private/\n", "a.go": "package a\n"})
	f := open(t, dir, Options{})
	s := f.Session(nil)
	for _, p := range []string{".ENV.local", "ID_RSA", "tls/Server.PEM", "Private/notes.txt"} {
		if o := call(t, s, ToolReadFile, map[string]any{"path": p}); o.Refusal != RefusalDenied {
			t.Errorf("read_file %s: %s, want denied", p, o.Result)
		}
		if ck := f.Verify(citation.Citation{Path: p, StartLine: 1, EndLine: 1, Quote: canary}); ck.State != Unverifiable {
			t.Errorf("Verify %s: %+v, want unverifiable", p, ck)
		}
	}
	o := callRaw(t.Context(), s, ToolGrep, `{"pattern":"CANARY"}`)
	noCanary(t, "grep", o.Result)
	o = callRaw(t.Context(), s, ToolGlob, `{"pattern":"**"}`)
	if d := cmp.Diff(`{"ok":true,"pattern":"**","paths":[".swarmignore","a.go"],"truncated":false}`, o.Result); d != "" {
		t.Errorf("glob shows denied files in another case (-want +got):\n%s", d)
	}
}
