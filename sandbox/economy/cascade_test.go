package economy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCascadeNoAgents is §3.7's verified run: no agents (so no draws),
// avg_p 0.6, epoch = call index.
func TestCascadeNoAgents(t *testing.T) {
	t.Parallel()
	m, err := NewCascade(DefaultCascadeConfig(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.8, 0.8, 0.8, 0.8, 0.8, 0.4, 0.22}
	for len(want) < 40 {
		want = append(want, 0.05, 0.07, 0.09, 0.11, 0.13, 0.15, 0.1925)
	}
	want = want[:40]
	for i := range 40 {
		m.Step(i, 0.6)
	}
	if d := cmp.Diff(want, m.History(), approx); d != "" {
		t.Errorf("confidence (-want +got):\n%s", d)
	}
	if m.BreakerTrips() != 5 {
		t.Errorf("trips = %d, want 5", m.BreakerTrips())
	}
	near(t, "crash depth", m.CrashDepth(), 0.75)
}

// TestCascadeWithAgents: the coordinated-withdrawal shock removes
// max(1, ⌊0.3n⌋) agents and lowers C by 0.3·(fraction withdrawn) whatever
// the draws; the agents' noise is seeded, so equal seeds give equal runs.
func TestCascadeWithAgents(t *testing.T) {
	t.Parallel()
	cfg := DefaultCascadeConfig()
	cfg.Shock, cfg.TriggerEpoch = ShockWithdrawal, 0
	agents := make([]string, 10)
	for i := range agents {
		agents[i] = string(rune('a' + i))
	}
	run := func(seed uint64) []float64 {
		m, err := NewCascade(cfg, agents, NewRand(seed))
		if err != nil {
			t.Fatal(err)
		}
		near(t, "C after the shock", m.Step(0, 0.6), 0.8-0.3*0.3)
		for i := 1; i < 30; i++ {
			m.Step(i, 0.4)
		}
		return m.History()
	}
	a, b := run(1), run(1)
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("same seed, different runs (-first +second):\n%s", d)
	}
	if _, err := NewCascade(CascadeConfig{Shock: "meteor", BreakerSteps: 1}, nil, nil); err == nil {
		t.Error("unknown shock accepted")
	}
}
