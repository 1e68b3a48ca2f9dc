package stats

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummaries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                 string
		xs                   []float64
		mean, median, stddev float64
	}{
		{"no values: 0 everywhere (callers say when nothing was measured)", nil, 0, 0, 0},
		{"one value: no spread", []float64{7}, 7, 7, 0},
		{"even count: the median is the mean of the two middle values", []float64{4, 1, 3, 2}, 2.5, 2.5, math.Sqrt(1.25)},
		{"odd count, unsorted: the middle value", []float64{9, 1, 5}, 5, 5, math.Sqrt(32.0 / 3)},
		{"population deviation (divides by n, not n-1)", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, 4.5, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]float64(nil), tc.xs...)
			got := []float64{Mean(tc.xs), Median(tc.xs), PopStddev(tc.xs)}
			if d := cmp.Diff([]float64{tc.mean, tc.median, tc.stddev}, got); d != "" {
				t.Errorf("mean, median, stddev (-want +got)\n%s", d)
			}
			if d := cmp.Diff(in, tc.xs); d != "" {
				t.Errorf("the input was modified (-before +after)\n%s", d)
			}
		})
	}
}

// Mean adds in slice order, as swarm always has: the last digit of a
// printed mean depends on it (gonum's floats.Sum adds in another order).
func TestMeanSumsInOrder(t *testing.T) {
	t.Parallel()
	// In order: 1e16+1 rounds to 1e16, -1e16 gives 0, +1 gives 1: 1/4.
	// Pairwise ((1e16-1e16)+(1+1)) would give 2/4.
	if got := Mean([]float64{1e16, 1, -1e16, 1}); got != 0.25 {
		t.Errorf("Mean = %v, want 0.25 (the in-order sum / n)", got)
	}
}

func TestQuantiles(t *testing.T) {
	t.Parallel()
	xs := []float64{4, 1, 3, 2}
	tests := []struct {
		name string
		q    float64
		want float64
		got  func([]float64, float64) float64
	}{
		{"type 7: the median interpolates", 0.5, 2.5, Quantile},
		{"type 7: p95 interpolates between the two top values", 0.95, 3.85, Quantile},
		{"type 7: q=1 is the maximum", 1, 4, Quantile},
		{"type 7: no values", 0.5, 0, func(_ []float64, q float64) float64 { return Quantile(nil, q) }},
		{"nearest rank: p50 of 4 is the 2nd value", 0.5, 2, func(xs []float64, q float64) float64 { return NearestRankSorted([]float64{1, 2, 3, 4}, q) }},
		{"nearest rank: p95 of 4 is the 4th value", 0.95, 4, func(xs []float64, q float64) float64 { return NearestRankSorted([]float64{1, 2, 3, 4}, q) }},
		{"nearest rank: q=0 clamps to the first value", 0, 1, func(xs []float64, q float64) float64 { return NearestRankSorted([]float64{1, 2, 3, 4}, q) }},
		{"nearest rank: no values", 0.5, 0, func(_ []float64, q float64) float64 { return NearestRankSorted(nil, q) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.got(xs, tc.q); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if d := cmp.Diff([]float64{4, 1, 3, 2}, xs); d != "" {
		t.Errorf("Quantile sorted its input (-want +got)\n%s", d)
	}
}

// TestWilson95 checks the interval against the published values of
// Newcombe (1998), "Two-sided confidence intervals for the single
// proportion", Table I, method 3 (Wilson score, no continuity correction),
// given there to four decimals.
func TestWilson95(t *testing.T) {
	t.Parallel()
	tests := []struct {
		why    string
		k, n   int
		lo, hi float64
		ok     bool
	}{
		{"Newcombe's 81/263: an interior proportion", 81, 263, 0.2553, 0.3662, true},
		{"Newcombe's 15/148: a small proportion", 15, 148, 0.0624, 0.1605, true},
		{"Newcombe's 0/20: zero successes still get an upper bound", 0, 20, 0, 0.1611, true},
		{"Newcombe's 1/29: one success", 1, 29, 0.0061, 0.1718, true},
		{"n/n mirrors 0/n: the bound stays below 1 only in the lower end", 20, 20, 1 - 0.1611, 1, true},
		{"no trials: nothing to estimate", 0, 0, 0, 0, false},
		{"k above n: not a proportion", 3, 2, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			lo, hi, ok := Wilson95(tc.k, tc.n)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if math.Abs(lo-tc.lo) > 5e-5 || math.Abs(hi-tc.hi) > 5e-5 {
				t.Errorf("Wilson95(%d, %d) = [%.5f, %.5f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
			}
		})
	}
}

// TestPearson checks r against a hand computation and the cases where r
// is not a measurement.
func TestPearson(t *testing.T) {
	t.Parallel()
	tests := []struct {
		why    string
		xs, ys []float64
		r      float64
		ok     bool
	}{
		// By hand: means 2.5 and 3.75; Σdxdy = 3.5, Σdx² = 5, Σdy² = 4.75;
		// r = 3.5 / √23.75 = 0.718184...
		{"four points by hand", []float64{1, 2, 3, 4}, []float64{2, 4, 5, 4}, 3.5 / math.Sqrt(23.75), true},
		{"a falling line is −1", []float64{0, 10, 20}, []float64{1, 0.5, 0}, -1, true},
		{"two points always lie on a line: not enough data", []float64{1, 2}, []float64{3, 1}, 0, false},
		{"no variance in x: undefined", []float64{5, 5, 5}, []float64{1, 2, 3}, 0, false},
		{"no variance in y: undefined", []float64{1, 2, 3}, []float64{0.4, 0.4, 0.4}, 0, false},
		{"unpaired lengths", []float64{1, 2, 3}, []float64{1, 2}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			r, ok := Pearson(tc.xs, tc.ys)
			if ok != tc.ok || math.Abs(r-tc.r) > 1e-12 {
				t.Errorf("Pearson = (%v, %v), want (%v, %v)", r, ok, tc.r, tc.ok)
			}
		})
	}
}
