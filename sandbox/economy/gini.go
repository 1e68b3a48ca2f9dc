package economy

import "slices"

// Gini is the Gini coefficient of xs: with x sorted ascending,
// G = Σ_{i=1..n} (2i − n − 1)·x_i / (n·Σx). ok is false (and G is 0, as in
// the reference) when there are no values or they sum to 0: the coefficient
// is then undefined, and a caller that prints it should print nothing.
func Gini(xs []float64) (g float64, ok bool) {
	n := len(xs)
	if n == 0 {
		return 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum, num float64
	for i, x := range s {
		sum += x
		num += float64(2*(i+1)-n-1) * x
	}
	if sum == 0 {
		return 0, false
	}
	return num / (float64(n) * sum), true
}

// Interaction is the soft-label record the mission economy and the
// permeability model read: an ID, p = P(v = +1) in [0, 1] and whether the
// counterparty accepted it.
type Interaction struct {
	ID       string  `json:"id" yaml:"id"`
	P        float64 `json:"p" yaml:"p"`
	Accepted bool    `json:"accepted" yaml:"accepted"`
}

func clamp01(x float64) float64 { return min(1, max(0, x)) }
