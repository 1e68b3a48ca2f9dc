package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/internal/yamlx"
	"github.com/swarm-dev/swarm/sandbox/importer"
)

// SandboxImportOptions are the flags of `swarm sandbox import`.
type SandboxImportOptions struct {
	File  string // the reference scenario
	Out   string // "" or "-": stdout
	Force bool   // overwrite Out
}

// newSandboxImportCmd builds `swarm sandbox import`; runF runs the parsed
// options (nil: runSandboxImport).
func newSandboxImportCmd(app *App, runF func(context.Context, *SandboxImportOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(_ context.Context, o *SandboxImportOptions) error { return runSandboxImport(app, *o) }
	}
	var o SandboxImportOptions
	cmd := &cobra.Command{
		Use:   "import REFERENCE.yaml",
		Short: "Convert a reference scenario file to swarm's scenario format",
		Long: `Convert a scenario file of the reference implementation (flat governance keys
such as transaction_tax_rate and circuit_breaker_enabled, simulation.n_epochs,
network.params) to swarm's format, printed on stdout or written to -o FILE.

Every key that has no equivalent is named on stderr as FILE:LINE:COL: KEY:
REASON and listed in a comment at the top of the output; it is left out, never
guessed. Where the reference's default differs from swarm's (10 epochs, the
lever parameters of an enabled lever) it is written out. The mapping table:
docs/sandbox.md ("Importing a reference scenario").

Exit 0 when the result is a valid scenario (warnings or not); 2 when the file
is not YAML, not a reference scenario (no agents list, or already in swarm's
format), or nothing valid can be made of it (e.g. no agent type swarm has),
or -o names an existing file without --force.`,
		Example: `  swarm sandbox import examples/reference/baseline.yaml
  swarm sandbox import examples/reference/collusion.yaml -o /tmp/collusion.yaml && swarm sandbox run /tmp/collusion.yaml
  swarm sandbox import ../reference/scenarios/network_effects.yaml -o ours.yaml --force 2>unmapped.txt`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			return runF(cmd.Context(), &o)
		},
	}
	cmd.Flags().StringVarP(&o.Out, "output", "o", "", "write the scenario to FILE instead of stdout")
	cmd.Flags().BoolVar(&o.Force, "force", false, "overwrite the -o file if it exists")
	return cmd
}

func runSandboxImport(app *App, o SandboxImportOptions) error {
	var data []byte
	var err error
	if o.File == "-" {
		data, err = yamlx.Read("stdin", app.In, yamlx.DefaultLimits)
	} else {
		data, err = yamlx.ReadFile(o.File, yamlx.DefaultLimits)
	}
	if err != nil {
		return usageError(err)
	}
	if o.Out != "" && o.Out != "-" && !o.Force {
		if _, err := os.Stat(o.Out); err == nil {
			return usageError(fmt.Errorf("%s exists: use --force to overwrite it", o.Out))
		}
	}
	res, err := importer.Convert(o.File, data)
	if res != nil {
		for _, w := range res.Warnings {
			fmt.Fprintln(app.Err, "warning: "+w.String())
		}
	}
	if err != nil {
		return usageError(err)
	}
	if o.Out == "" || o.Out == "-" {
		_, err := app.Out.Write(res.YAML)
		return err
	}
	// Atomically (temp file + rename): a failure leaves any earlier file whole.
	if err := (rundir.Dir{Path: filepath.Dir(o.Out)}).WriteFile(filepath.Base(o.Out), res.YAML, 0o600); err != nil {
		return &exitError{code: exitWrite, err: err}
	}
	fmt.Fprintf(app.Err, "wrote %s (%d keys not mapped)\n", textsafe.Printable(o.Out), len(res.Warnings))
	return nil
}
