package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
)

// RunOptions are the flags of `swarm run`.
type RunOptions struct {
	MissionArg  string
	MissionText string
	Scale       string
	Provider    string
	Models      []string
	Fallbacks   []string
	Personality string
	Out         string
	Force       bool
	Seed        int64
	SeedSet     bool
	JSON        bool
	Interactive bool
	Quiet       bool
	Replays     int
	Spec        string // Shadow Score Spec version of the reports; "" = from config
	FileScope   []string
	Workspace   string // the directory the mission is about
	// AllowHomeWorkspace lets the workspace be / or contain the home directory.
	AllowHomeWorkspace bool
	GroundTruth        string // planted defects to match the findings against (needs a workspace)
	Resume             string // a run directory to continue (--resume)
	// TrustUnsigned resumes a run whose journal has no MACs (written before
	// journal MACs) (--trust-unsigned-journal).
	TrustUnsigned bool
	FollowUp      string // the run directory of an earlier run this one follows up
}

// newRunCmd builds `swarm run`; runF runs the parsed options (nil: runRun).
func newRunCmd(app *App, runF func(context.Context, *RunOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(ctx context.Context, o *RunOptions) error { return runRun(ctx, app, *o) }
	}
	var o RunOptions
	cmd := &cobra.Command{
		Use:   "run [MISSION.md | -]",
		Short: "Run a mission through the Nexus pipeline (phases 0-8)",
		Long: `Run a mission through the Nexus pipeline: intake, decomposition, sealed
criteria, context capsules, commanders with squad leads and workers,
cross-review, shadow validation with hardening, consensus, and the action
report. Everything is written to the run directory as it happens.

The mission comes from a file, from stdin ("-"), or from --mission. By default
every role runs on the deterministic mock provider, offline.

The run directory (--out, default runs/<run-id>) must be new or empty; --force
writes into a non-empty one, replacing the files of an earlier run there.

--resume RUN_DIR continues an interrupted (Ctrl-C, SIGTERM, SIGKILL, crash) or
failed run in its directory: the mission and options come from its run.json,
every LLM answer its journal.jsonl recorded is replayed instead of asked again,
and only what was never answered is asked. The configuration is yours (--config,
default the embedded config.yml), never the file run.json names: when it is not
the one the run was started with, the resume is refused naming both (pass
--config with the file you trust). Every journal record must carry a valid MAC
under your journal key (a forged or edited journal is refused, naming the
line). A finished run is left untouched ("nothing to do", exit 0). A changed
mission, config, workspace or ground truth is refused (exit 2, listing what
changed) unless --force. A run directory is used by one process at a time: a
second one is refused naming the pid holding it. See docs/resume.md.

Exit codes:
  0    every planned bundle was judged (shadow scoring valid)
  1    the run failed (partial results written; result.json says where and why)
  2    bad input or usage (flags, config, mission, --out): nothing was run
  3    incomplete: the run judged fewer bundles than planned (or none), or the
       cost ceiling stopped it (run marked partial); the summary says "k of n scored"
  4    shadow scoring invalid: the sealed criteria changed after sealing
  130  interrupted (Ctrl-C); partial results written (continue with --resume)
  --resume of a run that already finished prints "nothing to do" and exits 0.`,
		Example: `  swarm run examples/missions/auth-migration.md
  swarm run examples/missions/api-design.md --scale ss-250 --out /tmp/run1
  swarm run examples/missions/api-design.md --out /tmp/run1 --force   # reuse /tmp/run1
  swarm run mission.md --provider openai:gpt-4.1 --model judge=anthropic:claude-sonnet-4
  swarm run examples/missions/auth-migration.md --spec 1.0.0   # v1 Gap Reports
  echo "Plan the rollout of feature flags" | swarm run - --scale ss-50 --json
  swarm run examples/missions/security-review-tinynotes.md --workspace examples/workspaces/tinynotes
  swarm run --resume runs/20260101-120000-auth-migration           # continue an interrupted run
  swarm run --resume /tmp/run1 --force   # resume although the mission or config changed
  swarm run mission.md --provider openai:gpt-4.1 --fallback worker=openai:gpt-4.1-mini   # workers fall back when gpt-4.1 keeps failing
  swarm run examples/missions/auth-migration.md --out runs/v2 --follow-up runs/v1   # see docs/follow-up.md`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.MissionArg = args[0]
			}
			o.SeedSet = cmd.Flags().Changed("seed")
			if o.Resume != "" {
				// The run is started again as it was: flags that shape a
				// run would be silently ignored, so they are refused.
				for _, name := range []string{"mission", "scale", "provider", "model", "fallback", "personality", "out", "seed", "replays", "workspace", "file-scope", "ground-truth", "spec", "follow-up"} {
					if cmd.Flags().Changed(name) {
						return usageError(fmt.Errorf("--resume continues the run as it was started (see RUN_DIR/run.json): --%s cannot be given with it", name))
					}
				}
				if o.MissionArg != "" {
					return usageError(fmt.Errorf("--resume takes the mission from RUN_DIR/run.json: drop the mission argument %q", o.MissionArg))
				}
			} else if o.TrustUnsigned {
				return usageError(errors.New("--trust-unsigned-journal applies to --resume only"))
			}
			return runF(cmd.Context(), &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.MissionText, "mission", "", "mission text (instead of a file)")
	f.StringVar(&o.Scale, "scale", "", "scale: ss-50, ss-100 or ss-250 (default from config)")
	f.StringVar(&o.Provider, "provider", "", "kind:model serving every role, e.g. mock:honest or openai:gpt-4.1")
	f.StringArrayVar(&o.Models, "model", nil, "role=kind:model for one role (repeatable); roles: "+strings.Join(config.Roles(), ", "))
	f.StringArrayVar(&o.Fallbacks, "fallback", nil, "role=kind:model a role falls back to when its model keeps failing (repeatable, tried in order, after the config's fallbacks)")
	f.StringVar(&o.Personality, "personality", "", "balanced, thorough, fast, creative or cautious")
	f.StringVar(&o.Out, "out", "", "run directory, new or empty (default runs/<run-id>)")
	f.BoolVar(&o.Force, "force", false, "write into a non-empty --out directory, replacing the files of an earlier run there; with --resume, resume although the mission, config or workspace changed")
	f.StringVar(&o.Resume, "resume", "", "continue the interrupted or failed run in RUN_DIR, replaying its recorded LLM answers (the mission and options come from RUN_DIR/run.json; the config is yours: --config)")
	f.BoolVar(&o.TrustUnsigned, "trust-unsigned-journal", false, "with --resume: replay a journal written before journal MACs (its records cannot be verified; only for a run directory you made yourself)")
	f.Int64Var(&o.Seed, "seed", 0, "seed for every agent's sampling (default from config)")
	f.BoolVar(&o.JSON, "json", false, "stream events to stdout as JSON lines")
	f.BoolVar(&o.Interactive, "interactive", false, "show the briefing and ask to confirm before spending")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "print only the final summary")
	f.IntVar(&o.Replays, "replays", 0, "run the mission K times in all (K ≥ 2; same sealed criteria) to measure incoherence; 0 runs it once")
	f.StringVar(&o.Workspace, "workspace", "", "directory the mission is about: agents read it through read-only tools and every citation is checked (overrides the mission's front matter and workspace.dir; see docs/workspace.md)")
	f.BoolVar(&o.AllowHomeWorkspace, "allow-home-workspace", false, "let the workspace (from --workspace, the mission's front matter or workspace.dir) be / or a directory that is or contains your home directory, whose credential files the agents could then read beyond the deny list; refused without it (exit 2)")
	f.StringArrayVar(&o.FileScope, "file-scope", nil, "limit the files the agents may touch to this path or directory (repeatable; a constraint of every capsule)")
	f.StringVar(&o.GroundTruth, "ground-truth", "", "YAML file of planted defects (outside the workspace) to match the findings against: recall and precision in result.json and report.md; needs a workspace")
	f.StringVar(&o.FollowUp, "follow-up", "", "run directory of an earlier run of the mission to follow up: its findings, failed criteria categories (never the criteria) and Shadow Score are the agents' prior context, and report.md shows the chain of runs with its Shadow Score velocity (see docs/follow-up.md)")
	f.StringVar(&o.Spec, "spec", "", "Shadow Score Spec version of the reports: 2.0.0 (Shadow Report) or 1.0.0 (Gap Report) (default from config)")
	return cmd
}

