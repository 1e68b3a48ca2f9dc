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
