//go:build unix

package nexus

import (
	"syscall"
	"time"
)

// processCPU is the process's user+system CPU time so far.
func processCPU() (time.Duration, bool) { return rusageCPU(syscall.RUSAGE_SELF) }

// rusageCPU is the user+system CPU time getrusage reports for who.
func rusageCPU(who int) (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
