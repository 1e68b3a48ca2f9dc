package nexus_test

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers/mock"
)

// BenchmarkPipeline runs a full ss-100 mock mission per iteration and
// reports LLM calls per mission, the orchestrator's CPU per call (without
// the mock's own) and the mock's.
func BenchmarkPipeline(b *testing.B) {
	mission := "# Plan a database failover runbook\n- detection alerts\n- replica promotion\n- status page communication\n"
	cfg, err := nexus.LoadConfig("")
	if err != nil {
		b.Fatal(err)
	}
	var calls int
	var cpu, mockCPU time.Duration
	measured := true
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r, err := nexus.Bench(b.Context(), nexus.Options{Config: cfg, Registry: mockRegistry(mock.Options{}), Mission: mission, Scale: "ss-100",
			Provider: "mock:honest", OutDir: filepath.Join(b.TempDir(), "run")}, 0)
		if err != nil {
			b.Fatal(err)
		}
		calls += r.Calls
		if r.CPUPerCall == nil {
			measured = false
			continue
		}
		cpu += *r.CPUPerCall * time.Duration(r.Calls)
		mockCPU += *r.ProviderCPUPerCall * time.Duration(r.Calls)
	}
	b.ReportMetric(float64(calls)/float64(b.N), "calls/mission")
	if measured {
		b.ReportMetric(float64(cpu.Microseconds())/float64(calls), "cpu-µs/call")
		b.ReportMetric(float64(mockCPU.Microseconds())/float64(calls), "mock-cpu-µs/call")
	}
}

// BenchmarkRetainedPerCall runs a mock mission per iteration and reports the
// heap the finished run still holds (its Result kept alive, after a GC) per
// LLM call, at two scales: with events streamed to events.jsonl and the
// observers instead of kept, the figure stays flat as the scale grows.
func BenchmarkRetainedPerCall(b *testing.B) {
	mission := "# Plan a database failover runbook\n- detection alerts\n- replica promotion\n- status page communication\n- replication lag\n- rebuilding the old primary\n"
	cfg, err := nexus.LoadConfig("")
	if err != nil {
		b.Fatal(err)
	}
	for _, scale := range []string{"ss-50", "ss-250"} {
		b.Run(scale, func(b *testing.B) {
			// One run first, so the process-wide caches (compiled schemas,
			// templates) are not counted as the measured run's.
			if _, err := nexus.Run(b.Context(), nexus.Options{Config: cfg, Registry: mockRegistry(mock.Options{}), Mission: mission, Scale: scale,
				Provider: "mock:honest", OutDir: filepath.Join(b.TempDir(), "warm")}); err != nil {
				b.Fatal(err)
			}
			var retained, calls float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				res, err := nexus.Run(b.Context(), nexus.Options{Config: cfg, Registry: mockRegistry(mock.Options{}), Mission: mission, Scale: scale,
					Provider: "mock:honest", OutDir: filepath.Join(b.TempDir(), "run")})
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				retained += float64(after.HeapAlloc) - float64(before.HeapAlloc)
				calls += float64(res.Telemetry.Calls)
				runtime.KeepAlive(res)
			}
			b.ReportMetric(retained/calls, "retained-B/call")
			b.ReportMetric(calls/float64(b.N), "calls/mission")
		})
	}
}
