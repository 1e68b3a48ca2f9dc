package nexus

import (
	"errors"
	"fmt"
)

// ErrWrite marks a run that could not write its run directory (a full disk,
// an I/O error): what it recorded is incomplete, whatever its status says.
// The error names the file and the system's reason; the CLI exits with
// code 5 for it.
var ErrWrite = errors.New("the run could not record its results")

// writeFailure is the first write of the run that failed, wrapped in
// ErrWrite (nil: none): the journal's, the run directory's files' and,
// with sync, the logs' (flushed to disk first).
func (r *deps) writeFailure(sync bool) error {
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
