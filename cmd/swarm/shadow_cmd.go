package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
)

func newShadowCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "shadow", Short: "Shadow Score: validator, envelope check, reports",
		Example: "  swarm shadow score --sealed examples/shadow/sealed.json\n  swarm shadow verify runs/<run-id>"}
	cmd.AddCommand(newShadowScoreCmd(app, nil), newShadowVerifyCmd(app, nil), newShadowReportCmd(app, nil))
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
	// AllowEmpty scores a sealed file without tests as 0.0 (perfect), as the
	// reference validators do. Without it an empty suite is an error.
	AllowEmpty bool
}

// newShadowScoreCmd builds `swarm shadow score`; runF runs the parsed
// options (nil: runShadowScore).
func newShadowScoreCmd(app *App, runF func(context.Context, *ShadowScoreOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(_ context.Context, o *ShadowScoreOptions) error { return runShadowScore(app, *o) }
	}
	var o ShadowScoreOptions
	var threshold float64
	cmd := &cobra.Command{
		Use:   "score --sealed FILE [--open FILE] [--threshold X] [--format json|summary] [--allow-empty]",
		Short: "Score sealed test results (Shadow Score Spec validator)",
		Long: `Score test results the way the Shadow Score Spec's reference validators do.
Input: {"tests": [{"name", "status": "passed|failed", "category", "expected",
"actual", "message"}]}; any status other than "failed" counts as passed.
Missing names and categories are reported as "unknown", missing texts as "".
With --open the output also has open_tests and coverage_comparison (tests
per spec category, sealed, open and delta = sealed − open).

Unlike the reference validators, a sealed file with no tests ({} or
{"tests": []}) is refused (exit 2): an empty suite is not a perfect one.
--allow-empty scores it 0.0 (perfect) as the reference validators do.
The summary format replaces control characters in test names and messages
(escape sequences, bidirectional overrides) by visible escapes such as \x1b;
the JSON format keeps them, escaped by the JSON encoding.

Exit 1 when --threshold is given and the score is above it (equal passes),
0 otherwise, 2 on bad usage (a threshold that is not a finite number, an
unknown format), unreadable or empty input.`,
		Example: `  swarm shadow score --sealed examples/shadow/sealed.json
  swarm shadow score --sealed examples/shadow/sealed.json --open examples/shadow/open.json --threshold 15 --format summary
  swarm shadow score --sealed empty.json --allow-empty`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("threshold") {
				o.Threshold = &threshold
			}
			return runF(cmd.Context(), &o)
		},
	}
	cmd.Flags().StringVar(&o.Sealed, "sealed", "", "sealed test results (JSON)")
	cmd.Flags().StringVar(&o.Open, "open", "", "open test results (JSON), for the coverage comparison")
	cmd.Flags().Float64Var(&threshold, "threshold", 0, "exit 1 when the score is above this finite number (equal passes); without it the exit code is 0")
	cmd.Flags().StringVar(&o.Format, "format", "json", "json or summary")
	cmd.Flags().BoolVar(&o.AllowEmpty, "allow-empty", false, "score a sealed file without tests as 0.0 (perfect) instead of refusing it")
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
		return usageError(fmt.Errorf("--format %q: want json or summary", textsafe.Printable(o.Format)))
	}
	if o.Threshold != nil && (math.IsNaN(*o.Threshold) || math.IsInf(*o.Threshold, 0)) {
		return usageError(fmt.Errorf("--threshold %v: want a finite number (a score is compared with it)", *o.Threshold))
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
	out, err := shadow.ScoreSpec(sealed, open, o.AllowEmpty)
	if err != nil {
		return usageError(fmt.Errorf("%s: %w: an empty suite is not a perfect one (pass --allow-empty to score it 0.0 as the reference validators do)", o.Sealed, err))
	}
	if o.Format == "summary" {
		fmt.Fprint(app.Out, out.Summary())
	} else {
		if err := app.printJSON(out); err != nil {
			return err
		}
	}
	if o.Threshold != nil && float64(out.Report.ShadowScore) > *o.Threshold {
		return exitCode(1)
	}
	return nil
}

// ShadowVerifyOptions are the arguments of `swarm shadow verify`.
type ShadowVerifyOptions struct {
	Target string // an envelope file or a run directory
	// TrustUnsigned accepts a journal from before journal MACs
	// (--trust-unsigned-journal): its records are not checked.
	TrustUnsigned bool
}

