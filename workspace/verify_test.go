package workspace

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/citation"
)

func TestVerify(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	lim := DefaultLimits()
	lim.MaxFileBytes = 400
	write(t, fx.root, map[string]string{"big.txt": strings.Repeat("big line\n", 100)})
	f := open(t, fx.root, Options{Limits: lim})
	cases := []struct {
		name string
		c    citation.Citation
		want State
	}{
		{"exact lines", citation.Citation{Path: "internal/auth/session.go", StartLine: 6, EndLine: 8, Quote: "func Check(a, b string) bool {\n\treturn a == b\n}"}, Verified},
		{"whitespace-normalised", citation.Citation{Path: "internal/auth/session.go", StartLine: 6, EndLine: 7, Quote: "  func Check(a, b string)   bool {  return a == b "}, Verified},
		{"substring of the lines", citation.Citation{Path: "internal/auth/session.go", StartLine: 7, EndLine: 7, Quote: "a == b"}, Verified},
		{"leading ./", citation.Citation{Path: "./internal/auth/session.go", StartLine: 7, EndLine: 7, Quote: "return a == b"}, Verified},
		{"gitignored file can be cited", citation.Citation{Path: "sub/gen.go", StartLine: 1, EndLine: 1, Quote: "password generated"}, Verified},
		{"quote on other lines", citation.Citation{Path: "internal/auth/session.go", StartLine: 1, EndLine: 3, Quote: "return a == b"}, Fabricated},
		{"quote altered", citation.Citation{Path: "internal/auth/session.go", StartLine: 7, EndLine: 7, Quote: "return a != b"}, Fabricated},
		{"empty quote", citation.Citation{Path: "internal/auth/session.go", StartLine: 7, EndLine: 7, Quote: "  \n "}, Fabricated},
		{"end past the file", citation.Citation{Path: "internal/auth/session.go", StartLine: 10, EndLine: 13, Quote: "func safe"}, Fabricated},
		{"start zero", citation.Citation{Path: "internal/auth/session.go", StartLine: 0, EndLine: 1, Quote: "package auth"}, Fabricated},
		{"end before start", citation.Citation{Path: "internal/auth/session.go", StartLine: 7, EndLine: 6, Quote: "return a == b"}, Fabricated},
		{"missing file", citation.Citation{Path: "internal/auth/token.go", StartLine: 1, EndLine: 1, Quote: "package auth"}, Fabricated},
		{"escapes the root", citation.Citation{Path: "../outside/canary.txt", StartLine: 1, EndLine: 1, Quote: canary}, Fabricated},
		{"denied file", citation.Citation{Path: ".env.local", StartLine: 1, EndLine: 1, Quote: "TOKEN=" + canary}, Unverifiable},
		{"denied by .swarmignore", citation.Citation{Path: "private/notes.txt", StartLine: 1, EndLine: 1, Quote: canary}, Unverifiable},
		{"binary", citation.Citation{Path: "bin.dat", StartLine: 1, EndLine: 1, Quote: "abc"}, Unverifiable},
		{"too large", citation.Citation{Path: "big.txt", StartLine: 1, EndLine: 1, Quote: "big line"}, Unverifiable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ck := f.Verify(tc.c)
			if ck.State != tc.want {
				t.Errorf("state %s (%s), want %s", ck.State, ck.Reason, tc.want)
			}
			if d := cmp.Diff(tc.c, ck.Citation); d != "" {
				t.Errorf("the check must carry its citation (-want +got):\n%s", d)
			}
			if (ck.State == Verified) != (ck.Reason == "") {
				t.Errorf("a reason is given exactly when not verified: %q", ck.Reason)
			}
			noCanary(t, "reason", ck.Reason)
		})
	}
}

