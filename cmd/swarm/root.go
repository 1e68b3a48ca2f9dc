package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
)

// App carries what every command needs: streams, global flags and the logger.
type App struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Logger *slog.Logger

	ConfigPath string
	LogLevel   string
	LogFormat  string
}

func newApp(in io.Reader, out, errw io.Writer) *App {
	return &App{In: in, Out: out, Err: errw, Logger: slog.New(slog.NewTextHandler(errw, nil))}
}

// commandFactories holds the top-level commands; each command file adds its
// own from init so files can be added without touching this one.
var commandFactories []func(*App) *cobra.Command

func register(f func(*App) *cobra.Command) { commandFactories = append(commandFactories, f) }

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
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError(fmt.Errorf("%w\n%s", err, "See '"+c.CommandPath()+" --help'."))
	})
	for _, f := range commandFactories {
		root.AddCommand(f(app))
	}
	addBuiltinExamples(root)
	return root
}

// addBuiltinExamples creates cobra's help and completion commands now, not
// at execution, so that they too carry examples.
func addBuiltinExamples(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
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

// exitError carries an exit code through cobra.
type exitError struct {
	code   int
	err    error
	silent bool // already reported
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// usageError marks bad usage or bad input: exit code 2.
func usageError(err error) error { return &exitError{code: 2, err: err} }

// exitCode returns an error that makes swarm exit with code without printing
// anything more (the command has already reported).
func exitCode(code int) error { return &exitError{code: code, silent: true} }

// Exit codes shared by several commands (README "Exit codes").
const (
	// exitIncomplete: the result finished but did not judge every planned
	// bundle, or the cost ceiling stopped it (swarm run, swarm compare).
	exitIncomplete = 3
	// exitTampered: shadow scoring is invalid, the sealed criteria changed
	// after sealing (swarm run, swarm shadow verify).
	exitTampered = 4
)

func isUsageError(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "unknown flag") ||
		strings.Contains(s, "accepts ") || strings.Contains(s, "requires at least")
}