// newShadowVerifyCmd builds `swarm shadow verify`; runF runs the parsed
// options (nil: runShadowVerify).
func newShadowVerifyCmd(app *App, runF func(context.Context, *ShadowVerifyOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(_ context.Context, o *ShadowVerifyOptions) error { return runShadowVerify(app, *o) }
	}
	var o ShadowVerifyOptions
	cmd := &cobra.Command{
		Use:   "verify ENVELOPE_OR_RUN_DIR",
		Short: "Recompute a sealed envelope's hashes and check them",
		Long: `Recompute the sealed hash (sha256 over the RFC 8785 canonical JSON of the
criteria ordered by id) and compare it with the one the envelope commits.
For a run directory, also check:
  - the sealed hash and task hash the run recorded in events.jsonl before
    any commander started (a forger who rewrites the criteria and the
    envelope's own hashes is caught here);
  - decomposition.json: its canonical hash must equal the envelope's
    task_hash and the committed one;
  - journal.jsonl (the recorded LLM answers, judge verdicts included): every
    record's MAC under your journal key, in chain order. An edited, moved,
    inserted or deleted-before record is named (line and seq). A run written
    by another user fails (their key is not yours); a journal from before
    journal MACs fails unless --trust-unsigned-journal.
Exit 4 on a mismatch or when a file the check needs is missing (shadow
scoring invalid), 2 when the envelope cannot be read.`,
		Example: "  swarm shadow verify runs/20261122-120000-auth-migration-ss-100\n  swarm shadow verify sealed/envelope.json",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Target = args[0]
			return runF(cmd.Context(), &o)
		},
	}
	cmd.Flags().BoolVar(&o.TrustUnsigned, "trust-unsigned-journal", false, "accept a run's journal written before journal MACs (its records are not checked)")
	return cmd
}

func runShadowVerify(app *App, o ShadowVerifyOptions) error {
	target := o.Target
	path, runDir := target, ""
	if fi, err := os.Stat(target); err == nil && fi.IsDir() {
		path, runDir = runfiles.EnvelopePath(target), target
	}
	shown := textsafe.Printable(path)
	env, err := shadow.LoadSealed(path)
	if err != nil {
		return usageError(err)
	}
	tampered := func(err error) error {
		fmt.Fprintf(app.Err, "%s: TAMPERED: %s\n", shown, textsafe.Printable(err.Error()))
		return exitCode(exitTampered)
	}
	if err := env.Verify(); err != nil {
		return tampered(err)
	}
	if runDir != "" {
		if err := runfiles.VerifyCommitment(runDir, env); err != nil {
			return tampered(err)
		}
		jc, err := nexus.VerifyJournal(runDir, o.TrustUnsigned)
		if err != nil {
			fmt.Fprintf(app.Err, "%s: TAMPERED: %s\n", textsafe.Printable(filepath.Join(runDir, runfiles.JournalFile)), textsafe.Printable(err.Error()))
			return exitCode(exitTampered)
		}
		fmt.Fprintf(app.Out, "%s: ok %s (%d criteria), task %s\n", shown, env.SealedHash, env.CriteriaCount, env.TaskHash)
		switch {
		case !jc.Present:
			fmt.Fprintf(app.Out, "%s: no journal.jsonl (not checked)\n", textsafe.Printable(runDir))
		case jc.Unsigned > 0:
			fmt.Fprintf(app.Out, "%s: ok, %d records (%d unsigned, from before journal MACs, trusted unchecked)\n", textsafe.Printable(filepath.Join(runDir, runfiles.JournalFile)), jc.Records, jc.Unsigned)
		default:
			fmt.Fprintf(app.Out, "%s: ok, %d records verified\n", textsafe.Printable(filepath.Join(runDir, runfiles.JournalFile)), jc.Records)
		}
		return nil
	}
	fmt.Fprintf(app.Out, "%s: ok %s (%d criteria)\n", shown, env.SealedHash, env.CriteriaCount)
	return nil
}

// ShadowReportOptions are the flags of `swarm shadow report`.
type ShadowReportOptions struct {
	Dir    string // the run directory
	Format string // json or md
}

// newShadowReportCmd builds `swarm shadow report`; runF runs the parsed
// options (nil: runShadowReport).
func newShadowReportCmd(app *App, runF func(context.Context, *ShadowReportOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(_ context.Context, o *ShadowReportOptions) error { return runShadowReport(app, *o) }
	}
	var o ShadowReportOptions
	cmd := &cobra.Command{
		Use:     "report RUN_DIR",
		Short:   "Print a run's Shadow Reports",
		Example: "  swarm shadow report runs/20261122-120000-auth-migration-ss-100 --format md",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir = args[0]
			return runF(cmd.Context(), &o)
		},
	}
	cmd.Flags().StringVar(&o.Format, "format", "json", "json or md")
	return cmd
}

func runShadowReport(app *App, o ShadowReportOptions) error {
	dir, format := o.Dir, o.Format
	if format != "json" && format != "md" {
		return usageError(fmt.Errorf("--format %q: want json or md", format))
	}
	all, err := runfiles.ReadReports(dir)
	if err != nil {
		return usageError(err)
	}
	if format == "md" {
		for _, r := range all {
			fmt.Fprintln(app.Out, shadow.RenderMarkdown(r))
		}
		return nil
	}
	return app.printJSON(all)
}
