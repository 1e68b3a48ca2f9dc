package economy

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// script is a Source that replays given draws (the reference's MT19937
// draws, to reproduce a worked example exactly).
type script struct {
	t     *testing.T
	draws []float64
}

func (s *script) Float64() float64 {
	if len(s.draws) == 0 {
		s.t.Fatal("script: out of draws")
	}
	d := s.draws[0]
	s.draws = s.draws[1:]
	return d
}

func mustMarket(t *testing.T, cfg MarketConfig, rng Source) *Market {
	t.Helper()
	m, err := NewMarket(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func submit(t *testing.T, m *Market, o Order) {
	t.Helper()
	if err := m.Submit(o); err != nil {
		t.Fatalf("submit %+v: %v", o, err)
	}
}

// TestMarketH1: the trade at the batch boundary does not depend on the
// latency draws (one bid, one ask), so it is exact with our generator.
func TestMarketH1(t *testing.T) {
	t.Parallel()
	m := mustMarket(t, DefaultMarketConfig(), NewRand(42))
	submit(t, m, Order{Agent: "buyer", Type: OrderBid, Resource: "r", Quantity: 5, Price: 1.2})
	submit(t, m, Order{Agent: "seller", Type: OrderAsk, Resource: "r", Quantity: 3, Price: 1.1})
	for i := 1; i <= 4; i++ {
		tk := m.ProcessTick()
		wantSub := 0
		if i == 1 {
			wantSub = 2
		}
		if tk.MarketPrice != 1 || tk.BidAskSpread != 0 || tk.OrdersSubmitted != wantSub || tk.OrdersExecuted != 0 {
			t.Errorf("tick %d: %+v, want price 1, spread 0 (crossed), %d submitted", i, tk, wantSub)
		}
	}
	tk := m.ProcessTick()
	if d := cmp.Diff([]Trade{{Tick: 5, Buyer: "buyer", Seller: "seller", Price: 1.15, Quantity: 3}}, m.Trades(), approx); d != "" || tk.OrdersExecuted != 1 {
		t.Errorf("tick 5 trades (-want +got):\n%s", d)
	}
	bids, asks := m.Book()
	if len(bids) != 1 || math.Abs(bids[0].Quantity-2) > tol || len(asks) != 0 {
		t.Errorf("book after tick 5: %+v / %+v, want 2 units of the bid resting", bids, asks)
	}
	tk = m.ProcessTick()
	if !tk.VolatilityOK {
		t.Fatal("volatility at tick 6 undefined")
	}
	near(t, "volatility at tick 6", tk.Volatility, 0.064951905)
	g, ok := m.SpeedAdvantageGini()
	if !ok || g != 0 {
		t.Errorf("speed-advantage Gini = %v, %v; want 0", g, ok)
	}
}

// h2 submits H2's orders (bids p and q 2 @ 2.0, ask m 3 @ 1.0) and clears.
func h2(t *testing.T, rng Source) []Trade {
	cfg := DefaultMarketConfig()
	cfg.BatchIntervalTicks = 1
	m := mustMarket(t, cfg, rng)
	submit(t, m, Order{Agent: "p", Type: OrderBid, Resource: "r", Quantity: 2, Price: 2})
	submit(t, m, Order{Agent: "q", Type: OrderBid, Resource: "r", Quantity: 2, Price: 2})
	submit(t, m, Order{Agent: "m", Type: OrderAsk, Resource: "r", Quantity: 3, Price: 1})
	m.ProcessTick()
	if g, ok := m.SpeedAdvantageGini(); !ok || math.Abs(g-1.0/6) > tol {
		t.Errorf("Gini of trade counts = %v, %v; want 0.166666667 (counts [1,1,2] whichever bid wins)", g, ok)
	}
	return m.Trades()
}

// TestMarketH2Exact replays the reference's seed-7 latencies (effective
// times 3.238 and 1.508): q, the earlier, fills first.
func TestMarketH2Exact(t *testing.T) {
	t.Parallel()
	got := h2(t, &script{t: t, draws: []float64{0.3238, 0.1508, 0.5}})
	want := []Trade{{1, "q", "m", 1.5, 2}, {1, "p", "m", 1.5, 1}}
	if d := cmp.Diff(want, got, approx); d != "" {
		t.Errorf("trades (-want +got):\n%s", d)
	}
}

// TestMarketH2Distribution: with our generator, which equal-priced bid wins
// is a fair coin (independent uniform latencies). Over n seeds the share of
// q-first runs must be within 5 standard errors of 0.5 (deterministic
// seeds: the test cannot flake).
func TestMarketH2Distribution(t *testing.T) {
	t.Parallel()
	const n = 2000
	qFirst := 0
	for seed := range uint64(n) {
		tr := h2(t, NewRand(seed))
		if len(tr) != 2 || tr[0].Quantity != 2 || tr[1].Quantity != 1 {
			t.Fatalf("seed %d: trades %+v, want 2 then 1", seed, tr)
		}
		if tr[0].Buyer == "q" {
			qFirst++
		}
	}
	share, se := float64(qFirst)/n, math.Sqrt(0.25/n)
	if math.Abs(share-0.5) > 5*se {
		t.Errorf("q first in %.3f of runs, want 0.5 ± %.3f", share, 5*se)
	}
}

func TestMarketH3CrashAndHalt(t *testing.T) {
	t.Parallel()
	cfg := DefaultMarketConfig()
	cfg.BatchIntervalTicks, cfg.HaltDurationTicks = 1, 3
	m := mustMarket(t, cfg, NewRand(1))
	submit(t, m, Order{Agent: "b", Type: OrderBid, Resource: "r", Quantity: 10, Price: 10})
	submit(t, m, Order{Agent: "s", Type: OrderAsk, Resource: "r", Quantity: 10, Price: 10})
	if tk := m.ProcessTick(); tk.MarketPrice != 10 {
		t.Fatalf("tick 1 price %v, want 10", tk.MarketPrice)
	}
	submit(t, m, Order{Agent: "b", Type: OrderBid, Resource: "r", Quantity: 1, Price: 8})
	submit(t, m, Order{Agent: "s", Type: OrderAsk, Resource: "r", Quantity: 1, Price: 7})
	tk := m.ProcessTick()
	if tk.MarketPrice != 7.5 || tk.Halted || !m.Halted() {
		t.Errorf("tick 2: %+v, market halted %v; want price 7.5, record not halted, market halted", tk, m.Halted())
	}
	cr := m.Crashes()
	want := []Crash{{StartTick: 2, EndTick: 2, PriceDropPct: 0.25, TriggerAgents: []string{"b", "s"}, Severity: 2.5}}
	if d := cmp.Diff(want, cr, approx); d != "" {
		t.Errorf("crash (-want +got):\n%s", d)
	}
	wantVol := map[int]float64{4: 0.125, 5: 0.117851130, 6: 0.108253175}
	for tick := 3; tick <= 5; tick++ {
		if err := m.Submit(Order{Agent: "b", Type: OrderCancel, Resource: "r"}); !errors.Is(err, ErrHalted) {
			t.Errorf("order before tick %d: %v, want ErrHalted (cancels too)", tick, err)
		}
		tk := m.ProcessTick()
		if tk.Halted != (tick < 5) {
			t.Errorf("tick %d halted = %v", tick, tk.Halted)
		}
		if w, ok := wantVol[tick]; ok {
			near(t, "volatility", tk.Volatility, w)
		}
	}
	submit(t, m, Order{Agent: "b", Type: OrderBid, Resource: "r", Quantity: 1, Price: 9.8})
	submit(t, m, Order{Agent: "s", Type: OrderAsk, Resource: "r", Quantity: 1, Price: 9.7})
	tk = m.ProcessTick()
	near(t, "tick 6 price", tk.MarketPrice, 9.75)
	near(t, "volatility at 6", tk.Volatility, wantVol[6])
	cr = m.Crashes()
	if len(cr) != 1 || !cr[0].Recovered || cr[0].EndTick != 6 || cr[0].RecoveryTimeTicks != 4 {
		t.Errorf("after tick 6: %+v, want recovered at 6 after 4 ticks", cr)
	}
}

func TestDetectorH4(t *testing.T) {
	t.Parallel()
	d, err := NewDetector(DefaultDetectorConfig())
	if err != nil {
		t.Fatal(err)
	}
	prices := []float64{10, 10, 10, 10, 10, 8, 8.5, 9.2, 9.6, 9.6, 10, 8.9}
	wantVol := []float64{0.08, 0.082416835, 0.084729654, 0.081056767, 0.076422428, 0.077613531, 0.085442364}
	for tick, p := range prices {
		d.Update(tick, p, nil)
		if tick >= 5 {
			v, ok := d.Volatility()
			if !ok {
				t.Fatalf("tick %d: volatility undefined", tick)
			}
			near(t, "volatility", v, wantVol[tick-5])
		}
	}
	want := []Crash{
		{StartTick: 5, EndTick: 8, PriceDropPct: 0.2, RecoveryTimeTicks: 3, Severity: 2.0, Recovered: true},
		{StartTick: 11, EndTick: 11, PriceDropPct: 0.10999999999999996, Severity: 1.0999999999999994},
	}
	if d := cmp.Diff(want, d.Crashes(), approx, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("crashes (-want +got):\n%s", d)
	}
	d2, _ := NewDetector(DefaultDetectorConfig())
	for i, p := range []float64{10, 11, 9, 12, 8} {
		d2.Update(i, p, nil)
	}
	v, _ := d2.Volatility()
	near(t, "volatility of 10,11,9,12,8", v, 0.256713128)
	d3, _ := NewDetector(DefaultDetectorConfig())
	if _, ok := d3.Volatility(); ok {
		t.Error("volatility with no prices is defined, want undefined")
	}
	d3.Update(0, 5, nil)
	if _, ok := d3.Volatility(); ok {
		t.Error("volatility with one price is defined, want undefined")
	}
	d3.Update(1, 4, nil)
	if _, ok := d3.Volatility(); ok {
		t.Error("volatility of a single return is defined, want undefined (its spread is 0 by construction)")
	}
	d3.Update(2, 4, nil)
	if v, ok := d3.Volatility(); !ok || math.Abs(v-0.1) > tol {
		t.Errorf("volatility of returns [-0.2, 0] = %v, %v; want 0.1", v, ok)
	}
}

func TestMarketSubmitRules(t *testing.T) {
	t.Parallel()
	cfg := DefaultMarketConfig()
	cfg.MaxOrdersPerTick = 2
	r := &script{t: t, draws: []float64{0.1, 0.2}}
	m := mustMarket(t, cfg, r)
	if err := m.Submit(Order{Agent: "a", Type: OrderBid, Quantity: 0, Price: 1}); !errors.Is(err, ErrBadOrder) {
		t.Errorf("quantity 0: %v", err)
	}
	// An unknown type consumes a draw and is not counted.
	if err := m.Submit(Order{Agent: "a", Type: "swap", Quantity: 1, Price: 1}); !errors.Is(err, ErrUnknownOrderTyp) {
		t.Errorf("unknown type: %v", err)
	}
	if len(r.draws) != 1 {
		t.Errorf("draws left %d, want 1 (the unknown type drew one)", len(r.draws))
	}
	submit(t, m, Order{Agent: "a", Type: OrderBid, Resource: "x", Quantity: 1, Price: 1})
	submit(t, m, Order{Agent: "a", Type: OrderCancel, Resource: "x"})
	if err := m.Submit(Order{Agent: "a", Type: OrderCancel, Resource: "x"}); !errors.Is(err, ErrOrderLimit) {
		t.Errorf("third order in a tick: %v, want ErrOrderLimit", err)
	}
	if b, _ := m.Book(); len(b) != 0 {
		t.Errorf("book after cancel: %+v", b)
	}
	if tk := m.ProcessTick(); tk.OrdersSubmitted != 2 || tk.VolatilityOK {
		t.Errorf("tick 1: %+v, want 2 submitted (cancel counted), volatility undefined", tk)
	}
	if _, ok := m.SpeedAdvantageGini(); ok {
		t.Error("Gini without trades is defined, want undefined")
	}
}
