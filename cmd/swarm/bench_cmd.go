package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/mock"
)

func init() { register(newBenchCmd) }

// BenchOptions are the flags of `swarm bench pipeline`.
type BenchOptions struct {
	Scale   string
	Latency time.Duration
	Mission string
	JSON    bool
}

func newBenchCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Measure the orchestrator",
		Example: "  swarm bench pipeline --scale ss-250 --latency 200ms"}
	var o BenchOptions
	p := &cobra.Command{
		Use:   "pipeline",
		Short: "Run a mock mission with fixed call latency and report orchestration figures",
		Long: `Run a mission on the mock provider where every LLM call takes --latency, and
report wall time, LLM calls, the critical path (the longest chain of dependent
calls), the ratio wall / (critical path × latency) (1.0 is ideal: everything
off the critical path ran in parallel) and the orchestrator's CPU per call.`,
		Example: "  swarm bench pipeline --scale ss-250 --latency 200ms\n  swarm bench pipeline --scale ss-50 --latency 50ms --json",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return runBench(cmd.Context(), app, o) },
	}
	p.Flags().StringVar(&o.Scale, "scale", "ss-100", "scale")
	p.Flags().DurationVar(&o.Latency, "latency", 200*time.Millisecond, "latency of every mock call")
	p.Flags().StringVar(&o.Mission, "mission", "", "mission file (default: a built-in runbook mission)")
	p.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.AddCommand(p)
	return cmd
}

const benchMission = `# Write the runbook for database failover incidents
- detection alerts and confirming a real primary failure
- the failover decision and escalation path
- promoting the replica and repointing connection poolers
- replication lag and data loss window
- status page communication templates
- rebuilding the old primary
`

func runBench(ctx context.Context, app *App, o BenchOptions) error {
	cfg, err := nexus.LoadConfig(app.ConfigPath)
	if err != nil {
		return usageError(err)
	}
	mission := benchMission
	if o.Mission != "" {
		b, err := os.ReadFile(o.Mission)
		if err != nil {
			return usageError(err)
		}
		mission = string(b)
	}
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{Latency: mock.LatencyConfig{Fixed: o.Latency}})
	dir, err := os.MkdirTemp("", "swarm-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(app.Err, "benchmarking %s with %s per call...\n", o.Scale, o.Latency)
	r, err := nexus.Bench(ctx, nexus.Options{Config: cfg, Registry: reg, Mission: mission, Scale: o.Scale, Provider: "mock:honest", OutDir: filepath.Join(dir, "run")}, o.Latency)
	if err != nil {
		return toExit(err)
	}
	if o.JSON {
		return json.NewEncoder(app.Out).Encode(r)
	}
	fmt.Fprintf(app.Out, "scale              %s (%d agents)\n", r.Scale, r.Agents)
	fmt.Fprintf(app.Out, "latency per call   %s\n", r.Latency)
	fmt.Fprintf(app.Out, "wall time          %s\n", r.Wall.Round(time.Millisecond))
	fmt.Fprintf(app.Out, "LLM calls          %d\n", r.Calls)
	fmt.Fprintf(app.Out, "critical path      %d calls (%s)\n", r.CriticalPath, time.Duration(r.CriticalPath)*r.Latency)
	fmt.Fprintf(app.Out, "wall / (path × latency)  %.2f\n", r.Ratio)
	fmt.Fprintf(app.Out, "orchestrator CPU   %s per call\n", r.CPUPerCall.Round(time.Microsecond))
	return nil
}
