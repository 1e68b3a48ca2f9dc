package main

import (
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/sandbox/economy"
)

// SandboxEconOptions are the arguments of `swarm sandbox econ MECHANISM`.
type SandboxEconOptions struct {
	Mechanism string // auction, mission, market, crash, permeability or identity
	File      string // YAML or JSON; "-": stdin
}

// newSandboxEconCmd builds `swarm sandbox econ` and its subcommands; runF
// runs the parsed options (nil: runSandboxEcon with the mechanism's
// evaluator).
func newSandboxEconCmd(app *App, runF func(context.Context, *SandboxEconOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "econ",
		Short: "Evaluate one virtual-economy mechanism on a YAML or JSON file",
		Long: `Stand-alone evaluators of the virtual agent economies: each reads one YAML
or JSON file (unknown keys are errors) and prints JSON. A bad file is
reported as FILE:LINE:COL: KEY: MESSAGE with exit code 2. See
docs/sandbox.md ("Virtual agent economies") for every input and output field.`,
	}
	type sub struct {
		name, short, example, contract string
		run                            func(name string, r io.Reader) (any, error)
	}
	for _, s := range []sub{
		{"auction", "Dworkin-style auction: prices, allocations, envy check, Gini", "auction.yaml",
			`Input:  config {max_rounds, price_adjustment_rate, convergence_tolerance,
        envy_tolerance} (optional), supply {resource: quantity} (in order),
        bids [{agent, budget, valuations {resource: value}}]
Output: converged, rounds, prices, allocations {agent: {resources, price_paid,
        utility}}, envy_free, envy_violations, total_utility, gini`, econEval(economy.ReadAuctionFile)},
		{"mission", "Mission economy: score, status, payouts under each rule, free-rider index", "mission.yaml",
			`Input:  config {min_participants}, pool, deadline_epoch, coordinator, join
        [agents], objectives [{id, metric, target, weight}], interactions [{id,
        p, accepted}], contributions [{agent, interaction}], evaluate_at_epoch
        (metrics: avg_p, min_p, total_count, acceptance_rate, total_welfare)
Output: score, status, objectives (with actual and met), payouts {equal,
        proportional, shapley}, free_rider_index`, econEval(economy.ReadMissionFile)},
		{"market", "High-frequency negotiation: order book, batch clearing, halts, flash crashes", "market.yaml",
			`Input:  config {latency_noise_ms, batch_interval_ticks, max_orders_per_tick,
        halt_duration_ticks}, seed, ticks, orders [{before_tick, agent, type
        bid|ask|cancel, resource, quantity, price}]
Output: ticks [{tick, orders_submitted, orders_executed, market_price,
        bid_ask_spread, volatility, halted}], trades, book {bids, asks},
        crashes, speed_advantage_gini, rejected`, econEval(economy.ReadMarketFile)},
		{"crash", "Flash-crash detector over a price path: crashes and volatility", "crash.yaml",
			`Input:  config {drop_threshold, window}, prices [{tick, price}] (in order)
Output: crashes [{start_tick, end_tick, price_drop_pct, severity,
        recovery_time_ticks, recovered}], volatility (after the last price)`, econEval(economy.ReadCrashFile)},
		{"permeability", "Permeability: effective π, contagion probability, optimal π", "permeability.json",
			`Input:  config {base_permeability, adaptive, threat_sensitivity,
        contagion_rate, spillover_amplification, information_decay},
        effective [{threat, trust}], contagion [{p, permeability}],
        optimal [{interactions [{p, accepted}], harm_weight}]
Output: effective, contagion, optimal (lists of numbers, in input order)`, econEval(economy.ReadPermeabilityFile)},
		{"identity", "Identity: trust score per identity and epoch", "identity.yaml",
			`Input:  config {credential_expiry_epochs}, identities [{id,
        proof_of_personhood, credentials [{issued_epoch, revoked}]}], epochs
Output: trust {id: {epoch: score}}`, econEval(economy.ReadIdentityFile)},
	} {
		cmd.Example += "  swarm sandbox econ " + s.name + " examples/economy/" + s.example + "\n"
		run := runF
		if run == nil {
			eval := s.run
			run = func(_ context.Context, o *SandboxEconOptions) error { return runSandboxEcon(app, o.File, eval) }
		}
		cmd.AddCommand(&cobra.Command{
			Use:   s.name + " FILE",
			Short: s.short,
			Long: s.short + ".\nReads FILE (YAML or JSON; \"-\" reads stdin; unknown keys are errors) and\nprints JSON. A value that is undefined (e.g. a Gini of nothing) is absent.\n\n" +
				s.contract + "\n\nFields, defaults and units: docs/sandbox.md (\"Virtual agent economies\").",
			Example: "  swarm sandbox econ " + s.name + " examples/economy/" + s.example,
			Args:    usageArgs(cobra.ExactArgs(1)),
			RunE: func(cmd *cobra.Command, args []string) error {
				return run(cmd.Context(), &SandboxEconOptions{Mechanism: s.name, File: args[0]})
			},
		})
	}
	cmd.Example = strings.TrimRight(cmd.Example, "\n")
	return cmd
}

// econEval adapts a typed file evaluator of sandbox/economy to the command.
func econEval[R any](read func(name string, r io.Reader) (*R, error)) func(name string, r io.Reader) (any, error) {
	return func(name string, r io.Reader) (any, error) {
		out, err := read(name, r)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

func runSandboxEcon(app *App, file string, eval func(name string, r io.Reader) (any, error)) error {
	in, err := openInput(app, file)
	if err != nil {
		return usageError(err)
	}
	out, err := eval(file, in)
	in.Close()
	if err != nil {
		return usageError(err)
	}
	return app.printJSON(out)
}