func readMission(app *App, o RunOptions) (text, name string, err error) {
	switch {
	case o.MissionText != "" && o.MissionArg != "":
		return "", "", usageError(errors.New("give the mission as a file or with --mission, not both"))
	case o.MissionText != "":
		text, name = o.MissionText, "mission"
	case o.MissionArg == "-":
		b, err := nexus.ReadMission(app.In)
		if err != nil {
			return "", "", usageError(fmt.Errorf("read mission from stdin: %w", err))
		}
		text, name = b, "stdin"
	case o.MissionArg != "":
		b, err := readMissionFile(o.MissionArg)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && strings.ContainsAny(o.MissionArg, " \n") {
				return "", "", usageError(fmt.Errorf("read mission: %w (to give the mission text itself, use --mission %q)", err, o.MissionArg))
			}
			return "", "", usageError(fmt.Errorf("read mission: %w", err))
		}
		text, name = b, o.MissionArg
	default:
		return "", "", usageError(errors.New("no mission: give a file, '-' for stdin, or --mission TEXT (see 'swarm run --help')"))
	}
	if strings.TrimSpace(text) == "" {
		return "", "", usageError(fmt.Errorf("mission %s is empty", name))
	}
	return text, name, nil
}

// missionDir is the directory the mission's front matter paths are
// relative to: the mission file's ("" for stdin and --mission: the working
// directory).
func missionDir(o RunOptions) string {
	if o.MissionText != "" || o.MissionArg == "" || o.MissionArg == "-" {
		return ""
	}
	return filepath.Dir(o.MissionArg)
}

