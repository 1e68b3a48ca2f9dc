package sim

import (
	"fmt"
	"runtime"
	"testing"
)

// scaleScenario is the scale goal: n agents (60% honest, 20%
// opportunistic, 10% deceptive, 10% adversarial) on topology.
func scaleScenario(b testing.TB, n int, topology string, epochs, steps int) Scenario {
	y := fmt.Sprintf(`scenario_id: scale
agents:
  - {type: honest, count: %d}
  - {type: opportunistic, count: %d}
  - {type: deceptive, count: %d}
  - {type: adversarial, count: %d}
simulation: {epochs: %d, steps_per_epoch: %d, seed: 1}
network: {topology: %s, k: 2, p: 0.1}
`, n*6/10, n*2/10, n/10, n-n*6/10-n*2/10-n/10, epochs, steps, topology)
	s, err := ParseScenario("scale.yaml", []byte(y))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchRun runs a scenario b.N times and reports interactions/s and the
// heap in use after the run (the result still alive) as MB.
func benchRun(b *testing.B, s Scenario) {
	b.ReportAllocs()
	var inter int
	var heap uint64
	for b.Loop() {
		res, err := Run(b.Context(), s, Options{})
		if err != nil {
			b.Fatal(err)
		}
		inter += res.Interactions
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heap = max(heap, ms.HeapInuse)
		runtime.KeepAlive(res)
	}
	b.ReportMetric(float64(inter)/b.Elapsed().Seconds(), "interactions/s")
	b.ReportMetric(float64(heap)/(1<<20), "MB-live")
}

// BenchmarkRunComplete10k: 10 000 agents, complete network, 10 × 10 (the
// goal: under 10 s and 200 MB on 2 cores).
func BenchmarkRunComplete10k(b *testing.B) { benchRun(b, scaleScenario(b, 10_000, "complete", 10, 10)) }

// BenchmarkRunSmallWorld1M: 1 000 000 agents on a small-world network
// (k 2, rewiring 0.1), 10 × 10 (the goal: under 2 minutes and 2 GB).
func BenchmarkRunSmallWorld1M(b *testing.B) {
	benchRun(b, scaleScenario(b, 1_000_000, "small_world", 10, 10))
}

func BenchmarkRunSmallWorld100k(b *testing.B) {
	benchRun(b, scaleScenario(b, 100_000, "small_world", 10, 10))
}

func BenchmarkRunSmallWorld1MOneEpoch(b *testing.B) {
	benchRun(b, scaleScenario(b, 1_000_000, "small_world", 1, 10))
}
