package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/nexus/compare"
)

// CompareOptions are the flags of `swarm compare`: they are the
// compare.Request NewPlan merges with the compare file and checks (Changed
// holds the flags given on the command line; they win over the file).
type CompareOptions = compare.Request

// newCompareCmd builds `swarm compare`; runF runs the parsed options (nil:
// runCompare).
func newCompareCmd(app *App, runF func(context.Context, *CompareOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(ctx context.Context, o *CompareOptions) error { return runCompare(ctx, app, *o) }
	}
	var o CompareOptions
	cmd := &cobra.Command{
		Use:   "compare (MISSION.md --models a,b,c | --file COMPARE.yaml)",
		Short: "Compare model providers on Gap Reports under one sealed envelope",
		Long: `Run the same mission for several contender models under ONE sealed envelope
and ONE judge, repeated with different seeds, contenders interleaved; rank them
by Shadow Score with 95% bootstrap intervals, paired per-criterion McNemar tests,
cost, tokens and latency. Writes compare.json, compare.md and a self-contained
compare.html (inline SVG charts) and keeps every contender's run directory.
--resume skips finished runs and reuses cached LLM calls.

With --workspace DIR (or a mission whose front matter names its workspace)
every contender reads the same directory through the read-only tools, and
every citation is checked: the reports gain an evidence section with each
contender's fabrication rate (fabricated / cited over all its repeats, 95%
Wilson interval; "—" when it cited nothing). With --ground-truth FILE (needs
that workspace) they also give each contender's recall and precision of the
planted defects and the correlation (Pearson r) between Shadow Score and
recall across every run: a lower Shadow Score going with higher recall shows
as a negative r.

Every planned bundle of every repeat counts. A bundle that failed (e.g. the
model answered prose instead of JSON) or was not judged counts as Shadow
Score 100, every sealed criterion failed, and the "failed" column says how
many of a contender's planned bundles that was. A contender that judged no
bundle at all has no result: it is ranked last, with no score, no interval
and no tier, and is never shown as indistinguishable from one that did.

Exit codes: 0 every contender judged every planned bundle; 3 the comparison
finished but some bundles failed or were not judged (the table is printed
and the reports written all the same); 2 bad input; 1 a run failed;
130 interrupted (re-run with --resume).`,
		Example: `  swarm compare examples/missions/api-design.md --models mock:honest,mock:sloppy,mock:deceptive --repeats 5
  swarm compare mission.md --models openai:gpt-4.1,anthropic:claude-sonnet-4 --judge google:gemini-2.5-pro --out cmp
  swarm compare --file examples/compare/personas.yaml --resume
  swarm compare mission.md --models mock:honest,mock:deceptive --workspace ./repo --ground-truth ./repo.truth.yaml
  swarm compare examples/missions/security-review-tinynotes.md --models mock:honest,mock:deceptive --ground-truth examples/workspaces/tinynotes.truth.yaml`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Mission = args[0]
			}
			o.Changed = map[string]bool{}
			cmd.Flags().Visit(func(f *pflag.Flag) { o.Changed[f.Name] = true })
			return runF(cmd.Context(), &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.File, "file", "", "compare YAML listing missions, models, repeats and roles")
	f.StringSliceVar(&o.Models, "models", nil, "contenders, comma-separated kind:model")
	f.StringVar(&o.Judge, "judge", "", "judge model (default from config)")
	f.StringVar(&o.SealAuthor, "seal-author", "", "seal author model (default from config)")
	f.IntVar(&o.Repeats, "repeats", compare.DefaultRepeats, "repeats per contender (different seeds)")
	f.StringVar(&o.Scale, "scale", compare.DefaultScale, "scale")
	f.StringVar(&o.Roles, "roles", compare.RolesCommanders, "roles the contenders play: commanders or all")
	f.IntVar(&o.JudgeSamples, "judge-samples", 0, "sample the judge k times per verdict (majority vote; disagreement reported)")
	f.StringVar(&o.Out, "out", "", "output directory (default runs/compare-<mission>)")
	f.StringVar(&o.CacheDir, "cache-dir", "", "content-addressed cache of LLM calls (off by default)")
	f.BoolVar(&o.Resume, "resume", false, "skip finished contender runs and reuse cached calls (cache under OUT/cache)")
	f.Int64Var(&o.Seed, "seed", 42, "base seed; repeat i uses seed+i")
	f.StringVar(&o.Workspace, "workspace", "", "directory every contender reads through read-only tools; citations are checked against it")
	f.BoolVar(&o.AllowHomeWorkspace, "allow-home-workspace", false, "let the workspace be / or a directory that is or contains your home directory (refused without it, exit 2; see swarm run --help)")
	f.StringVar(&o.GroundTruth, "ground-truth", "", "planted-defects YAML (kept outside the workspace): recall, precision and their correlation with Shadow Score; needs a workspace (--workspace or the mission's front matter)")
	f.IntVar(&o.Parallel, "parallel", 0, "contender runs of one repeat at once (default: all; 1 = one after another); provider rate limits are shared")
	return cmd
}

