// Package rundir writes a run's directory: it creates it (refusing a
// directory that is not new or empty unless forced), opens its logs without
// following symbolic links and replaces its other files atomically. It is
// nexus's machinery, not an API: users read a run directory's files.
package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/internal/safeio"
)

// Dir is a run's directory:
//
//	run.json (what the run was started with), journal.jsonl (every LLM
//	answer, for resume), run.lock (Acquire), mission.md, config.effective.yml, events.jsonl,
//	transcripts.jsonl, capsules/, bundles/, reviews/, sealed/ (0700;
//	envelope 0600), reports/, report.md, telemetry.json, sandbox.json,
//	result.json (and replays/, and attempts/N/ after a resume)
//
// Files are never written through a symbolic link inside it: logs are
// opened with O_NOFOLLOW and other files are replaced by rename.
//
// A Dir made by Create, Reopen or Open remembers the first write that
// failed (Err) for every copy of it: a run writes many files, ignores
// none, and says at its end that it could not record everything.
type Dir struct {
	Path string
	st   *state
	// secrets are the run's secret values, scrubbed from every file
	// (WithSecrets; nil: credential shapes only).
	secrets *redact.Secrets
}

// WithSecrets returns d scrubbing the run's secret set (and every
// credential shape) from every file it writes.
func (d Dir) WithSecrets(s *redact.Secrets) Dir {
	d.secrets = s
	return d
}

// Open is the existing run directory at path, for writing (Err works).
func Open(path string) Dir { return Dir{Path: path, st: &state{}} }

// entries are the names a run writes at the top of its directory.
var entries = []string{"run.json", "journal.jsonl", "attempts", "mission.md", "config.effective.yml", "events.jsonl", "transcripts.jsonl", "decomposition.json",
	"capsules", "bundles", "reviews", "sealed", "reports", "replays", "sandbox.json", "report.md", "telemetry.json", "result.json"}

// Check says whether a run may write to path: it must not exist, or be an
// empty directory, or (with force) any directory. It writes nothing. Its
// errors name path as --out (the flag a user gave it with).
func Check(path string, force bool) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--out %s: %v", path, err)
	case !fi.IsDir():
		return fmt.Errorf("--out %s exists and is not a directory: give a new or empty directory", path)
	case force:
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--out %s: %v", path, err)
	}
	defer f.Close()
	if _, err := f.Readdirnames(1); !errors.Is(err, io.EOF) {
		if err != nil {
			return fmt.Errorf("--out %s: %v", path, err)
		}
		return fmt.Errorf("--out %s is not empty: choose a new directory, or pass --force to replace the run files in it", path)
	}
	return nil
}

// Create creates the run directory at path, which Check accepted. With
// force, the entries an earlier run left are removed first (a symbolic link
// is removed, never followed); other files stay.
func Create(path string, force bool) (Dir, error) {
	if force {
		for _, name := range entries {
			if err := os.RemoveAll(filepath.Join(path, name)); err != nil {
				return Dir{}, fmt.Errorf("--out %s --force: %w", path, err)
			}
		}
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return Dir{}, fmt.Errorf("create run directory: %w", err)
	}
	for _, sub := range []string{"capsules", "bundles", "reviews", "reports", "sealed"} {
		perm := os.FileMode(0o755)
		if sub == "sealed" {
			perm = 0o700
		}
		// Mkdir, not MkdirAll: an existing entry (say, a symbolic link to
		// a directory elsewhere) is an error, never written through.
		if err := os.Mkdir(filepath.Join(path, sub), perm); err != nil {
			return Dir{}, fmt.Errorf("create run directory: %w", err)
		}
	}
	return Open(path), nil
}

// maxClaims bounds the suffixes Claim tries.
const maxClaims = 10000

