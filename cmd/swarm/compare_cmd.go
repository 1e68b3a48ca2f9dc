package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/nexus/compare"
)

func init() { register(newCompareCmd) }

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

func newCompareCmd(app *App) *cobra.Command {
	var o CompareOptions
	cmd := &cobra.Command{
		Use:   "compare MISSION.md --models a,b,c | compare --file COMPARE.yaml",
		Short: "Compare model providers on Gap Reports under one sealed envelope",
		Long: `Run the same mission for several contender models under ONE sealed envelope
and ONE judge, repeated with different seeds, contenders interleaved; rank them
by Shadow Score with 95% bootstrap intervals, paired per-criterion McNemar tests,
cost, tokens and latency. Writes compare.json, compare.md and a self-contained
compare.html (inline SVG charts) and keeps every contender's run directory.
--resume skips finished runs and reuses cached LLM calls.`,
		Example: `  swarm compare examples/missions/api-design.md --models mock:honest,mock:sloppy,mock:deceptive --repeats 5
  swarm compare mission.md --models openai:gpt-4.1,anthropic:claude-sonnet-4 --judge google:gemini-2.5-pro --out cmp
  swarm compare --file examples/compare/personas.yaml --resume`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Mission = args[0]
			}
			o.Changed = map[string]bool{}
			cmd.Flags().Visit(func(f *pflag.Flag) { o.Changed[f.Name] = true })
			return runCompare(cmd.Context(), app, o)
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

func runCompare(ctx context.Context, app *App, o CompareOptions) error {
	missions := []string{}
	if o.File != "" {
		b, err := os.ReadFile(o.File)
		if err != nil {
			return usageError(err)
		}
		var cf compareFile
		if err := yaml.NewDecoder(bytes.NewReader(b), yaml.Strict(), yaml.DisallowUnknownField()).Decode(&cf); err != nil {
			return usageError(fmt.Errorf("%s:%s", o.File, yaml.FormatError(err, false, false)))
		}
		for _, m := range cf.Missions {
			if !filepath.IsAbs(m) {
				m = filepath.Join(filepath.Dir(o.File), m)
			}
			missions = append(missions, m)
		}
		// The file sets what the command line did not.
		fromFile := func(flag string, set bool, apply func()) {
			if set && !o.Changed[flag] {
				apply()
			}
		}
		fromFile("models", len(cf.Models) > 0, func() { o.Models = cf.Models })
		fromFile("judge", cf.Judge != "", func() { o.Judge = cf.Judge })
		fromFile("seal-author", cf.SealAuthor != "", func() { o.SealAuthor = cf.SealAuthor })
		fromFile("scale", cf.Scale != "", func() { o.Scale = cf.Scale })
		fromFile("roles", cf.Roles != "", func() { o.Roles = cf.Roles })
		fromFile("repeats", cf.Repeats > 0, func() { o.Repeats = cf.Repeats })
		fromFile("judge-samples", cf.JudgeSamples > 0, func() { o.JudgeSamples = cf.JudgeSamples })
		fromFile("seed", cf.Seed != 0, func() { o.Seed = cf.Seed })
		fromFile("parallel", cf.Parallel != 0, func() { o.Parallel = cf.Parallel })
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
	if o.Parallel < 0 {
		return usageError(fmt.Errorf("--parallel %d: want 0 (all contenders at once) or more", o.Parallel))
	}
	cfg, err := nexus.LoadConfig(app.ConfigPath)
	if err != nil {
		return usageError(err)
	}
	for _, mpath := range missions {
		text, err := os.ReadFile(mpath)
		if err != nil {
			return usageError(fmt.Errorf("read mission: %w", err))
		}
		if strings.TrimSpace(string(text)) == "" {
			return usageError(fmt.Errorf("mission %s is empty", mpath))
		}
		name := strings.TrimSuffix(filepath.Base(mpath), filepath.Ext(mpath))
		out := o.Out
		if out == "" {
			out = filepath.Join(cfg.Run.OutDir, "compare-"+name)
		} else if len(missions) > 1 {
			out = filepath.Join(out, name)
		}
		start := time.Now()
		fmt.Fprintf(app.Err, "compare %s: %d contenders × %d repeats at %s (roles: %s) → %s\n", name, len(o.Models), o.Repeats, o.Scale, o.Roles, out)
		rep, err := compare.Run(ctx, compare.Options{Config: cfg, Registry: newRegistry(), Mission: string(text), MissionName: name,
			Models: o.Models, Judge: o.Judge, SealAuthor: o.SealAuthor, Repeats: o.Repeats, Scale: o.Scale, Roles: o.Roles,
			JudgeSamples: o.JudgeSamples, Seed: o.Seed, Out: out, CacheDir: o.CacheDir, Resume: o.Resume, Parallel: o.Parallel,
			Progress: func(done, total int, c string, r int, score float64, cached bool) {
				how := ""
				if cached {
					how = " (resumed)"
				}
				fmt.Fprintf(app.Err, "  [%d/%d] %-28s repeat %d  shadow %.1f%%%s\n", done, total, c, r, score, how)
			}})
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(app.Err, "interrupted: finished runs are kept in %s; re-run with --resume to complete\n", out)
				return exitCode(130)
			}
			return toExit(err)
		}
		fmt.Fprintf(app.Out, "\n%s (sealed %s, judge %s, %s)\n%s", name, rep.SealedHash, rep.Judge, time.Since(start).Round(time.Millisecond), rep.Table())
		fmt.Fprintf(app.Out, "reports: %s/compare.{json,md,html}\n", out)
	}
	return nil
}
