// Package stats holds the summary statistics swarm prints: mean, median,
// population standard deviation and two kinds of quantile. Each had copies
// in nexus, nexus/compare, shadow and sandbox; every figure now comes from
// here.
//
// None of them is gonum's (gonum.org/v1/gonum/stat), although gonum is in
// the module graph: no gonum function computes exactly what swarm has
// always printed, and a printed number must not move in its last digit.
//
//   - stat.Mean sums with floats.Sum, whose amd64 assembly adds into eight
//     partial sums (and starts differently on an unaligned slice), so its
//     last bit depends on the machine and differs from a plain loop; it
//     returns NaN for no values, where swarm reports 0 and says elsewhere
//     that nothing was measured.
//   - stat.PopStdDev subtracts a compensation term from the two-pass sum of
//     squares: more accurate, different in the last bits.
//   - stat.Quantile offers the empirical inverse (whose median of an even
//     count is the lower middle value, not the mean of the two) and R's type
//     4 interpolation; swarm's median averages the two middle values and its
//     interval bounds use R's type 7.
//
// The package imports nothing of swarm's.
package stats

import (
	"math"
	"slices"
	"sort"
)

// Mean is the arithmetic mean of xs, summed in order; 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Median is the middle value of xs, or the mean of the two middle values
// for an even count; 0 for none. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// PopStddev is the population standard deviation of xs (the mean squared
// deviation from Mean, divided by n, square-rooted); 0 for fewer than two
// values.
func PopStddev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := Mean(xs)
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)))
}

// QuantileSorted is the q-quantile of sorted (ascending) by linear
// interpolation between the closest ranks (R's type 7); 0 for none.
func QuantileSorted(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	h := q * float64(len(sorted)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

// Quantile is QuantileSorted of a sorted copy of xs.
func Quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	return QuantileSorted(s, q)
}

// NearestRankSorted is the q-percentile of sorted (ascending) by nearest
// rank: the value of rank q·n rounded up (1-based, clamped to the slice),
// where a q·n less than 1e-6 above a whole number counts as that number, so
// that floating-point error cannot push the rank one up; 0 for none.
func NearestRankSorted(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// z95 is the standard normal quantile of 0.975: the z of a two-sided 95%
// interval.
const z95 = 1.959963984540054

// Wilson95 is the 95% Wilson score interval of a proportion: k successes
// in n trials. ok is false for n < 1 or k outside 0..n (nothing to
// estimate). Unlike the normal (Wald) interval it stays inside [0, 1] and
// is not degenerate at k = 0 or k = n.
func Wilson95(k, n int) (lo, hi float64, ok bool) {
	if n < 1 || k < 0 || k > n {
		return 0, 0, false
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z95 * z95
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := z95 / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return max(0, centre-half), min(1, centre+half), true
}

// Pearson is Pearson's correlation coefficient r of the paired values xs
// and ys (summed in order, two-pass). ok is false when the slices differ
// in length, hold fewer than three pairs, or either has no variance: r is
// then not a measurement.
func Pearson(xs, ys []float64) (r float64, ok bool) {
	if len(xs) != len(ys) || len(xs) < 3 || constant(xs) || constant(ys) {
		return 0, false
	}
	mx, my := Mean(xs), Mean(ys)
	var sxy, sxx, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	r = sxy / math.Sqrt(sxx*syy)
	return max(-1, min(1, r)), true
}

// constant reports whether every value of xs is the same. (A mean of equal
// values may differ from them in the last bit, so a sum of squared
// deviations is no test for "no variance".)
func constant(xs []float64) bool {
	for _, x := range xs[1:] {
		if x != xs[0] {
			return false
		}
	}
	return true
}
