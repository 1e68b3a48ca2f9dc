package economy

import (
	"errors"
	"fmt"
	"slices"

	"github.com/swarm-dev/swarm/internal/stats"
)

// Order rejections.
var (
	ErrHalted          = errors.New("market halted")
	ErrOrderLimit      = errors.New("agent reached max_orders_per_tick")
	ErrBadOrder        = errors.New("quantity and price must be > 0")
	ErrUnknownOrderTyp = errors.New("order type must be bid, ask or cancel")
)

// Order types.
const (
	OrderBid    = "bid"
	OrderAsk    = "ask"
	OrderCancel = "cancel"
)

// MarketConfig configures the high-frequency negotiation engine. The
// reference's tick_duration_ms and priority_by_speed have no effect there and
// are absent here.
type MarketConfig struct {
	MaxOrdersPerTick   int     // per agent per tick, ≥ 1 (10)
	LatencyNoiseMS     float64 // ≥ 0 (10): each order's latency += uniform(0, noise)
	BatchIntervalTicks int     // ≥ 1 (5): the book clears on ticks divisible by it
	HaltDurationTicks  int     // ≥ 1 (20)
	// Detector is the flash-crash detector's configuration. The reference
	// hard-wires the default; zero value = DefaultDetectorConfig.
	Detector DetectorConfig
}

// DefaultMarketConfig is the reference's default.
func DefaultMarketConfig() MarketConfig {
	return MarketConfig{MaxOrdersPerTick: 10, LatencyNoiseMS: 10, BatchIntervalTicks: 5, HaltDurationTicks: 20, Detector: DefaultDetectorConfig()}
}

// Validate checks the configuration.
func (c MarketConfig) Validate() error {
	switch {
	case c.MaxOrdersPerTick < 1:
		return fmt.Errorf("%w: max_orders_per_tick = %d, want ≥ 1", ErrInvalidConfig, c.MaxOrdersPerTick)
	case !(c.LatencyNoiseMS >= 0):
		return fmt.Errorf("%w: latency_noise_ms = %v, want ≥ 0", ErrInvalidConfig, c.LatencyNoiseMS)
	case c.BatchIntervalTicks < 1:
		return fmt.Errorf("%w: batch_interval_ticks = %d, want ≥ 1", ErrInvalidConfig, c.BatchIntervalTicks)
	case c.HaltDurationTicks < 1:
		return fmt.Errorf("%w: halt_duration_ticks = %d, want ≥ 1", ErrInvalidConfig, c.HaltDurationTicks)
	}
	if c.Detector != (DetectorConfig{}) {
		return c.Detector.Validate()
	}
	return nil
}

// Order is one order. TimestampMS is set by the caller; LatencyMS gets the
// noise added on submission. Effective time = timestamp + latency decides
// time priority.
type Order struct {
	Agent       string
	Type        string // bid, ask or cancel
	Resource    string
	Quantity    float64
	Price       float64
	TimestampMS float64
	LatencyMS   float64
}

// EffectiveTime is TimestampMS + LatencyMS.
func (o Order) EffectiveTime() float64 { return o.TimestampMS + o.LatencyMS }

// Trade is one execution.
type Trade struct {
	Tick     int
	Buyer    string
	Seller   string
	Price    float64
	Quantity float64
}

// Tick is one processed tick.
type Tick struct {
	Tick            int
	OrdersSubmitted int // accepted orders this tick, cancels included
	OrdersExecuted  int // trades this tick
	MarketPrice     float64
	BidAskSpread    float64
	// Volatility is the detector's index before this tick's price was added;
	// VolatilityOK is false while fewer than 2 prices had been seen.
	Volatility   float64
	VolatilityOK bool
	Halted       bool
}

// Market is the high-frequency negotiation engine: one book for every
// resource, batch clearing at midpoints, halts on flash crashes.
type Market struct {
	cfg        MarketConfig
	rng        Source
	tick       int
	price      float64
	halted     bool
	haltUntil  int
	bids, asks []*Order
	counts     map[string]int
	agents     []string // agents with accepted orders this tick, first-order order
	trades     []Trade
	ticks      []Tick
	det        *Detector
}

