package compare

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/swarm-dev/swarm/internal/stats"
)

// Interval is a confidence interval.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Overlaps reports whether two intervals share any point.
func (a Interval) Overlaps(b Interval) bool { return a.Lo <= b.Hi && b.Lo <= a.Hi }

// Contains reports whether x lies in the interval.
func (a Interval) Contains(x float64) bool { return a.Lo <= x && x <= a.Hi }

// BootstrapMeanCI is the percentile bootstrap interval of the mean of xs at
// level (e.g. 0.95), with B resamples from a seeded generator. One value (or
// none) gives a degenerate interval.
func BootstrapMeanCI(xs []float64, level float64, B int, seed uint64) Interval {
	if len(xs) == 0 {
		return Interval{}
	}
	if len(xs) == 1 {
		return Interval{xs[0], xs[0]}
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	means := make([]float64, B)
	for b := range means {
		var s float64
		for range xs {
			s += xs[rng.IntN(len(xs))]
		}
		means[b] = s / float64(len(xs))
	}
	return percentileInterval(means, level)
}

// BootstrapDiffCI is the percentile bootstrap interval of mean(a) − mean(b)
// for paired samples (resampling pairs when len(a) == len(b), else each
// side independently).
func BootstrapDiffCI(a, b []float64, level float64, B int, seed uint64) Interval {
	if len(a) == 0 || len(b) == 0 {
		return Interval{}
	}
	rng := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
	diffs := make([]float64, B)
	paired := len(a) == len(b)
	for k := range diffs {
		var sa, sb float64
		if paired {
			for range a {
				i := rng.IntN(len(a))
				sa += a[i]
				sb += b[i]
			}
		} else {
			for range a {
				sa += a[rng.IntN(len(a))]
			}
			for range b {
				sb += b[rng.IntN(len(b))]
			}
		}
		diffs[k] = sa/float64(len(a)) - sb/float64(len(b))
	}
	return percentileInterval(diffs, level)
}

func percentileInterval(xs []float64, level float64) Interval {
	sort.Float64s(xs)
	alpha := (1 - level) / 2
	return Interval{Lo: stats.QuantileSorted(xs, alpha), Hi: stats.QuantileSorted(xs, 1-alpha)}
}

// McNemar is the exact (binomial) McNemar test on paired binary outcomes.
type McNemar struct {
	// B: first passed, second failed. C: first failed, second passed.
	B int     `json:"a_only"`
	C int     `json:"b_only"`
	P float64 `json:"p_value"` // two-sided exact p
}

// McNemarExact computes the two-sided exact McNemar p-value from the
// discordant counts: 2·P(X ≤ min(b,c)) for X ~ Binomial(b+c, ½), capped at 1.
// With no discordant pairs p is 1.
func McNemarExact(b, c int) McNemar {
	n := b + c
	if n == 0 {
		return McNemar{B: b, C: c, P: 1}
	}
	k := min(b, c)
	// Sum binomial probabilities in log space for stability.
	var p float64
	for i := 0; i <= k; i++ {
		p += math.Exp(logChoose(n, i) - float64(n)*math.Ln2)
	}
	return McNemar{B: b, C: c, P: math.Min(1, 2*p)}
}

func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