// parseRoleRefs parses role=kind:model[,kind:model...] flag values into
// role -> models. With replace, a role given twice keeps its last value
// (--model); otherwise the values add up, in order (--fallback).
func parseRoleRefs(flag string, values []string, replace bool) (map[string][]providers.Ref, error) {
	out := map[string][]providers.Ref{}
	for _, v := range values {
		role, list, ok := strings.Cut(v, "=")
		if !ok {
			return nil, usageError(fmt.Errorf("%s %q: want role=kind:model", flag, v))
		}
		var refs []providers.Ref
		for _, x := range strings.Split(list, ",") {
			ref, err := providers.ParseRef(x)
			if err != nil {
				return nil, usageError(fmt.Errorf("%s %s: %v", flag, v, err))
			}
			refs = append(refs, ref)
		}
		role = strings.TrimSpace(role)
		if replace {
			out[role] = refs
		} else {
			out[role] = append(out[role], refs...)
		}
	}
	return out, nil
}

// readMissionFile reads a mission file, at most config.MaxMissionBytesLimit
// bytes of it.
func readMissionFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return nexus.ReadMission(f)
}

func runRun(ctx context.Context, app *App, o RunOptions) error {
	if o.Resume != "" {
		return runResume(ctx, app, o)
	}
	if o.Replays < 0 {
		return usageError(fmt.Errorf("--replays %d: want 0 (run once) or the number of runs in all, at least 2", o.Replays))
	}
	if o.Force && o.Out == "" {
		return usageError(errors.New("--force needs --out DIR: the default run directory is always new"))
	}
	mission, name, err := readMission(app, o)
	if err != nil {
		return err
	}
	cfg, err := app.LoadConfig()
	if err != nil {
		return usageError(err)
	}
	switch o.Spec {
	case "":
	case shadow.SpecV1, shadow.SpecV2:
		cfg.ShadowScoring.SpecVersion = o.Spec
	default:
		return usageError(fmt.Errorf("--spec %q: want %s or %s", o.Spec, shadow.SpecV2, shadow.SpecV1))
	}
	app.Logger.Debug("configuration loaded", "file", configName(app.ConfigPath), "scale", cfg.DefaultScale)
	var provider providers.Ref
	if o.Provider != "" {
		if provider, err = providers.ParseRef(o.Provider); err != nil {
			return usageError(fmt.Errorf("--provider: %v", err))
		}
	}
	models, err := parseRoleRefs("--model", o.Models, true)
	if err != nil {
		return err
	}
	fallbacks, err := parseRoleRefs("--fallback", o.Fallbacks, false)
	if err != nil {
		return err
	}
	opts := nexus.Options{Config: cfg, Registry: app.Registry(), Mission: mission, MissionName: name, Scale: o.Scale,
		Personality: o.Personality, Provider: provider, Models: models, Fallbacks: fallbacks, OutDir: o.Out, Force: o.Force, Replays: o.Replays, FileScope: o.FileScope,
		Workspace: o.Workspace, AllowHomeWorkspace: o.AllowHomeWorkspace, MissionDir: missionDir(o), GroundTruth: o.GroundTruth, ConfigPath: app.ConfigPath, FollowUp: o.FollowUp}
	if o.MissionText == "" && o.MissionArg != "-" {
		opts.MissionPath = o.MissionArg
	}
	if o.SeedSet {
		opts.Seed = &o.Seed
	}
	m, err := nexus.Prepare(opts)
	if err != nil {
		return toExit(err)
	}
	return runMission(ctx, app, o, m)
}

