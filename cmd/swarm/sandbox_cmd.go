package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/swarm-dev/swarm/internal/yamlx"
	"github.com/swarm-dev/swarm/sandbox"
)

func newSandboxCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "The distributional safety sandbox",
		Long: `The distributional safety sandbox: soft labels p = σ(k·v̂) from observable
signals, soft payoffs, and distributional metrics (toxicity, quality gap,
welfare, calibration, incoherence), on scripted agents or on JSONL input.`,
		Example: "  swarm sandbox run examples/scenarios/baseline.yaml\n  swarm sandbox metrics examples/sandbox/golden.jsonl",
	}
	cmd.AddCommand(
		newSandboxMetricsCmd(app, nil),
		newSandboxIncoherenceCmd(app, nil),
		newSandboxEconCmd(app, nil),
		newSandboxImportCmd(app, nil),
		newSandboxRunCmd(app, nil),
		newSandboxSweepCmd(app, nil),
	)
	return cmd
}

// SandboxMetricsOptions are the flags of `swarm sandbox metrics`.
type SandboxMetricsOptions struct {
	File           string
	PerInteraction bool
	ConfigFile     string
	Payoff         sandbox.PayoffConfig
	Proxy          sandbox.ProxyConfig
	// Set holds the flags given on the command line; they win over the
	// --config file.
	Set map[string]bool
}

// metricsConfig is the --config file of `swarm sandbox metrics`: keys it
// leaves out keep their defaults.
type metricsConfig struct {
	Payoff *sandbox.PayoffConfig `yaml:"payoff"`
	Proxy  *sandbox.ProxyConfig  `yaml:"proxy"`
}

// newSandboxMetricsCmd builds `swarm sandbox metrics`; runF runs the parsed
// options (nil: runSandboxMetrics).
func newSandboxMetricsCmd(app *App, runF func(context.Context, *SandboxMetricsOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(_ context.Context, o *SandboxMetricsOptions) error { return runSandboxMetrics(app, *o) }
	}
	o := SandboxMetricsOptions{Payoff: sandbox.DefaultPayoffConfig(), Proxy: sandbox.DefaultProxyConfig()}
	cmd := &cobra.Command{
		Use:   "metrics FILE.jsonl",
		Short: "Compute distributional metrics from interactions (JSONL)",
		Long: `Read interactions, one JSON object a line, each with "accepted" and either
"p" or "observables" {task_progress, rework, verifier_rejections, tool_misuse,
engagement}, and optional tau, c_a, c_b, r_a, r_b and ground_truth (+1/-1).
Print one JSON object with every metric. "-" reads stdin. A bad line is
reported as FILE:LINE with exit code 2.

A sandbox run's events.jsonl (swarm sandbox run) is read too: its
interactions carry the levers' costs and the reputation changes, its first
line the run's payoff (used unless --config or flags say otherwise), so the
metrics equal the run's own summary.`,
		Example: `  swarm sandbox metrics examples/sandbox/golden.jsonl
  swarm sandbox metrics - --per-interaction < examples/sandbox/golden.jsonl
  swarm sandbox metrics examples/sandbox/golden.jsonl --s-plus 3 --h 1 --k 4
  swarm sandbox metrics examples/sandbox/golden.jsonl --config examples/sandbox/payoff.yaml
  swarm sandbox metrics runs/sandbox-baseline-42/events.jsonl`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			o.Set = map[string]bool{}
			cmd.Flags().Visit(func(f *pflag.Flag) { o.Set[f.Name] = true })
			return runF(cmd.Context(), &o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.PerInteraction, "per-interaction", false, "also print v̂, p and both payoffs for every line")
	// --config shadows the global --config (swarm's configuration file):
	// here it is the YAML with payoff: and proxy: sections.
	f.StringVar(&o.ConfigFile, "config", "", "YAML with payoff: and proxy: sections (flags given explicitly win)")
	f.StringVar(&o.ConfigFile, "config-file", "", "same as --config")
	_ = f.MarkHidden("config-file")
	f.Float64Var(&o.Payoff.SPlus, "s-plus", o.Payoff.SPlus, "surplus s⁺")
	f.Float64Var(&o.Payoff.SMinus, "s-minus", o.Payoff.SMinus, "loss s⁻")
	f.Float64Var(&o.Payoff.H, "h", o.Payoff.H, "externality h")
	f.Float64Var(&o.Payoff.Theta, "theta", o.Payoff.Theta, "initiator share θ")
	f.Float64Var(&o.Payoff.RhoA, "rho-a", o.Payoff.RhoA, "ρ_a")
	f.Float64Var(&o.Payoff.RhoB, "rho-b", o.Payoff.RhoB, "ρ_b")
	f.Float64Var(&o.Payoff.WRep, "w-rep", o.Payoff.WRep, "reputation weight")
	f.Float64Var(&o.Proxy.K, "k", o.Proxy.K, "sigmoid steepness k")
	f.Float64Var(&o.Proxy.B, "b", o.Proxy.B, "sigmoid offset b")
	return cmd
}

func openInput(app *App, name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(app.In), nil
	}
	return os.Open(name)
}