// Claim creates a new, empty directory for a run under parent, named id,
// or id-2, id-3, ... when that name is taken (two runs of one mission
// started in the same second make the same id). Creation is exclusive
// (mkdir fails on an existing entry), so two runs, in one process or not,
// never share a directory. It returns the directory's path and the name it
// got, which is the run's id.
func Claim(parent, id string) (path, name string, err error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", "", fmt.Errorf("create run directory: %w", err)
	}
	for i := 1; i <= maxClaims; i++ {
		name = id
		if i > 1 {
			name = id + "-" + strconv.Itoa(i)
		}
		path = filepath.Join(parent, name)
		err := os.Mkdir(path, 0o755)
		if err == nil {
			return path, name, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", "", fmt.Errorf("create run directory: %w", err)
		}
	}
	return "", "", fmt.Errorf("create run directory: %s and %d others like it exist under %s", id, maxClaims-1, parent)
}

// OpenLog opens a run directory's log for appending, creating it with perm;
// it refuses a symbolic link or anything but a regular file. On Unix
// O_NOFOLLOW refuses a link as the file is opened; elsewhere a link found
// before opening is refused, and the opened file must be the one at path.
func OpenLog(path string, perm os.FileMode) (*File, error) {
	return openLog(path, os.O_WRONLY, perm)
}

// OpenLogRW is OpenLog for reading too: the journal is read back (and a
// torn last line cut off) through the same descriptor it is appended to.
func OpenLogRW(path string, perm os.FileMode) (*File, error) {
	return openLog(path, os.O_RDWR, perm)
}

func openLog(path string, mode int, perm os.FileMode) (*File, error) {
	notRegular := fmt.Errorf("open %s: not a regular file", path)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, notRegular
	}
	f, err := os.OpenFile(path, os.O_CREATE|mode|os.O_APPEND|oNoFollow, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	li, lerr := os.Lstat(path)
	if err != nil || lerr != nil || !fi.Mode().IsRegular() || !os.SameFile(fi, li) {
		f.Close()
		return nil, notRegular
	}
	return newFile(f), nil
}

// Derived are the entries a resumed run writes again from scratch: every
// entry but run.json, journal.jsonl, attempts/, sealed/ (the stored
// envelope is checked against the one the resumed run seals) and the logs
// (events.jsonl and transcripts.jsonl, moved under attempts/N/ by
// KeepAttempt).
func Derived() []string {
	var out []string
	for _, e := range entries {
		switch e {
		case "run.json", "journal.jsonl", "attempts", "sealed", "events.jsonl", "transcripts.jsonl":
			continue
		}
		out = append(out, e)
	}
	return out
}

// Reopen prepares the existing run directory at path for a resumed run:
// the previous attempt's events.jsonl and transcripts.jsonl move to
// attempts/N/ (N = attempt, from 1), the derived entries (Derived) are
// removed (a symbolic link is removed, never followed) and the
// subdirectories a run writes are created again. run.json, journal.jsonl,
// sealed/ and any file that is not a run entry stay.
func Reopen(path string, attempt int) (Dir, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return Dir{}, fmt.Errorf("resume %s: %w", path, err)
	}
	if !fi.IsDir() {
		return Dir{}, fmt.Errorf("resume %s: not a directory", path)
	}
	d := Open(path)
	keep := filepath.Join("attempts", strconv.Itoa(attempt))
	root, err := os.OpenRoot(path)
	if err != nil {
		return Dir{}, fmt.Errorf("resume %s: %w", path, err)
	}
	defer root.Close()
	for _, sub := range []string{"attempts", keep} {
		if err := mkdirNoFollow(root, sub); err != nil {
			return Dir{}, fmt.Errorf("resume %s: %w", path, err)
		}
	}
	for _, name := range []string{"events.jsonl", "transcripts.jsonl"} {
		if err := root.Rename(name, filepath.Join(keep, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return Dir{}, fmt.Errorf("resume %s: keep %s: %w", path, name, err)
		}
	}
	for _, name := range Derived() {
		if err := os.RemoveAll(d.Join(name)); err != nil {
			return Dir{}, fmt.Errorf("resume %s: %w", path, err)
		}
	}
	for _, sub := range []string{"capsules", "bundles", "reviews", "reports"} {
		if err := os.Mkdir(d.Join(sub), 0o755); err != nil {
			return Dir{}, fmt.Errorf("resume %s: %w", path, err)
		}
	}
	if err := os.Mkdir(d.Join("sealed"), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return Dir{}, fmt.Errorf("resume %s: %w", path, err)
	}
	if fi, err := os.Lstat(d.Join("sealed")); err != nil || !fi.IsDir() {
		return Dir{}, fmt.Errorf("resume %s: sealed is not a directory", path)
	}
	return d, nil
}

