package sandbox

import (
	"math"
	"sort"
)

// Decision is one action taken at a decision point in one replay.
type Decision struct {
	TaskFamily string  `json:"task_family"`
	DecisionID string  `json:"decision_id"`
	Replay     int     `json:"replay"`
	Action     string  `json:"action"`              // "" = abstained (dropped)
	Benchmark  string  `json:"benchmark,omitempty"` // the reference action, if known
	P          float64 `json:"p,omitempty"`
	Accepted   bool    `json:"accepted,omitempty"`
}

// PointIncoherence is D, E and I for one decision point.
type PointIncoherence struct {
	TaskFamily string  `json:"task_family"`
	DecisionID string  `json:"decision_id"`
	N          int     `json:"n"`
	Modal      string  `json:"modal_action"`
	D          float64 `json:"d"`
	E          float64 `json:"e"`
	I          float64 `json:"i"`
	HasBench   bool    `json:"has_benchmark"`
}

// IncoherenceReport is the per-point and overall incoherence.
type IncoherenceReport struct {
	Points []PointIncoherence `json:"points"`
	MeanD  float64            `json:"mean_d"`
	// MeanE and MeanI average only the points with a benchmark (where E
	// means something); 0 when BenchmarkedPoints is 0.
	MeanE             float64 `json:"mean_e"`
	MeanI             float64 `json:"mean_i"`
	BenchmarkedPoints int     `json:"benchmarked_points"`
	IllusionDelta     float64 `json:"illusion_delta"`
	Abstentions       int     `json:"abstentions"`
}

// Incoherence computes, per (task family, decision id): D = 1 − modal/n;
// E = share of actions differing from the benchmark (0 without one);
// I = D/(E + 1e−8) clipped to [0, 1]. Mean D is over every point; mean E
// and mean I over the points with a benchmark only, since without one E is
// 0 by definition and I would read 1 whenever D > 0. Illusion delta = mean p
// of accepted decisions − (1 − mean D). Abstentions are dropped.
func Incoherence(ds []Decision) IncoherenceReport {
	type key struct{ f, d string }
	groups := map[key][]Decision{}
	var order []key
	var r IncoherenceReport
	var sumPAcc float64
	var nAcc int
	for _, d := range ds {
		if d.Action == "" {
			r.Abstentions++
			continue
		}
		k := key{d.TaskFamily, d.DecisionID}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], d)
		if d.Accepted {
			sumPAcc += d.P
			nAcc++
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].f != order[j].f {
			return order[i].f < order[j].f
		}
		return order[i].d < order[j].d
	})
	for _, k := range order {
		g := groups[k]
		counts := map[string]int{}
		bench := ""
		for _, d := range g {
			counts[d.Action]++
			if d.Benchmark != "" {
				bench = d.Benchmark
			}
		}
		modal, mc := "", -1
		for a, c := range counts {
			if c > mc || (c == mc && a < modal) {
				modal, mc = a, c
			}
		}
		pt := PointIncoherence{TaskFamily: k.f, DecisionID: k.d, N: len(g), Modal: modal, HasBench: bench != ""}
		pt.D = 1 - float64(mc)/float64(len(g))
		if bench != "" {
			diff := 0
			for _, d := range g {
				if d.Action != bench {
					diff++
				}
			}
			pt.E = float64(diff) / float64(len(g))
		}
		pt.I = math.Max(0, math.Min(1, pt.D/(pt.E+1e-8)))
		r.Points = append(r.Points, pt)
		r.MeanD += pt.D
		if pt.HasBench {
			r.MeanE += pt.E
			r.MeanI += pt.I
			r.BenchmarkedPoints++
		}
	}
	if n := float64(len(r.Points)); n > 0 {
		r.MeanD /= n
	}
	if n := float64(r.BenchmarkedPoints); n > 0 {
		r.MeanE /= n
		r.MeanI /= n
	}
	if nAcc > 0 {
		r.IllusionDelta = sumPAcc/float64(nAcc) - (1 - r.MeanD)
	}
	return r
}

// MeanSD returns the mean and population standard deviation of xs (0, 0 for none).
// Its one-pass formula (mean of squares less the squared mean) is the
// sandbox's own and differs from internal/stats.PopStddev's two passes in
// the last digits: kept, so that printed figures stay as they were.
func MeanSD(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	n := float64(len(xs))
	mean = s / n
	return mean, math.Sqrt(math.Max(0, s2/n-mean*mean))
}
