package rundir

import (
	"fmt"
	"os"
)

// Log appends whole lines to a log of a run directory (events.jsonl,
// transcripts.jsonl, journal.jsonl, a sandbox run's events.jsonl), one
// write(2) per line. The first write that fails (a full disk) is kept, what
// it wrote of its line is cut off again, and nothing more is written: the
// log ends with its last whole line, and its owner, told by Err, fails
// rather than claim a record it does not have. Not safe for concurrent
// use: its owner serialises the calls.
type Log struct {
	f    *File
	size int64 // bytes of whole lines in the file
	err  error // the first failure (write, sync, close)
}

// NewLog appends to f (opened with OpenLog or OpenLogRW), after what it
// holds.
func NewLog(f *File) (*Log, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	return &Log{f: f, size: fi.Size()}, nil
}

// OpenLines opens the log at path (OpenLog) for whole lines.
func OpenLines(path string, perm os.FileMode) (*Log, error) {
	f, err := OpenLog(path, perm)
	if err != nil {
		return nil, err
	}
	l, err := NewLog(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// WriteLine appends line, which ends with a newline; false when it was not
// written (now, or after an earlier failure: Err says why).
func (l *Log) WriteLine(line []byte) bool {
	if l.err != nil || l.f == nil {
		return false
	}
	n, err := l.f.Write(line)
	if err != nil {
		l.err = err
		if n > 0 {
			// Cut the partial line off again (truncating frees space, so
			// it works on a full disk): a reader would take it for a torn
			// record.
			_ = l.f.Truncate(l.size)
		}
		return false
	}
	l.size += int64(n)
	return true
}

// Err is the first failure (nil: none).
func (l *Log) Err() error { return l.err }

// Sync flushes the log to disk and returns its first failure.
func (l *Log) Sync() error {
	if l.f == nil {
		return l.err
	}
	if err := l.f.Sync(); err != nil && l.err == nil {
		l.err = fmt.Errorf("sync %s: %w", l.f.Name(), err)
	}
	return l.err
}

// Close syncs and closes the log and returns its first failure; closing
// again returns it again.
func (l *Log) Close() error {
	if l.f == nil {
		return l.err
	}
	l.Sync()
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	l.f = nil
	return l.err
}
