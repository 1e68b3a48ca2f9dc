package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/shadow"
)

func init() { register(newShadowCmd) }

func newShadowCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "shadow", Short: "Shadow Score: validator, envelope check, reports",
		Example: "  swarm shadow score --sealed examples/shadow/sealed.json\n  swarm shadow verify runs/<run-id>"}
	cmd.AddCommand(newShadowScoreCmd(app), newShadowVerifyCmd(app), newShadowReportCmd(app))
	return cmd
}

// ShadowScoreOptions are the flags of `swarm shadow score`.
type ShadowScoreOptions struct {
	Sealed string
	Open   string
	// Threshold is nil when --threshold is not given: like the reference
	// validators, the command then exits 0 whatever the score.
	Threshold *float64
	Format    string
}

func newShadowScoreCmd(app *App) *cobra.Command {
	var o ShadowScoreOptions
	var threshold float64
	cmd := &cobra.Command{
		Use:   "score --sealed FILE [--open FILE] [--threshold X] [--format json|summary]",
		Short: "Score sealed test results (Shadow Score Spec validator)",
		Long: `Score test results the way the Shadow Score Spec's reference validators do.
Input: {"tests": [{"name", "status": "passed|failed", "category", "expected",
"actual", "message"}]}; any status other than "failed" counts as passed.
Missing "tests" is an empty list; missing names and categories are
reported as "unknown", missing texts as "". With --open the output also
has open_tests and coverage_comparison (tests per spec category, sealed,
open and delta = sealed − open).
Exit 1 when --threshold is given and the score is above it (equal passes),
0 otherwise, 2 on bad usage or unreadable input.`,
		Example: `  swarm shadow score --sealed examples/shadow/sealed.json
  swarm shadow score --sealed examples/shadow/sealed.json --open examples/shadow/open.json --threshold 15 --format summary`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("threshold") {
				o.Threshold = &threshold
			}
			return runShadowScore(app, o)
		},
	}
	cmd.Flags().StringVar(&o.Sealed, "sealed", "", "sealed test results (JSON)")
	cmd.Flags().StringVar(&o.Open, "open", "", "open test results (JSON), for the coverage comparison")
	cmd.Flags().Float64Var(&threshold, "threshold", 0, "exit 1 when the score is above this (equal passes); without it the exit code is 0")
	cmd.Flags().StringVar(&o.Format, "format", "json", "json or summary")
	return cmd
}

func readSpec(path string) (shadow.SpecResults, error) {
	f, err := os.Open(path)
	if err != nil {
		return shadow.SpecResults{}, err
	}
	defer f.Close()
	s, err := shadow.ParseSpecResults(f)
	if err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func runShadowScore(app *App, o ShadowScoreOptions) error {
	if o.Sealed == "" {
		return usageError(errors.New("--sealed FILE is required"))
	}
	if o.Format != "json" && o.Format != "summary" {
		return usageError(fmt.Errorf("--format %q: want json or summary", o.Format))
	}
	sealed, err := readSpec(o.Sealed)
	if err != nil {
		return usageError(err)
	}
	var open *shadow.SpecResults
	if o.Open != "" {
		s, err := readSpec(o.Open)
		if err != nil {
			return usageError(err)
		}
		open = &s
	}
	out := shadow.ScoreSpec(sealed, open)
	if o.Format == "summary" {
		fmt.Fprint(app.Out, out.Summary())
	} else {
		enc := json.NewEncoder(app.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	}
	if o.Threshold != nil && out.Report.ShadowScore > *o.Threshold {
		return exitCode(1)
	}
	return nil
}

func newShadowVerifyCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "verify ENVELOPE_OR_RUN_DIR",
		Short: "Recompute a sealed envelope's hash and check it",
		Long: `Recompute the sealed hash (sha256 over the RFC 8785 canonical JSON of the
criteria ordered by id) and compare it with the committed one; for a run
directory, also with the hash the run recorded in events.jsonl before any
commander started. Exit 1 on a mismatch, 2 when the file cannot be read.`,
		Example: "  swarm shadow verify runs/20261122-120000-auth-migration-ss-100\n  swarm shadow verify sealed/envelope.json",
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return runShadowVerify(app, args[0]) },
	}
}

func runShadowVerify(app *App, target string) error {
	path, runDir := target, ""
	if fi, err := os.Stat(target); err == nil && fi.IsDir() {
		path, runDir = filepath.Join(target, "sealed", "envelope.json"), target
	}
	env, err := shadow.LoadSealed(path)
	if err != nil {
		return usageError(err)
	}
	if err := env.Verify(); err != nil {
		fmt.Fprintf(app.Err, "%s: TAMPERED: %v\n", path, err)
		return exitCode(1)
	}
	// In a run directory the envelope must also still be the one whose hash
	// the run committed in its events before any commander started (editing
	// the criteria and the envelope's own sealed_hash together is tampering).
	if runDir != "" {
		committed, ok, err := nexus.CommittedHash(runDir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return usageError(err)
		}
		if ok && committed != env.SealedHash {
			fmt.Fprintf(app.Err, "%s: TAMPERED: %v: envelope commits %s, the run's events committed %s\n", path, shadow.ErrTampered, env.SealedHash, committed)
			return exitCode(1)
		}
	}
	fmt.Fprintf(app.Out, "%s: ok %s (%d criteria)\n", path, env.SealedHash, env.CriteriaCount)
	return nil
}

func newShadowReportCmd(app *App) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:     "report RUN_DIR",
		Short:   "Print a run's Shadow Reports",
		Example: "  swarm shadow report runs/20261122-120000-auth-migration-ss-100 --format md",
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return runShadowReport(app, args[0], format) },
	}
	cmd.Flags().StringVar(&format, "format", "json", "json or md")
	return cmd
}

func runShadowReport(app *App, dir, format string) error {
	if format != "json" && format != "md" {
		return usageError(fmt.Errorf("--format %q: want json or md", format))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "reports", "*.json"))
	if len(files) == 0 {
		return usageError(fmt.Errorf("%s: no reports (is it a run directory?)", dir))
	}
	sort.Strings(files)
	var all []shadow.Report
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return usageError(err)
		}
		var r shadow.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return usageError(fmt.Errorf("%s: %w", f, err))
		}
		all = append(all, r)
	}
	if format == "md" {
		for _, r := range all {
			fmt.Fprintln(app.Out, shadow.RenderMarkdown(r))
		}
		return nil
	}
	enc := json.NewEncoder(app.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(all)
}
