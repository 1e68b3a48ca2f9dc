package economy

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const tol = 1e-6

var approx = cmpopts.EquateApprox(0, tol)

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g (±%g)", what, got, want, tol)
	}
}

// TestAuctionWorkedExamples runs A1–A6 of sandbox-economies.md §1.4.
func TestAuctionWorkedExamples(t *testing.T) {
	t.Parallel()
	x1 := map[string]float64{"x": 1}
	def := DefaultAuctionConfig()
	type alloc struct {
		Resources map[string]float64
		Paid, U   float64
	}
	cases := []struct {
		name      string
		why       string
		bids      []Bid
		supply    []Supply
		converged bool
		rounds    int
		prices    []float64
		allocs    []alloc
		envyFree  bool
		total     float64
		gini      float64
	}{
		{
			name: "A1", why: "demand equals supply at price 1: converges in one round",
			bids:      []Bid{{"a1", 10, x1}, {"a2", 10, x1}},
			supply:    []Supply{{"x", 20}},
			converged: true, rounds: 1, prices: []float64{1},
			allocs:   []alloc{{map[string]float64{"x": 10}, 10, 10}, {map[string]float64{"x": 10}, 10, 10}},
			envyFree: true, total: 20, gini: 0,
		},
		{
			name: "A2", why: "the docs example: 50 rounds without convergence, data rationed by 20/20.2058",
			bids: []Bid{
				{"agent_1", 100, map[string]float64{"compute": 2, "data": 1, "bandwidth": 0.5}},
				{"agent_2", 100, map[string]float64{"compute": 0.5, "data": 2, "bandwidth": 1.5}},
			},
			supply:    []Supply{{"compute", 10}, {"data", 20}, {"bandwidth", 15}},
			converged: false, rounds: 50, prices: []float64{2.654588229, 6.065524227, 3.392973498},
			allocs: []alloc{
				{map[string]float64{"compute": 10, "data": 11.986685418}, 99.251413094, 31.986685418},
				{map[string]float64{"bandwidth": 15, "data": 8.013314582}, 99.499556203, 38.526629164},
			},
			envyFree: true, total: 70.513314582, gini: 0.046373822,
		},
		{
			name: "A3", why: "scarce supply: price follows 0.9p+0.2, demand rationed to 5 each",
			bids:      []Bid{{"a1", 10, x1}, {"a2", 10, x1}},
			supply:    []Supply{{"x", 10}},
			converged: false, rounds: 50, prices: []float64{2 - math.Pow(0.9, 50)},
			allocs:   []alloc{{map[string]float64{"x": 5}, 9.974231124, 5}, {map[string]float64{"x": 5}, 9.974231124, 5}},
			envyFree: true, total: 10, gini: 0,
		},
		{
			name: "A4", why: "a zero budget buys nothing and cannot afford (so cannot envy) the other bundle",
			bids:      []Bid{{"z", 0, x1}, {"b", 10, x1}},
			supply:    []Supply{{"x", 20}},
			converged: false, rounds: 50, prices: []float64{0.502576888},
			allocs:   []alloc{{map[string]float64{}, 0, 0}, {map[string]float64{"x": 19.897453}, 10, 19.897453}},
			envyFree: true, total: 19.897453, gini: 0.5,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := RunAuction(def, c.bids, c.supply)
			if err != nil {
				t.Fatal(err)
			}
			if r.Converged != c.converged || r.Rounds != c.rounds || r.EnvyFree != c.envyFree {
				t.Errorf("%s: converged %v rounds %d envy-free %v, want %v %d %v", c.why, r.Converged, r.Rounds, r.EnvyFree, c.converged, c.rounds, c.envyFree)
			}
			if d := cmp.Diff(c.prices, r.Prices, approx); d != "" {
				t.Errorf("%s: prices (-want +got):\n%s", c.why, d)
			}
			var got []alloc
			for _, a := range r.Allocations {
				got = append(got, alloc{a.Resources, a.PricePaid, a.Utility})
			}
			if d := cmp.Diff(c.allocs, got, approx, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s: allocations (-want +got):\n%s", c.why, d)
			}
			near(t, "total utility", r.TotalUtility, c.total)
			g, _ := Gini(r.Utilities())
			near(t, "gini", g, c.gini)
		})
	}
}

func TestAuctionA2Details(t *testing.T) {
	t.Parallel()
	r, err := RunAuction(DefaultAuctionConfig(), []Bid{
		{"agent_1", 100, map[string]float64{"compute": 2, "data": 1, "bandwidth": 0.5}},
		{"agent_2", 100, map[string]float64{"compute": 0.5, "data": 2, "bandwidth": 1.5}},
	}, []Supply{{"compute", 10}, {"data", 20}, {"bandwidth", 15}})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "last max excess", r.MaxExcess, 0.229065)
}

