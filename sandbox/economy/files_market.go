package economy

import (
	"fmt"
	"io"
)

// MarketInput is the file of `swarm sandbox econ market`.
type MarketInput struct {
	Config *struct {
		LatencyNoiseMS     *float64 `yaml:"latency_noise_ms"`
		BatchIntervalTicks *int     `yaml:"batch_interval_ticks"`
		MaxOrdersPerTick   *int     `yaml:"max_orders_per_tick"`
		HaltDurationTicks  *int     `yaml:"halt_duration_ticks"`
	} `yaml:"config"`
	Seed   *uint64      `yaml:"seed"`
	Ticks  *int         `yaml:"ticks"`
	Orders []OrderInput `yaml:"orders"`
}

// OrderInput is one order of a MarketInput, submitted before tick
// BeforeTick.
type OrderInput struct {
	BeforeTick int     `yaml:"before_tick"`
	Agent      string  `yaml:"agent"`
	Type       string  `yaml:"type"`
	Resource   string  `yaml:"resource"`
	Quantity   float64 `yaml:"quantity"`
	Price      float64 `yaml:"price"`
}

// MarketReport is the result of a market file.
type MarketReport struct {
	Ticks              []TickReport    `json:"ticks"`
	Trades             []TradeReport   `json:"trades"`
	Book               BookReport      `json:"book"`
	Crashes            []CrashReport   `json:"crashes"`
	SpeedAdvantageGini *float64        `json:"speed_advantage_gini,omitempty"`
	Rejected           []RejectedOrder `json:"rejected"`
}

// TickReport is one processed tick.
type TickReport struct {
	Tick            int      `json:"tick"`
	OrdersSubmitted int      `json:"orders_submitted"`
	OrdersExecuted  int      `json:"orders_executed"`
	MarketPrice     float64  `json:"market_price"`
	BidAskSpread    float64  `json:"bid_ask_spread"`
	Volatility      *float64 `json:"volatility,omitempty"`
	Halted          bool     `json:"halted"`
}

// TradeReport is one trade.
type TradeReport struct {
	Tick     int     `json:"tick"`
	Buyer    string  `json:"buyer"`
	Seller   string  `json:"seller"`
	Price    float64 `json:"price"`
	Quantity float64 `json:"quantity"`
}

// BookReport is the order book after the last tick.
type BookReport struct {
	Bids []RestingOrder `json:"bids"`
	Asks []RestingOrder `json:"asks"`
}

// RestingOrder is an order left in the book.
type RestingOrder struct {
	Agent    string  `json:"agent"`
	Resource string  `json:"resource"`
	Quantity float64 `json:"quantity"`
	Price    float64 `json:"price"`
}

// RejectedOrder is an order the market refused, with its index in the
// input.
type RejectedOrder struct {
	Order      int    `json:"order"`
	BeforeTick int    `json:"before_tick"`
	Agent      string `json:"agent"`
	Reason     string `json:"reason"`
}

// CrashReport is one flash crash; end_tick and recovery_time_ticks are
// absent while it has not recovered (the reference reports end = start and
// recovery 0).
type CrashReport struct {
	StartTick         int      `json:"start_tick"`
	EndTick           *int     `json:"end_tick,omitempty"`
	PriceDropPct      float64  `json:"price_drop_pct"`
	Severity          float64  `json:"severity"`
	RecoveryTimeTicks *int     `json:"recovery_time_ticks,omitempty"`
	Recovered         bool     `json:"recovered"`
	TriggerAgentIDs   []string `json:"trigger_agent_ids,omitempty"`
}

// marketTickMS is the time stamp step of a market file: an order submitted
// before tick t is stamped (t−1)·100 ms (the reference's default tick
// length), so that latency noise (< 100 ms by default) only reorders orders
// of the same tick.
const marketTickMS = 100

// ReadMarketFile reads a market file (name names it in errors) and
// evaluates it.
func ReadMarketFile(name string, r io.Reader) (*MarketReport, error) {
	return evaluateFile(name, r, &MarketInput{}, (*MarketInput).Evaluate)
}

