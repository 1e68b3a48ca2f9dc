//go:build !linux

package nexus

import "time"

// threadCPU is not measured on this platform: the orchestrator's own CPU is
// then reported as absent rather than include the provider's.
func threadCPU() (time.Duration, bool) { return 0, false }
