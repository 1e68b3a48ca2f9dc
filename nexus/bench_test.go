package nexus_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers/mock"
)

// BenchmarkPipeline runs a full ss-100 mock mission per iteration and
// reports LLM calls per mission and the orchestrator's CPU per call.
func BenchmarkPipeline(b *testing.B) {
	mission := "# Plan a database failover runbook\n- detection alerts\n- replica promotion\n- status page communication\n"
	cfg, err := nexus.LoadConfig("")
	if err != nil {
		b.Fatal(err)
	}
	var calls int
	var cpu time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r, err := nexus.Bench(b.Context(), nexus.Options{Config: cfg, Registry: mockRegistry(mock.Options{}), Mission: mission, Scale: "ss-100",
			Provider: "mock:honest", OutDir: filepath.Join(b.TempDir(), "run")}, 0)
		if err != nil {
			b.Fatal(err)
		}
		calls += r.Calls
		cpu += r.CPUPerCall * time.Duration(r.Calls)
	}
	b.ReportMetric(float64(calls)/float64(b.N), "calls/mission")
	b.ReportMetric(float64(cpu.Microseconds())/float64(calls), "cpu-µs/call")
}
