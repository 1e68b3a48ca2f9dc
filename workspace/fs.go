package workspace

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ErrOpen is wrapped by every error Open returns.
var ErrOpen = errors.New("cannot open workspace")

// binarySniff is how many leading bytes are searched for a NUL byte.
const binarySniff = 8 << 10

// maxSymlinkHops bounds the symlinks followed while resolving one path.
const maxSymlinkHops = 40

// Refusal kinds: the "refusal" field of a tool answer and Outcome.Refusal.
const (
	RefusalEscape       = "escape"
	RefusalDenied       = "denied"
	RefusalScope        = "scope"
	RefusalNotFound     = "not_found"
	RefusalNotRegular   = "not_regular"
	RefusalBinary       = "binary"
	RefusalTooLarge     = "too_large"
	RefusalLimit        = "limit"
	RefusalBadArguments = "bad_arguments"
)

// refusalOrder are the kinds a report lists first, in this order: the
// attempts to get out or at what is denied, then the limits.
var refusalOrder = []string{RefusalEscape, RefusalDenied, RefusalScope, RefusalLimit}

// CompareRefusalKinds orders refusal kinds for reports: escape, denied,
// scope, limit, then the others by name.
func CompareRefusalKinds(a, b string) int {
	rank := func(k string) int {
		if i := slices.Index(refusalOrder, k); i >= 0 {
			return i
		}
		return len(refusalOrder)
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
}

// refusal is why a path or a call was refused: a kind and a text for the model.
type refusal struct {
	kind string
	msg  string
}

func (r *refusal) Error() string { return r.kind + ": " + r.msg }

func refuse(kind, format string, args ...any) *refusal {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// FS is read-only access to one directory. Every file access goes through
// an os.Root, so the standard library refuses paths leaving the directory.
// An FS and its Sessions are safe for concurrent use.
type FS struct {
	dir     string
	root    *os.Root
	limits  Limits
	deny    []gitignore.Pattern
	escErr  error // the error os.Root wraps when a path escapes
	calls   atomic.Int64
	ignMu   sync.Mutex
	ignores map[string][]gitignore.Pattern // directory → patterns of its .gitignore
	readMu  sync.Mutex
	read    map[string]string // path → hex sha256 of the content read
}

// Open opens dir read-only. opts.Limits must be valid (see Limits.Validate)
// or zero (DefaultLimits); a .swarmignore at the root adds its patterns to
// the deny list.
func Open(dir string, opts Options) (*FS, error) {
	if opts.Limits == (Limits{}) {
		opts.Limits = DefaultLimits()
	}
	if err := opts.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrOpen, dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrOpen, dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrOpen, dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w %s: not a directory", ErrOpen, dir)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrOpen, dir, err)
	}
	f := &FS{dir: abs, root: root, limits: opts.Limits,
		ignores: map[string][]gitignore.Pattern{}, read: map[string]string{}}
	// Learn the error os.Root reports for an escaping path (the standard
	// library does not export it) by asking it about one.
	if _, err := root.Stat(".."); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			f.escErr = pe.Err
		}
	}
	patterns := append(DefaultDeny(), opts.Deny...)
	switch b, err := root.ReadFile(".swarmignore"); {
	case err == nil:
		patterns = append(patterns, parseIgnoreLines(b)...)
	case !errors.Is(err, fs.ErrNotExist):
		root.Close()
		return nil, fmt.Errorf("%w %s: reading .swarmignore: %w", ErrOpen, dir, err)
	}
	for _, p := range patterns {
		f.deny = append(f.deny, gitignore.ParsePattern(strings.ToLower(p), nil))
	}
	return f, nil
}

// parseIgnoreLines returns the patterns of a gitignore-syntax file: blank
// lines and comments dropped.
func parseIgnoreLines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out
}

// Close releases the root.
func (f *FS) Close() error { return f.root.Close() }

// Dir is the absolute path of the root.
func (f *FS) Dir() string { return f.dir }

// Limits are the limits the FS was opened with.
func (f *FS) Limits() Limits { return f.limits }

// norm turns a path from a model into the form handed to the root: "" and
// "./" mean the root, and it is cleaned. An absolute path or one with ".."
// elements is kept as such: the root decides about it.
func norm(p string) string {
	if p == "" {
		return "."
	}
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) {
		return p
	}
	return path.Clean(p)
}

// classify maps an error of the root to a refusal.
func (f *FS) classify(p string, err error) *refusal {
	var r *refusal
	switch {
	case errors.As(err, &r):
		return r
	case f.escErr != nil && errors.Is(err, f.escErr):
		return refuse(RefusalEscape, "%s: path leaves the workspace root", p)
	case errors.Is(err, fs.ErrNotExist):
		return refuse(RefusalNotFound, "%s: no such file or directory in the workspace", p)
	case errors.Is(err, syscall.EINVAL):
		return refuse(RefusalBadArguments, "path: %q is not a valid path", p)
	case errors.Is(err, fs.ErrPermission):
		return refuse(RefusalDenied, "%s: permission denied by the operating system", p)
	}
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	return refuse(RefusalNotFound, "%s: cannot be read (%s)", p, msg)
}

