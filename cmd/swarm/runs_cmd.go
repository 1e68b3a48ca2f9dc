package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/history"
	"github.com/swarm-dev/swarm/internal/textsafe"
)

// RunsOptions are the arguments and flags of `swarm runs list|show|gc|reindex`.
type RunsOptions struct {
	// RunsDir is the runs directory (default: the configuration's
	// run.out_dir).
	RunsDir string
	// Ref names the run of `show`: a run directory, or a run id (or a
	// unique prefix) in the index of RunsDir.
	Ref  string
	JSON bool

	// list: filters, order and page.
	Mission, Model, Status, Since, Until, Search, Sort string
	Asc                                                bool
	Limit, Page                                        int
	// gc: list what would be removed, remove nothing.
	DryRun bool
	// now is the clock --since/--until ages are read against (tests set
	// it).
	now func() time.Time
}

// newRunsCmd builds `swarm runs` and its subcommands; runF runs the parsed
// options of each (nil: the real ones; tests capture the options).
func newRunsCmd(app *App, runF func(context.Context, string, *RunsOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(ctx context.Context, sub string, o *RunsOptions) error { return runRuns(ctx, app, sub, *o) }
	}
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List, show and index past runs (the run history in RUNS_DIR/index.db)",
		Long: `The run history: an index of every run directory below a runs directory, kept in
RUNS_DIR/index.db (SQLite). RUNS_DIR defaults to the configuration's run.out_dir
(runs). Run directories stay the source of truth: the index is rebuilt from them
with "swarm runs reindex", brought up to date by "list" and "show" before they
answer, and updated by swarm run, --resume and compare when they end (when the
run went to the default runs directory, or RUNS_DIR/index.db already exists).
No run needs the index: a failure to update it is a warning.

A run directory that cannot be read (half written, forged, not JSON) is
listed with status "unreadable" and its error; one without result.json is
"unfinished". Numbers a run did not measure (no judged bundle, no workspace,
no ground truth, no price) are shown as "–" and are null in --json, never 0.`,
		Example: `  swarm runs list
  swarm runs list --status complete --sort shadow --asc --limit 20
  swarm runs list --mission tinynotes --model mock:honest --since 7d --json
  swarm runs show 20261127-160703-security-review-tinynotes-ss-100
  swarm runs reindex /tmp/myruns
  swarm runs gc --dry-run`,
	}
	sub := func(name, use, short, long, example string, args cobra.PositionalArgs, flags func(*cobra.Command, *RunsOptions)) *cobra.Command {
		var o RunsOptions
		c := &cobra.Command{
			Use: use, Short: short, Long: long, Example: example,
			Args: usageArgs(args),
			RunE: func(cmd *cobra.Command, args []string) error {
				if name == "show" {
					o.Ref, args = args[0], args[1:]
				}
				if len(args) == 1 {
					o.RunsDir = args[0]
				}
				return runF(cmd.Context(), name, &o)
			},
		}
		c.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
		if flags != nil {
			flags(c, &o)
		}
		return c
	}
	cmd.AddCommand(
		sub("list", "list [RUNS_DIR] [flags]", "List the runs, newest first",
			`List the runs of RUNS_DIR, newest first, one page at a time (after bringing the
index up to date). Filters combine: --mission matches the mission's title or
file name (any case) or its task hash; --model a model the run used, exactly;
--status a status exactly (complete, incomplete, partial, invalid, failed,
interrupted, sealed, unfinished, unreadable); --since/--until a date
(2026-11-27), an RFC 3339 time or an age (36h, 7d); --search any of id,
directory, mission, reason, models and error. --sort orders by started,
mission, status, shadow, cost, duration, recall, verified or id (descending
unless --asc); runs without the value come last.

--json prints {"runs": [...], "total", "page", "limit", "pages"}.`,
			`  swarm runs list
  swarm runs list --status failed --search timeout
  swarm runs list --sort shadow --asc --limit 10 --page 2
  swarm runs list runs --since 2026-11-01 --until 2026-12-01 --json`,
			cobra.MaximumNArgs(1), func(c *cobra.Command, o *RunsOptions) {
				f := c.Flags()
				f.StringVar(&o.Mission, "mission", "", "mission title or file name (substring, any case) or task hash")
				f.StringVar(&o.Model, "model", "", "a model the run used (kind:model), exactly")
				f.StringVar(&o.Status, "status", "", "run status, exactly")
				f.StringVar(&o.Since, "since", "", "started at or after: a date, an RFC 3339 time or an age (36h, 7d)")
				f.StringVar(&o.Until, "until", "", "started before: a date, an RFC 3339 time or an age")
				f.StringVar(&o.Search, "search", "", "text in the id, directory, mission, reason, models or error")
				f.StringVar(&o.Sort, "sort", "started", "order by: "+strings.Join(history.SortKeys(), ", "))
				f.BoolVar(&o.Asc, "asc", false, "ascending order (default descending)")
				f.IntVar(&o.Limit, "limit", history.DefaultLimit, fmt.Sprintf("runs per page (at most %d)", history.MaxLimit))
				f.IntVar(&o.Page, "page", 1, "page, from 1")
			}),
		sub("show", "show RUN [RUNS_DIR] [--json]", "Show one run's summary",
			`Show one run's summary: mission, status and why, Shadow median, bundles judged,
evidence, recall, cost, duration, models, each bundle's score and gate, and the
velocity across runs: (first - last) / (runs - 1) of the Shadow medians of the
complete runs of the same mission (task hash) and models, oldest first, positive
when improving (absent, with the reason, below two such runs). RUN is a run
directory, or a run id (or a unique prefix of one) in the index of RUNS_DIR.`,
			`  swarm runs show runs/20261127-160703-security-review-tinynotes-ss-100
  swarm runs show 20261127-1607 --json`,
			cobra.RangeArgs(1, 2), nil),
		sub("reindex", "reindex [RUNS_DIR] [--json]", "Rebuild the index from the run directories",
			`Rebuild RUNS_DIR/index.db from the run directories below RUNS_DIR: every run is
read again, rows of directories that are gone are removed. Run directories are
never changed.`,
			`  swarm runs reindex
  swarm runs reindex /tmp/myruns --json`,
			cobra.MaximumNArgs(1), nil),
		sub("gc", "gc [RUNS_DIR] [--dry-run] [--json]", "Remove index rows whose run directory is gone",
			`Remove the index rows whose run directory is gone (deleted or moved), without
reading any run, and compact the index. gc never deletes a run directory: to
forget a run, delete its directory yourself, then run gc (or reindex).`,
			`  swarm runs gc
  swarm runs gc --dry-run --json`,
			cobra.MaximumNArgs(1), func(c *cobra.Command, o *RunsOptions) {
				c.Flags().BoolVar(&o.DryRun, "dry-run", false, "list the rows gc would remove, remove nothing")
			}),
	)
	return cmd
}