func TestFingerprintFiles(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.go": "package a\n", "b/b.go": "package b\n", "c.go": "package c\n"}
	d1, d2 := t.TempDir(), t.TempDir()
	write(t, d1, files)
	write(t, d2, files)
	f1, f2 := open(t, d1, Options{}), open(t, d2, Options{})
	empty := f1.Fingerprint()
	if empty.Kind != "files" || empty.GitHead != "" || empty.Dirty != nil || empty.FilesRead != 0 || !strings.HasPrefix(empty.FilesHash, "sha256:") {
		t.Fatalf("plain dir, nothing read: %+v", empty)
	}
	s1, s2 := f1.Session(nil), f2.Session(nil)
	// The same files read in another order give the same hash.
	call(t, s1, ToolReadFile, map[string]any{"path": "a.go"})
	call(t, s1, ToolReadFile, map[string]any{"path": "b/b.go"})
	call(t, s2, ToolReadFile, map[string]any{"path": "b/b.go"})
	f2.Verify(citation.Citation{Path: "a.go", StartLine: 1, EndLine: 1, Quote: "package a"})
	call(t, s2, ToolReadFile, map[string]any{"path": "a.go"}) // twice: counted once
	fp1, fp2 := f1.Fingerprint(), f2.Fingerprint()
	if fp1.FilesRead != 2 || fp1 != fp2 || fp1.FilesHash == empty.FilesHash {
		t.Errorf("fingerprints: %+v vs %+v", fp1, fp2)
	}
	// Different content, different hash.
	write(t, d2, map[string]string{"c.go": "package c // changed\n"})
	call(t, s1, ToolReadFile, map[string]any{"path": "c.go"})
	call(t, s2, ToolReadFile, map[string]any{"path": "c.go"})
	if a, b := f1.Fingerprint(), f2.Fingerprint(); a.FilesHash == b.FilesHash || a.FilesRead != 3 {
		t.Errorf("changed content, same hash: %+v %+v", a, b)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestFingerprintGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.go": "package a\n"})
	git(t, dir, "init", "-q", "-b", "trunk")
	git(t, dir, "add", "a.go")
	git(t, dir, "commit", "-q", "-m", "one")
	head := git(t, dir, "rev-parse", "HEAD")
	f := open(t, dir, Options{})
	clean := false
	fp := f.Fingerprint()
	if d := cmp.Diff(Fingerprint{Kind: "git", GitHead: head, Dirty: &clean, FilesHash: fp.FilesHash}, fp); d != "" {
		t.Errorf("clean checkout (-want +got):\n%s", d)
	}
	if o := call(t, f.Session(nil), ToolReadFile, map[string]any{"path": ".git/HEAD"}); o.Refusal != RefusalDenied {
		t.Errorf("the tools must not read .git even though Fingerprint does: %s", o.Result)
	}
	write(t, dir, map[string]string{"new.go": "package a\n"})
	dirty := true
	if fp := f.Fingerprint(); fp.Dirty == nil || *fp.Dirty != dirty || fp.GitHead != head {
		t.Errorf("after adding a file: %+v", fp)
	}
	// Refs packed away: HEAD still resolves through packed-refs.
	git(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "heads", "trunk")); !os.IsNotExist(err) {
		t.Fatalf("pack-refs left the loose ref: %v", err)
	}
	if fp := f.Fingerprint(); fp.GitHead != head {
		t.Errorf("packed refs: head %q, want %s", fp.GitHead, head)
	}
	// A linked worktree: its .git is a file naming the git directory.
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", "-b", "side", wt)
	if fp := open(t, wt, Options{}).Fingerprint(); fp.Kind != "git" || fp.GitHead != head || fp.Dirty == nil || *fp.Dirty {
		t.Errorf("worktree: %+v, want head %s, clean", fp, head)
	}
	// A detached HEAD holds the hash itself.
	git(t, dir, "checkout", "-q", "--detach")
	if fp := f.Fingerprint(); fp.GitHead != head {
		t.Errorf("detached: head %q, want %s", fp.GitHead, head)
	}
}

// TestFingerprintRunsNoWorkspaceProgram: the dirty check must not run a
// program the workspace's .git/config names (core.fsmonitor).
func TestFingerprintRunsNoWorkspaceProgram(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the hook is a shell script")
	}
	dir, hooks := t.TempDir(), t.TempDir()
	write(t, dir, map[string]string{"a.go": "package a\n"})
	git(t, dir, "init", "-q")
	git(t, dir, "add", "a.go")
	git(t, dir, "commit", "-q", "-m", "one")
	marker := filepath.Join(hooks, "ran")
	hook := filepath.Join(hooks, "fsmonitor.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch '"+marker+"'\necho\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "config", "core.fsmonitor", hook)
	fp := open(t, dir, Options{}).Fingerprint()
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("Fingerprint ran the core.fsmonitor program of the workspace's .git/config")
	}
	if fp.Kind != "git" || fp.Dirty == nil || *fp.Dirty {
		t.Errorf("fingerprint %+v, want a clean git checkout", fp)
	}
}