func runSandboxMetrics(app *App, o SandboxMetricsOptions) error {
	flagPayoff := o.Payoff
	var filePayoff *sandbox.PayoffConfig // the --config file's payoff section
	if o.ConfigFile != "" {
		pay, px := sandbox.DefaultPayoffConfig(), sandbox.DefaultProxyConfig()
		mc := metricsConfig{Payoff: &pay, Proxy: &px}
		if _, err := yamlx.DecodeFile(o.ConfigFile, &mc, yamlx.DefaultLimits); err != nil {
			return usageError(err)
		}
		// An empty file leaves the defaults.
		pay, px = sandbox.DefaultPayoffConfig(), sandbox.DefaultProxyConfig() // for an empty "payoff:" or "proxy:"
		if mc.Payoff != nil {
			pay = *mc.Payoff
		}
		if mc.Proxy != nil {
			px = *mc.Proxy
		}
		// Flags given explicitly win over the file.
		if mc.Payoff != nil {
			filePayoff = &pay
		}
		o.Payoff = mergePayoff(pay, o.Payoff, o.Set)
		if o.Set["k"] {
			px.K = o.Proxy.K
		}
		if o.Set["b"] {
			px.B = o.Proxy.B
		}
		o.Proxy = px
	}
	proxy, err := sandbox.NewProxy(o.Proxy)
	if err != nil {
		return usageError(err)
	}
	in, err := openInput(app, o.File)
	if err != nil {
		return usageError(err)
	}
	defer in.Close()
	// A sandbox run's events.jsonl names the payoff the run used: it takes
	// the defaults' place, so that the run's own figures come out; a
	// --config payoff section and explicit flags still win.
	runPayoff := func(run sandbox.PayoffConfig) sandbox.PayoffConfig {
		if filePayoff != nil {
			run = *filePayoff
		}
		return mergePayoff(run, flagPayoff, o.Set)
	}
	out, err := sandbox.ReadRunMetricsFile(o.File, in, proxy, o.Payoff, runPayoff, o.PerInteraction)
	if err != nil {
		return usageError(err)
	}
	return app.printJSON(out)
}

func mergePayoff(file, flags sandbox.PayoffConfig, set map[string]bool) sandbox.PayoffConfig {
	pick := func(name string, f, fl float64) float64 {
		if set[name] {
			return fl
		}
		return f
	}
	return sandbox.PayoffConfig{
		SPlus: pick("s-plus", file.SPlus, flags.SPlus), SMinus: pick("s-minus", file.SMinus, flags.SMinus), H: pick("h", file.H, flags.H),
		Theta: pick("theta", file.Theta, flags.Theta), RhoA: pick("rho-a", file.RhoA, flags.RhoA), RhoB: pick("rho-b", file.RhoB, flags.RhoB),
		WRep: pick("w-rep", file.WRep, flags.WRep),
	}
}

// SandboxIncoherenceOptions are the flags of `swarm sandbox incoherence`.
type SandboxIncoherenceOptions struct {
	File   string // JSONL of decision records; "-": stdin
	Format string // json or table
}

// newSandboxIncoherenceCmd builds `swarm sandbox incoherence`; runF runs the
// parsed options (nil: runSandboxIncoherence).
func newSandboxIncoherenceCmd(app *App, runF func(context.Context, *SandboxIncoherenceOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(_ context.Context, o *SandboxIncoherenceOptions) error { return runSandboxIncoherence(app, *o) }
	}
	var o SandboxIncoherenceOptions
	cmd := &cobra.Command{
		Use:   "incoherence FILE.jsonl",
		Short: "Incoherence (D, E, I) of decision records (JSONL)",
		Long: `Read decision records, one JSON object a line: task_family, decision_id,
replay, action ("" = abstain), optional benchmark, p and accepted. Print D,
E and I per decision point and overall. "-" reads stdin. A bad line (not
JSON, an unknown field, no decision_id, longer than 16 MiB) is reported as
FILE:LINE with exit code 2.`,
		Example: "  swarm sandbox incoherence examples/sandbox/decisions.jsonl\n  swarm sandbox incoherence examples/sandbox/decisions.jsonl --format table",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			return runF(cmd.Context(), &o)
		},
	}
	cmd.Flags().StringVar(&o.Format, "format", "json", "json or table")
	return cmd
}

func runSandboxIncoherence(app *App, o SandboxIncoherenceOptions) error {
	file, format := o.File, o.Format
	if format != "json" && format != "table" {
		return usageError(fmt.Errorf("--format %q: want json or table", format))
	}
	in, err := openInput(app, file)
	if err != nil {
		return usageError(err)
	}
	defer in.Close()
	var ds []sandbox.Decision
	if err := sandbox.ReadDecisions(file, in, func(_ int, d sandbox.Decision) error {
		ds = append(ds, d)
		return nil
	}); err != nil {
		return usageError(err)
	}
	if len(ds) == 0 {
		return usageError(errors.New(file + ": no decision records"))
	}
	r := sandbox.Incoherence(ds)
	if format == "table" {
		tw := tabwriter.NewWriter(app.Out, 0, 2, 2, ' ', 0)
		fmt.Fprintln(tw, "FAMILY\tDECISION\tN\tMODAL\tD\tE\tI")
		for _, p := range r.Points {
			e := fmt.Sprintf("%.3f", p.E)
			if !p.HasBench {
				e = "n/a"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.3f\t%s\t%.3f\n", p.TaskFamily, p.DecisionID, p.N, p.Modal, p.D, e, p.I)
		}
		fmt.Fprintf(tw, "overall\t\t\t\t%.3f\t%.3f\t%.3f\n", r.MeanD, r.MeanE, r.MeanI)
		return tw.Flush()
	}
	return app.printJSON(r)
}
