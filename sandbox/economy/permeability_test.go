package economy

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEffectivePermeability(t *testing.T) {
	t.Parallel()
	cfg := DefaultPermeabilityConfig()
	for _, c := range []struct {
		threat, trust, want float64
	}{{0, 0.5, 0.375}, {0.3, 0.8, 0.315}, {0.5, 0, 0.125}, {0.2, 1, 0.4}, {1, 1, 0}} {
		m, _ := NewPermeability(cfg, nil)
		near(t, "π", m.ComputeEffective(c.threat, c.trust), c.want)
		near(t, "stored π", m.Effective(), c.want)
	}
	hi := cfg
	hi.BasePermeability, hi.ThreatSensitivity = 0.8, 2
	near(t, "base 0.8, sensitivity 2, threat 0.6", EffectivePermeability(hi, 0.6, 0.5), 0)
	fixed := cfg
	fixed.Adaptive = false
	m, _ := NewPermeability(fixed, nil)
	for _, tt := range [][2]float64{{0, 0}, {0.9, 1}, {0.3, 0.8}} {
		near(t, "non-adaptive π", m.ComputeEffective(tt[0], tt[1]), 0.5)
	}
	near(t, "contagion p 0.2 at π 0.315", ContagionProbability(cfg, 0.2, 0.315), 0.0126)
}

var spillIxs = []Interaction{{"i1", 0.1, true}, {"i2", 0.5, true}, {"i3", 0.9, true}, {"i4", 0.2, false}, {"i5", 0.0, true}, {"i6", 0.3, true}}

func spillCfg() PermeabilityConfig {
	c := DefaultPermeabilityConfig()
	c.ContagionRate = 1
	return c
}

// TestSpilloverExact replays the reference's seed-42 draws.
func TestSpilloverExact(t *testing.T) {
	t.Parallel()
	draws := []float64{0.6394267984578837, 0.025010755222666936, 0.27502931836911926, 0.22321073814882275, 0.736, 0.677, 0.892, 0.087, 0.422}
	r := &script{t: t, draws: draws}
	m, _ := NewPermeability(spillCfg(), r)
	one := 1.0
	evs := m.SimulateSpillover(spillIxs, &one)
	want := []Spillover{{"i1", 0.1, 1.35, false}, {"i2", 0.5, 0.75, false}, {"i5", 0, 1.5, true}, {"i6", 0.3, 1.05, false}}
	if d := cmp.Diff(want, evs, approx); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if len(r.draws) != 0 {
		t.Errorf("%d draws unused, want every draw consumed (i4 skipped without one)", len(r.draws))
	}
	s, b, h := m.Counts()
	if s != 3 || b != 1 {
		t.Errorf("spilled %d blocked %d, want 3 and 1", s, b)
	}
	near(t, "cumulative harm", h, 3.15)
	near(t, "harm of events", SpilloverHarm(evs), 3.15)
	c, ok := m.ContainmentRate()
	if !ok {
		t.Fatal("containment undefined")
	}
	near(t, "containment", c, 0.25)
	m.Reset()
	if _, ok := m.ContainmentRate(); ok {
		t.Error("containment after reset is defined, want undefined (nothing happened)")
	}
}

// TestSpilloverDistribution: with our generator, each accepted interaction
// spills with probability c·π(0.5+0.5p) and is blocked with probability
// c·(1 − π(0.5+0.5p)), c the contagion probability, independently. Over n
// seeds the mean spill count and mean harm must be within 5 standard
// errors of their expectations.
func TestSpilloverDistribution(t *testing.T) {
	t.Parallel()
	cfg := spillCfg()
	var eSpill, vSpill, eBlock, vBlock, eHarm, vHarm float64
	for _, in := range spillIxs {
		if !in.Accepted {
			continue
		}
		c := ContagionProbability(cfg, in.P, 1)
		q := c * (0.5 + 0.5*in.P)
		b := c - q
		h := (1 - in.P) * cfg.SpilloverAmplification
		eSpill, vSpill = eSpill+q, vSpill+q*(1-q)
		eBlock, vBlock = eBlock+b, vBlock+b*(1-b)
		eHarm, vHarm = eHarm+q*h, vHarm+h*h*q*(1-q)
	}
	const n = 4000
	var sSpill, sBlock, sHarm float64
	for seed := range uint64(n) {
		m, _ := NewPermeability(cfg, NewRand(seed))
		one := 1.0
		m.SimulateSpillover(spillIxs, &one)
		s, b, h := m.Counts()
		sSpill += float64(s)
		sBlock += float64(b)
		sHarm += h
	}
	for _, c := range []struct {
		what      string
		sum, e, v float64
	}{{"spillovers", sSpill, eSpill, vSpill}, {"blocked", sBlock, eBlock, vBlock}, {"harm", sHarm, eHarm, vHarm}} {
		mean, se := c.sum/n, math.Sqrt(c.v/n)
		if math.Abs(mean-c.e) > 5*se {
			t.Errorf("mean %s = %.4f, want %.4f ± %.4f", c.what, mean, c.e, 5*se)
		}
	}
}

func TestShouldCross(t *testing.T) {
	t.Parallel()
	m, _ := NewPermeability(DefaultPermeabilityConfig(), &script{t: t, draws: []float64{0.238, 0.544, 0.370}})
	for _, c := range []struct {
		pi, p   float64
		allowed bool
		q       float64
	}{{0.6, 0.8, true, 0.72}, {0.6, 0.2, false, 0.2}, {0.2, 0.9, false, 0.9}} {
		ok, q := m.ShouldCross(c.pi, c.p)
		if ok != c.allowed || math.Abs(q-c.q) > tol {
			t.Errorf("ShouldCross(%v, %v) = %v, %v; want %v, %v", c.pi, c.p, ok, q, c.allowed, c.q)
		}
	}
	// In distribution: allowed with probability π(0.5+0.5p).
	m, _ = NewPermeability(DefaultPermeabilityConfig(), NewRand(3))
	const n = 20000
	k := 0
	for range n {
		if ok, _ := m.ShouldCross(0.6, 0.8); ok {
			k++
		}
	}
	want := 0.6 * 0.9
	if se := math.Sqrt(want * (1 - want) / n); math.Abs(float64(k)/n-want) > 5*se {
		t.Errorf("crossing share %.4f, want %.4f ± %.4f", float64(k)/n, want, 5*se)
	}
}

func TestOptimalPermeability(t *testing.T) {
	t.Parallel()
	var ixs []Interaction
	for range 5 {
		ixs = append(ixs, Interaction{"", 0.9, true}, Interaction{"", 0.1, true})
	}
	cfg := DefaultPermeabilityConfig()
	for _, c := range []struct {
		w, want float64
	}{{1, 1}, {16, 1}, {17, 0}} {
		got, err := OptimalPermeability(cfg, ixs, c.w, 10)
		if err != nil || got != c.want {
			t.Errorf("w %v: %v, %v; want %v (benefit 5π vs harm 0.3075π·w)", c.w, got, err, c.want)
		}
	}
	if got, _ := OptimalPermeability(cfg, nil, 1, 10); got != 0 {
		t.Errorf("empty input: %v, want 0 (all scores tie at 0)", got)
	}
	if _, err := OptimalPermeability(cfg, ixs, 1, 0); err == nil {
		t.Error("n = 0: no error")
	}
}