// TestAuctionTieAndZeroValuation covers A5 (ratio ties go to the greater
// name) and A6 (a zero valuation is still bought with leftover budget).
func TestAuctionTieAndZeroValuation(t *testing.T) {
	t.Parallel()
	// A5: at the first round's prices, b must be bought before a: with a
	// budget of 10 and supply 5 each, the demand at price 1 is b 5 then a 5;
	// the first candidate is visible when the budget covers only one.
	q := demand(Bid{"x", 5, map[string]float64{"a": 1, "b": 1}}, []Supply{{"a", 5}, {"b", 5}}, map[string]int{"a": 0, "b": 1}, []float64{1, 1})
	if d := cmp.Diff([]float64{0, 5}, q); d != "" {
		t.Errorf("A5 tie: demand (-want +got):\n%s", d)
	}
	r, err := RunAuction(DefaultAuctionConfig(), []Bid{{"x", 10, map[string]float64{"a": 1, "b": 1}}}, []Supply{{"a", 5}, {"b", 5}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Allocations[0].Resources["b"] == 0 {
		t.Errorf("A5: b not bought: %+v", r.Allocations[0])
	}
	// A6
	r, err = RunAuction(DefaultAuctionConfig(), []Bid{{"x", 10, map[string]float64{"x": 0, "y": 1}}}, []Supply{{"x", 100}, {"y", 2}})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "A6 y", r.Allocations[0].Resources["y"], 2)
	near(t, "A6 x", r.Allocations[0].Resources["x"], 94.404778425)
	near(t, "A6 price x", r.Prices[0], 0.084741473)
}

func TestAuctionEdgeCases(t *testing.T) {
	t.Parallel()
	r, err := RunAuction(DefaultAuctionConfig(), nil, []Supply{{"x", 1}})
	if err != nil || !r.Converged || !r.EnvyFree || r.Rounds != 0 || len(r.Allocations) != 0 {
		t.Errorf("empty bids: %+v %v, want converged, envy-free, 0 rounds", r, err)
	}
	// Zero supply: excess 0, so the price never moves.
	r, err = RunAuction(DefaultAuctionConfig(), []Bid{{"a", 10, map[string]float64{"x": 1, "y": 1}}}, []Supply{{"x", 0}, {"y", 100}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Prices[0] != 1 {
		t.Errorf("zero-supply price = %v, want 1", r.Prices[0])
	}
	for _, bad := range []AuctionConfig{
		{MaxRounds: 0, PriceAdjustmentRate: 0.1, ConvergenceTolerance: 0.01},
		{MaxRounds: 1, PriceAdjustmentRate: 1.5, ConvergenceTolerance: 0.01},
		{MaxRounds: 1, PriceAdjustmentRate: 0.1, ConvergenceTolerance: 0},
		{MaxRounds: 1, PriceAdjustmentRate: 0.1, ConvergenceTolerance: 0.01, EnvyTolerance: -1},
	} {
		if _, err := RunAuction(bad, []Bid{{"a", 1, nil}}, []Supply{{"x", 1}}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %+v: err %v, want ErrInvalidConfig", bad, err)
		}
	}
}

// TestAuctionEnvyViolation: rationing leaves b (budget 10) more of y than a
// (budget 1); a can afford b's bundle and values it 10/21 above its own (price 1.1 after one round; a 10/21, b 11/21).
func TestAuctionEnvyViolation(t *testing.T) {
	t.Parallel()
	r, err := RunAuction(AuctionConfig{MaxRounds: 1, PriceAdjustmentRate: 0.1, ConvergenceTolerance: 0.01, EnvyTolerance: 0.05},
		[]Bid{{"a", 1, map[string]float64{"y": 10}}, {"b", 10, map[string]float64{"y": 1}}},
		[]Supply{{"y", 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := []EnvyViolation{{Envious: "a", Envied: "b", Gap: 10 * (11.0/21 - 10.0/21)}}
	if d := cmp.Diff(want, r.EnvyViolations, approx); d != "" || r.EnvyFree {
		t.Errorf("envy-free %v, violations (-want +got):\n%s", r.EnvyFree, d)
	}
}

func TestGini(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		why string
		xs  []float64
		g   float64
		ok  bool
	}{
		{"no values: undefined", nil, 0, false},
		{"all zero: undefined", []float64{0, 0}, 0, false},
		{"equal values", []float64{3, 3, 3}, 0, true},
		{"free-rider counts [0,1,3] from the mission example", []float64{3, 0, 1}, 0.5, true},
		{"H2 trade counts", []float64{1, 2, 1}, 1.0 / 6, true},
	} {
		g, ok := Gini(c.xs)
		if ok != c.ok || math.Abs(g-c.g) > 1e-12 {
			t.Errorf("%s: Gini(%v) = %v, %v; want %v, %v", c.why, c.xs, g, ok, c.g, c.ok)
		}
	}
}
