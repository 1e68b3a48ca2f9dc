package rundir

import (
	"os"
	"sync"
	"syscall"
)

// state is what every copy of a Dir shares: the first write that failed.
type state struct {
	mu  sync.Mutex
	err error
}

// fail keeps err when it is the first failure.
func (d Dir) fail(err error) {
	if d.st == nil {
		return
	}
	d.st.mu.Lock()
	if d.st.err == nil {
		d.st.err = err
	}
	d.st.mu.Unlock()
}

// Err is the first write through d (WriteFile, WriteJSON) that failed, nil
// when every one succeeded. It names the file and the reason.
func (d Dir) Err() error {
	if d.st == nil {
		return nil
	}
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	return d.st.err
}

// File is an open file of a run directory (a log, a temporary file about
// to replace another). Its writes go through the test seam of
// FailWritesAfter; everything else is the *os.File's.
type File struct{ *os.File }

func newFile(f *os.File) *File { return &File{f} }

// Write writes p; a short write returns the number of bytes written and
// the error that stopped it (the disk is full: ENOSPC).
func (f *File) Write(p []byte) (int, error) {
	allowed, limited := quota.take(len(p))
	if !limited {
		return f.File.Write(p)
	}
	n, err := f.File.Write(p[:allowed])
	if err == nil && n < len(p) {
		err = &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return n, err
}

// WriteString writes s (through Write, so the seam sees it).
func (f *File) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

// quota is the test seam of FailWritesAfter: how many more bytes every run
// directory of the process may take before its writes fail with ENOSPC.
var quota writeQuota

type writeQuota struct {
	mu   sync.Mutex
	on   bool
	left int64
}

// take returns how many of n bytes may be written, and whether a limit is
// set at all.
func (q *writeQuota) take(n int) (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.on {
		return n, false
	}
	k := min(int64(n), q.left)
	q.left -= k
	return int(k), true
}

// FailWritesAfter is fault injection for tests of a full disk: after n more
// bytes, every write to a run-directory file (logs, the journal, the files
// WriteFile replaces) fails with ENOSPC ("no space left on device"), the
// write that crosses the limit after writing what fits, as a full disk
// does. undo lifts the limit. It is process-wide: tests that use it must
// not run in parallel with other tests that write run directories.
func FailWritesAfter(n int64) (undo func()) {
	quota.mu.Lock()
	quota.on, quota.left = true, n
	quota.mu.Unlock()
	return func() {
		quota.mu.Lock()
		quota.on, quota.left = false, 0
		quota.mu.Unlock()
	}
}
