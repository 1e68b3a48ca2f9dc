//go:build linux

package nexus

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the calling OS thread's CPU time so far (the caller keeps
// its goroutine locked to the thread between readings).
//
// It reads CLOCK_THREAD_CPUTIME_ID, which includes the time the thread
// has run since the scheduler last accounted for it; getrusage's
// RUSAGE_THREAD does not, so a thread that ran a call and then slept
// (a measuring goroutine waiting for its next call) had most of the call's
// CPU accounted only after the second reading, and a provider's CPU came
// out at a fraction of what it was.
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