// runsDir is o.RunsDir, or the configuration's run.out_dir.
func runsDir(app *App, o RunsOptions) (string, error) {
	if o.RunsDir != "" {
		return o.RunsDir, nil
	}
	cfg, err := app.LoadConfig()
	if err != nil {
		return "", usageError(err)
	}
	return cfg.Run.OutDir, nil
}

// runRuns runs one subcommand of `swarm runs`.
func runRuns(ctx context.Context, app *App, sub string, o RunsOptions) error {
	if o.now == nil {
		o.now = time.Now
	}
	var q history.Query
	if sub == "list" {
		var err error
		if q, err = o.query(); err != nil {
			return usageError(err)
		}
	}
	dir, err := runsDir(app, o)
	if err != nil {
		return err
	}
	if sub == "show" {
		if fi, err := os.Stat(o.Ref); err == nil && fi.IsDir() {
			// A run directory named by its path: read it; its runs
			// directory's index, when there is one, gives the velocity.
			parent := filepath.Dir(filepath.Clean(o.Ref))
			var ix *history.Index
			if _, err := os.Lstat(filepath.Join(parent, history.IndexFile)); err == nil {
				if ix, err = history.Open(ctx, parent); err == nil {
					defer ix.Close()
					if err := ix.Update(ctx, o.Ref); err != nil {
						ix = nil
					}
				}
			}
			return showRun(ctx, app, ix, parent, filepath.Base(filepath.Clean(o.Ref)), o.JSON)
		}
	}
	ix, err := history.Open(ctx, dir)
	if err != nil {
		return usageError(err)
	}
	defer ix.Close()
	switch sub {
	case "reindex":
		st, err := ix.Reindex(ctx)
		if err != nil {
			return err
		}
		if o.JSON {
			return app.printJSON(st)
		}
		fmt.Fprintf(app.Out, "indexed %s in %s (%d with errors, %d rows removed)\n", runCount(st.Indexed), textsafe.Printable(filepath.Join(dir, history.IndexFile)), st.Errors, st.Removed)
		return nil
	case "gc":
		gone, err := ix.GC(ctx, o.DryRun)
		if err != nil {
			return err
		}
		if o.JSON {
			return app.printJSON(struct {
				Removed []string `json:"removed"`
				DryRun  bool     `json:"dry_run"`
			}{append([]string{}, gone...), o.DryRun})
		}
		verb := "removed"
		if o.DryRun {
			verb = "would remove"
		}
		fmt.Fprintf(app.Out, "%s %d rows whose run directory is gone\n", verb, len(gone))
		for _, d := range gone {
			fmt.Fprintf(app.Out, "  %s\n", textsafe.Printable(d))
		}
		return nil
	}
	if _, err := ix.Sync(ctx); err != nil {
		return err
	}
	switch sub {
	case "list":
		p, err := ix.List(ctx, q)
		if err != nil {
			if errors.Is(err, history.ErrBadQuery) {
				return usageError(err)
			}
			return err
		}
		if o.JSON {
			return app.printJSON(p)
		}
		printRuns(app, p)
		return nil
	case "show":
		r, err := ix.Find(ctx, o.Ref)
		if err != nil {
			return usageError(err)
		}
		return showRun(ctx, app, ix, dir, r.Dir, o.JSON)
	}
	return fmt.Errorf("runs: unknown subcommand %q", sub)
}

