//go:build linux

package nexus

import "time"

// rusageThread is Linux's RUSAGE_THREAD: the calling thread's usage.
const rusageThread = 1

// threadCPU is the calling OS thread's user+system CPU time so far (the
// caller keeps its goroutine locked to the thread between readings).
func threadCPU() (time.Duration, bool) { return rusageCPU(rusageThread) }