// runResume continues the run in o.Resume (--resume).
func runResume(ctx context.Context, app *App, o RunOptions) error {
	m, err := nexus.Resume(o.Resume, nexus.ResumeOptions{Registry: app.Registry(), ConfigPath: app.ConfigPath, Force: o.Force,
		AllowHomeWorkspace: o.AllowHomeWorkspace, TrustUnsignedJournal: o.TrustUnsigned})
	var fin *nexus.FinishedError
	if errors.As(err, &fin) {
		fmt.Fprintf(app.Err, "%s: %s\n", textsafe.Printable(o.Resume), textsafe.PrintableLines(fin.Error()))
		return nil
	}
	if err != nil {
		return toExit(err)
	}
	if ch := m.ResumeChanges(); len(ch) > 0 {
		fmt.Fprintf(app.Err, "warning: resuming with --force although these changed since the run started: %s\n", textsafe.Printable(strings.Join(ch, "; ")))
	}
	return runMission(ctx, app, o, m)
}

// runMission shows the briefing, runs the prepared mission with the
// progress view (or JSON events) and prints the summary.
func runMission(ctx context.Context, app *App, o RunOptions, m *nexus.Mission) error {
	plan := m.Plan()
	if fu := m.FollowUpInfo(); fu != nil {
		for _, w := range fu.Warnings {
			fmt.Fprintf(app.Err, "warning: --follow-up: %s\n", textsafe.Printable(w))
		}
	}
	// The briefing goes to stderr; --interactive always shows it (even
	// with --json or --quiet): it is what the user confirms.
	if (!o.JSON && !o.Quiet) || o.Interactive {
		printBriefing(app.Err, plan)
	}
	if o.Interactive {
		if o.MissionArg == "-" {
			return usageError(errors.New("--interactive needs stdin for the answer: give the mission as a file or with --mission, not '-'"))
		}
		fmt.Fprint(app.Err, "Proceed? [y/N] ")
		line, _ := bufio.NewReader(app.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(app.Err, "aborted: nothing was run")
			return exitCode(1)
		}
	}
	m.Observe(logEvent(app.Logger))
	var view *progressView
	switch {
	case o.JSON:
		enc := json.NewEncoder(app.Out)
		var mu sync.Mutex
		m.Observe(events.ObserverFunc(func(e events.Event) {
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(e)
		}))
	case !o.Quiet:
		view = newProgressView(app.Err, plan, isTerminal(app.Err))
		m.Observe(view)
	}
	res, err := m.Run(ctx)
	if view != nil {
		view.finish()
	}
	if res != nil {
		indexRun(ctx, app, res.Dir, o.Out == "" && o.Resume == "")
	}
	if err != nil {
		if res != nil && errors.Is(err, nexus.ErrWrite) {
			dir := textsafe.Printable(res.Dir)
			fmt.Fprintf(app.Err, "run failed: %s\nthe run directory %s is incomplete: make room (or fix the cause), then continue it with: swarm run --resume %s\n",
				textsafe.Printable(err.Error()), dir, dir)
			return exitCode(exitWrite)
		}
		if res != nil && errors.Is(err, nexus.ErrInterrupted) {
			fmt.Fprintf(app.Err, "interrupted: partial results written to %s\n", textsafe.Printable(res.Dir))
			return exitCode(130)
		}
		if res != nil {
			fmt.Fprintf(app.Err, "run failed in phase %s (%s): %s\npartial results in %s\n", res.Phase, res.FailureClass, textsafe.Printable(err.Error()), textsafe.Printable(res.Dir))
			return exitCode(1)
		}
		return toExit(err)
	}
	if !o.JSON {
		mission := ""
		if o.MissionText == "" && o.MissionArg != "-" {
			mission = o.MissionArg
		}
		printSummary(app.Out, res, mission, app.ConfigPath)
	} else if !res.OK {
		fmt.Fprintf(app.Err, "run %s: %s\n", res.Status, textsafe.Printable(res.Error))
	}
	return runExit(res)
}

