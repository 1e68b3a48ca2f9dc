package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/workspace"
)

// VerifyEvidenceOptions are the arguments and flags of `swarm
// verify-evidence`.
type VerifyEvidenceOptions struct {
	RunDir    string
	Workspace string
	Deny      []string // extra deny patterns, as the run's workspace.deny
	// Allow lifts the default deny list, as workspace.allow; never taken
	// from the run directory (someone else's config must not lower it).
	Allow []string
	JSON  bool
}

// newVerifyEvidenceCmd builds `swarm verify-evidence`; runF runs the
// parsed options (nil: runVerifyEvidence with nexus.VerifyEvidence).
func newVerifyEvidenceCmd(app *App, runF func(context.Context, *VerifyEvidenceOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(_ context.Context, o *VerifyEvidenceOptions) error {
			return runVerifyEvidence(app, *o, nexus.VerifyEvidence)
		}
	}
	var o VerifyEvidenceOptions
	cmd := &cobra.Command{
		Use:   "verify-evidence RUN_DIR --workspace DIR [--deny PATTERN]... [--allow PATTERN]... [--json]",
		Short: "Re-check a finished run's citations against a workspace",
		Long: `Check every citation a finished run recorded (each atom's, each final
bundle's and each finding's, read from RUN_DIR/bundles/*.json) against the
workspace DIR again, and compare the states with RUN_DIR/evidence.json.
A citation is verified (the file exists inside the root, the lines exist
and the quote matches them, whitespace-normalised), unverifiable (denied,
binary, too large) or fabricated (no such file, lines out of range, quote
mismatch). Use it to see whether a run's evidence still holds after the
code changed, or to check a run directory someone handed you.

The deny list and the size limits are the run's own: its workspace.deny
and workspace.limits, read from RUN_DIR/config.effective.yml, on top of the
default deny list and the workspace's .swarmignore. --deny adds patterns.
The run's workspace.allow is not taken from RUN_DIR (a run directory
someone handed you must not lower the default deny list): pass --allow for
each pattern you allow yourself.

Exit 0 when no citation changed state, 1 when at least one did (each is
listed), 2 on bad usage or a run directory that cannot be read (the file
is named), including one without evidence.json (a run without a
workspace records no evidence).`,
		Example: `  swarm verify-evidence runs/20261123-120000-security-review-ss-50 --workspace examples/workspaces/tinynotes
  swarm verify-evidence runs/<run-id> --workspace . --deny 'testdata/' --json`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.RunDir = args[0]
			return runF(cmd.Context(), &o)
		},
	}
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "the workspace directory the run read (required)")
	cmd.Flags().StringArrayVar(&o.Deny, "deny", nil, "an extra deny pattern (gitignore syntax), added to the run's workspace.deny; repeatable")
	cmd.Flags().StringArrayVar(&o.Allow, "allow", nil, "a pattern (gitignore syntax) lifting the default deny list, as workspace.allow (not read from RUN_DIR); repeatable")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the report as JSON")
	return cmd
}

// runVerifyEvidence opens the workspace, re-checks the run with check
// (nexus.VerifyEvidence) and prints the report.
func runVerifyEvidence(app *App, o VerifyEvidenceOptions, check func(string, *workspace.FS) (*nexus.EvidenceReport, error)) error {
	if o.Workspace == "" {
		return usageError(errors.New("--workspace DIR is required: the directory the run read"))
	}
	if fi, err := os.Stat(o.RunDir); err != nil {
		return usageError(fmt.Errorf("run directory: %w", err))
	} else if !fi.IsDir() {
		return usageError(fmt.Errorf("%s: not a run directory", textsafe.Printable(o.RunDir)))
	}
	opts, err := runWorkspaceOptions(o.RunDir)
	if err != nil {
		return usageError(err)
	}
	opts.Deny = append(opts.Deny, o.Deny...)
	opts.Allow = o.Allow
	fs, err := workspace.Open(o.Workspace, opts)
	if err != nil {
		return usageError(fmt.Errorf("--workspace: %w", err))
	}
	defer fs.Close()
	for _, w := range fs.Warnings() {
		fmt.Fprintf(app.Err, "warning: %s\n", textsafe.Printable(w))
	}
	rep, err := check(o.RunDir, fs)
	if err != nil {
		return usageError(err)
	}
	if o.JSON {
		if err := app.printJSON(rep); err != nil {
			return err
		}
	} else {
		printEvidenceReport(app, rep)
	}
	if rep.Changed() {
		return exitCode(1)
	}
	return nil
}

func printEvidenceReport(app *App, rep *nexus.EvidenceReport) {
	p := textsafe.Printable
	n, r := rep.Counts, rep.RecordedCounts
	fmt.Fprintf(app.Out, "%s: %d citations re-checked against %s\n", p(rep.RunDir), n.Cited, p(rep.Workspace.Dir))
	fmt.Fprintf(app.Out, "  now:      %d verified, %d unverifiable, %d fabricated\n", n.Verified, n.Unverifiable, n.Fabricated)
	fmt.Fprintf(app.Out, "  recorded: %d verified, %d unverifiable, %d fabricated (of %d)\n", r.Verified, r.Unverifiable, r.Fabricated, r.Cited)
	if !rep.Changed() {
		fmt.Fprintln(app.Out, "no citation changed state")
		return
	}
	fmt.Fprintf(app.Out, "%d citations changed state:\n", len(rep.Changes))
	state := func(s workspace.State, none string) string {
		if s == "" {
			return none
		}
		return string(s)
	}
	for _, c := range rep.Changes {
		line := fmt.Sprintf("  %s: %s %s -> %s", c.Where, c.Citation.Ref(),
			state(c.Was, "(not recorded)"), state(c.Now, "(gone)"))
		if c.Reason != "" {
			line += " (" + c.Reason + ")"
		}
		fmt.Fprintln(app.Out, p(line))
	}
}

// runWorkspaceOptions are the workspace options a run read with: the deny
// patterns and limits of its config.effective.yml (the defaults when the
// run directory has none).
func runWorkspaceOptions(runDir string) (workspace.Options, error) {
	path := filepath.Join(runDir, runfiles.EffectiveConfigFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return workspace.Options{Limits: workspace.DefaultLimits()}, nil
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		return workspace.Options{}, fmt.Errorf("the run's configuration: %w", err)
	}
	return workspace.Options{Limits: cfg.Workspace.Limits, Deny: slices.Clone(cfg.Workspace.Deny)}, nil
}