// NewMarket returns an engine at tick 0 and price 1.0. rng draws the latency
// noise; nil means NewRand(0).
func NewMarket(cfg MarketConfig, rng Source) (*Market, error) {
	if cfg.Detector == (DetectorConfig{}) {
		cfg.Detector = DefaultDetectorConfig()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rng == nil {
		rng = NewRand(0)
	}
	det, _ := NewDetector(cfg.Detector)
	return &Market{cfg: cfg, rng: rng, price: 1.0, counts: map[string]int{}, det: det}, nil
}

// Submit offers an order; a nil error means it was accepted.
func (mk *Market) Submit(o Order) error {
	if mk.halted {
		return ErrHalted
	}
	if mk.counts[o.Agent] >= mk.cfg.MaxOrdersPerTick {
		return ErrOrderLimit
	}
	if o.Type == OrderCancel {
		keep := func(l []*Order) []*Order {
			return slices.DeleteFunc(l, func(x *Order) bool { return x.Agent == o.Agent && x.Resource == o.Resource })
		}
		mk.bids, mk.asks = keep(mk.bids), keep(mk.asks)
		mk.count(o.Agent)
		return nil
	}
	if !(o.Quantity > 0) || !(o.Price > 0) {
		return ErrBadOrder
	}
	// One draw, before the type check, as in the reference.
	o.LatencyMS += uniform(mk.rng, 0, mk.cfg.LatencyNoiseMS)
	switch o.Type {
	case OrderBid:
		mk.bids = append(mk.bids, &o)
		slices.SortStableFunc(mk.bids, func(a, b *Order) int {
			if c := cmpF(b.Price, a.Price); c != 0 {
				return c
			}
			return cmpF(a.EffectiveTime(), b.EffectiveTime())
		})
	case OrderAsk:
		mk.asks = append(mk.asks, &o)
		slices.SortStableFunc(mk.asks, func(a, b *Order) int {
			if c := cmpF(a.Price, b.Price); c != 0 {
				return c
			}
			return cmpF(a.EffectiveTime(), b.EffectiveTime())
		})
	default:
		return ErrUnknownOrderTyp
	}
	mk.count(o.Agent)
	return nil
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (mk *Market) count(agent string) {
	if mk.counts[agent] == 0 {
		mk.agents = append(mk.agents, agent)
	}
	mk.counts[agent]++
}

// ProcessTick advances one tick: un-halt when due, clear the book on batch
// ticks (even while halted), record the tick and feed the detector; a crash
// halts the market for HaltDurationTicks.
func (mk *Market) ProcessTick() Tick {
	mk.tick++
	if mk.halted && mk.tick >= mk.haltUntil {
		mk.halted = false
	}
	executed := 0
	if mk.tick%mk.cfg.BatchIntervalTicks == 0 {
		for len(mk.bids) > 0 && len(mk.asks) > 0 && mk.bids[0].Price >= mk.asks[0].Price {
			b, a := mk.bids[0], mk.asks[0]
			p, q := (b.Price+a.Price)/2, min(b.Quantity, a.Quantity)
			mk.trades = append(mk.trades, Trade{Tick: mk.tick, Buyer: b.Agent, Seller: a.Agent, Price: p, Quantity: q})
			mk.price = p
			b.Quantity -= q
			a.Quantity -= q
			if b.Quantity <= 1e-10 {
				mk.bids = mk.bids[1:]
			}
			if a.Quantity <= 1e-10 {
				mk.asks = mk.asks[1:]
			}
			executed++
		}
	}
	spread := 0.0
	if len(mk.asks) > 0 {
		best := 0.0
		if len(mk.bids) > 0 {
			best = mk.bids[0].Price
		}
		spread = max(0, mk.asks[0].Price-best)
	}
	submitted := 0
	for _, n := range mk.counts {
		submitted += n
	}
	vol, ok := mk.det.Volatility()
	t := Tick{Tick: mk.tick, OrdersSubmitted: submitted, OrdersExecuted: executed, MarketPrice: mk.price,
		BidAskSpread: spread, Volatility: vol, VolatilityOK: ok, Halted: mk.halted}
	if _, crashed := mk.det.Update(mk.tick, mk.price, mk.agents); crashed {
		mk.Halt(0)
	}
	mk.ticks = append(mk.ticks, t)
	clear(mk.counts)
	mk.agents = nil
	return t
}

// Halt stops order intake until tick + d; d ≤ 0 means HaltDurationTicks.
func (mk *Market) Halt(d int) {
	if d <= 0 {
		d = mk.cfg.HaltDurationTicks
	}
	mk.halted, mk.haltUntil = true, mk.tick+d
}

// Halted reports whether the market refuses orders.
func (mk *Market) Halted() bool { return mk.halted }

// Price is the last trade price (1.0 before any trade).
func (mk *Market) Price() float64 { return mk.price }

// Trades returns the trade log.
func (mk *Market) Trades() []Trade { return slices.Clone(mk.trades) }

// Ticks returns the tick history.
func (mk *Market) Ticks() []Tick { return slices.Clone(mk.ticks) }

// Crashes returns the detector's crash history.
func (mk *Market) Crashes() []Crash { return mk.det.Crashes() }

// Volatility is the detector's current index (false before 2 prices).
func (mk *Market) Volatility() (float64, bool) { return mk.det.Volatility() }

// Book returns copies of the resting bids and asks in priority order.
func (mk *Market) Book() (bids, asks []Order) {
	for _, o := range mk.bids {
		bids = append(bids, *o)
	}
	for _, o := range mk.asks {
		asks = append(asks, *o)
	}
	return bids, asks
}

// SpeedAdvantageGini is the Gini of per-agent trade participations (buyer
// and seller appearances; a self-trade counts twice). ok is false when there
// are no trades (the reference returns 0).
func (mk *Market) SpeedAdvantageGini() (float64, bool) {
	if len(mk.trades) == 0 {
		return 0, false
	}
	var order []string
	n := map[string]float64{}
	for _, t := range mk.trades {
		for _, a := range []string{t.Buyer, t.Seller} {
			if _, ok := n[a]; !ok {
				order = append(order, a)
			}
			n[a]++
		}
	}
	xs := make([]float64, len(order))
	for i, a := range order {
		xs[i] = n[a]
	}
	return Gini(xs)
}

// DetectorConfig configures the flash-crash detector.
type DetectorConfig struct {
	DropThreshold float64 `json:"drop_threshold" yaml:"drop_threshold"` // θ in (0, 1] (0.1)
	Window        int     `json:"window" yaml:"window"`                 // W ≥ 2 (10): prices kept, the current one included
}

// DefaultDetectorConfig is the reference's default (its spike factor 3.0 is
// never used and is absent here).
func DefaultDetectorConfig() DetectorConfig { return DetectorConfig{DropThreshold: 0.1, Window: 10} }

// Validate checks the configuration.
func (c DetectorConfig) Validate() error {
	switch {
	case !(c.DropThreshold > 0 && c.DropThreshold <= 1):
		return fmt.Errorf("%w: drop_threshold = %v, want in (0, 1]", ErrInvalidConfig, c.DropThreshold)
	case c.Window < 2:
		return fmt.Errorf("%w: window = %d, want ≥ 2 (a window of one price can never show a drop)", ErrInvalidConfig, c.Window)
	}
	return nil
}

// Crash is one flash-crash event. Until the price recovers to 95% of the
// pre-crash high, Recovered is false, EndTick = StartTick and
// RecoveryTimeTicks = 0 (the reference's values; do not report them).
type Crash struct {
	StartTick         int
	EndTick           int
	PriceDropPct      float64 // a fraction: 0.25 is a 25% drop
	TriggerAgents     []string
	RecoveryTimeTicks int
	Severity          float64 // drop/θ
	Recovered         bool
}

// Detector is the windowed flash-crash detector.
type Detector struct {
	cfg      DetectorConfig
	window   []float64
	inCrash  bool
	preCrash float64
	crashes  []Crash
}

// NewDetector returns a detector.
func NewDetector(cfg DetectorConfig) (*Detector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Detector{cfg: cfg}, nil
}

// Update adds the price of tick; it returns the new crash when one fires.
// While in a crash no new crash fires; the crash ends when the price is back
// to ≥ 95% of the pre-crash high.
func (d *Detector) Update(tick int, price float64, agents []string) (Crash, bool) {
	d.window = append(d.window, price)
	if len(d.window) > d.cfg.Window {
		d.window = d.window[1:]
	}
	if len(d.window) < 2 {
		return Crash{}, false
	}
	if d.inCrash {
		if price/d.preCrash >= 0.95 {
			c := &d.crashes[len(d.crashes)-1]
			c.EndTick, c.RecoveryTimeTicks, c.Recovered = tick, tick-c.StartTick, true
			d.inCrash = false
		}
		return Crash{}, false
	}
	h := slices.Max(d.window)
	if !(h > 0) {
		return Crash{}, false
	}
	drop := (h - price) / h
	if drop < d.cfg.DropThreshold {
		return Crash{}, false
	}
	d.inCrash, d.preCrash = true, h
	c := Crash{StartTick: tick, EndTick: tick, PriceDropPct: drop, TriggerAgents: slices.Clone(agents), Severity: drop / d.cfg.DropThreshold}
	d.crashes = append(d.crashes, c)
	return c, true
}

// Volatility is the population standard deviation of the returns
// (P_i − P_{i−1})/max(P_{i−1}, 1e-10) over the window. ok is false while
// the window holds fewer than 3 prices (2 returns): the reference returns 0
// then, which for a single return would call a 25% drop "no volatility".
func (d *Detector) Volatility() (float64, bool) {
	if len(d.window) < 3 {
		return 0, false
	}
	rs := make([]float64, len(d.window)-1)
	for i := 1; i < len(d.window); i++ {
		rs[i-1] = (d.window[i] - d.window[i-1]) / max(d.window[i-1], 1e-10)
	}
	return stats.PopStddev(rs), true
}

// InCrash reports whether a crash is under way.
func (d *Detector) InCrash() bool { return d.inCrash }

// Crashes returns the crash history (copies).
func (d *Detector) Crashes() []Crash {
	out := slices.Clone(d.crashes)
	for i := range out {
		out[i].TriggerAgents = slices.Clone(out[i].TriggerAgents)
	}
	return out
}