// runExit maps a finished run's status to the exit code: 4 when shadow
// scoring is invalid, 3 when fewer bundles than planned were judged or the
// cost ceiling stopped the run, 0 only when the run is complete (every
// planned bundle judged, or delivered with shadow scoring off).
func runExit(res *nexus.Result) error {
	switch res.Status {
	case runfiles.StatusComplete:
		return nil
	case runfiles.StatusInvalid:
		return exitCode(exitTampered)
	default:
		return exitCode(exitIncomplete)
	}
}

// logEvent mirrors run events to the --log-level/--log-format logger: LLM
// calls at debug (failed ones at info), failures, breaker trips and cost
// stops at warn, everything else at info. Prompts and answers never go to
// the log; they are in transcripts.jsonl.
func logEvent(l *slog.Logger) events.Observer {
	return events.ObserverFunc(func(e events.Event) {
		attrs := []any{"kind", string(e.Kind)}
		for _, kv := range [][2]string{{"phase", string(e.Phase)}, {"role", e.Role}, {"agent", e.AgentID}, {"model", e.Model}} {
			if kv[1] != "" {
				attrs = append(attrs, kv[0], kv[1])
			}
		}
		lvl, msg := slog.LevelInfo, e.Message
		if e.Kind == events.LLMCall {
			lvl, msg = slog.LevelDebug, "llm call"
			c, _ := e.Data.(events.CallData)
			if c.Schema != "" {
				attrs = append(attrs, "schema", c.Schema)
			}
			attrs = append(attrs, "outcome", c.Outcome)
			if c.FailureClass != "" {
				attrs = append(attrs, "failure_class", c.FailureClass)
			}
			attrs = append(attrs, "input_tokens", c.InputTokens, "output_tokens", c.OutputTokens)
			for _, kv := range []struct {
				k string
				n int
			}{{"reasoning_tokens", c.ReasoningTokens}, {"cache_read_tokens", c.CacheReadTokens}, {"cache_write_tokens", c.CacheWriteTokens}} {
				if kv.n > 0 {
					attrs = append(attrs, kv.k, kv.n)
				}
			}
			attrs = append(attrs, "latency_ms", c.LatencyMS)
			if c.CostUSD != nil {
				attrs = append(attrs, "cost_usd", *c.CostUSD)
			} else if c.Unpriced {
				attrs = append(attrs, "unpriced", true)
			}
			if c.Replayed {
				attrs = append(attrs, "replayed", true)
			}
			if c.Outcome != "ok" && c.Outcome != "cancelled" {
				lvl = slog.LevelInfo // retried and repaired calls are routine
			}
		}
		if e.Kind == events.Failure || e.Kind == events.BreakerTrip || e.Kind == events.CostStop {
			lvl = slog.LevelWarn
		}
		if msg == "" {
			msg = strings.ReplaceAll(string(e.Kind), "_", " ")
		}
		l.Log(context.Background(), lvl, msg, attrs...)
	})
}

func configName(path string) string {
	if path == "" {
		return "config.yml (embedded)"
	}
	return path
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr }) // *os.File, or standard error behind the secret scrubber
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("CI") == ""
}

