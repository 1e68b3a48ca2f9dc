package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/sandbox/sim"
)

// SandboxRunOptions are the flags of `swarm sandbox run`.
type SandboxRunOptions struct {
	Scenario string
	Seed     int64
	SeedSet  bool
	Epochs   int
	Out      string
	Replays  int
	// MemoryBudgetMB raises (or lowers) the memory a run may be estimated
	// to need (0: sim.DefaultMemoryBudget).
	MemoryBudgetMB int
	// AllowOutOfRange runs a scenario whose levers are outside the
	// paper's ranges (sim.PaperRanges), with a warning each.
	AllowOutOfRange bool
}

// allowOutOfRangeUsage is the help of --allow-out-of-range.
const allowOutOfRangeUsage = "run levers outside the paper's ranges (tax 0–0.5, decay 0.8–1, freeze threshold 0.3–1, audit 0–0.5) with a warning, for experiments"

// checkLeverRanges refuses (exit 2) the levers outside the paper's ranges,
// every one named, or with allow warns about each on app.Err.
func checkLeverRanges(app *App, errs []*sim.RangeError, allow bool) error {
	if len(errs) == 0 {
		return nil
	}
	if allow {
		for _, e := range errs {
			fmt.Fprintf(app.Err, "warning: %v; running it anyway (--allow-out-of-range)\n", e)
		}
		return nil
	}
	all := make([]error, 0, len(errs)+1)
	for _, e := range errs {
		all = append(all, e)
	}
	all = append(all, errors.New("--allow-out-of-range runs it anyway, for experiments"))
	return usageError(errors.Join(all...))
}

// newSandboxRunCmd builds `swarm sandbox run`; runF runs the parsed options
// (nil: runSandboxRun).
func newSandboxRunCmd(app *App, runF func(context.Context, *SandboxRunOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(ctx context.Context, o *SandboxRunOptions) error { return runSandboxRun(ctx, app, *o) }
	}
	var o SandboxRunOptions
	cmd := &cobra.Command{
		Use:   "run SCENARIO.yaml",
		Short: "Simulate a scenario of scripted agents",
		Long: `Simulate a scenario: a per-epoch table on the terminal, and epochs.csv,
agents.csv, events.jsonl, summary.json and plots (toxicity and welfare over
epochs, p distribution per agent type; PNG and SVG) in the output directory.
Exit 1 when a success criterion fails, 2 for a bad scenario (including one
estimated to need more memory than --memory-budget-mb, or with a lever
outside the paper's range unless --allow-out-of-range), 130 when
interrupted (what was simulated so far is written).`,
		Example: `  swarm sandbox run examples/scenarios/baseline.yaml
  swarm sandbox run examples/scenarios/adversarial_redteam.yaml --seed 3 --epochs 50 --out /tmp/redteam
  swarm sandbox run big.yaml --memory-budget-mb 8192`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Scenario = args[0]
			o.SeedSet = cmd.Flags().Changed("seed")
			return runF(cmd.Context(), &o)
		},
	}
	cmd.Flags().Int64Var(&o.Seed, "seed", 0, "seed (default: the scenario's)")
	cmd.Flags().IntVar(&o.Epochs, "epochs", 0, "epochs (default: the scenario's)")
	cmd.Flags().StringVar(&o.Out, "out", "", "output directory (default runs/sandbox-<scenario>-<seed>)")
	cmd.Flags().IntVar(&o.Replays, "replays", 0, "also run seeds seed+1..seed+N−1 and report mean and spread (replays.csv)")
	cmd.Flags().IntVar(&o.MemoryBudgetMB, "memory-budget-mb", 0, "refuse a scenario estimated to need more memory than this (default 2048)")
	cmd.Flags().BoolVar(&o.AllowOutOfRange, "allow-out-of-range", false, allowOutOfRangeUsage)
	return cmd
}