// A clean filter driver defined in the workspace's own .git/config (with
// .gitattributes using it) would run under git status: the fingerprint
// does not ask, and says it cannot tell (Dirty nil) rather than run it.
func TestFingerprintRunsNoFilterDriver(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the driver is a shell script")
	}
	dir, drivers := t.TempDir(), t.TempDir()
	write(t, dir, map[string]string{"a.go": "package a\n", ".gitattributes": "*.go filter=evil\n"})
	git(t, dir, "init", "-q")
	git(t, dir, "add", "a.go", ".gitattributes")
	git(t, dir, "commit", "-q", "-m", "one")
	marker := filepath.Join(drivers, "ran")
	driver := filepath.Join(drivers, "clean.sh")
	if err := os.WriteFile(driver, []byte("#!/bin/sh\ntouch '"+marker+"'\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "config", "filter.evil.clean", driver)
	// A changed a.go. Whether git status would run the filter depends on
	// its index; the rule is not to ask at all, so Dirty is nil.
	write(t, dir, map[string]string{"a.go": "package a\n\n// changed\n"})
	fp := open(t, dir, Options{}).Fingerprint()
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("Fingerprint ran the clean filter of the workspace's .git/config")
	}
	if fp.Kind != "git" || fp.GitHead == "" || fp.Dirty != nil {
		t.Errorf("fingerprint %+v, want the head and no dirty state (cannot tell without the filter)", fp)
	}
}

func TestFingerprintGitWithoutBinary(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	dir := t.TempDir()
	write(t, dir, map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": strings.Repeat("ab", 20) + "\n", "a.go": "package a\n"})
	t.Setenv("PATH", t.TempDir()) // no git here
	fp := open(t, dir, Options{}).Fingerprint()
	if fp.Kind != "git" || fp.GitHead != strings.Repeat("ab", 20) || fp.Dirty != nil {
		t.Errorf("git checkout without a git binary: %+v (dirty must be nil: it cannot be told)", fp)
	}
}

// TestConcurrentUse runs tools, Verify and Fingerprint from many goroutines
// (run under -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("d%d/f%d.go", i%4, i)] = fmt.Sprintf("package d\n// file %d\n", i)
	}
	write(t, dir, files)
	f := open(t, dir, Options{})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := f.Session([]string{fmt.Sprintf("d%d", i%4)})
			p := fmt.Sprintf("d%d/f%d.go", i%4, i)
			for range 5 {
				if o := call(t, s, ToolReadFile, map[string]any{"path": p}); !o.OK {
					t.Errorf("%s: %s", p, o.Result)
				}
				call(t, s, ToolGrep, map[string]any{"pattern": "file"})
				if ck := f.Verify(citation.Citation{Path: p, StartLine: 2, EndLine: 2, Quote: fmt.Sprintf("// file %d", i)}); ck.State != Verified {
					t.Errorf("%s: %+v", p, ck)
				}
				f.Fingerprint()
			}
		}()
	}
	wg.Wait()
	if fp := f.Fingerprint(); fp.FilesRead != 20 {
		t.Errorf("FilesRead = %d, want 20", fp.FilesRead)
	}
}

func BenchmarkGrep(b *testing.B) {
	dir := b.TempDir()
	for i := range 300 {
		var sb strings.Builder
		for j := range 80 {
			fmt.Fprintf(&sb, "func f%d_%d() error { return nil } // line %d\n", i, j, j)
		}
		if i%10 == 0 {
			sb.WriteString("token == secret\n")
		}
		full := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%30), fmt.Sprintf("f%03d.go", i))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.tmp\n"), 0o644)
	lim := DefaultLimits()
	lim.MaxToolCalls = 1 << 30
	f, err := Open(dir, Options{Limits: lim})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s := f.Session(nil)
	b.ResetTimer()
	for b.Loop() {
		o := callRaw(b.Context(), s, ToolGrep, `{"pattern":"token == secret","path_glob":"**/*.go","context":1}`)
		if !o.OK || !strings.Contains(o.Result, "f290.go") {
			b.Fatal(o.Result)
		}
	}
}

// The quote rule shared by Verify and the mock's honest commander.
func TestQuoteMatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text, quote string
		want              bool
	}{
		{"exact", "return a == b", "return a == b", true},
		{"whitespace runs and line breaks are one space", "if a {\n\treturn  b\n}", "if a { return b }", true},
		{"a part of the lines", "x := 1 // set x", "x := 1", true},
		{"other text", "return a == b", "return a != b", false},
		{"an empty quote never matches", "anything", " \t\n", false},
	} {
		if got := QuoteMatches(tc.text, tc.quote); got != tc.want {
			t.Errorf("%s: QuoteMatches(%q, %q) = %v, want %v", tc.name, tc.text, tc.quote, got, tc.want)
		}
	}
}
