package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/internal/yamlx"
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
		run                            func(decode func(v any) error) (any, error)
	}
	for _, s := range []sub{
		{"auction", "Dworkin-style auction: prices, allocations, envy check, Gini", "auction.yaml",
			`Input:  config {max_rounds, price_adjustment_rate, convergence_tolerance,
        envy_tolerance} (optional), supply {resource: quantity} (in order),
        bids [{agent, budget, valuations {resource: value}}]
Output: converged, rounds, prices, allocations {agent: {resources, price_paid,
        utility}}, envy_free, envy_violations, total_utility, gini`, econAuction},
		{"mission", "Mission economy: score, status, payouts under each rule, free-rider index", "mission.yaml",
			`Input:  config {min_participants}, pool, deadline_epoch, coordinator, join
        [agents], objectives [{id, metric, target, weight}], interactions [{id,
        p, accepted}], contributions [{agent, interaction}], evaluate_at_epoch
        (metrics: avg_p, min_p, total_count, acceptance_rate, total_welfare)
Output: score, status, objectives (with actual and met), payouts {equal,
        proportional, shapley}, free_rider_index`, econMission},
		{"market", "High-frequency negotiation: order book, batch clearing, halts, flash crashes", "market.yaml",
			`Input:  config {latency_noise_ms, batch_interval_ticks, max_orders_per_tick,
        halt_duration_ticks}, seed, ticks, orders [{before_tick, agent, type
        bid|ask|cancel, resource, quantity, price}]
Output: ticks [{tick, orders_submitted, orders_executed, market_price,
        bid_ask_spread, volatility, halted}], trades, book {bids, asks},
        crashes, speed_advantage_gini, rejected`, econMarket},
		{"crash", "Flash-crash detector over a price path: crashes and volatility", "crash.yaml",
			`Input:  config {drop_threshold, window}, prices [{tick, price}] (in order)
Output: crashes [{start_tick, end_tick, price_drop_pct, severity,
        recovery_time_ticks, recovered}], volatility (after the last price)`, econCrash},
		{"permeability", "Permeability: effective π, contagion probability, optimal π", "permeability.json",
			`Input:  config {base_permeability, adaptive, threat_sensitivity,
        contagion_rate, spillover_amplification, information_decay},
        effective [{threat, trust}], contagion [{p, permeability}],
        optimal [{interactions [{p, accepted}], harm_weight}]
Output: effective, contagion, optimal (lists of numbers, in input order)`, econPermeability},
		{"identity", "Identity: trust score per identity and epoch", "identity.yaml",
			`Input:  config {credential_expiry_epochs}, identities [{id,
        proof_of_personhood, credentials [{issued_epoch, revoked}]}], epochs
Output: trust {id: {epoch: score}}`, econIdentity},
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

func runSandboxEcon(app *App, file string, run func(decode func(v any) error) (any, error)) error {
	in, err := openInput(app, file)
	if err != nil {
		return usageError(err)
	}
	b, err := yamlx.Read(file, in, yamlx.DefaultLimits)
	in.Close()
	if err != nil {
		return usageError(err)
	}
	doc, err := yamlx.Check(file, b, yamlx.DefaultLimits)
	if err != nil {
		return usageError(err)
	}
	if doc.Empty() {
		return usageError(&yamlx.Error{File: file, Line: 1, Col: 1, Key: "(file)", Msg: "empty file"})
	}
	out, err := run(func(v any) error { return doc.Decode(b, v) })
	if err != nil {
		var fe *econFieldError
		if errors.As(err, &fe) {
			return usageError(fe.locate(doc))
		}
		return usageError(err)
	}
	enc := json.NewEncoder(app.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// econFieldError is a bad value found after decoding, named by its path.
type econFieldError struct {
	path, msg string
}

func (e *econFieldError) Error() string { return e.path + ": " + e.msg }

func fieldErr(path, format string, a ...any) error {
	return &econFieldError{path: path, msg: fmt.Sprintf(format, a...)}
}

// locate turns the path into FILE:LINE:COL: KEY: MESSAGE; a missing key is
// reported at its closest parent in the file (or 1:1).
func (e *econFieldError) locate(doc *yamlx.Doc) error {
	ye := &yamlx.Error{File: doc.Name, Line: 1, Col: 1, Key: e.path, Msg: e.msg}
	if p, _, ok := doc.PosOrParent(e.path); ok {
		ye.Line, ye.Col = p.Line, p.Col
	}
	return ye
}

// orderedObject is a JSON object that keeps its keys' order.
type orderedObject struct {
	keys []string
	vals map[string]any
}

func newObject() *orderedObject { return &orderedObject{vals: map[string]any{}} }

func (o *orderedObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *orderedObject) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case uint64:
		return float64(x), true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func in01(path string, v float64) error {
	if !(v >= 0 && v <= 1) {
		return fieldErr(path, "%v is outside [0, 1]", v)
	}
	return nil
}

// configErr names the config key of a library validation error.
func configErr(err error, keys ...string) error {
	for _, k := range keys {
		if strings.Contains(err.Error(), k+" =") {
			return fieldErr("config."+k, "%s", strings.TrimPrefix(err.Error(), economy.ErrInvalidConfig.Error()+": "))
		}
	}
	return fieldErr("config", "%v", err)
}

// ---- auction ----

type auctionFile struct {
	Config *economy.AuctionConfig `yaml:"config"`
	Supply yaml.MapSlice          `yaml:"supply"`
	Bids   []struct {
		Agent      string             `yaml:"agent"`
		Budget     *float64           `yaml:"budget"`
		Valuations map[string]float64 `yaml:"valuations"`
	} `yaml:"bids"`
}

func econAuction(decode func(v any) error) (any, error) {
	cfg := economy.DefaultAuctionConfig()
	f := auctionFile{Config: &cfg}
	if err := decode(&f); err != nil {
		return nil, err
	}
	if f.Config == nil {
		f.Config = &cfg
	}
	if err := f.Config.Validate(); err != nil {
		return nil, configErr(err, "max_rounds", "price_adjustment_rate", "convergence_tolerance", "envy_tolerance")
	}
	if len(f.Supply) == 0 {
		return nil, fieldErr("supply", "give at least one resource (resource: quantity)")
	}
	var supply []economy.Supply
	seen := map[string]bool{}
	for _, it := range f.Supply {
		name := fmt.Sprint(it.Key)
		q, ok := number(it.Value)
		switch {
		case !ok:
			return nil, fieldErr("supply."+name, "want a number")
		case q < 0:
			return nil, fieldErr("supply."+name, "quantity %v is negative", q)
		case seen[name]:
			return nil, fieldErr("supply."+name, "resource listed twice")
		}
		seen[name] = true
		supply = append(supply, economy.Supply{Resource: name, Quantity: q})
	}
	if len(f.Bids) == 0 {
		return nil, fieldErr("bids", "give at least one bid {agent, budget, valuations}")
	}
	var bids []economy.Bid
	agents := map[string]bool{}
	for i, bd := range f.Bids {
		p := fmt.Sprintf("bids[%d]", i)
		switch {
		case bd.Agent == "":
			return nil, fieldErr(p+".agent", "missing")
		case agents[bd.Agent]:
			return nil, fieldErr(p+".agent", "agent %q bids twice", bd.Agent)
		case bd.Budget == nil:
			return nil, fieldErr(p+".budget", "missing")
		case *bd.Budget < 0:
			return nil, fieldErr(p+".budget", "%v is negative", *bd.Budget)
		}
		agents[bd.Agent] = true
		bids = append(bids, economy.Bid{Agent: bd.Agent, Budget: *bd.Budget, Valuations: bd.Valuations})
	}
	r, err := economy.RunAuction(*f.Config, bids, supply)
	if err != nil {
		return nil, err
	}
	prices := newObject()
	for i, s := range supply {
		prices.set(s.Resource, r.Prices[i])
	}
	allocs := newObject()
	for _, a := range r.Allocations {
		res := newObject()
		for _, s := range supply {
			if q, ok := a.Resources[s.Resource]; ok {
				res.set(s.Resource, q)
			}
		}
		allocs.set(a.Agent, map[string]any{"resources": res, "price_paid": a.PricePaid, "utility": a.Utility})
	}
	out := newObject()
	out.set("converged", r.Converged)
	out.set("rounds", r.Rounds)
	out.set("prices", prices)
	out.set("allocations", allocs)
	out.set("envy_free", r.EnvyFree)
	out.set("envy_violations", nonNil(r.EnvyViolations))
	out.set("total_utility", r.TotalUtility)
	if g, ok := economy.Gini(r.Utilities()); ok {
		out.set("gini", g)
	}
	return out, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ---- mission ----

type interactionIn struct {
	ID       string   `yaml:"id"`
	P        *float64 `yaml:"p"`
	Accepted *bool    `yaml:"accepted"`
}

func (in interactionIn) check(path string, needID bool) (economy.Interaction, error) {
	switch {
	case needID && in.ID == "":
		return economy.Interaction{}, fieldErr(path+".id", "missing")
	case in.P == nil:
		return economy.Interaction{}, fieldErr(path+".p", "missing")
	case in.Accepted == nil:
		return economy.Interaction{}, fieldErr(path+".accepted", "missing (true or false)")
	}
	if err := in01(path+".p", *in.P); err != nil {
		return economy.Interaction{}, err
	}
	return economy.Interaction{ID: in.ID, P: *in.P, Accepted: *in.Accepted}, nil
}

type missionFile struct {
	Config *struct {
		MinParticipants *int `yaml:"min_participants"`
	} `yaml:"config"`
	Pool          *float64 `yaml:"pool"`
	DeadlineEpoch *int     `yaml:"deadline_epoch"`
	Coordinator   string   `yaml:"coordinator"`
	Join          []string `yaml:"join"`
	Objectives    []struct {
		ID     string   `yaml:"id"`
		Metric *string  `yaml:"metric"`
		Target *float64 `yaml:"target"`
		Weight *float64 `yaml:"weight"`
	} `yaml:"objectives"`
	Interactions  []interactionIn `yaml:"interactions"`
	Contributions []struct {
		Agent       string `yaml:"agent"`
		Interaction string `yaml:"interaction"`
	} `yaml:"contributions"`
	EvaluateAtEpoch *int `yaml:"evaluate_at_epoch"`
}

// missionMetrics are the metrics a mission objective may name.
func missionMetrics() []string {
	return []string{economy.MetricAvgP, economy.MetricMinP, economy.MetricTotalCount, economy.MetricAcceptanceRate, economy.MetricTotalWelfare}
}

func econMission(decode func(v any) error) (any, error) {
	var f missionFile
	if err := decode(&f); err != nil {
		return nil, err
	}
	cfg := economy.DefaultMissionConfig()
	if f.Config != nil && f.Config.MinParticipants != nil {
		cfg.MinParticipants = *f.Config.MinParticipants
	}
	if err := cfg.Validate(); err != nil {
		return nil, configErr(err, "min_participants")
	}
	switch {
	case f.Pool == nil:
		return nil, fieldErr("pool", "missing (the reward pool, > 0)")
	case !(*f.Pool > 0):
		return nil, fieldErr("pool", "%v: the reward pool must be > 0", *f.Pool)
	case f.Coordinator == "":
		return nil, fieldErr("coordinator", "missing")
	case f.EvaluateAtEpoch == nil:
		return nil, fieldErr("evaluate_at_epoch", "missing")
	}
	deadline := 10
	if f.DeadlineEpoch != nil {
		deadline = *f.DeadlineEpoch
	}
	var objs []economy.Objective
	for i, o := range f.Objectives {
		p := fmt.Sprintf("objectives[%d]", i)
		ob := economy.Objective{ID: o.ID, Metric: economy.MetricAvgP, Target: 0.7, Weight: 1}
		if o.ID == "" {
			return nil, fieldErr(p+".id", "missing")
		}
		if o.Metric != nil {
			if !slices.Contains(missionMetrics(), *o.Metric) {
				return nil, fieldErr(p+".metric", "%q is not a metric (known: %s)", *o.Metric, strings.Join(missionMetrics(), ", "))
			}
			ob.Metric = *o.Metric
		}
		if o.Target != nil {
			ob.Target = *o.Target
		}
		if o.Weight != nil {
			if *o.Weight < 0 {
				return nil, fieldErr(p+".weight", "%v is negative", *o.Weight)
			}
			ob.Weight = *o.Weight
		}
		objs = append(objs, ob)
	}
	var all []economy.Interaction
	for i, in := range f.Interactions {
		x, err := in.check(fmt.Sprintf("interactions[%d]", i), true)
		if err != nil {
			return nil, err
		}
		all = append(all, x)
	}
	e, err := economy.NewMissions(cfg)
	if err != nil {
		return nil, err
	}
	m, err := e.Propose(f.Coordinator, "mission", objs, *f.Pool, deadline, 0)
	if err != nil {
		return nil, err
	}
	for i, a := range f.Join {
		if a == "" {
			return nil, fieldErr(fmt.Sprintf("join[%d]", i), "empty agent name")
		}
		if err := e.Join(a, m.ID); err != nil {
			return nil, fieldErr(fmt.Sprintf("join[%d]", i), "%v", err)
		}
	}
	for i, c := range f.Contributions {
		p := fmt.Sprintf("contributions[%d]", i)
		if c.Agent == "" || c.Interaction == "" {
			return nil, fieldErr(p, "needs agent and interaction")
		}
		if err := e.RecordContribution(c.Agent, m.ID, c.Interaction); err != nil {
			if errors.Is(err, economy.ErrNotActive) {
				err = fmt.Errorf("%w: %d of min_participants %d have joined", err, len(m.Participants()), cfg.MinParticipants)
			}
			return nil, fieldErr(p+".agent", "%s: %v", c.Agent, err)
		}
	}
	ev, err := e.Evaluate(m.ID, all, *f.EvaluateAtEpoch)
	if err != nil {
		return nil, err
	}
	out := newObject()
	if ev.Scored {
		out.set("score", ev.Score)
	}
	out.set("status", ev.Status)
	type objOut struct {
		ID     string  `json:"id"`
		Metric string  `json:"metric"`
		Target float64 `json:"target"`
		Weight float64 `json:"weight"`
		Actual float64 `json:"actual"`
		Met    bool    `json:"met"`
	}
	objsOut := []objOut{}
	for _, o := range ev.Objectives {
		objsOut = append(objsOut, objOut{o.ID, o.Metric, o.Target, o.Weight, o.Actual, o.Met})
	}
	out.set("objectives", objsOut)
	payouts := newObject()
	for _, rule := range []string{economy.RewardEqual, economy.RewardProportional, economy.RewardShapley} {
		ps, err := e.DistributeRewardsBy(m.ID, all, rule)
		if err != nil {
			return nil, err
		}
		o := newObject()
		for _, p := range ps {
			o.set(p.Agent, p.Amount)
		}
		payouts.set(rule, o)
	}
	out.set("payouts", payouts)
	if fr, ok := e.FreeRiderIndex(m.ID); ok {
		out.set("free_rider_index", fr)
	}
	return out, nil
}

// ---- market ----

type marketFile struct {
	Config *struct {
		LatencyNoiseMS     *float64 `yaml:"latency_noise_ms"`
		BatchIntervalTicks *int     `yaml:"batch_interval_ticks"`
		MaxOrdersPerTick   *int     `yaml:"max_orders_per_tick"`
		HaltDurationTicks  *int     `yaml:"halt_duration_ticks"`
	} `yaml:"config"`
	Seed   *uint64 `yaml:"seed"`
	Ticks  *int    `yaml:"ticks"`
	Orders []struct {
		BeforeTick int     `yaml:"before_tick"`
		Agent      string  `yaml:"agent"`
		Type       string  `yaml:"type"`
		Resource   string  `yaml:"resource"`
		Quantity   float64 `yaml:"quantity"`
		Price      float64 `yaml:"price"`
	} `yaml:"orders"`
}

// marketTickMS is the time stamp step of the market CLI: an order submitted
// before tick t is stamped (t−1)·100 ms (the reference's default tick
// length), so that latency noise (< 100 ms by default) only reorders orders
// of the same tick.
const marketTickMS = 100

func econMarket(decode func(v any) error) (any, error) {
	var f marketFile
	if err := decode(&f); err != nil {
		return nil, err
	}
	cfg := economy.DefaultMarketConfig()
	if c := f.Config; c != nil {
		if c.LatencyNoiseMS != nil {
			cfg.LatencyNoiseMS = *c.LatencyNoiseMS
		}
		if c.BatchIntervalTicks != nil {
			cfg.BatchIntervalTicks = *c.BatchIntervalTicks
		}
		if c.MaxOrdersPerTick != nil {
			cfg.MaxOrdersPerTick = *c.MaxOrdersPerTick
		}
		if c.HaltDurationTicks != nil {
			cfg.HaltDurationTicks = *c.HaltDurationTicks
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, configErr(err, "latency_noise_ms", "batch_interval_ticks", "max_orders_per_tick", "halt_duration_ticks")
	}
	switch {
	case f.Seed == nil:
		return nil, fieldErr("seed", "missing (latency noise is drawn from it)")
	case f.Ticks == nil:
		return nil, fieldErr("ticks", "missing (how many ticks to process)")
	case *f.Ticks < 1:
		return nil, fieldErr("ticks", "%d: want ≥ 1", *f.Ticks)
	}
	byTick := map[int][]int{}
	for i, o := range f.Orders {
		p := fmt.Sprintf("orders[%d]", i)
		switch {
		case o.BeforeTick < 1 || o.BeforeTick > *f.Ticks:
			return nil, fieldErr(p+".before_tick", "%d is outside 1..ticks (%d)", o.BeforeTick, *f.Ticks)
		case o.Agent == "":
			return nil, fieldErr(p+".agent", "missing")
		case o.Type != economy.OrderBid && o.Type != economy.OrderAsk && o.Type != economy.OrderCancel:
			return nil, fieldErr(p+".type", "%q: want bid, ask or cancel", o.Type)
		case o.Type != economy.OrderCancel && !(o.Quantity > 0):
			return nil, fieldErr(p+".quantity", "%v: want > 0", o.Quantity)
		case o.Type != economy.OrderCancel && !(o.Price > 0):
			return nil, fieldErr(p+".price", "%v: want > 0", o.Price)
		}
		byTick[o.BeforeTick] = append(byTick[o.BeforeTick], i)
	}
	mk, err := economy.NewMarket(cfg, economy.NewRand(*f.Seed))
	if err != nil {
		return nil, err
	}
	type rejected struct {
		Order      int    `json:"order"`
		BeforeTick int    `json:"before_tick"`
		Agent      string `json:"agent"`
		Reason     string `json:"reason"`
	}
	type tickOut struct {
		Tick            int      `json:"tick"`
		OrdersSubmitted int      `json:"orders_submitted"`
		OrdersExecuted  int      `json:"orders_executed"`
		MarketPrice     float64  `json:"market_price"`
		BidAskSpread    float64  `json:"bid_ask_spread"`
		Volatility      *float64 `json:"volatility,omitempty"`
		Halted          bool     `json:"halted"`
	}
	rej := []rejected{}
	ticks := []tickOut{}
	for t := 1; t <= *f.Ticks; t++ {
		for _, i := range byTick[t] {
			o := f.Orders[i]
			err := mk.Submit(economy.Order{Agent: o.Agent, Type: o.Type, Resource: o.Resource, Quantity: o.Quantity, Price: o.Price,
				TimestampMS: float64((t - 1) * marketTickMS)})
			if err != nil {
				rej = append(rej, rejected{i, t, o.Agent, err.Error()})
			}
		}
		tk := mk.ProcessTick()
		to := tickOut{Tick: tk.Tick, OrdersSubmitted: tk.OrdersSubmitted, OrdersExecuted: tk.OrdersExecuted,
			MarketPrice: tk.MarketPrice, BidAskSpread: tk.BidAskSpread, Halted: tk.Halted}
		if tk.VolatilityOK {
			v := tk.Volatility
			to.Volatility = &v
		}
		ticks = append(ticks, to)
	}
	type tradeOut struct {
		Tick     int     `json:"tick"`
		Buyer    string  `json:"buyer"`
		Seller   string  `json:"seller"`
		Price    float64 `json:"price"`
		Quantity float64 `json:"quantity"`
	}
	trades := []tradeOut{}
	for _, t := range mk.Trades() {
		trades = append(trades, tradeOut(t))
	}
	type resting struct {
		Agent    string  `json:"agent"`
		Resource string  `json:"resource"`
		Quantity float64 `json:"quantity"`
		Price    float64 `json:"price"`
	}
	bids, asks := mk.Book()
	conv := func(os []economy.Order) []resting {
		out := []resting{}
		for _, o := range os {
			out = append(out, resting{o.Agent, o.Resource, o.Quantity, o.Price})
		}
		return out
	}
	out := newObject()
	out.set("ticks", ticks)
	out.set("trades", trades)
	book := newObject()
	book.set("bids", conv(bids))
	book.set("asks", conv(asks))
	out.set("book", book)
	out.set("crashes", crashesOut(mk.Crashes(), true))
	if g, ok := mk.SpeedAdvantageGini(); ok {
		out.set("speed_advantage_gini", g)
	}
	out.set("rejected", rej)
	return out, nil
}

type crashOut struct {
	StartTick         int      `json:"start_tick"`
	EndTick           *int     `json:"end_tick,omitempty"`
	PriceDropPct      float64  `json:"price_drop_pct"`
	Severity          float64  `json:"severity"`
	RecoveryTimeTicks *int     `json:"recovery_time_ticks,omitempty"`
	Recovered         bool     `json:"recovered"`
	TriggerAgentIDs   []string `json:"trigger_agent_ids,omitempty"`
}

// crashesOut leaves end_tick and recovery_time_ticks out of a crash that
// has not recovered (the reference reports end = start and recovery 0).
func crashesOut(cs []economy.Crash, agents bool) []crashOut {
	out := []crashOut{}
	for _, c := range cs {
		o := crashOut{StartTick: c.StartTick, PriceDropPct: c.PriceDropPct, Severity: c.Severity, Recovered: c.Recovered}
		if c.Recovered {
			end, rec := c.EndTick, c.RecoveryTimeTicks
			o.EndTick, o.RecoveryTimeTicks = &end, &rec
		}
		if agents {
			o.TriggerAgentIDs = nonNil(c.TriggerAgents)
		}
		out = append(out, o)
	}
	return out
}

// ---- crash ----

type crashFile struct {
	Config *economy.DetectorConfig `yaml:"config"`
	Prices []struct {
		Tick  *int     `yaml:"tick"`
		Price *float64 `yaml:"price"`
	} `yaml:"prices"`
}

func econCrash(decode func(v any) error) (any, error) {
	cfg := economy.DefaultDetectorConfig()
	f := crashFile{Config: &cfg}
	if err := decode(&f); err != nil {
		return nil, err
	}
	if f.Config == nil {
		f.Config = &cfg
	}
	d, err := economy.NewDetector(*f.Config)
	if err != nil {
		return nil, configErr(err, "drop_threshold", "window")
	}
	if len(f.Prices) == 0 {
		return nil, fieldErr("prices", "give at least one {tick, price}")
	}
	for i, p := range f.Prices {
		path := fmt.Sprintf("prices[%d]", i)
		switch {
		case p.Tick == nil:
			return nil, fieldErr(path+".tick", "missing")
		case p.Price == nil:
			return nil, fieldErr(path+".price", "missing")
		case *p.Price < 0:
			return nil, fieldErr(path+".price", "%v is negative", *p.Price)
		case i > 0 && *p.Tick <= *f.Prices[i-1].Tick:
			return nil, fieldErr(path+".tick", "%d does not follow tick %d", *p.Tick, *f.Prices[i-1].Tick)
		}
		d.Update(*p.Tick, *p.Price, nil)
	}
	out := newObject()
	out.set("crashes", crashesOut(d.Crashes(), false))
	if v, ok := d.Volatility(); ok {
		out.set("volatility", v)
	}
	return out, nil
}

// ---- permeability ----

type permeabilityFile struct {
	Config    *economy.PermeabilityConfig `yaml:"config"`
	Effective []struct {
		Threat *float64 `yaml:"threat"`
		Trust  *float64 `yaml:"trust"`
	} `yaml:"effective"`
	Contagion []struct {
		P            *float64 `yaml:"p"`
		Permeability *float64 `yaml:"permeability"`
	} `yaml:"contagion"`
	Optimal []struct {
		Interactions []interactionIn `yaml:"interactions"`
		HarmWeight   *float64        `yaml:"harm_weight"`
	} `yaml:"optimal"`
}

func econPermeability(decode func(v any) error) (any, error) {
	cfg := economy.DefaultPermeabilityConfig()
	f := permeabilityFile{Config: &cfg}
	if err := decode(&f); err != nil {
		return nil, err
	}
	if f.Config == nil {
		f.Config = &cfg
	}
	if err := f.Config.Validate(); err != nil {
		return nil, configErr(err, "base_permeability", "information_decay", "contagion_rate", "spillover_amplification", "threat_sensitivity")
	}
	if len(f.Effective)+len(f.Contagion)+len(f.Optimal) == 0 {
		return nil, fieldErr("effective", "nothing to compute: give effective, contagion or optimal")
	}
	eff, con, opt := []float64{}, []float64{}, []float64{}
	for i, e := range f.Effective {
		p := fmt.Sprintf("effective[%d]", i)
		threat, trust := 0.0, 0.5 // the reference's defaults
		if e.Threat != nil {
			threat = *e.Threat
		}
		if e.Trust != nil {
			trust = *e.Trust
		}
		if err := in01(p+".threat", threat); err != nil {
			return nil, err
		}
		if err := in01(p+".trust", trust); err != nil {
			return nil, err
		}
		eff = append(eff, economy.EffectivePermeability(*f.Config, threat, trust))
	}
	for i, c := range f.Contagion {
		p := fmt.Sprintf("contagion[%d]", i)
		switch {
		case c.P == nil:
			return nil, fieldErr(p+".p", "missing")
		case c.Permeability == nil:
			return nil, fieldErr(p+".permeability", "missing")
		}
		if err := in01(p+".p", *c.P); err != nil {
			return nil, err
		}
		if err := in01(p+".permeability", *c.Permeability); err != nil {
			return nil, err
		}
		con = append(con, economy.ContagionProbability(*f.Config, *c.P, *c.Permeability))
	}
	for i, o := range f.Optimal {
		p := fmt.Sprintf("optimal[%d]", i)
		w := 1.0
		if o.HarmWeight != nil {
			w = *o.HarmWeight
		}
		if w < 0 {
			return nil, fieldErr(p+".harm_weight", "%v is negative", w)
		}
		var ixs []economy.Interaction
		for j, in := range o.Interactions {
			x, err := in.check(fmt.Sprintf("%s.interactions[%d]", p, j), false)
			if err != nil {
				return nil, err
			}
			ixs = append(ixs, x)
		}
		v, err := economy.OptimalPermeability(*f.Config, ixs, w, 10)
		if err != nil {
			return nil, err
		}
		opt = append(opt, v)
	}
	out := newObject()
	out.set("effective", eff)
	out.set("contagion", con)
	out.set("optimal", opt)
	return out, nil
}

// ---- identity ----

type identityFile struct {
	Config *struct {
		CredentialExpiryEpochs *int `yaml:"credential_expiry_epochs"`
	} `yaml:"config"`
	Identities []struct {
		ID                string `yaml:"id"`
		ProofOfPersonhood bool   `yaml:"proof_of_personhood"`
		Credentials       []struct {
			IssuedEpoch *int `yaml:"issued_epoch"`
			Revoked     bool `yaml:"revoked"`
		} `yaml:"credentials"`
	} `yaml:"identities"`
	Epochs []int `yaml:"epochs"`
}

func econIdentity(decode func(v any) error) (any, error) {
	var f identityFile
	if err := decode(&f); err != nil {
		return nil, err
	}
	cfg := economy.DefaultIdentityConfig()
	if f.Config != nil && f.Config.CredentialExpiryEpochs != nil {
		cfg.CredentialExpiryEpochs = *f.Config.CredentialExpiryEpochs
	}
	r, err := economy.NewRegistry(cfg)
	if err != nil {
		return nil, configErr(err, "credential_expiry_epochs")
	}
	switch {
	case len(f.Identities) == 0:
		return nil, fieldErr("identities", "give at least one identity")
	case len(f.Epochs) == 0:
		return nil, fieldErr("epochs", "give at least one epoch")
	}
	var ids []*economy.Identity
	for i, in := range f.Identities {
		p := fmt.Sprintf("identities[%d]", i)
		if in.ID == "" {
			return nil, fieldErr(p+".id", "missing")
		}
		id, err := r.CreateIdentity(in.ID, "", in.ProofOfPersonhood, 0)
		if err != nil {
			return nil, fieldErr(p+".id", "%s: %v", in.ID, err)
		}
		for j, c := range in.Credentials {
			if c.IssuedEpoch == nil {
				return nil, fieldErr(fmt.Sprintf("%s.credentials[%d].issued_epoch", p, j), "missing")
			}
			cr, err := r.Issue(in.ID, "credential", nil, *c.IssuedEpoch, "")
			if err != nil {
				return nil, err
			}
			if c.Revoked {
				r.Revoke(cr.ID)
			}
		}
		ids = append(ids, id)
	}
	trust := newObject()
	for _, id := range ids {
		per := newObject()
		for _, e := range f.Epochs {
			per.set(strconv.Itoa(e), id.TrustScore(e))
		}
		trust.set(id.Agent, per)
	}
	out := newObject()
	out.set("trust", trust)
	return out, nil
}
