package nexus

import (
	"errors"
	"fmt"

	"github.com/swarm-dev/swarm/internal/rundir"
)

// ErrWrite marks a run that could not write its run directory (a full disk,
// an I/O error): what it recorded is incomplete, whatever its status says.
// The error names the file and the system's reason; the CLI exits with
// code 5 for it.
var ErrWrite = errors.New("the run could not record its results")

// writeFailure is the first write of the run that failed, wrapped in
// ErrWrite (nil: none): the journal's, the run directory's files' and,
// with sync, the logs' (flushed to disk first).
func (r *runState) writeFailure(sync bool) error {
	errs := []error{r.rec.journal.failed(), r.dir.Err()}
	if sync {
		errs = append(errs, r.rec.events.sync(), r.rec.transcripts.sync())
	} else {
		errs = append(errs, r.rec.events.err())
	}
	if err := firstErr(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	return nil
}

// lineLog appends whole lines to a run-directory log (events.jsonl,
// transcripts.jsonl, journal.jsonl), one write(2) per line. The first
// write that fails (a full disk) is kept, what it wrote of its line is cut
// off again, and nothing more is written: the log ends with its last whole
// line and the run, told by err, fails at its end rather than claim a
// record it does not have.
type lineLog struct {
	f    *rundir.File
	size int64 // bytes of whole lines in the file
	err  error // the first failure (write, sync, close)
}

func newLineLog(f *rundir.File) (*lineLog, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	return &lineLog{f: f, size: fi.Size()}, nil
}

// write appends line (which ends with a newline); false when it was not
// written (now or after an earlier failure).
func (l *lineLog) write(line []byte) bool {
	if l.err != nil || l.f == nil {
		return false
	}
	n, err := l.f.Write(line)
	if err != nil {
		l.err = err
		if n > 0 {
			// Cut the partial line off (a truncate frees space, so it
			// works on a full disk); a reader would take it for a torn
			// record.
			_ = l.f.Truncate(l.size)
		}
		return false
	}
	l.size += int64(n)
	return true
}

// sync flushes the log to disk.
func (l *lineLog) sync() error {
	if l.f == nil {
		return l.err
	}
	if err := l.f.Sync(); err != nil && l.err == nil {
		l.err = fmt.Errorf("sync %s: %w", l.f.Name(), err)
	}
	return l.err
}

// close syncs and closes the log and returns its first failure.
func (l *lineLog) close() error {
	if l.f == nil {
		return l.err
	}
	l.sync()
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	l.f = nil
	return l.err
}
