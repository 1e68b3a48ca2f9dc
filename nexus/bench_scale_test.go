package nexus_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/nexus"
)

// BenchmarkPipelineScale runs a full mock mission per iteration at each
// scale the targets name, on the mission `swarm bench pipeline` runs (ss-250, and the custom ss-5000 of
// docs/config.md: 5 commanders × 100 squad leads × 10 workers), with no
// latency, and reports the orchestrator's CPU per call (without the
// mock's own) and the mock's: the figures `swarm bench pipeline` prints,
// here with a profile (-cpuprofile, -memprofile) to go with them.
func BenchmarkPipelineScale(b *testing.B) {
	mission := nexus.BenchMission // the mission `swarm bench pipeline` runs
	dir := b.TempDir()
	path := filepath.Join(dir, "big.yml")
	if err := os.WriteFile(path, []byte(`scales:
  ss-5000:
    description: "5 000 workers"
    min_commanders: 5
    commanders: 5
    squad_leads_per_commander: 100
    workers_per_commander: 0
    workers_per_squad_lead: 10
    reviewers: 10
    max_depth: 3
    sealed_criteria: 10
    cost_ceiling_usd: 1000
    concurrency: 100000
    timeouts: {mission: 90m, commander: 30m, squad_lead: 10m, worker: 3m, call: 2m}
    waves: {enabled: true, canary: 1, probe_calls: 3, max_error_rate: 0.67, initial: 0, min: 1, max: 0}
providers:
  mock:
    max_concurrency: 0
`), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, scale := range []string{"ss-250", "ss-5000"} {
		b.Run(scale, func(b *testing.B) { benchMissions(b, cfg, mission, scale) })
	}
}