// query is the list's history.Query.
func (o RunsOptions) query() (history.Query, error) {
	q := history.Query{Mission: o.Mission, Model: o.Model, Status: o.Status, Search: o.Search, Sort: o.Sort, Asc: o.Asc, Limit: o.Limit, Page: o.Page}
	var err error
	if o.Since != "" {
		if q.Since, err = history.ParseTime(o.Since, o.now()); err != nil {
			return q, fmt.Errorf("--since %w", err)
		}
	}
	if o.Until != "" {
		if q.Until, err = history.ParseTime(o.Until, o.now()); err != nil {
			return q, fmt.Errorf("--until %w", err)
		}
	}
	if o.Limit < 1 || o.Limit > history.MaxLimit {
		return q, fmt.Errorf("--limit %d: want 1 to %d", o.Limit, history.MaxLimit)
	}
	if o.Page < 1 {
		return q, fmt.Errorf("--page %d: want 1 or more", o.Page)
	}
	if o.Sort != "" && !strings.Contains(" "+strings.Join(history.SortKeys(), " ")+" ", " "+o.Sort+" ") {
		return q, fmt.Errorf("--sort %q: want one of %s", o.Sort, strings.Join(history.SortKeys(), ", "))
	}
	return q, nil
}

func printRuns(app *App, p history.Page) {
	if p.Total == 0 {
		fmt.Fprintln(app.Out, "no runs match")
		return
	}
	tw := tabwriter.NewWriter(app.Out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "STARTED (UTC)\tRUN\tMISSION\tSTATUS\tSHADOW\tEVIDENCE\tRECALL\tCOST\tDURATION")
	for _, r := range p.Runs {
		status := r.Status
		if r.Reason != "" {
			status += ": " + clip(r.Reason, 40)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.StartedText(), textsafe.Printable(r.Dir),
			textsafe.Printable(clip(r.Mission, 48)), textsafe.Printable(status), r.ShadowCell(),
			r.EvidenceText(), r.RecallText(), r.CostText(), r.DurationText())
	}
	tw.Flush()
	fmt.Fprintf(app.Out, "page %d of %d (%s)\n", p.Page, p.Pages, runCount(p.Total))
}

