package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

// BenchOptions are the flags of `swarm bench pipeline`.
type BenchOptions struct {
	Scale   string
	Latency time.Duration
	Mission string
	JSON    bool
}

// newBenchCmd builds `swarm bench`; runF runs the parsed options of
// `swarm bench pipeline` (nil: runBench).
func newBenchCmd(app *App, runF func(context.Context, *BenchOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(ctx context.Context, o *BenchOptions) error { return runBench(ctx, app, *o) }
	}
	cmd := &cobra.Command{Use: "bench", Short: "Measure the orchestrator",
		Example: "  swarm bench pipeline --scale ss-250 --latency 200ms"}
	var o BenchOptions
	p := &cobra.Command{
		Use:   "pipeline",
		Short: "Run a mock mission with fixed call latency and report orchestration figures",
		Long: `Run a mission on the mock provider where every LLM call takes --latency, and
report wall time, LLM calls, the critical path (the longest chain of dependent
calls, including those the last wave of commanders waited for), the ratio
wall / (critical path × latency) (1.0 is ideal: everything off the critical
path ran in parallel), the run's concurrency, the commanders' waves (how many,
and how long the canary's probe held the rest) and the orchestrator's CPU per
call.

The mock runs in-process. Its own CPU (generating answers) is measured on the
OS thread of each call and subtracted from the process's CPU, so the
orchestrator's figure leaves the mock out (background garbage collection
stays in it: an upper bound). Where a thread's CPU clock is not available
(Linux has one) the orchestrator's figure is not printed. The latency is a
wait after each mock answer and costs no CPU.`,
		Example: "  swarm bench pipeline --scale ss-250 --latency 200ms\n  swarm bench pipeline --scale ss-50 --latency 50ms --json",
		Args:    usageArgs(cobra.NoArgs),
		RunE:    func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), &o) },
	}
	p.Flags().StringVar(&o.Scale, "scale", "ss-100", "scale")
	p.Flags().DurationVar(&o.Latency, "latency", 200*time.Millisecond, "latency of every mock call")
	p.Flags().StringVar(&o.Mission, "mission", "", "mission file (default: a built-in runbook mission)")
	p.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.AddCommand(p)
	return cmd
}

func runBench(ctx context.Context, app *App, o BenchOptions) error {
	cfg, err := app.LoadConfig()
	if err != nil {
		return usageError(err)
	}
	mission := nexus.BenchMission
	if o.Mission != "" {
		b, err := os.ReadFile(o.Mission)
		if err != nil {
			return usageError(err)
		}
		mission = string(b)
	}
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{}) // Bench adds the latency, outside the mock's measured CPU
	dir, err := os.MkdirTemp("", "swarm-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(app.Err, "benchmarking %s with %s per call...\n", o.Scale, o.Latency)
	r, err := nexus.Bench(ctx, nexus.Options{Config: cfg, Registry: reg, Mission: mission, Scale: o.Scale, Provider: providers.Ref{Kind: "mock", Model: mock.Honest}, OutDir: filepath.Join(dir, "run")}, o.Latency)
	if err != nil {
		return toExit(err)
	}
	if o.JSON {
		return json.NewEncoder(app.Out).Encode(r)
	}
	fmt.Fprintf(app.Out, "scale              %s (%d agents)\n", r.Scale, r.Agents)
	fmt.Fprintf(app.Out, "latency per call   %s\n", r.Latency)
	fmt.Fprintf(app.Out, "concurrency        %d (from the %s)\n", r.Concurrency, r.ConcurrencyRule)
	fmt.Fprintf(app.Out, "wall time          %s\n", r.Wall.Round(time.Millisecond))
	fmt.Fprintf(app.Out, "LLM calls          %d\n", r.Calls)
	if r.Waves > 0 {
		fmt.Fprintf(app.Out, "waves              %d (canary wait %s; the last wave waited for %d calls)\n", r.Waves, r.CanaryWait.Round(time.Millisecond), r.WaveChainCalls)
	} else {
		fmt.Fprintf(app.Out, "waves              off (every commander launched at once)\n")
	}
	fmt.Fprintf(app.Out, "critical path      %d calls (%s)\n", r.CriticalPath, time.Duration(r.CriticalPath)*r.Latency)
	if r.Ratio > 0 {
		fmt.Fprintf(app.Out, "wall / (path × latency)  %.2f\n", r.Ratio)
	}
	cpu := func(label string, d *time.Duration, what string) {
		if d == nil {
			fmt.Fprintf(app.Out, "%-18s not measured on this platform\n", label)
			return
		}
		fmt.Fprintf(app.Out, "%-18s %s per call (%s)\n", label, d.Round(time.Microsecond), what)
	}
	cpu("orchestrator CPU", r.CPUPerCall, "without the mock")
	cpu("mock CPU", r.ProviderCPUPerCall, "the mock's own answer generation")
	cpu("process CPU", r.ProcessCPUPerCall, "both")
	return nil
}
