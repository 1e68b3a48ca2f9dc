package compare

import (
	"math"
	"testing"
)

func TestMcNemarExact(t *testing.T) {
	tests := []struct {
		name string
		b, c int
		want float64
	}{
		{"no discordant pairs cannot reject", 0, 0, 1},
		{"balanced discordance is p=1 (capped)", 3, 3, 1},
		// 2 * P(X<=0), X~Bin(6,1/2) = 2/64
		{"6 to 0 is 0.03125", 6, 0, 0.03125},
		// 2 * (1+10+45)/1024 = 0.109375
		{"10 to 2", 10, 2, 2 * (1 + 12 + 66) / 4096.0},
		{"symmetry", 2, 10, 2 * (1 + 12 + 66) / 4096.0},
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

func TestQuantile(t *testing.T) {
	xs := []float64{4, 1, 3, 2}
	if q := Quantile(xs, 0.5); q != 2.5 {
		t.Errorf("median = %v", q)
	}
	if q := Quantile(xs, 0.95); math.Abs(q-3.85) > 1e-12 {
		t.Errorf("p95 = %v", q)
	}
}