// showRun prints the run directory rel of runsDir; ix (nil when the runs
// directory has no index) gives the velocity across runs.
func showRun(ctx context.Context, app *App, ix *history.Index, runsDir, rel string, asJSON bool) error {
	d, err := history.ReadDetail(runsDir, rel)
	if err != nil {
		return usageError(err)
	}
	r := d.Run
	vel := history.Velocity{Absent: "no index in the run's runs directory (swarm runs reindex " + runsDir + ")", Runs: []history.VelocityRun{}}
	if ix != nil {
		if vel, err = ix.Velocity(ctx, r); err != nil {
			return err
		}
	}
	if asJSON {
		return app.printJSON(struct {
			history.Run
			Path     string           `json:"path"`
			Files    []string         `json:"files"`
			Velocity history.Velocity `json:"velocity_across_runs"`
			Problems []string         `json:"problems,omitempty"`
		}{r, filepath.Join(runsDir, filepath.FromSlash(rel)), fileNames(d.Files), vel, d.Problems})
	}
	p := func(label, value string) { fmt.Fprintf(app.Out, "%-10s %s\n", label, textsafe.Printable(value)) }
	p("run", r.ID)
	p("dir", filepath.Join(runsDir, filepath.FromSlash(rel)))
	p("mission", r.Mission)
	p("started", r.StartedText()+" UTC")
	status := r.Status
	if r.Reason != "" {
		status += ": " + r.Reason
	}
	p("status", status)
	if r.Error != "" {
		p("error", r.Error)
	}
	judged := history.NotMeasured
	if r.BundlesPlanned != nil && r.BundlesScored != nil {
		judged = fmt.Sprintf("%d of %d bundles judged", *r.BundlesScored, *r.BundlesPlanned)
	}
	p("shadow", r.ShadowText()+" median ("+judged+")")
	p("evidence", r.EvidenceText())
	p("recall", r.RecallText())
	p("cost", r.CostText())
	p("duration", r.DurationText())
	p("scale", r.Scale)
	p("models", strings.Join(r.Models, ", "))
	if r.Compare != "" {
		p("compare", r.Compare)
	}
	if r.TaskHash != "" {
		p("task hash", r.TaskHash)
	}
	for _, b := range d.Bundles {
		score := history.NotMeasured
		if b.ShadowScore != nil {
			score = fmt.Sprintf("%.1f%%", *b.ShadowScore)
		}
		gate := history.NotMeasured
		if b.Gate != nil {
			gate = b.Gate.Action
		}
		p("bundle", fmt.Sprintf("%-16s shadow %s  gate %s  %d findings", b.ID, score, gate, len(b.Findings)))
	}
	for _, pr := range d.Problems {
		p("problem", pr)
	}
	p("velocity", vel.Text()+" (across runs of this task hash and these models)")
	return nil
}

func fileNames(fs []history.File) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

// clip shortens s to n runes, ending it with "…" when it was longer.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// indexTimeout bounds how long the end of a run may spend on the index.
const indexTimeout = 30 * time.Second

// indexRun updates the run index with the run (or compare) directory dir
// that just ended: the index of dir's parent, when the run went to the
// default runs directory (defaultPlace) or that index already exists. It
// is best effort: a failure is a warning on standard error and changes
// nothing else (no run needs the index); success prints nothing.
func indexRun(ctx context.Context, app *App, dir string, defaultPlace bool) {
	if dir == "" {
		return
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if !defaultPlace {
		if _, err := os.Lstat(filepath.Join(parent, history.IndexFile)); err != nil {
			return
		}
	}
	// An interrupted run still gets its row.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), indexTimeout)
	defer cancel()
	ix, err := history.Open(ctx, parent)
	if err == nil {
		err = ix.Update(ctx, dir)
		if cerr := ix.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(app.Err, "warning: the run index was not updated (%s); the run itself is not affected; rebuild it with: swarm runs reindex %s\n",
			textsafe.Printable(err.Error()), textsafe.Printable(parent))
	}
}

// runCount is n runs in words: "1 run", "3 runs".
func runCount(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}
