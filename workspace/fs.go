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
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/swarm-dev/swarm/internal/safeio"
	"github.com/swarm-dev/swarm/internal/textsafe"
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

// maxIgnoreBytes bounds an ignore file (.swarmignore, a .gitignore): a
// larger one is refused (.swarmignore) or skipped (.gitignore).
const maxIgnoreBytes = 1 << 20

// SwarmignoreFile is the file at a workspace's root whose patterns are
// added to the deny list.
const SwarmignoreFile = ".swarmignore"

// FS is read-only access to one directory. Every file access goes through
// an os.Root, so the standard library refuses paths leaving the directory.
// An FS and its Sessions are safe for concurrent use.
type FS struct {
	dir    string
	root   *os.Root
	limits Limits
	// The deny list has three tiers, each matched on its own so that no
	// tier's negations can lower another: the floor (DefaultDeny, lifted
	// only by Options.Allow), the user's Options.Deny, and the workspace's
	// own .swarmignore.
	floor, user, own gitignore.Matcher
	escErr           error // the error os.Root wraps when a path escapes
	calls            atomic.Int64
	agentMu          sync.Mutex
	agentCalls       map[string]int // tool calls per agent (Session owner)
	ignMu            sync.Mutex
	ignores          map[string][]gitignore.Pattern // directory → patterns of its .gitignore
	warnMu           sync.Mutex
	warnings         []string
	taken            int // warnings TakeWarnings returned
	readMu           sync.Mutex
	read             map[string]string // path → hex sha256 of the content read
	visited          atomic.Int64      // directory entries examined by the tools (tests)
}

// Open opens dir read-only. opts.Limits must be valid (see Limits.Validate)
// or zero (DefaultLimits); a .swarmignore at the root adds its patterns to
// the deny list. A .swarmignore that is not a regular file or is over
// 1 MiB is an error naming it; its negation lines that would re-include
// what DefaultDeny or opts.Deny denies are dropped, each with a warning
// (Warnings).
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
	f := &FS{dir: abs, root: root, limits: opts.Limits, agentCalls: map[string]int{},
		ignores: map[string][]gitignore.Pattern{}, read: map[string]string{}}
	// Learn the error os.Root reports for an escaping path (the standard
	// library does not export it) by asking it about one.
	if _, err := root.Stat(".."); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			f.escErr = pe.Err
		}
	}
	floor := DefaultDeny()
	for _, a := range opts.Allow {
		floor = append(floor, "!"+strings.TrimPrefix(a, "!"))
	}
	f.floor = denyMatcher(floor)
	f.user = denyMatcher(opts.Deny)
	var own []string
	switch b, err := safeio.ReadFileRoot(root, SwarmignoreFile, maxIgnoreBytes); {
	case err == nil:
		for _, l := range parseIgnore(b) {
			if strings.HasPrefix(l.text, "!") && f.tierDenied(strings.TrimPrefix(l.text, "!")) {
				f.warn(fmt.Sprintf("%s:%d: %q ignored: a .swarmignore may only add to the deny list, not re-include what the built-in deny list or workspace.deny denies (to allow it, list it under workspace.allow in your own config)", SwarmignoreFile, l.line, textsafe.Printable(l.text)))
				continue
			}
			own = append(own, l.text)
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		root.Close()
		return nil, fmt.Errorf("%w %s: reading %s: %w (a .swarmignore must be a regular file of at most %d bytes)", ErrOpen, dir, SwarmignoreFile, err, maxIgnoreBytes)
	}
	f.own = denyMatcher(own)
	return f, nil
}

// denyMatcher is the matcher of deny patterns, compared in lower case.
func denyMatcher(patterns []string) gitignore.Matcher {
	ps := make([]gitignore.Pattern, 0, len(patterns))
	for _, p := range patterns {
		ps = append(ps, gitignore.ParsePattern(strings.ToLower(p), nil))
	}
	return gitignore.NewMatcher(ps)
}

// tierDenied reports whether the path a negation pattern names (taken as a
// path: "*.pem" names a file called *.pem, which *.pem denies) is denied
// by the floor or the user's deny list, as a file or as a directory.
func (f *FS) tierDenied(p string) bool {
	return namedDenied(f.floor, p) || namedDenied(f.user, p)
}

// DefaultDenies reports whether DefaultDeny denies the path the pattern p
// names (taken as a path, as a file or a directory, at the root): whether
// an allow pattern p would lift anything, or a negation !p would try to.
func DefaultDenies(p string) bool {
	return namedDenied(denyMatcher(DefaultDeny()), p)
}