func runSandboxRun(ctx context.Context, app *App, o SandboxRunOptions) error {
	s, err := sim.LoadScenario(o.Scenario)
	if err != nil {
		return usageError(err)
	}
	if err := checkLeverRanges(app, sim.OutOfRange(o.Scenario, s), o.AllowOutOfRange); err != nil {
		return err
	}
	if o.Epochs < 0 || o.Epochs > sim.MaxEpochs {
		return usageError(fmt.Errorf("--epochs %d: want 1..%d (0: the scenario's)", o.Epochs, sim.MaxEpochs))
	}
	if o.Replays < 0 || o.Replays > sim.MaxReplays {
		return usageError(fmt.Errorf("--replays %d: want 0..%d", o.Replays, sim.MaxReplays))
	}
	if o.MemoryBudgetMB < 0 {
		return usageError(fmt.Errorf("--memory-budget-mb %d: must not be negative", o.MemoryBudgetMB))
	}
	opts := sim.Options{Epochs: o.Epochs, MemoryBudget: int64(o.MemoryBudgetMB) << 20}
	// Refuse before the output directory exists.
	if err := sim.CheckMemory(s, o.Epochs, opts.MemoryBudget); err != nil {
		return usageError(fmt.Errorf("%s: %w (--memory-budget-mb)", o.Scenario, err))
	}
	// A big run's per-interaction log can fill a disk (1 000 000 agents,
	// 10 × 10: about 24 GB): say so before starting.
	if n, b := sim.EstimateEventBytes(s, o.Epochs); b >= 1<<30 {
		fmt.Fprintf(app.Err, "warning: events.jsonl may grow to about %.1f GB (up to %d interactions); set `outputs: {events: false}` in the scenario to skip it\n", float64(b)/(1<<30), n)
	}
	seed := s.Simulation.Seed
	if o.SeedSet {
		seed = o.Seed
		opts.Seed = &seed
	}
	out := o.Out
	if out == "" {
		out = filepath.Join("runs", fmt.Sprintf("sandbox-%s-%d", s.ScenarioID, seed))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// events.jsonl is written as the run goes.
	events, err := sim.CreateEventLog(out)
	if err != nil {
		return err
	}
	// The header names the payoff the run uses: `swarm sandbox metrics`
	// recomputes the run's figures from this file.
	epochs := s.Simulation.Epochs
	if o.Epochs > 0 {
		epochs = o.Epochs
	}
	events.Header(s.ScenarioID, seed, epochs, s.Payoff)
	events.Hook(&opts, s.Outputs.Events == nil || *s.Outputs.Events)
	opts.OnEpoch = sim.EpochTable(app.Out, textsafe.Printable(s.ScenarioID), seed)
	res, err := sim.Run(ctx, s, opts)
	// A run whose outputs could not all be written says so (exit 5) rather
	// than print a summary of files that are not there.
	werr := events.Close()
	if res != nil {
		plots := s.Outputs.Plots == nil || *s.Outputs.Plots
		werr = errors.Join(werr, sim.WriteOutputs(out, res, plots))
	}
	if werr != nil {
		return &exitError{code: exitWrite, err: fmt.Errorf("sandbox run: the outputs in %s are incomplete: %w", out, werr)}
	}
	if sandboxInterrupted(err) {
		if res != nil {
			fmt.Fprintf(app.Err, "interrupted: the epochs simulated so far are in %s\n", textsafe.Printable(out))
		} else {
			fmt.Fprintln(app.Err, "interrupted before the first epoch")
		}
		return exitCode(130)
	}
	if err != nil {
		return err
	}
	// The summary names the scenario's agents, criteria and --out: not ours.
	var summary strings.Builder
	sim.WriteSummary(&summary, res, out)
	fmt.Fprint(app.Out, textsafe.PrintableLines(summary.String()))
	if o.Replays > 1 {
		if err := writeReplays(ctx, app, s, opts, seed, o.Replays, out); err != nil {
			return err
		}
	}
	if !res.Passed {
		return exitCode(1)
	}
	return nil
}

// sandboxInterrupted reports whether err is a cancellation (Ctrl-C, SIGTERM).
func sandboxInterrupted(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func writeReplays(ctx context.Context, app *App, s sim.Scenario, opts sim.Options, seed int64, n int, out string) error {
	opts.Seed = &seed
	rs, err := sim.Replays(ctx, s, n, opts)
	if err != nil {
		return err
	}
	st, err := sim.WriteReplays(out, rs)
	if err != nil {
		return &exitError{code: exitWrite, err: fmt.Errorf("sandbox run: %w", err)}
	}
	fmt.Fprintf(app.Out, "  %d replays: toxicity %.3f ± %.3f · welfare %.1f ± %.1f (replays.csv)\n", n, st.Toxicity, st.ToxicitySD, st.Welfare, st.WelfareSD)
	return nil
}

// SandboxSweepOptions are the flags of `swarm sandbox sweep`.
type SandboxSweepOptions struct {
	File string // the sweep YAML
	Out  string // "": runs/sweep-<name>
	// AllowOutOfRange runs points whose levers are outside the paper's
	// ranges, with a warning each.
	AllowOutOfRange bool
}

// newSandboxSweepCmd builds `swarm sandbox sweep`; runF runs the parsed
// options (nil: runSandboxSweep).
func newSandboxSweepCmd(app *App, runF func(context.Context, *SandboxSweepOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(ctx context.Context, o *SandboxSweepOptions) error { return runSandboxSweep(ctx, app, *o) }
	}
	var o SandboxSweepOptions
	cmd := &cobra.Command{
		Use:   "sweep SWEEP.yaml",
		Short: "Run a parameter sweep over a scenario",
		Long: `Run a scenario over the cartesian product of parameter values (dotted keys)
and several seeds. Writes sweep.csv and, per swept parameter, a CSV and a plot
of toxicity and welfare against its values (mean over seeds and other values).`,
		Example: "  swarm sandbox sweep examples/scenarios/sweep-tax.yaml --out /tmp/sweep",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			return runF(cmd.Context(), &o)
		},
	}
	cmd.Flags().StringVar(&o.Out, "out", "", "output directory (default runs/sweep-<name>)")
	cmd.Flags().BoolVar(&o.AllowOutOfRange, "allow-out-of-range", false, allowOutOfRangeUsage)
	return cmd
}

func runSandboxSweep(ctx context.Context, app *App, o SandboxSweepOptions) error {
	path, out := o.File, o.Out
	sw, base, err := sim.LoadSweep(path)
	if err != nil {
		return usageError(err)
	}
	ranges, err := sim.SweepOutOfRange(path, sw, base)
	if err != nil {
		return usageError(err)
	}
	if err := checkLeverRanges(app, ranges, o.AllowOutOfRange); err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join("runs", "sweep-"+strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	tty := isTerminal(app.Err)
	rows, err := sim.RunSweep(ctx, sw, base, path, func(done, total int) {
		if tty {
			const w = 30
			f := done * w / total
			fmt.Fprintf(app.Err, "\r[%s%s] %d/%d", strings.Repeat("█", f), strings.Repeat("·", w-f), done, total)
			if done == total {
				fmt.Fprintln(app.Err)
			}
		} else {
			fmt.Fprintf(app.Err, "sweep: %d/%d runs\n", done, total)
		}
	})
	if sandboxInterrupted(err) {
		fmt.Fprintf(app.Err, "interrupted after %d runs\n", len(rows))
		return exitCode(130)
	}
	if err != nil {
		return usageError(err)
	}
	if err := sim.WriteSweepOutputs(out, sw, rows); err != nil {
		return &exitError{code: exitWrite, err: fmt.Errorf("sandbox sweep: the outputs in %s are incomplete: %w", out, err)}
	}
	fmt.Fprintf(app.Out, "%d runs · results in %s\n", len(rows), textsafe.Printable(out))
	return nil
}
