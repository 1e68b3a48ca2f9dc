package nexus

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
)

// A log on a device that is always full (/dev/full: every write fails with
// ENOSPC, as the kernel says it) keeps the error, names the file and the
// reason: main's logs dropped it (bufio's errors were never looked at) and
// the run claimed a record it did not have.
func TestEventLogOnDevFullReportsNoSpace(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("/dev/full is Linux's")
	}
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	log, err := rundir.NewLog(&rundir.File{File: f})
	if err != nil {
		t.Fatal(err)
	}
	l := &eventLog{log: log, now: time.Now}
	l.emit(events.Event{Kind: events.PhaseStart, Message: "first"})
	err = l.close()
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "/dev/full: no space left on device") {
		t.Errorf("close() = %v, want the file and ENOSPC", err)
	}
}

// A journal append that fails stops the run (onFail) and nothing more is
// appended: a resume must not find answers after a missing one. Main went
// on and appended after the torn record.
func TestJournalAppendFailureStopsTheRun(t *testing.T) {
	// Serial: rundir.FailWritesAfter fails every write of the process.
	path := filepath.Join(t.TempDir(), runfiles.JournalFile)
	j, _, err := openJournal(path, testOpen)
	if err != nil {
		t.Fatal(err)
	}
	var told []error
	j.onFail = func(err error) { told = append(told, err) }
	j.append("k1", providers.Caller{Role: "worker", AgentID: "w-1"}, "mock:honest", providers.Response{Text: "first"})
	undo := rundir.FailWritesAfter(10)
	j.append("k2", providers.Caller{Role: "worker", AgentID: "w-2"}, "mock:honest", providers.Response{Text: "second"})
	undo()
	j.append("k3", providers.Caller{Role: "worker", AgentID: "w-3"}, "mock:honest", providers.Response{Text: "third"})
	if len(told) != 1 || !errors.Is(told[0], syscall.ENOSPC) {
		t.Errorf("onFail told %v, want one ENOSPC", told)
	}
	if err := j.close(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("close() = %v, want ENOSPC", err)
	}
	j2, load, err := openJournal(path, testOpen)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.close()
	if load.Records != 1 || load.Torn {
		t.Errorf("journal read back: %+v, want the first record only, nothing torn", load)
	}
}