func runCompare(ctx context.Context, app *App, o CompareOptions) error {
	plan, err := compare.NewPlan(o, app.LoadConfig)
	if err != nil {
		return usageError(err)
	}
	if w := config.CeilingWarning(plan.Unpriced()); w != "" {
		fmt.Fprintf(app.Err, "warning: %s\n", textsafe.Printable(w))
	}
	var incomplete []string // missions with failed or unjudged bundles
	for _, m := range plan.Missions {
		start := time.Now()
		ws := ""
		if plan.Workspace != "" {
			ws = ", workspace " + plan.Workspace
		}
		fmt.Fprint(app.Err, textsafe.PrintableLines(fmt.Sprintf("compare %s: %d contenders × %d repeats at %s (roles: %s%s) → %s\n", m.Name, len(plan.Models), plan.Repeats, plan.Scale, plan.Roles, ws, m.Out)))
		opts := plan.Options(m)
		opts.Registry = app.Registry()
		opts.Progress = func(p compare.Progress) { fmt.Fprint(app.Err, textsafe.PrintableLines(progressLine(p))) }
		rep, err := compare.Run(ctx, opts)
		indexRun(ctx, app, m.Out, o.Out == "")
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(app.Err, "interrupted: finished runs are kept in %s; re-run with --resume to complete\n", textsafe.Printable(m.Out))
				return exitCode(130)
			}
			return toExit(err)
		}
		// Mission names, model names and paths are not ours: every line
		// is printed through textsafe.PrintableLines.
		fmt.Fprint(app.Out, textsafe.PrintableLines(fmt.Sprintf("\n%s (sealed %s, judge %s, %s)\n%s", m.Name, rep.SealedHash, rep.Judge, time.Since(start).Round(time.Millisecond), rep.Table())))
		fmt.Fprintf(app.Out, "reports: %s/compare.{json,md,html}\n", textsafe.Printable(m.Out))
		if !rep.Complete() {
			incomplete = append(incomplete, m.Name)
		}
	}
	if len(incomplete) > 0 {
		// The tables are printed; the exit code says they are not whole.
		fmt.Fprintf(app.Err, "incomplete: %s: some contenders' bundles failed or were not judged (counted as Shadow Score 100; see [failed] above); exit 3\n",
			textsafe.Printable(strings.Join(incomplete, ", ")))
		return exitCode(exitIncomplete)
	}
	return nil
}

// progressLine is one finished contender run: its score over every planned
// bundle and, when some failed, how many.
func progressLine(p compare.Progress) string {
	how := ""
	if p.Cached {
		how = " (resumed)"
	}
	score := fmt.Sprintf("shadow %.1f%%", p.Score)
	switch {
	case p.Judged == 0:
		score = fmt.Sprintf("no result: 0 of %d bundles judged", p.Planned)
	case p.Judged < p.Planned:
		score += fmt.Sprintf(" (%d of %d bundles failed, counted as 100)", p.Planned-p.Judged, p.Planned)
	}
	return fmt.Sprintf("  [%d/%d] %-28s repeat %d  %s%s\n", p.Done, p.Total, p.Contender, p.Repeat, score, how)
}