// namedDenied reports whether m denies the path pattern p names, or one of
// its parents.
func namedDenied(m gitignore.Matcher, p string) bool {
	p = strings.Trim(strings.TrimSpace(p), "/")
	if p == "" {
		return false
	}
	parts := strings.Split(strings.ToLower(p), "/")
	for i := 1; i <= len(parts); i++ {
		for _, isDir := range []bool{false, true} {
			if m.Match(parts[:i], i < len(parts) || isDir) {
				return true
			}
		}
	}
	return false
}

// warn records a warning once.
func (f *FS) warn(msg string) {
	msg = textsafe.Printable(msg) // it names files of the workspace
	f.warnMu.Lock()
	defer f.warnMu.Unlock()
	if !slices.Contains(f.warnings, msg) {
		f.warnings = append(f.warnings, msg)
	}
}

// Warnings are what was odd about the workspace's own files, each once: a
// .swarmignore line that was dropped (known when Open returns), a
// .gitignore that was skipped (known when a tool first meets it).
func (f *FS) Warnings() []string {
	f.warnMu.Lock()
	defer f.warnMu.Unlock()
	return slices.Clone(f.warnings)
}

// TakeWarnings returns the warnings no earlier TakeWarnings returned.
func (f *FS) TakeWarnings() []string {
	f.warnMu.Lock()
	defer f.warnMu.Unlock()
	w := slices.Clone(f.warnings[f.taken:])
	f.taken = len(f.warnings)
	return w
}

// ignoreLine is one pattern line of an ignore file and its line number.
type ignoreLine struct {
	text string
	line int
}

// parseIgnore returns the pattern lines of a gitignore-syntax file: blank
// lines and comments dropped.
func parseIgnore(b []byte) []ignoreLine {
	var out []ignoreLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxIgnoreBytes+1)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, ignoreLine{line, n})
	}
	return out
}

// safeReason is err without the path (the caller names the file).
func safeReason(err error) string {
	var se *safeio.SizeError
	if errors.As(err, &se) {
		return fmt.Sprintf("%d bytes, over the limit", se.Size)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
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
	for i := 1; i <= len(parts); i++ {
		dir := i < len(parts) || isDir
		if f.floor.Match(parts[:i], dir) || f.user.Match(parts[:i], dir) || f.own.Match(parts[:i], dir) {
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
	name := path.Join(dir, ".gitignore")
	b, err := safeio.ReadFileRoot(f.root, name, maxIgnoreBytes)
	switch {
	case err == nil:
		domain := splitRel(dir)
		for _, l := range parseIgnore(b) {
			ps = append(ps, gitignore.ParsePattern(l.text, domain))
		}
	case !errors.Is(err, fs.ErrNotExist):
		// A FIFO, a device or a huge file must not hang or flood the
		// tools: the file is skipped (what it would hide stays visible).
		f.warn(fmt.Sprintf("%s skipped: %s (a .gitignore must be a regular file of at most %d bytes)", name, textsafe.Printable(safeReason(err)), maxIgnoreBytes))
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
// for the fingerprint. t.info may be nil.
func (f *FS) readText(t target) ([]byte, *refusal) {
	if t.info != nil && !t.info.Mode().IsRegular() {
		return nil, refuse(RefusalNotRegular, "%s: not a regular file", t.rel)
	}
	// Opened without blocking: the file may have been swapped for a FIFO
	// since the Stat (a nil t.info: no Stat was made, grep's walk saw a
	// regular file).
	fh, fi, err := safeio.OpenRoot(f.root, t.real)
	if errors.Is(err, safeio.ErrNotRegular) {
		return nil, refuse(RefusalNotRegular, "%s: not a regular file", t.rel)
	}
	if err != nil {
		return nil, f.classify(t.rel, err)
	}
	defer fh.Close()
	if fi.Size() > f.limits.MaxFileBytes {
		return nil, refuse(RefusalTooLarge, "%s: %d bytes, over max_file_bytes (%d)", t.rel, fi.Size(), f.limits.MaxFileBytes)
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

// shown is text as the tools show it to a model: each byte that is not
// part of valid UTF-8 becomes U+FFFD, one for each byte, as encoding/json
// writes it in the answer. Evidence verification compares quotes with
// this text, so a quote of exactly what read_file returned matches.
func shown(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
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