// printBriefing shows what the run will deploy. Model names (config,
// flags), domain names and the mission title are not ours: the whole
// briefing is printed through textsafe.PrintableLines.
func printBriefing(out io.Writer, p nexus.Plan) {
	w := &strings.Builder{}
	defer func() { fmt.Fprint(out, textsafe.PrintableLines(w.String())) }()
	fmt.Fprintf(w, "Mission:  %s\n", p.MissionTitle)
	fmt.Fprintf(w, "Scale:    %s (%s) · %d agents: 1 nexus, %d commanders, %d squad leads, %d workers, %d reviewers\n",
		p.Scale, p.Personality, p.Agents, p.Commanders, p.SquadLeads, p.Workers, p.Reviewers)
	fmt.Fprintf(w, "Domains:  %s\n", strings.Join(p.Domains, ", "))
	criteria := fmt.Sprintf("%d sealed", p.Criteria)
	if p.Workspace != "" {
		// A workspace run also seals the mechanical checks (code decides
		// them from the verified evidence): they count in the score too.
		criteria += fmt.Sprintf(" + %d checks of the evidence (sealed too, decided by code)", len(shadow.Checks))
	}
	fmt.Fprintf(w, "Criteria: %s · hardening %v (max %d cycles, threshold %.0f)\n", criteria, p.Hardening.Enabled, p.Hardening.MaxCycles, p.Hardening.Threshold)
	cmdr := make([]string, 0, len(p.Roster.Commanders))
	for _, c := range p.Roster.Commanders {
		cmdr = append(cmdr, c.String())
	}
	wk := make([]string, 0, len(p.Roster.Workers))
	for _, x := range p.Roster.Workers {
		wk = append(wk, x.String())
	}
	rv := make([]string, 0, len(p.Roster.Reviewers))
	for _, x := range p.Roster.Reviewers {
		rv = append(rv, x[0].String()+"+"+x[1].String())
	}
	fmt.Fprintf(w, "Models:   nexus %s · seal author %s · judge %s · commanders %s\n", p.Roster.Nexus, p.Roster.SealAuthor, p.Roster.Judge, strings.Join(cmdr, ","))
	squad := ""
	if p.SquadLeads > 0 {
		squad = " · squad leads " + p.Roster.SquadLead.String()
	}
	fmt.Fprintf(w, "          workers %s%s · reviewers %s · synthesizer %s\n", strings.Join(wk, ","), squad, strings.Join(rv, ","), p.Roster.Synthesizer)
	if p.Workspace != "" {
		fmt.Fprintf(w, "Workspace: %s (read-only tools; every citation checked)\n", textsafe.Printable(p.Workspace))
		for _, warn := range p.WorkspaceWarnings {
			fmt.Fprintf(w, "          warning: %s\n", textsafe.Printable(warn))
		}
	}
	if adv := p.ScoresAdvisory(); adv != "" {
		fmt.Fprintf(w, "Scores:   %s\n", textsafe.Printable(strings.TrimPrefix(adv, "scores are ")))
	}
	fmt.Fprintf(w, "Budget:   cost ceiling $%.2f · seed %d\n", p.CostCeilingUSD, p.Seed)
	if warn := config.CeilingWarning(p.Unpriced); warn != "" {
		fmt.Fprintf(w, "          warning: %s\n", textsafe.Printable(warn))
	}
	fmt.Fprintln(w)
}