// Evaluate checks the input and runs the market tick by tick.
func (f *MarketInput) Evaluate() (*MarketReport, error) {
	cfg := DefaultMarketConfig()
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
	case cfg.BatchIntervalTicks > MaxIntervalTicks:
		return nil, overMax("config.batch_interval_ticks", cfg.BatchIntervalTicks, MaxIntervalTicks)
	case cfg.HaltDurationTicks > MaxIntervalTicks:
		return nil, overMax("config.halt_duration_ticks", cfg.HaltDurationTicks, MaxIntervalTicks)
	case cfg.MaxOrdersPerTick > MaxOrdersPerTick:
		return nil, overMax("config.max_orders_per_tick", cfg.MaxOrdersPerTick, MaxOrdersPerTick)
	case !(cfg.LatencyNoiseMS <= 1e6):
		return nil, fieldErr("config.latency_noise_ms", "%v is over the maximum of 1e6", cfg.LatencyNoiseMS)
	}
	switch {
	case f.Seed == nil:
		return nil, fieldErr("seed", "missing (latency noise is drawn from it)")
	case f.Ticks == nil:
		return nil, fieldErr("ticks", "missing (how many ticks to process)")
	case *f.Ticks < 1:
		return nil, fieldErr("ticks", "%d: want ≥ 1", *f.Ticks)
	case *f.Ticks > MaxMarketTicks:
		return nil, overMax("ticks", *f.Ticks, MaxMarketTicks)
	}
	byTick := map[int][]int{}
	for i, o := range f.Orders {
		p := fmt.Sprintf("orders[%d]", i)
		switch {
		case o.BeforeTick < 1 || o.BeforeTick > *f.Ticks:
			return nil, fieldErr(p+".before_tick", "%d is outside 1..ticks (%d)", o.BeforeTick, *f.Ticks)
		case o.Agent == "":
			return nil, fieldErr(p+".agent", "missing")
		case o.Type != OrderBid && o.Type != OrderAsk && o.Type != OrderCancel:
			return nil, fieldErr(p+".type", "%q: want bid, ask or cancel", o.Type)
		case o.Type != OrderCancel && !(o.Quantity > 0):
			return nil, fieldErr(p+".quantity", "%v: want > 0", o.Quantity)
		case o.Type != OrderCancel && !(o.Price > 0):
			return nil, fieldErr(p+".price", "%v: want > 0", o.Price)
		}
		byTick[o.BeforeTick] = append(byTick[o.BeforeTick], i)
	}
	mk, err := NewMarket(cfg, NewRand(*f.Seed))
	if err != nil {
		return nil, err
	}
	out := &MarketReport{Ticks: []TickReport{}, Trades: []TradeReport{}, Rejected: []RejectedOrder{}}
	for t := 1; t <= *f.Ticks; t++ {
		for _, i := range byTick[t] {
			o := f.Orders[i]
			err := mk.Submit(Order{Agent: o.Agent, Type: o.Type, Resource: o.Resource, Quantity: o.Quantity, Price: o.Price,
				TimestampMS: float64((t - 1) * marketTickMS)})
			if err != nil {
				out.Rejected = append(out.Rejected, RejectedOrder{i, t, o.Agent, err.Error()})
			}
		}
		tk := mk.ProcessTick()
		out.Ticks = append(out.Ticks, TickReport{Tick: tk.Tick, OrdersSubmitted: tk.OrdersSubmitted, OrdersExecuted: tk.OrdersExecuted,
			MarketPrice: tk.MarketPrice, BidAskSpread: tk.BidAskSpread, Volatility: optional(tk.Volatility, tk.VolatilityOK), Halted: tk.Halted})
	}
	for _, t := range mk.Trades() {
		out.Trades = append(out.Trades, TradeReport(t))
	}
	bids, asks := mk.Book()
	resting := func(os []Order) []RestingOrder {
		out := []RestingOrder{}
		for _, o := range os {
			out = append(out, RestingOrder{o.Agent, o.Resource, o.Quantity, o.Price})
		}
		return out
	}
	out.Book = BookReport{Bids: resting(bids), Asks: resting(asks)}
	out.Crashes = crashReports(mk.Crashes(), true)
	out.SpeedAdvantageGini = optional(mk.SpeedAdvantageGini())
	return out, nil
}

// crashReports converts crashes; agents says whether to name the agents
// that triggered them.
func crashReports(cs []Crash, agents bool) []CrashReport {
	out := []CrashReport{}
	for _, c := range cs {
		o := CrashReport{StartTick: c.StartTick, PriceDropPct: c.PriceDropPct, Severity: c.Severity, Recovered: c.Recovered}
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
