package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/providers"
)

// App is what every command is built with (the factory): the streams, the
// global flags, the logger, and the constructors of what commands use (the
// configuration, the provider registry). Commands reach the outside world
// only through it, so a test builds one with its own streams.
type App struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Logger *slog.Logger

	// Global flags, set when the command line is parsed.
	ConfigPath string
	LogLevel   string
	LogFormat  string

	// NewRegistry returns a registry of every provider kind swarm ships;
	// Registry calls it once.
	NewRegistry func() *providers.Registry
	registry    *providers.Registry
	// scrub is the secret set standard error is scrubbed with (runCLI's;
	// nil in tests that build an App of their own).
	scrub *scrubber
}

func newApp(in io.Reader, out, errw io.Writer) *App {
	return &App{In: in, Out: out, Err: errw, Logger: slog.New(slog.NewTextHandler(errw, nil)), NewRegistry: newRegistry}
}

// Registry is the provider registry of the command being run, built with
// NewRegistry on first use: the configuration is checked against the same
// registry the command then runs with.
func (a *App) Registry() *providers.Registry {
	if a.registry == nil {
		a.registry = a.NewRegistry()
	}
	return a.registry
}

// printJSON writes v to standard output as JSON indented by two spaces
// (config show, sandbox metrics/incoherence/econ, shadow score/report).
func (a *App) printJSON(v any) error {
	enc := json.NewEncoder(a.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// LoadConfig loads the --config file (default: the embedded config.yml).
func (a *App) LoadConfig() (*config.Config, error) {
	cfg, err := config.Load(a.ConfigPath, a.Registry())
	if err == nil {
		a.scrub.addConfigured(cfg, a.Registry())
	}
	return cfg, err
}

func newRootCmd(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "swarm",
		Short: "Multi-agent LLM missions judged by what the agents never saw",
		Long: `swarm runs multi-agent LLM missions through the Nexus pipeline (phases 0-8),
seals acceptance criteria before any commander starts, judges every bundle
against them (Shadow Score, Gap Reports), and feeds every agent interaction
into a distributional safety sandbox.`,
		Example: `  swarm run examples/missions/auth-migration.md            # offline, mock provider
  swarm run mission.md --provider openai:gpt-4.1           # real provider (OPENAI_API_KEY)
  swarm config show --config config.yml`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return app.setupLogger()
		},
	}
	root.PersistentFlags().StringVar(&app.ConfigPath, "config", "", "configuration file (default: the embedded config.yml)")
	root.PersistentFlags().StringVar(&app.LogLevel, "log-level", "warn", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&app.LogFormat, "log-format", "text", "log format: text or json")
	root.SetIn(app.In)
	root.SetOut(app.Out)
	root.SetErr(app.Err)
	root.SetFlagErrorFunc(flagError)
	// Every command, wired explicitly. A nil run function runs the command;
	// tests pass one that captures the parsed options instead.
	root.AddCommand(
		newRunCmd(app, nil),
		newCompareCmd(app, nil),
		newShadowCmd(app),
		newSandboxCmd(app),
		newMockCmd(app),
		newConfigCmd(app),
		newProvidersCmd(app),
		newBenchCmd(app, nil),
		newVerifyEvidenceCmd(app, nil),
		newRunsCmd(app, nil),
		newViewCmd(app, nil),
		newVersionCmd(app),
	)
	addBuiltinExamples(root)
	return root
}

// addBuiltinExamples creates cobra's help and completion commands now, not
// at execution, so that they too carry examples, and so that the arguments
// they refuse are usage errors like everyone else's.
func addBuiltinExamples(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help", "completion":
			wrapArgs(c)
		}
		switch c.Name() {
		case "help":
			c.Example = "  swarm help run\n  swarm help mock serve"
		case "completion":
			c.Example = "  source <(swarm completion bash)\n  swarm completion zsh > \"${fpath[1]}/_swarm\""
			for _, sh := range c.Commands() {
				switch sh.Name() {
				case "bash":
					sh.Example = "  source <(swarm completion bash)"
				case "zsh":
					sh.Example = "  swarm completion zsh > \"${fpath[1]}/_swarm\""
				case "fish":
					sh.Example = "  swarm completion fish > ~/.config/fish/completions/swarm.fish"
				case "powershell":
					sh.Example = "  swarm completion powershell | Out-String | Invoke-Expression"
				}
			}
		}
	}
}

// wrapArgs makes the positional-argument validators of c and its
// subcommands return usage errors.
func wrapArgs(c *cobra.Command) {
	if c.Args != nil {
		c.Args = usageArgs(c.Args)
	}
	for _, sub := range c.Commands() {
		wrapArgs(sub)
	}
}

func (a *App) setupLogger() error {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(a.LogLevel)); err != nil {
		return usageError(fmt.Errorf("--log-level %q: want debug, info, warn or error", a.LogLevel))
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(a.LogFormat) {
	case "text":
		a.Logger = slog.New(slog.NewTextHandler(a.Err, opts))
	case "json":
		a.Logger = slog.New(slog.NewJSONHandler(a.Err, opts))
	default:
		return usageError(fmt.Errorf("--log-format %q: want text or json", a.LogFormat))
	}
	return nil
}
