package nexus_test

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

// BenchmarkPipeline runs a full ss-100 mock mission per iteration and
// reports LLM calls per mission, the orchestrator's CPU per call (without
// the mock's own) and the mock's.
func BenchmarkPipeline(b *testing.B) {
	mission := "# Plan a database failover runbook\n- detection alerts\n- replica promotion\n- status page communication\n"
	cfg, err := config.Load("", nil)
	if err != nil {
		b.Fatal(err)
	}
	benchMissions(b, cfg, mission, "ss-100")
}

// benchMissions runs a full mock mission at scale per iteration and
// reports LLM calls per mission, the orchestrator's CPU per call (without
// the mock's own) and the mock's, when the thread clock measures them.
func benchMissions(b *testing.B, cfg *config.Config, mission, scale string) {
	b.Helper()
	var calls int
	var cpu, mockCPU time.Duration
	measured := true
	b.ReportAllocs()
	for b.Loop() {
		r, err := nexus.Bench(b.Context(), nexus.Options{Config: cfg, Registry: mockRegistry(mock.Options{}), Mission: mission, Scale: scale,
			Provider: providers.Ref{Kind: "mock", Model: "honest"}, OutDir: filepath.Join(b.TempDir(), "run")}, 0)
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

// BenchmarkRetainedPerCall runs a mock mission at ss-50 and at ss-250 per
// iteration and reports the heap each finished run still holds (its Result
// kept alive, after a GC) per LLM call, and the marginal figure: the extra
// heap per extra call from ss-50 (41 calls) to ss-250 (328). With events
// streamed (events.jsonl, observers) rather than kept, what a run holds is
// its results (bundles, atoms, reviews), not a record of every call.
func BenchmarkRetainedPerCall(b *testing.B) {
	mission := "# Plan a database failover runbook\n- detection alerts\n- replica promotion\n- status page communication\n- replication lag\n- rebuilding the old primary\n"
	cfg, err := config.Load("", nil)
	if err != nil {
		b.Fatal(err)
	}
	run := func(scale, dir string) (*nexus.Result, float64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err := nexus.Run(b.Context(), nexus.Options{Config: cfg, Registry: mockRegistry(mock.Options{}), Mission: mission, Scale: scale,
			Provider: providers.Ref{Kind: "mock", Model: "honest"}, OutDir: filepath.Join(dir, "run")})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		return res, float64(after.HeapAlloc) - float64(before.HeapAlloc)
	}
	// One run of each first, so the process-wide caches (compiled schemas,
	// templates) are not counted as a measured run's.
	run("ss-50", b.TempDir())
	run("ss-250", b.TempDir())
	var small, large, smallCalls, largeCalls float64
	for b.Loop() {
		res, n := run("ss-50", b.TempDir())
		small, smallCalls = small+n, smallCalls+float64(res.Telemetry.Calls)
		runtime.KeepAlive(res)
		res, n = run("ss-250", b.TempDir())
		large, largeCalls = large+n, largeCalls+float64(res.Telemetry.Calls)
		runtime.KeepAlive(res)
	}
	b.ReportMetric(small/smallCalls, "B/call@ss-50")
	b.ReportMetric(large/largeCalls, "B/call@ss-250")
	b.ReportMetric((large-small)/(largeCalls-smallCalls), "marginal-B/call")
}
