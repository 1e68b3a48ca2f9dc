package workspace

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/internal/safeio"
)

// Check is the verdict on one citation.
type Check struct {
	citation.Citation
	State  State  `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// normSpace collapses runs of whitespace to one space and trims.
func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// QuoteMatches is the quote rule of verification: the quote, whitespace-
// normalised, is not empty and is part of text (the cited lines),
// whitespace-normalised too.
func QuoteMatches(text, quote string) bool {
	q := normSpace(quote)
	return q != "" && strings.Contains(normSpace(text), q)
}

// Verify checks c against the workspace (see State). Gitignored files may
// be cited; denied ones cannot be checked. The session scope does not apply.
func (f *FS) Verify(c citation.Citation) Check {
	ck := Check{Citation: c}
	set := func(s State, r *refusal) Check {
		ck.State, ck.Reason = s, r.msg
		return ck
	}
	t, r := f.resolve(c.Path)
	if r != nil {
		switch r.kind {
		case RefusalEscape, RefusalNotFound:
			return set(Fabricated, r)
		}
		return set(Unverifiable, r)
	}
	if t.info.IsDir() {
		return set(Fabricated, refuse(RefusalNotRegular, "%s: a directory, not a file", t.rel))
	}
	b, r := f.readText(t)
	if r != nil {
		return set(Unverifiable, r)
	}
	lines := splitLines(b)
	if c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > len(lines) {
		return set(Fabricated, refuse("", "%s: lines %d-%d do not exist (the file has %d lines)", t.rel, c.StartLine, c.EndLine, len(lines)))
	}
	if normSpace(c.Quote) == "" {
		return set(Fabricated, refuse("", "empty quote"))
	}
	// The quote is compared with the text as read_file showed it (invalid
	// UTF-8 as U+FFFD), not with the raw bytes.
	if !QuoteMatches(shown(strings.Join(lines[c.StartLine-1:c.EndLine], "\n")), c.Quote) {
		return set(Fabricated, refuse("", "%s: the quote is not what those lines say", citation.Citation{Path: t.rel, StartLine: c.StartLine, EndLine: c.EndLine}.Ref()))
	}
	ck.State = Verified
	return ck
}

// Fingerprint identifies what the run saw.
type Fingerprint struct {
	Kind      string `json:"kind"`               // "git" or "files"
	GitHead   string `json:"git_head,omitempty"` // commit hash, when the root is a git checkout
	Dirty     *bool  `json:"dirty,omitempty"`    // nil when it cannot be told
	FilesHash string `json:"files_hash"`         // sha256 over (path, content sha256) of every file read so far, sorted
	FilesRead int    `json:"files_read"`
}

// Fingerprint returns the git HEAD (read through the root's .git, which the
// tools cannot read) and dirty state when the root is a git checkout, and
// always the hash over the files read so far (by the tools and Verify).
func (f *FS) Fingerprint() Fingerprint {
	fp := Fingerprint{Kind: "files"}
	f.readMu.Lock()
	paths := make([]string, 0, len(f.read))
	for p := range f.read {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		h.Write([]byte(p))
		h.Write([]byte{0})
		h.Write([]byte(f.read[p]))
		h.Write([]byte{'\n'})
	}
	f.readMu.Unlock()
	fp.FilesHash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	fp.FilesRead = len(paths)
	if head, ok := f.gitHead(); ok {
		fp.Kind, fp.GitHead = "git", head
		fp.Dirty = f.gitDirty()
	}
	return fp
}

// maxGitSmall bounds the small files of a git directory read for the
// fingerprint (.git as a file, HEAD, commondir, a loose ref).
const maxGitSmall = 64 << 10

// gitHead resolves HEAD of the root's .git (a directory, or a file naming
// the git directory as worktrees and submodules have).
func (f *FS) gitHead() (string, bool) {
	gitDir, err := f.root.OpenRoot(".git")
	if err != nil {
		b, err := safeio.ReadFileRoot(f.root, ".git", maxGitSmall)
		if err != nil {
			return "", false
		}
		line := strings.TrimSpace(string(b))
		if !strings.HasPrefix(line, "gitdir:") {
			return "", false
		}
		d := strings.TrimSpace(strings.TrimPrefix(line, "gitdir:"))
		if !filepath.IsAbs(d) {
			d = filepath.Join(f.dir, d)
		}
		if gitDir, err = os.OpenRoot(d); err != nil {
			return "", false
		}
	}
	defer gitDir.Close()
	common := gitDir
	if b, err := safeio.ReadFileRoot(gitDir, "commondir", maxGitSmall); err == nil {
		d := strings.TrimSpace(string(b))
		if !filepath.IsAbs(d) {
			d = filepath.Join(gitDir.Name(), d)
		}
		if c, err := os.OpenRoot(d); err == nil {
			defer c.Close()
			common = c
		}
	}
	b, err := safeio.ReadFileRoot(gitDir, "HEAD", maxGitSmall)
	if err != nil {
		return "", false
	}
	head := strings.TrimSpace(string(b))
	for range 10 {
		ref, ok := strings.CutPrefix(head, "ref:")
		if !ok {
			break
		}
		ref = path.Clean(strings.TrimSpace(ref))
		head = ""
		for _, d := range []*os.Root{gitDir, common} {
			if b, err := safeio.ReadFileRoot(d, ref, maxGitSmall); err == nil {
				head = strings.TrimSpace(string(b))
				break
			}
		}
		if head == "" {
			head = packedRef(common, ref)
		}
	}
	if !isHash(head) {
		return "", false
	}
	return head, true
}

// packedRef finds ref in packed-refs.
func packedRef(d *os.Root, ref string) string {
	fh, _, err := safeio.OpenRoot(d, "packed-refs")
	if err != nil {
		return ""
	}
	defer fh.Close()
	// Read line by line: a large repository's packed-refs may be big.
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		hash, name, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if ok && name == ref && isHash(hash) {
			return hash
		}
	}
	return ""
}

func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// gitDirty asks git for the working tree's state; nil when git is not on
// PATH, fails, or could only tell by running a program the workspace's own
// repository configuration names. git status runs such programs: an
// fsmonitor (switched off here), the clean filters of .gitattributes'
// drivers (when the repository's config defines any, the state is not
// asked for: nil) and submodules' own settings (not recursed into).
func (f *FS) gitDirty() *bool {
	bin, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	git := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, append([]string{"-C", f.dir, "-c", "core.fsmonitor=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
		return cmd
	}
	// Reading config runs nothing. Exit 1: no such key (the answer wanted).
	out, err := git("config", "--local", "--get-regexp", `^filter\.`).Output()
	var ee *exec.ExitError
	if len(bytes.TrimSpace(out)) > 0 || (err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1)) {
		return nil
	}
	out, err = git("status", "--porcelain", "--ignore-submodules=all").Output()
	if err != nil {
		return nil
	}
	dirty := len(bytes.TrimSpace(out)) > 0
	return &dirty
}