// printSummary prints the end of a run: how it ended in words, the Shadow
// Score with the evidence behind it (and recall and precision with a ground
// truth), the bundles, the cost, and the next commands that fit. mission is
// the mission file as given ("" when it came from stdin, --mission or a
// resumed run.json); config is the --config file ("" for the embedded one),
// which the next commands repeat. Paths, model names and run ids in it are
// not ours: the whole summary is printed through textsafe.PrintableLines.
func printSummary(out io.Writer, res *nexus.Result, mission, configPath string) {
	w := &strings.Builder{}
	defer func() { fmt.Fprint(out, textsafe.PrintableLines(w.String())) }()
	t := res.Telemetry
	fmt.Fprintf(w, "\nRun %s: %s\n", statusWord(res.Status), textsafe.Printable(statusWords(res)))
	fmt.Fprintf(w, "  run directory: %s\n", res.Dir)
	switch {
	case res.Status == runfiles.StatusInvalid:
		fmt.Fprintf(w, "  Shadow scoring INVALID: %s\n  %s\n", res.ShadowReason, res.Aggregate.Describe())
	case res.ShadowReason == nexus.ShadowOff:
		a := res.Aggregate
		fmt.Fprintf(w, "  %s (shadow_scoring.enabled: false) · %d of %d bundles delivered\n", nexus.ShadowOff, a.Unjudged, a.Planned)
	case !res.ShadowValid:
		fmt.Fprintf(w, "  %s: %s\n", res.ShadowReason, res.Aggregate.Describe())
	default:
		fmt.Fprintf(w, "  %s · sealed %s\n", res.Aggregate.Describe(), res.SealedHash)
	}
	if line := evidenceLine(res); line != "" {
		fmt.Fprintf(w, "  %s\n", line)
	}
	if line := groundTruthLine(res); line != "" {
		fmt.Fprintf(w, "  %s\n", textsafe.Printable(line))
	}
	if adv := res.Plan.ScoresAdvisory(); adv != "" && res.Aggregate.Scored > 0 {
		fmt.Fprintf(w, "  %s\n", textsafe.Printable(adv))
	}
	agents := fmt.Sprintf("agents %d", t.AgentsLaunched.Total)
	if t.AgentsLaunched.Total != t.Agents.Total {
		agents = fmt.Sprintf("agents %d launched of %d planned", t.AgentsLaunched.Total, t.Agents.Total)
	}
	tokens := fmt.Sprintf("tokens %d in / %d out", t.InputTokens, t.OutputTokens)
	if d := config.TokenDetail(t.InputTokens, t.ReasoningTokens, t.CacheReadTokens, t.CacheWriteTokens); d != "" {
		tokens += " · " + d
		if t.PromptCacheHits > 0 {
			tokens += fmt.Sprintf(" · prompt cache hit by %d of %d calls", t.PromptCacheHits, t.Calls)
		}
	}
	fmt.Fprintf(w, "  %s · LLM calls %d · %s · cost %s · %s\n",
		agents, t.Calls, tokens, textsafe.Printable(config.FormatCost(t.CostUSD, t.UnpricedModels)), (time.Duration(t.WallMS) * time.Millisecond).Round(time.Millisecond))
	if r := res.Resumed; r != nil {
		fmt.Fprintf(w, "  resumed (attempt %d): %s replayed from the journal, %s asked\n", r.Attempt, count(r.ReplayedCalls, "answer"), count(r.FreshCalls, "call"))
	}
	for _, b := range res.Bundles {
		switch {
		case b.Failed:
			fmt.Fprintf(w, "  %-15s failed (%s)\n", b.ID, b.FailureClass)
		case b.ShadowScore != nil:
			gate, salvaged := "", ""
			if b.Gate != nil {
				gate = b.Gate.Action
			}
			if b.Salvaged {
				salvaged = " · salvaged"
			}
			fmt.Fprintf(w, "  %-15s shadow %5.1f%% %-11s gate %-10s tier %s%s\n", b.ID, *b.ShadowScore, b.Level, gate, b.Tier, salvaged)
		default:
			fmt.Fprintf(w, "  %-15s not scored · tier %s\n", b.ID, b.Tier)
		}
	}
	if len(t.FailureClasses) > 0 {
		var parts []string
		for k, v := range t.FailureClasses {
			parts = append(parts, fmt.Sprintf("%s %d", k, v))
		}
		fmt.Fprintf(w, "  failures: %s\n", strings.Join(sortStrings(parts), ", "))
	}
	fmt.Fprintf(w, "  action report: %s/report.md\n", res.Dir)
	if next := nextCommands(res, mission, configPath); len(next) > 0 {
		fmt.Fprintf(w, "  next:\n")
		for _, n := range next {
			fmt.Fprintf(w, "    %s\n", textsafe.Printable(n))
		}
	}
}

// statusWord is the run's status as the summary's first word: "complete",
// or the status in capitals when the run is not.
func statusWord(status string) string {
	if status == runfiles.StatusComplete || status == runfiles.StatusSealed {
		return status
	}
	return strings.ToUpper(status)
}

