package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/providers"
)

func newConfigCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Check and show the configuration",
		Example: "  swarm config validate my.yml\n  swarm --config my.yml config show"}
	cmd.AddCommand(newConfigValidateCmd(app, nil), newConfigShowCmd(app, nil))
	return cmd
}

// ConfigValidateOptions are the arguments of `swarm config validate`.
type ConfigValidateOptions struct {
	File string // "": the --config file, else the embedded config.yml
}

// newConfigValidateCmd builds `swarm config validate`; runF runs the parsed
// options (nil: runConfigValidate).
func newConfigValidateCmd(app *App, runF func(context.Context, *ConfigValidateOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(_ context.Context, o *ConfigValidateOptions) error { return runConfigValidate(app, *o) }
	}
	return &cobra.Command{
		Use:   "validate [FILE]",
		Short: "Validate a configuration file",
		Long: `Validate a configuration file (default: the --config file, else the embedded
config.yml). Every problem is printed with file:line:column and the dotted key;
the exit code is 2 when there is any.`,
		Example: "  swarm config validate config.yml\n  swarm --config my.yml config validate",
		Args:    usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := ConfigValidateOptions{File: app.ConfigPath}
			if len(args) == 1 {
				o.File = args[0]
			}
			return runF(cmd.Context(), &o)
		},
	}
}

// ConfigShowOptions are the flags of `swarm config show`.
type ConfigShowOptions struct {
	Format string // yaml or json
}

// newConfigShowCmd builds `swarm config show`; runF runs the parsed options
// (nil: runConfigShow).
func newConfigShowCmd(app *App, runF func(context.Context, *ConfigShowOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(_ context.Context, o *ConfigShowOptions) error { return runConfigShow(app, *o) }
	}
	var o ConfigShowOptions
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration (defaults, file, environment)",
		Long: `Print the effective configuration after the embedded defaults, the --config
file and the SWARM_SCALE, SWARM_SEED, SWARM_OUT_DIR and SWARM_PROVIDER
environment variables. API keys never appear: each provider shows only the
name of its key variable and whether it is set.`,
		Example: "  swarm config show\n  SWARM_SCALE=ss-50 swarm config show --format json",
		Args:    usageArgs(cobra.NoArgs),
		RunE:    func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), &o) },
	}
	show.Flags().StringVar(&o.Format, "format", "yaml", "yaml or json")
	return show
}

func runConfigValidate(app *App, o ConfigValidateOptions) error {
	path := o.File
	_, err := config.Load(path, app.Registry())
	name := path
	if name == "" {
		name = "config.yml (embedded)"
	}
	if err != nil {
		var ce config.Errors
		if errors.As(err, &ce) {
			for _, e := range ce {
				fmt.Fprintln(app.Err, e.Error())
			}
			return exitCode(2)
		}
		return usageError(err)
	}
	fmt.Fprintf(app.Out, "%s: ok\n", name)
	return nil
}

func runConfigShow(app *App, o ConfigShowOptions) error {
	format := o.Format
	cfg, err := app.LoadConfig()
	if err != nil {
		return usageError(err)
	}
	keys := map[string]string{}
	for kind, k := range cfg.Providers {
		if k.APIKeyEnv == "" {
			continue
		}
		state := "unset"
		if os.Getenv(k.APIKeyEnv) != "" {
			state = "set"
		}
		keys[kind] = k.APIKeyEnv + " (" + state + ")"
	}
	switch format {
	case "json":
		return app.printJSON(map[string]any{"config": cfg.Redacted(), "api_keys": keys})
	case "yaml":
		b, err := cfg.Effective()
		if err != nil {
			return err
		}
		app.Out.Write(b)
		fmt.Fprintln(app.Out, "# API keys (read only from the environment):")
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			fmt.Fprintf(app.Out, "#   %s: %s\n", k, keys[k])
		}
		return nil
	}
	return usageError(fmt.Errorf("--format %q: want yaml or json", format))
}

func newProvidersCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "providers", Short: "Provider kinds",
		Example: "  swarm providers list"}
	cmd.AddCommand(newProvidersListCmd(app, nil))
	return cmd
}

// ProvidersListOptions are the flags of `swarm providers list`.
type ProvidersListOptions struct {
	Format string // table or json
}

// newProvidersListCmd builds `swarm providers list`; runF runs the parsed
// options (nil: runProvidersList).
func newProvidersListCmd(app *App, runF func(context.Context, *ProvidersListOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(_ context.Context, o *ProvidersListOptions) error { return runProvidersList(app, *o) }
	}
	var o ProvidersListOptions
	list := &cobra.Command{
		Use:     "list",
		Short:   "List provider kinds and whether each is usable",
		Example: "  swarm providers list\n  swarm providers list --format json",
		Args:    usageArgs(cobra.NoArgs),
		RunE:    func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), &o) },
	}
	list.Flags().StringVar(&o.Format, "format", "table", "table or json")
	return list
}

// ProviderStatus is one row of `swarm providers list`.
type ProviderStatus struct {
	Kind        string `json:"kind"`
	Usable      bool   `json:"usable"`
	Status      string `json:"status"`
	Description string `json:"description"`
}

// providerStatuses is one row per registered kind; each adapter's
// KindInfo.Check decides what its kind needs.
func providerStatuses(cfg *config.Config, reg *providers.Registry, getenv func(string) string) []ProviderStatus {
	var out []ProviderStatus
	for _, info := range reg.Kinds() {
		st := reg.Status(info.Kind, cfg.Providers[info.Kind], getenv)
		out = append(out, ProviderStatus{Kind: info.Kind, Usable: st.Usable, Status: st.Text, Description: info.Description})
	}
	return out
}

func runProvidersList(app *App, o ProvidersListOptions) error {
	format := o.Format
	cfg, err := app.LoadConfig()
	if err != nil {
		return usageError(err)
	}
	rows := providerStatuses(cfg, app.Registry(), os.Getenv)
	switch format {
	case "json":
		return json.NewEncoder(app.Out).Encode(rows)
	case "table":
		tw := tabwriter.NewWriter(app.Out, 0, 2, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tUSABLE\tSTATUS\tDESCRIPTION")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%v\t%s\t%s\n", r.Kind, yes(r.Usable), r.Status, strings.TrimSpace(r.Description))
		}
		return tw.Flush()
	}
	return usageError(fmt.Errorf("--format %q: want table or json", format))
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