func splitRel(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// denied reports whether rel (clean, relative) or any of its parent
// directories matches the deny list. Names and patterns are compared in
// lower case: on a case-insensitive file system (macOS, Windows) ".ENV"
// opens .env, and must be denied like it.
func (f *FS) denied(rel string, isDir bool) bool {
	parts := splitRel(strings.ToLower(rel))
	m := gitignore.NewMatcher(f.deny)
	for i := 1; i <= len(parts); i++ {
		if m.Match(parts[:i], i < len(parts) || isDir) {
			return true
		}
	}
	return false
}

// dirIgnores returns the patterns of dir's .gitignore (cached).
func (f *FS) dirIgnores(dir string) []gitignore.Pattern {
	f.ignMu.Lock()
	ps, ok := f.ignores[dir]
	f.ignMu.Unlock()
	if ok {
		return ps
	}
	b, err := f.root.ReadFile(path.Join(dir, ".gitignore"))
	if err == nil {
		domain := splitRel(dir)
		for _, l := range parseIgnoreLines(b) {
			ps = append(ps, gitignore.ParsePattern(l, domain))
		}
	}
	f.ignMu.Lock()
	f.ignores[dir] = ps
	f.ignMu.Unlock()
	return ps
}

// ignoredSelf reports whether rel itself is matched by the .gitignore files
// of the root and of its parent directories (not checking the parents).
func (f *FS) ignoredSelf(rel string, isDir bool) bool {
	parts := splitRel(rel)
	if len(parts) == 0 {
		return false
	}
	var ps []gitignore.Pattern
	dir := "."
	ps = append(ps, f.dirIgnores(dir)...)
	for _, c := range parts[:len(parts)-1] {
		dir = path.Join(dir, c)
		ps = append(ps, f.dirIgnores(dir)...)
	}
	return gitignore.NewMatcher(ps).Match(parts, isDir)
}

// ignored reports whether rel or any of its parent directories is gitignored.
func (f *FS) ignored(rel string, isDir bool) bool {
	parts := splitRel(rel)
	for i := 1; i <= len(parts); i++ {
		if f.ignoredSelf(strings.Join(parts[:i], "/"), i < len(parts) || isDir) {
			return true
		}
	}
	return false
}

// realRel resolves the symlinks of rel (clean, inside the root) through
// the root and returns the path it names, relative to the root.
func (f *FS) realRel(rel string) (string, error) {
	todo := splitRel(rel)
	var done []string
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case ".", "":
			continue
		case "..":
			if len(done) == 0 {
				return "", refuse(RefusalEscape, "%s: path leaves the workspace root", rel)
			}
			done = done[:len(done)-1]
			continue
		}
		cur := strings.Join(append(done, c), "/")
		fi, err := f.root.Lstat(cur)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return "", refuse(RefusalNotFound, "%s: too many symbolic links", rel)
		}
		t, err := f.root.Readlink(cur)
		if err != nil {
			return "", err
		}
		t = filepath.ToSlash(t)
		if path.IsAbs(t) || filepath.IsAbs(t) {
			return "", refuse(RefusalEscape, "%s: path leaves the workspace root", rel)
		}
		todo = append(strings.Split(t, "/"), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return strings.Join(done, "/"), nil
}

// target is a path a tool or a citation names, once the root accepted it.
type target struct {
	rel  string // as asked, cleaned
	real string // symlinks resolved
	info fs.FileInfo
}

// resolve asks the root about p and applies the deny list to the path as
// asked and as resolved. The root's verdict on escaping comes first.
func (f *FS) resolve(p string) (target, *refusal) {
	n := norm(p)
	fi, err := f.root.Stat(n)
	if err != nil {
		r := f.classify(n, err)
		if r.kind == RefusalNotFound && f.denied(n, false) {
			return target{}, refuse(RefusalDenied, "%s: denied (deny list)", n)
		}
		return target{}, r
	}
	real, err := f.realRel(n)
	if err != nil {
		return target{}, f.classify(n, err)
	}
	if f.denied(n, fi.IsDir()) || f.denied(real, fi.IsDir()) {
		return target{}, refuse(RefusalDenied, "%s: denied (deny list)", n)
	}
	return target{rel: n, real: real, info: fi}, nil
}

// readText reads the regular text file t through the root and records it
// for the fingerprint.
func (f *FS) readText(t target) ([]byte, *refusal) {
	if !t.info.Mode().IsRegular() {
		return nil, refuse(RefusalNotRegular, "%s: not a regular file", t.rel)
	}
	if t.info.Size() > f.limits.MaxFileBytes {
		return nil, refuse(RefusalTooLarge, "%s: %d bytes, over max_file_bytes (%d)", t.rel, t.info.Size(), f.limits.MaxFileBytes)
	}
	fh, err := f.root.Open(t.real)
	if err != nil {
		return nil, f.classify(t.rel, err)
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, refuse(RefusalNotRegular, "%s: not a regular file", t.rel)
	}
	b, err := io.ReadAll(io.LimitReader(fh, f.limits.MaxFileBytes+1))
	if err != nil {
		return nil, f.classify(t.rel, err)
	}
	if int64(len(b)) > f.limits.MaxFileBytes {
		return nil, refuse(RefusalTooLarge, "%s: over max_file_bytes (%d)", t.rel, f.limits.MaxFileBytes)
	}
	if bytes.IndexByte(b[:min(len(b), binarySniff)], 0) >= 0 {
		return nil, refuse(RefusalBinary, "%s: binary file", t.rel)
	}
	sum := sha256.Sum256(b)
	f.readMu.Lock()
	if _, ok := f.read[t.real]; !ok {
		f.read[t.real] = hex.EncodeToString(sum[:])
	}
	f.readMu.Unlock()
	return b, nil
}

// splitLines splits text into lines: a final newline ends the last line
// rather than starting an empty one; a carriage return before a newline is
// dropped.
func splitLines(b []byte) []string {
	s := string(b)
	s = strings.TrimSuffix(s, "\n")
	if s == "" && len(b) <= 1 {
		if len(b) == 0 {
			return nil
		}
		return []string{""}
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