// statusWords says in words how the run ended (Result.Status and Error).
func statusWords(res *nexus.Result) string {
	a := res.Aggregate
	switch res.Status {
	case runfiles.StatusComplete:
		if res.ShadowReason == nexus.ShadowOff {
			return fmt.Sprintf("every planned bundle delivered (%d of %d), none judged", a.Unjudged, a.Planned)
		}
		return fmt.Sprintf("every planned bundle judged (%d of %d)", a.Scored, a.Planned) + recommendationWords(res)
	case runfiles.StatusSealed:
		return "sealed; no commander ran"
	}
	if res.Error != "" {
		return res.Error
	}
	return a.Describe()
}

// recommendationWords says, after a complete run's status, why the run
// makes no recommendation although every bundle was judged
// (Result.NoRecommendation, as Phase 7 found it); "" when it makes one.
func recommendationWords(res *nexus.Result) string {
	if res.NoRecommendation == "" {
		return ""
	}
	return "; " + res.NoRecommendation + ": no recommendation"
}

// evidenceLine is the run's citations by state ("" without a workspace):
// nothing cited reads as such, never as clean evidence.
func evidenceLine(res *nexus.Result) string {
	e := res.Evidence
	if e == nil {
		return ""
	}
	if e.Cited == 0 {
		return "evidence: nothing cited (no finding points at the workspace)"
	}
	line := fmt.Sprintf("evidence: %d cited · %d verified · %d unverifiable · %d fabricated", e.Cited, e.Verified, e.Unverifiable, e.Fabricated)
	if e.Fabricated > 0 {
		line += fmt.Sprintf(" (%.1f%% of citations point at files or lines that do not exist or do not say what is quoted)", 100*float64(e.Fabricated)/float64(e.Cited))
	}
	return line
}

// groundTruthLine is recall and precision against the planted defects (""
// without a ground truth); a figure not measured is "—", never 0%.
func groundTruthLine(res *nexus.Result) string {
	g := res.GroundTruth
	if g == nil {
		return ""
	}
	rec, prec := "— (no defects)", "— (no findings)"
	if g.Recall != nil {
		rec = fmt.Sprintf("%.1f%% (%d of %d defects found)", 100**g.Recall, g.Found, g.Defects)
	}
	if g.Precision != nil {
		prec = fmt.Sprintf("%.1f%% (%d of %d findings match a defect)", 100**g.Precision, g.Matching, g.Findings)
	}
	return fmt.Sprintf("ground truth %s: recall %s · precision %s", g.File, rec, prec)
}

// nextCommands are the commands that fit after this run: re-checking its
// evidence (a workspace run), following it up, and comparing models on the
// same mission. mission is the mission file ("" when unknown: MISSION.md
// stands in); config the --config file the run and compare commands repeat.
func nextCommands(res *nexus.Result, mission, config string) []string {
	if mission == "" {
		mission = "MISSION.md"
	}
	cfg := ""
	if config != "" {
		cfg = " --config " + shellQuote(config)
	}
	mission = shellQuote(mission)
	dir := shellQuote(res.Dir)
	var out []string
	ws := ""
	if res.Workspace != nil {
		ws = " --workspace " + shellQuote(res.Workspace.Dir)
		out = append(out, "swarm verify-evidence "+dir+ws+"   # re-check every citation against the workspace")
	}
	if res.Status == runfiles.StatusComplete || res.Status == runfiles.StatusIncomplete || res.Status == runfiles.StatusPartial {
		out = append(out, "swarm run "+mission+cfg+" --follow-up "+dir+"   # the next run of this mission, with this one's findings and gaps as context")
	}
	models := "KIND:MODEL,KIND:MODEL"
	if cs := res.Plan.Roster.Commanders; len(cs) > 0 {
		models = cs[0].String() + ",KIND:MODEL"
	}
	gt := ""
	if res.GroundTruth != nil {
		gt = " --ground-truth " + shellQuote(res.GroundTruth.File)
	}
	out = append(out, "swarm compare "+mission+cfg+" --models "+models+ws+gt+"   # rank models on this mission under one sealed envelope")
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// count is "n noun", the noun in the plural unless n is 1.
func count[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
