package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockFile is the name of the run directory's lock file: it holds the pid
// of the process that holds the lock.
const LockFile = "run.lock"

// ErrLocked marks a run directory another process holds (a *LockedError).
var ErrLocked = errors.New("run directory in use by another process")

// LockedError says which process holds a run directory's lock.
type LockedError struct {
	Dir string
	PID int // 0 when the holder's pid could not be read
}

func (e *LockedError) Error() string {
	who := "another swarm process"
	if e.PID > 0 {
		who += fmt.Sprintf(" (pid %d)", e.PID)
	}
	return fmt.Sprintf("run directory %s is in use by %s: wait for it to end or stop it, then try again", e.Dir, who)
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// Lock is a held lock on a run directory; Unlock releases it. The
// operating system releases it too when the holder dies (SIGKILL, a crash),
// so a killed run can be resumed at once.
type Lock struct{ f *os.File }

// Acquire takes the exclusive lock of the run directory dir (which must
// exist): flock(2) on dir/run.lock, without waiting, then writes the
// holder's pid in it. A directory another process holds is a *LockedError
// naming that process's pid. Where flock(2) is missing (Windows, Plan 9,
// Solaris, AIX) the pid is written but nothing is locked: see
// docs/resume.md.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, LockFile)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("lock %s: not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("lock %s: not a regular file", path)
	}
	held, err := flock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if held {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
		return nil, &LockedError{Dir: dir, PID: pid}
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		}
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock (nil-safe; the lock file stays).
func (l *Lock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Close()
	l.f = nil
}