// ErrNotDir is wrapped by Reopen's refusal of an entry it writes into that
// is not a directory of the run's own (a symbolic link, a file).
var ErrNotDir = errors.New("not a directory of the run's own")

// mkdirNoFollow creates the directory name inside root, or accepts an
// existing one only when it is a real directory: a symbolic link there (say
// attempts -> /elsewhere, from a directory someone handed over) is refused,
// never followed. root (os.Root) also refuses any path that would leave the
// run directory, should the entry be swapped after the check.
func mkdirNoFollow(root *os.Root, name string) error {
	if err := root.Mkdir(name, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	fi, err := root.Lstat(name)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		what := "not a directory"
		if fi.Mode()&os.ModeSymlink != 0 {
			what = "a symbolic link"
		}
		return fmt.Errorf("%w: %s is %s; remove it (the previous attempts' logs go there) and resume again", ErrNotDir, name, what)
	}
	return nil
}

// Join returns a path inside the run directory.
func (d Dir) Join(elem ...string) string {
	return filepath.Join(append([]string{d.Path}, elem...)...)
}

// EnvelopePath is where the sealed envelope lives.
func (d Dir) EnvelopePath() string { return d.Join("sealed", "envelope.json") }

// WriteFile writes atomically (temp file, fsync, rename, fsync of the
// directory) so readers never see a half-written file and a file said to
// be written is on disk. Its error names the file (not the temporary one)
// and the system's reason ("write runs/x/result.json: no space left on
// device"); the first failure is also kept for Err. The temporary file is
// removed on failure, so a failed write leaves the previous file whole.
//
// Every file but the sealed envelope's passes through the module's
// redaction pass (internal/redact) on its way to disk, the last line of
// defence after the field-by-field redaction of what it holds; an envelope
// is redacted before it is hashed (shadow.NewEnvelope) and never rewritten
// after, or its hash would no longer hold.
func (d Dir) WriteFile(name string, data []byte, perm os.FileMode) error {
	if !sealed(name) {
		data = d.secrets.Bytes(data)
	}
	path := d.Join(name)
	if err := writeFile(path, data, perm); err != nil {
		d.fail(err)
		return err
	}
	return nil
}

func writeFile(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return &os.PathError{Op: "write", Path: path, Err: reason(err)}
	}
	f := newFile(tmp)
	// undo removes the temporary file after a failed step (closing it again
	// is harmless): the step's error is the one to report.
	undo := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp.Name())
		return &os.PathError{Op: "write", Path: path, Err: reason(err)}
	}
	if _, err := f.Write(data); err != nil {
		return undo(err)
	}
	if err := f.Sync(); err != nil {
		return undo(err)
	}
	if err := f.Chmod(perm); err != nil {
		return undo(err)
	}
	if err := f.Close(); err != nil {
		return undo(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return undo(err)
	}
	return syncDir(filepath.Dir(path))
}

// reason is the system's reason inside err (ENOSPC, EIO, ...), without the
// temporary file's name the error was built with.
func reason(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// sealed says whether name is under sealed/.
func sealed(name string) bool {
	first, _, _ := strings.Cut(filepath.ToSlash(filepath.Clean(name)), "/")
	return first == "sealed"
}

// WriteJSON writes v as indented JSON.
func (d Dir) WriteJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return d.WriteFile(name, append(b, '\n'), 0o644)
}

// MaxFileBytes bounds every file read back from a run directory but the
// logs (journal.jsonl, events.jsonl), which are read line by line:
// result.json, run.json, bundles, reports, decomposition.json,
// evidence.json, mission.md, run-summary.json. A run writes far less; a
// directory handed to you may hold anything.
const MaxFileBytes = 64 << 20

// ReadFile reads a file of a run directory: a regular file (never a FIFO,
// a device or a symbolic link), at most MaxFileBytes (a *safeio.SizeError
// naming the limit).
func ReadFile(path string) ([]byte, error) {
	return safeio.ReadFileNoFollow(path, MaxFileBytes)
}
