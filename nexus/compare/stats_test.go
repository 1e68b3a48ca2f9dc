package compare

import (
	"math"
	"testing"
)

func TestMcNemarExact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b, c int
		want float64
	}{
		{"no discordant pairs cannot reject", 0, 0, 1},
		{"balanced discordance is p=1 (capped)", 3, 3, 1},
		// 2 * P(X<=0), X~Bin(6,1/2) = 2/64
		{"6 to 0 is 0.03125", 6, 0, 0.03125},
		// n=12, k=2: 2 * (C(12,0)+C(12,1)+C(12,2))/2^12 = 2*79/4096 = 0.03857421875
		{"10 to 2", 10, 2, 0.03857421875},
		{"symmetry", 2, 10, 0.03857421875},
		// five repeats all one way is not enough on its own: 2/32
		{"5 to 0 stays above 0.05", 5, 0, 0.0625},
		// n=5, k=1: 2 * (1+5)/32
		{"4 to 1 is 0.375", 4, 1, 0.375},
		// n=7, k=3: 2*(1+7+21+35)/128 = 1 exactly, not more
		{"4 to 3 is exactly 1", 4, 3, 1},
		// n=20, k=5: 2*(1+20+190+1140+4845+15504)/2^20 = 43400/1048576
		{"15 to 5", 15, 5, 43400.0 / 1048576},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := McNemarExact(tc.b, tc.c).P; math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("p = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBootstrapCI(t *testing.T) {
	t.Parallel()
	xs := []float64{10, 12, 11, 13, 9, 10, 12, 11}
	ci := BootstrapMeanCI(xs, 0.95, 4000, 1)
	mean := 11.0
	if !ci.Contains(mean) || ci.Hi-ci.Lo <= 0 || ci.Hi-ci.Lo > 3 {
		t.Errorf("CI %+v should contain the mean %v and be narrow", ci, mean)
	}
	if again := BootstrapMeanCI(xs, 0.95, 4000, 1); again != ci {
		t.Errorf("not deterministic: %+v vs %+v", again, ci)
	}
	if c := BootstrapMeanCI([]float64{5, 5, 5}, 0.95, 100, 1); c.Lo != 5 || c.Hi != 5 {
		t.Errorf("constant sample gives %+v", c)
	}
	d := BootstrapDiffCI([]float64{20, 22, 21, 19}, []float64{10, 11, 12, 9}, 0.95, 2000, 2)
	if d.Lo <= 0 {
		t.Errorf("clear difference should exclude 0: %+v", d)
	}
	same := BootstrapDiffCI([]float64{10, 12, 11, 9}, []float64{11, 10, 12, 9}, 0.95, 2000, 2)
	if !same.Contains(0) {
		t.Errorf("equal samples should include 0: %+v", same)
	}
}

func TestHolm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []float64
		want []float64
	}{
		{"one pair is unadjusted", []float64{0.03}, []float64{0.03}},
		// sorted 0.01, 0.03, 0.04 -> 3*0.01, 2*0.03, max(1*0.04, 0.06)
		{"step-down and monotone, original order kept", []float64{0.01, 0.04, 0.03}, []float64{0.03, 0.06, 0.06}},
		{"capped at 1", []float64{0.6, 0.5}, []float64{1, 1}},
		{"ties", []float64{0.02, 0.02}, []float64{0.04, 0.04}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Holm(tc.in)
			for i := range got {
				if math.Abs(got[i]-tc.want[i]) > 1e-12 {
					t.Fatalf("Holm(%v) = %v, want %v", tc.in, got, tc.want)
				}
			}
		})
	}
}

func TestBootstrapPercentileByHand(t *testing.T) {
	t.Parallel()
	// Two values 0 and 10: a resampled mean of two draws is 0, 5 or 10
	// with probabilities 1/4, 1/2, 1/4, so the 2.5% and 97.5% percentiles
	// of many resamples are 0 and 10, and the interval is [0, 10].
	ci := BootstrapMeanCI([]float64{0, 10}, 0.95, 4000, 7)
	if ci.Lo != 0 || ci.Hi != 10 {
		t.Errorf("CI = %+v, want [0, 10]", ci)
	}
	// An 80% interval of the same: the 10% and 90% percentiles are 0 and 10
	// too (a quarter of the mass at each end).
	if ci := BootstrapMeanCI([]float64{0, 10}, 0.80, 4000, 7); ci.Lo != 0 || ci.Hi != 10 {
		t.Errorf("80%% CI = %+v", ci)
	}
	// A 40% interval: the 30% and 70% percentiles fall in the middle mass.
	if ci := BootstrapMeanCI([]float64{0, 10}, 0.40, 4000, 7); ci.Lo != 5 || ci.Hi != 5 {
		t.Errorf("40%% CI = %+v, want [5, 5]", ci)
	}
	// A paired difference that is the same in every pair has a degenerate
	// interval at that difference, whatever is resampled.
	if d := BootstrapDiffCI([]float64{10, 30, 50}, []float64{5, 25, 45}, 0.95, 2000, 3); math.Abs(d.Lo-5) > 1e-9 || math.Abs(d.Hi-5) > 1e-9 {
		t.Errorf("paired constant difference: %+v, want [5, 5]", d)
	}
}
