package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/swarm-dev/swarm/internal/yamlx"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/nexus/compare"
	"github.com/swarm-dev/swarm/providers"
)

// CompareOptions are the flags of `swarm compare`.
type CompareOptions struct {
	Mission      string
	File         string // compare YAML
	Models       []string
	Judge        string
	SealAuthor   string
	Repeats      int
	Scale        string
	Roles        string
	JudgeSamples int
	Out          string
	CacheDir     string
	Resume       bool
	Seed         int64
	Parallel     int
	// Changed holds the flags given on the command line; they win over
	// the compare file.
	Changed map[string]bool
}

// compareFile is a compare YAML (examples/compare/).
type compareFile struct {
	Missions     []string `yaml:"missions"`
	Models       []string `yaml:"models"`
	Judge        string   `yaml:"judge"`
	SealAuthor   string   `yaml:"seal_author"`
	Repeats      int      `yaml:"repeats"`
	Scale        string   `yaml:"scale"`
	Roles        string   `yaml:"roles"`
	JudgeSamples int      `yaml:"judge_samples"`
	Seed         int64    `yaml:"seed"`
	Parallel     int      `yaml:"parallel"`
}

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
  swarm compare --file examples/compare/personas.yaml --resume`,
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
	f.IntVar(&o.Repeats, "repeats", 3, "repeats per contender (different seeds)")
	f.StringVar(&o.Scale, "scale", "ss-50", "scale")
	f.StringVar(&o.Roles, "roles", "commanders", "roles the contenders play: commanders or all")
	f.IntVar(&o.JudgeSamples, "judge-samples", 0, "sample the judge k times per verdict (majority vote; disagreement reported)")
	f.StringVar(&o.Out, "out", "", "output directory (default runs/compare-<mission>)")
	f.StringVar(&o.CacheDir, "cache-dir", "", "content-addressed cache of LLM calls (off by default)")
	f.BoolVar(&o.Resume, "resume", false, "skip finished contender runs and reuse cached calls (cache under OUT/cache)")
	f.Int64Var(&o.Seed, "seed", 42, "base seed; repeat i uses seed+i")
	f.IntVar(&o.Parallel, "parallel", 0, "contender runs of one repeat at once (default: all; 1 = one after another); provider rate limits are shared")
	return cmd
}

// compareFileError names the file, line, column and key of a bad compare
// file (yamlx's error), listing the known keys for an unknown one.
func compareFileError(err error) error {
	var ye *yamlx.Error
	if errors.As(err, &ye) && errors.Is(err, yamlx.ErrUnknownKey) && !strings.ContainsAny(ye.Key, ".[") {
		ye.Msg += " (known: missions, models, judge, seal_author, repeats, scale, roles, judge_samples, seed, parallel)"
	}
	return usageError(err)
}

func runCompare(ctx context.Context, app *App, o CompareOptions) error {
	missions := []string{}
	// where names the origin of a value for error messages: the compare
	// file's line and key when it came from there, else the flag.
	var fileDoc *yamlx.Doc
	fromFileKeys := map[string]bool{}
	where := func(flag, key string) string {
		if fromFileKeys[key] {
			p, _ := fileDoc.Pos(key)
			return fmt.Sprintf("%s:%d: %s", o.File, p.Line, key)
		}
		if flag == "" {
			return "MISSION.md"
		}
		return "--" + flag
	}
	if o.File != "" {
		var cf compareFile
		doc, err := yamlx.DecodeFile(o.File, &cf, yamlx.DefaultLimits)
		if err != nil {
			return compareFileError(err)
		}
		fileDoc = doc
		for _, m := range cf.Missions {
			if !filepath.IsAbs(m) {
				m = filepath.Join(filepath.Dir(o.File), m)
			}
			missions = append(missions, m)
		}
		if len(cf.Missions) > 0 {
			fromFileKeys["missions"] = true
		}
		// The file sets what the command line did not.
		fromFile := func(flag, key string, set bool, apply func()) {
			if set && !o.Changed[flag] {
				apply()
				fromFileKeys[key] = true
			}
		}
		fromFile("models", "models", len(cf.Models) > 0, func() { o.Models = cf.Models })
		fromFile("judge", "judge", cf.Judge != "", func() { o.Judge = cf.Judge })
		fromFile("seal-author", "seal_author", cf.SealAuthor != "", func() { o.SealAuthor = cf.SealAuthor })
		fromFile("scale", "scale", cf.Scale != "", func() { o.Scale = cf.Scale })
		fromFile("roles", "roles", cf.Roles != "", func() { o.Roles = cf.Roles })
		fromFile("repeats", "repeats", cf.Repeats != 0, func() { o.Repeats = cf.Repeats })
		fromFile("judge-samples", "judge_samples", cf.JudgeSamples != 0, func() { o.JudgeSamples = cf.JudgeSamples })
		fromFile("seed", "seed", cf.Seed != 0, func() { o.Seed = cf.Seed })
		fromFile("parallel", "parallel", cf.Parallel != 0, func() { o.Parallel = cf.Parallel })
	}
	if o.Mission != "" {
		missions = append(missions, o.Mission)
	}
	if len(missions) == 0 {
		return usageError(errors.New("no mission: give MISSION.md or --file COMPARE.yaml"))
	}
	if len(o.Models) == 0 {
		return usageError(errors.New("no contenders: give --models a,b,c"))
	}
	// Unset options (a caller without cobra's defaults) take compare's.
	if o.Roles == "" {
		o.Roles = compare.RolesCommanders
	}
	if o.Scale == "" {
		o.Scale = "ss-50"
	}
	if o.Repeats == 0 {
		o.Repeats = 3
	}
	// Check everything before the first run starts: a bad second mission
	// must not surface after the first one has spent an hour.
	if o.Parallel < 0 {
		return usageError(fmt.Errorf("%s %d: want 0 (all contenders at once) or more", where("parallel", "parallel"), o.Parallel))
	}
	if o.Repeats < 1 {
		return usageError(fmt.Errorf("%s %d: want at least 1", where("repeats", "repeats"), o.Repeats))
	}
	if o.JudgeSamples < 0 {
		return usageError(fmt.Errorf("%s %d: want 1 or more", where("judge-samples", "judge_samples"), o.JudgeSamples))
	}
	if o.Roles != compare.RolesCommanders && o.Roles != compare.RolesAll {
		return usageError(fmt.Errorf("%s %q: want %s or %s", where("roles", "roles"), o.Roles, compare.RolesCommanders, compare.RolesAll))
	}
	for _, m := range o.Models {
		if _, err := providers.ParseRef(m); err != nil {
			return usageError(fmt.Errorf("%s: %v", where("models", "models"), err))
		}
	}
	for _, c := range []struct{ flag, key, v string }{{"judge", "judge", o.Judge}, {"seal-author", "seal_author", o.SealAuthor}} {
		if c.v == "" {
			continue
		}
		if _, err := providers.ParseRef(c.v); err != nil {
			return usageError(fmt.Errorf("%s: %v", where(c.flag, c.key), err))
		}
	}
	texts := map[string]string{}
	names := map[string]string{}
	for _, mpath := range missions {
		name := strings.TrimSuffix(filepath.Base(mpath), filepath.Ext(mpath))
		if prev, dup := names[name]; dup {
			return usageError(fmt.Errorf("%s: %s and %s would share the output directory %q: rename one", where("", "missions"), prev, mpath, name))
		}
		names[name] = mpath
		text, err := os.ReadFile(mpath)
		if err != nil {
			return usageError(fmt.Errorf("%s: read mission: %w", where("", "missions"), err))
		}
		if strings.TrimSpace(string(text)) == "" {
			return usageError(fmt.Errorf("%s: mission %s is empty", where("", "missions"), mpath))
		}
		texts[mpath] = string(text)
	}
	cfg, err := nexus.LoadConfig(app.ConfigPath)
	if err != nil {
		return usageError(err)
	}
	if _, ok := cfg.Scales[o.Scale]; !ok {
		return usageError(fmt.Errorf("%s %q: unknown scale (known: %s)", where("scale", "scale"), o.Scale, strings.Join(slices.Sorted(maps.Keys(cfg.Scales)), ", ")))
	}
	var incomplete []string // missions with failed or unjudged bundles
	for _, mpath := range missions {
		text := texts[mpath]
		name := strings.TrimSuffix(filepath.Base(mpath), filepath.Ext(mpath))
		out := o.Out
		if out == "" {
			out = filepath.Join(cfg.Run.OutDir, "compare-"+name)
		} else if len(missions) > 1 {
			out = filepath.Join(out, name)
		}
		start := time.Now()
		fmt.Fprintf(app.Err, "compare %s: %d contenders × %d repeats at %s (roles: %s) → %s\n", name, len(o.Models), o.Repeats, o.Scale, o.Roles, out)
		rep, err := compare.Run(ctx, compare.Options{Config: cfg, Registry: newRegistry(), Mission: text, MissionName: name,
			Models: o.Models, Judge: o.Judge, SealAuthor: o.SealAuthor, Repeats: o.Repeats, Scale: o.Scale, Roles: o.Roles,
			JudgeSamples: o.JudgeSamples, Seed: o.Seed, Out: out, CacheDir: o.CacheDir, Resume: o.Resume, Parallel: o.Parallel,
			Progress: func(p compare.Progress) { fmt.Fprint(app.Err, progressLine(p)) }})
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(app.Err, "interrupted: finished runs are kept in %s; re-run with --resume to complete\n", out)
				return exitCode(130)
			}
			return toExit(err)
		}
		fmt.Fprintf(app.Out, "\n%s (sealed %s, judge %s, %s)\n%s", name, rep.SealedHash, rep.Judge, time.Since(start).Round(time.Millisecond), rep.Table())
		fmt.Fprintf(app.Out, "reports: %s/compare.{json,md,html}\n", out)
		if !rep.Complete() {
			incomplete = append(incomplete, name)
		}
	}
	if len(incomplete) > 0 {
		// The tables are printed; the exit code says they are not whole.
		fmt.Fprintf(app.Err, "incomplete: %s: some contenders' bundles failed or were not judged (counted as Shadow Score 100; see [failed] above); exit 3\n",
			strings.Join(incomplete, ", "))
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
