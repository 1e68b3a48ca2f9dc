package sandbox

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g", name, got, want)
	}
}

func TestProxyGoldenValues(t *testing.T) {
	t.Parallel()
	p, err := NewProxy(DefaultProxyConfig())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    Observables
		v, p float64
	}{
		{"good interaction", Observables{0.8, 0, 0, 0, 0.5}, 0.82, 0.8375349374},
		{"bad interaction with counts", Observables{-0.5, 5, 3, 2, -0.6}, -0.656228, 0.2120761567},
		{"all zero: counts of zero are +1", Observables{}, 0.4, 0.6899744811},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			near(t, "v̂", p.VHat(tc.o), tc.v, 1e-9)
			near(t, "p", p.P(tc.o), tc.p, 1e-10)
		})
	}
	if p.Clamped() != 0 {
		t.Errorf("clamped %d on in-range inputs", p.Clamped())
	}
	p.VHat(Observables{TaskProgress: 3, Rework: -1, Engagement: -9})
	if p.Clamped() != 3 {
		t.Errorf("clamped = %d, want 3", p.Clamped())
	}
}

func TestProxyConfigValidation(t *testing.T) {
	t.Parallel()
	c := DefaultProxyConfig()
	c.Weights = ProxyWeights{}
	p, err := NewProxy(c)
	if err != nil || p.Config().Weights != (ProxyWeights{0.25, 0.25, 0.25, 0.25}) {
		t.Errorf("all-zero weights should become equal: %+v %v", p.Config().Weights, err)
	}
	c.Weights = ProxyWeights{2, 1, 1, 0}
	p, _ = NewProxy(c)
	if p.Config().Weights != (ProxyWeights{0.5, 0.25, 0.25, 0}) {
		t.Errorf("not normalised: %+v", p.Config().Weights)
	}
	for _, bad := range []ProxyConfig{
		{Weights: ProxyWeights{-1, 1, 1, 1}, DecayRework: .3, DecayRejections: .4, DecayMisuse: .5, K: 2},
		{Weights: ProxyWeights{1, 1, 1, 1}, DecayRework: .3, DecayRejections: .4, DecayMisuse: .5, K: 0},
		{Weights: ProxyWeights{1, 1, 1, 1}, DecayRework: .3, DecayRejections: .4, DecayMisuse: .5, K: 101},
		{Weights: ProxyWeights{1, 1, 1, 1}, DecayRework: 0, DecayRejections: .4, DecayMisuse: .5, K: 2},
	} {
		if _, err := NewProxy(bad); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

func TestSigmoidHelpers(t *testing.T) {
	t.Parallel()
	near(t, "inverse", InverseSigmoid(Sigmoid(0.37, 2, 0.1), 2, 0.1), 0.37, 1e-12)
	near(t, "derivative at b", SigmoidDerivative(0.1, 2, 0.1), 0.5, 1e-12) // k·½·½
	lo, hi := UncertaintyBand(0.3, 0.7, 2, 0)
	near(t, "band symmetric", lo, -hi, 1e-12)
	near(t, "band hi", hi, math.Log(0.7/0.3)/2, 1e-12)
}

func TestPayoffGoldenValues(t *testing.T) {
	t.Parallel()
	c := DefaultPayoffConfig()
	half := c.Payoff(Interaction{P: 0.5})
	near(t, "S", half.S, 0.5, 1e-12)
	near(t, "E", half.E, 1.0, 1e-12)
	near(t, "π_a", half.PiA, 0.25, 1e-12)
	near(t, "π_b", half.PiB, 0.25, 1e-12)
	zero := c.Payoff(Interaction{P: 0})
	near(t, "π_a at 0", zero.PiA, -0.5, 1e-12)
	near(t, "social surplus at 0", zero.S-zero.E, -3, 1e-12)
	near(t, "break-even", c.BreakEven(), 1.0/3, 1e-12)
	near(t, "social break-even", c.SocialBreakEven(), 0.6, 1e-12)
	if (PayoffConfig{}).BreakEven() != 0.5 || (PayoffConfig{}).SocialBreakEven() != 0.5 {
		t.Error("zero denominators give 0.5")
	}
	// the reputation term moves the payoff; transfers and costs too
	moved := c.Payoff(Interaction{P: 0.5, RA: 0.1, RB: -0.2, Tau: 0.05, CA: 0.01, CB: 0.02})
	near(t, "π_a with r, τ, c", moved.PiA, 0.25-0.05-0.01+0.1, 1e-12)
	near(t, "π_b with r, τ, c", moved.PiB, 0.25+0.05-0.02-0.2, 1e-12)
}

func metricsOf(ps []float64, acc []bool, gt []int) Report {
	m := NewMetrics(DefaultPayoffConfig())
	for i, p := range ps {
		in := Interaction{P: p, Accepted: acc[i]}
		if gt != nil {
			in.GroundTruth = gt[i]
		}
		m.Add(in)
	}
	return m.Report()
}

func TestMetricsGoldenValues(t *testing.T) {
	t.Parallel()
	r := metricsOf([]float64{0.9, 0.7, 0.3, 0.1}, []bool{true, true, false, false}, nil)
	near(t, "toxicity", r.Toxicity, 0.2, 1e-12)
	near(t, "quality gap", r.QualityGap, 0.6, 1e-12)
	near(t, "spread", r.Spread, -0.9, 1e-12)
	near(t, "quality correlation", r.QualityCorrelation, 0.9486832981, 1e-9)
	near(t, "total welfare", r.TotalWelfare, 2.8, 1e-12)
	near(t, "net social welfare", r.NetSocialWelfare, 2.0, 1e-12)
	// hand-computed: E[p] = 0.5, toxicity_all 0.5; variance = 0.35 − 0.25 = 0.1; cv = √0.1/0.5
	near(t, "toxicity_all", r.ToxicityAll, 0.5, 1e-12)
	near(t, "variance", r.Variance, 0.1, 1e-12)
	near(t, "cv", r.CV, math.Sqrt(0.1)/0.5, 1e-12)
	// selection credit = E[p|acc] − E[p] = 0.3; decomposition closes
	near(t, "selection credit", r.SelectionCredit, 0.3, 1e-12)
	near(t, "reconstruction error", r.ReconstructionError, 0, 1e-12)
	// accepting exactly the two highest: efficiency 1 (whole bins are summed exactly)
	near(t, "selection efficiency", r.SelectionEfficiency, 1, 1e-12)
	near(t, "uncertain fraction (none strictly between 0.3 and 0.7)", r.UncertainFraction, 0, 1e-12)
	near(t, "participation high", r.ParticipationHighP, 1, 1e-12)
	near(t, "participation low", r.ParticipationLowP, 0, 1e-12)
	// π_a over all = Σ θS / 4 = (0.85+0.55+(-0.05)+(-0.35))/4 = 0.25; over accepted 0.7 → 0.45
	near(t, "conditional loss a", r.ConditionalLossA, 0.45, 1e-12)
	if r.Brier != nil {
		t.Error("calibration without ground truth must be absent")
	}

	adverse := metricsOf([]float64{0.3, 0.35, 0.8, 0.85}, []bool{true, true, false, false}, nil)
	near(t, "adverse toxicity", adverse.Toxicity, 0.675, 1e-12)
	near(t, "adverse quality gap", adverse.QualityGap, -0.5, 1e-12)
	near(t, "adverse spread", adverse.Spread, 0.75, 1e-12)

	none := metricsOf([]float64{0.4}, []bool{false}, nil)
	if none.Toxicity != 0 || none.QualityGap != 0 {
		t.Errorf("no accepted: toxicity %v gap %v, want 0", none.Toxicity, none.QualityGap)
	}
}

func TestCalibrationMetrics(t *testing.T) {
	t.Parallel()
	// p: 0.9(+), 0.8(−), 0.3(+), 0.2(−)
	r := metricsOf([]float64{0.9, 0.8, 0.3, 0.2}, []bool{true, true, true, true}, []int{1, -1, 1, -1})
	// Brier = (0.01 + 0.64 + 0.49 + 0.04)/4 = 0.295
	near(t, "brier", *r.Brier, 0.295, 1e-12)
	// log loss = −(ln .9 + ln .2 + ln .3 + ln .8)/4
	near(t, "log loss", *r.LogLoss, -(math.Log(0.9)+math.Log(0.2)+math.Log(0.3)+math.Log(0.8))/4, 1e-12)
	// AUC: pairs (pos, neg): (.9,.8)1 (.9,.2)1 (.3,.8)0 (.3,.2)1 → 3/4
	near(t, "auc", *r.AUC, 0.75, 1e-12)
	// ECE: bins 9:{.9,y1} 8:{.8,y0} 3:{.3,y1} 2:{.2,y0}: (0.1+0.8+0.7+0.2)/4 = 0.45
	near(t, "ece", *r.ECE, 0.45, 1e-12)
	// calibration-in-the-large E[p] − E[y] = 0.55 − 0.5, signed as the reference
	near(t, "calibration error", *r.CalibrationError, 0.05, 1e-12)
	under := metricsOf([]float64{0.2, 0.4}, []bool{true, true}, []int{1, 1})
	near(t, "underconfident p gives a negative calibration error", *under.CalibrationError, -0.7, 1e-12)
	ties := metricsOf([]float64{0.5, 0.5}, []bool{true, true}, []int{1, -1})
	near(t, "auc with a tie", *ties.AUC, 0.5, 1e-12)
	// p values 5e-6 apart, closer than any fixed histogram's bins: the
	// positive is ranked above the negative, so the AUC is 1, not ½.
	close := metricsOf([]float64{0.500010, 0.500005}, []bool{true, true}, []int{1, -1})
	near(t, "auc separates close p values", *close.AUC, 1, 1e-12)
	clamp := metricsOf([]float64{0}, []bool{true}, []int{1})
	near(t, "log loss clamps p to 1e-15", *clamp.LogLoss, -math.Log(1e-15), 1e-9)
}

// TestAUCMatchesPairwise compares the sort-based AUC with the definition
// (every positive–negative pair, ties ½) on data with many ties.
func TestAUCMatchesPairwise(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct {
		name   string
		n      int
		levels int // p takes this many distinct values: few levels, many ties
	}{{"many ties", 500, 5}, {"few ties", 500, 1 << 20}, {"one of each", 2, 3}} {
		m := NewMetrics(DefaultPayoffConfig())
		var ps []float64
		var ys []int
		for i := 0; i < tc.n; i++ {
			p := float64(rng.IntN(tc.levels)) / float64(tc.levels)
			y := 1
			if rng.Float64() < 1-p || i == 1 {
				y = -1
			}
			if i == 0 {
				y = 1
			}
			ps, ys = append(ps, p), append(ys, y)
			m.Add(Interaction{P: p, Accepted: true, GroundTruth: y})
		}
		var u, pairs float64
		for i := range ps {
			for j := range ps {
				if ys[i] > 0 && ys[j] < 0 {
					pairs++
					switch {
					case ps[i] > ps[j]:
						u++
					case ps[i] == ps[j]:
						u += 0.5
					}
				}
			}
		}
		near(t, tc.name, *m.Report().AUC, u/pairs, 1e-12)
		// a second report after more adds re-sorts
		m.Add(Interaction{P: 1, Accepted: true, GroundTruth: 1})
		if got := *m.Report().AUC; got < u/pairs-1e-12 {
			t.Errorf("%s: adding a top-ranked positive lowered the AUC: %v < %v", tc.name, got, u/pairs)
		}
	}
}

// TestMetricsAddDoesNotAllocate: an interaction without ground truth
// costs no allocation; only labelled ones are kept (for the exact AUC).
func TestMetricsAddDoesNotAllocate(t *testing.T) {
	// Serial: counts the whole process's allocations.
	m := NewMetrics(DefaultPayoffConfig())
	for i := 0; i < 200000; i++ {
		m.Add(Interaction{P: float64(i%1000) / 1000, Accepted: i%3 == 0})
	}
	allocs := testing.AllocsPerRun(1000, func() { m.Add(Interaction{P: 0.4, Accepted: true}) })
	if allocs != 0 {
		t.Errorf("Add allocates %v times per call", allocs)
	}
}

// BenchmarkMetricsAdd is the streaming metrics' throughput (the issue's
// goal: ≥ 20 M interactions/s, no allocation).
func BenchmarkMetricsAdd(b *testing.B) {
	m := NewMetrics(DefaultPayoffConfig())
	ins := make([]Interaction, 1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range ins {
		ins[i] = Interaction{P: rng.Float64(), Accepted: rng.IntN(2) == 0, RA: 0.01}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		m.Add(ins[i&1023])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Minteractions/s")
}

func TestIncoherence(t *testing.T) {
	t.Parallel()
	ds := []Decision{
		{TaskFamily: "f", DecisionID: "a", Replay: 0, Action: "x", Benchmark: "x", P: 0.9, Accepted: true},
		{TaskFamily: "f", DecisionID: "a", Replay: 1, Action: "x", P: 0.7, Accepted: true},
		{TaskFamily: "f", DecisionID: "a", Replay: 2, Action: "y"},
		{TaskFamily: "f", DecisionID: "a", Replay: 3, Action: ""}, // abstained
		{TaskFamily: "f", DecisionID: "b", Replay: 0, Action: "z"},
		{TaskFamily: "f", DecisionID: "b", Replay: 1, Action: "z"},
	}
	r := Incoherence(ds)
	if len(r.Points) != 2 || r.Abstentions != 1 {
		t.Fatalf("%+v", r)
	}
	a, b := r.Points[0], r.Points[1]
	near(t, "D(a)", a.D, 1.0/3, 1e-12)
	near(t, "E(a)", a.E, 1.0/3, 1e-12)
	near(t, "I(a)", a.I, 1, 1e-6) // (1/3)/(1/3+1e-8) just under 1
	near(t, "D(b)", b.D, 0, 1e-12)
	if b.E != 0 || b.HasBench || b.I != 0 {
		t.Errorf("no benchmark: %+v", b)
	}
	// D averages both points; E and I only the benchmarked one (a).
	near(t, "mean D", r.MeanD, 1.0/6, 1e-12)
	near(t, "mean E", r.MeanE, a.E, 1e-12)
	near(t, "mean I", r.MeanI, a.I, 1e-12)
	if r.BenchmarkedPoints != 1 {
		t.Errorf("benchmarked points = %d, want 1", r.BenchmarkedPoints)
	}
	if none := Incoherence([]Decision{{DecisionID: "d", Action: "p"}, {DecisionID: "d", Action: "q"}}); none.MeanI != 0 || none.MeanE != 0 || none.MeanD != 0.5 {
		t.Errorf("no benchmark anywhere: D %v E %v I %v, want 0.5 0 0", none.MeanD, none.MeanE, none.MeanI)
	}
	// illusion delta = mean p accepted 0.8 − (1 − mean D 1/6)
	near(t, "illusion delta", r.IllusionDelta, 0.8-(1-1.0/6), 1e-12)
	clip := Incoherence([]Decision{{DecisionID: "c", Action: "p", Benchmark: "p"}, {DecisionID: "c", Action: "q", Benchmark: "p"}, {DecisionID: "c", Action: "q"}})
	// D = 1 − 2/3 = 1/3; two of three differ from the benchmark: E = 2/3, I = 0.5
	near(t, "I(c)", clip.Points[0].I, 0.5, 1e-6)
}
