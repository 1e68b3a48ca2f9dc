package nexus

import (
	"context"
	"syscall"
	"time"
)

// BenchResult is what `swarm bench pipeline` reports.
type BenchResult struct {
	Scale            string        `json:"scale"`
	Latency          time.Duration `json:"latency_ns"`
	Wall             time.Duration `json:"wall_ns"`
	Calls            int           `json:"llm_calls"`
	CriticalPath     int           `json:"critical_path_calls"`
	Ratio            float64       `json:"wall_over_critical_path"`
	CPUPerCall       time.Duration `json:"orchestrator_cpu_per_call_ns"`
	Agents           int           `json:"agents"`
	HardeningCycles  int           `json:"hardening_cycles"`
	QuarantineReview bool          `json:"quarantine_review"`
}

// Bench runs a mission and measures the orchestrator: wall time, LLM calls,
// the critical path (the longest chain of dependent calls the run actually
// made) and wall / (critical path × latency). CPU is the process's user+system
// time during the run divided by the calls (the mock only sleeps, so this is
// the orchestrator's own cost).
func Bench(ctx context.Context, o Options, latency time.Duration) (BenchResult, error) {
	cpu0 := cpuTime()
	start := time.Now()
	res, err := Run(ctx, o)
	wall := time.Since(start)
	cpu := cpuTime() - cpu0
	if err != nil {
		return BenchResult{}, err
	}
	b := BenchResult{Scale: res.Plan.Scale, Latency: latency, Wall: wall, Calls: res.Telemetry.Calls, Agents: res.Telemetry.Agents.Total}
	for _, bo := range res.Bundles {
		if bo.Hardening != nil {
			b.HardeningCycles = max(b.HardeningCycles, bo.Hardening.Cycles)
		}
		if bo.Gate != nil && bo.Gate.Action == "quarantine" {
			b.QuarantineReview = true
		}
	}
	h := HardeningConfig{Enabled: b.HardeningCycles > 0, MaxCycles: b.HardeningCycles}
	b.CriticalPath = CriticalPathCalls(res.Plan, h)
	if b.QuarantineReview {
		b.CriticalPath++
	}
	if latency > 0 && b.CriticalPath > 0 {
		b.Ratio = float64(wall) / float64(time.Duration(b.CriticalPath)*latency)
	}
	if b.Calls > 0 {
		b.CPUPerCall = cpu / time.Duration(b.Calls)
	}
	return b, nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
