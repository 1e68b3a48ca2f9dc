package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/sandbox/agents"
	"github.com/swarm-dev/swarm/sandbox/governance"
)

func parseWorld(t *testing.T, y string) Scenario {
	t.Helper()
	s, err := ParseScenario("w.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestInitiationProbability: with probability q per agent-step, the
// interaction volume is q × agents × steps (binomial), per group too.
func TestInitiationProbability(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		want       float64 // expected interactions
	}{
		{"absent: every agent, every step", "simulation: {epochs: 10, steps_per_epoch: 10, seed: 3}\n", 20 * 100},
		{"the reference honest agent's 0.4", "simulation: {epochs: 10, steps_per_epoch: 10, seed: 3, initiation_probability: 0.4}\n", 0.4 * 20 * 100},
		{"a group overrides the scenario", "simulation: {epochs: 10, steps_per_epoch: 10, seed: 3, initiation_probability: 0.4}\n", (0.4*10 + 0.1*10) * 100},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			second := "  - {type: honest, count: 10}\n"
			if i == 2 {
				second = "  - {type: honest, count: 10, initiation_probability: 0.1}\n"
			}
			s := parseWorld(t, "scenario_id: x\nagents:\n  - {type: honest, count: 10}\n"+second+tc.yaml)
			res, err := Run(t.Context(), s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// 4 standard deviations of the binomial count
			sd := math.Sqrt(tc.want * (1 - tc.want/2000))
			if got := float64(res.Interactions); math.Abs(got-tc.want) > 4*sd+1e-9 {
				t.Errorf("interactions = %v, want %v ± %.0f", got, tc.want, 4*sd)
			}
		})
	}
}

// TestTrustAcceptance: under acceptance: trust a counterparty accepts
// until the mean p of the pair's accepted interactions falls below the
// threshold: with a threshold above every agent's p, a pair accepts its
// first interaction (trust 0.5 before any) and nothing after it.
func TestTrustAcceptance(t *testing.T) {
	t.Parallel()
	const head = "scenario_id: x\nagents:\n  - {type: adversarial, count: 2}\nnetwork: {topology: ring}\n"
	low := parseWorld(t, head+"simulation: {epochs: 5, steps_per_epoch: 10, seed: 1, acceptance: trust, trust_threshold: 0.2}\n")
	res, err := Run(t.Context(), low, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Accepted != res.Interactions {
		t.Errorf("threshold 0.2 below every p: accepted %d of %d", res.Summary.Accepted, res.Interactions)
	}
	high := parseWorld(t, head+"simulation: {epochs: 5, steps_per_epoch: 10, seed: 1, acceptance: trust, trust_threshold: 0.5}\n")
	res, err = Run(t.Context(), high, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Two adversaries (p around 0.4) on a ring of two: one pair. Its first
	// interaction is accepted at trust 0.5; then trust is that p < 0.5.
	if res.Summary.Accepted != 1 {
		t.Errorf("threshold 0.5: accepted %d, want 1 (the first, before any history)", res.Summary.Accepted)
	}
	// Under the policy rule adversaries accept allies' work... here they
	// are not allies: their policy (noisy p ≥ 0.35) accepts most.
	pol := parseWorld(t, head+"simulation: {epochs: 5, steps_per_epoch: 10, seed: 1}\n")
	if res, _ := Run(t.Context(), pol, Options{}); res.Summary.Accepted < 2 {
		t.Errorf("policy acceptance accepted %d", res.Summary.Accepted)
	}
	for _, bad := range []struct{ yaml, want string }{
		{"simulation: {acceptance: vote}\n", `w.yaml:5:14: simulation.acceptance: "vote": want policy or trust`},
		{"simulation: {trust_threshold: 0.4}\n", "w.yaml:5:14: simulation.trust_threshold: only with acceptance: trust"},
		{"simulation: {initiation_probability: 1.5}\n", "w.yaml:5:14: simulation.initiation_probability: 1.5: want 0..1"},
	} {
		if _, err := ParseScenario("w.yaml", []byte(head+bad.yaml)); err == nil || err.Error() != bad.want {
			t.Errorf("err = %v, want %q", err, bad.want)
		}
	}
}

// TestNetworksAsCSR: each topology's rows are sorted, free of self-loops
// and duplicates, symmetric, and leave no node isolated.
func TestNetworksAsCSR(t *testing.T) {
	t.Parallel()
	for _, c := range []Network{{Topology: "ring"}, {Topology: "star"}, {Topology: "random", P: 0.05}, {Topology: "small_world", K: 2, P: 0.3}, {Topology: "scale_free", M: 2}} {
		t.Run(c.Topology, func(t *testing.T) {
			const n = 300
			g, err := buildNetwork(context.Background(), n, c, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			has := map[[2]int]bool{}
			for i := range n {
				row := g.neighbours(i)
				if len(row) == 0 {
					t.Fatalf("node %d isolated", i)
				}
				for k, j := range row {
					if int(j) == i || k > 0 && row[k-1] >= j {
						t.Fatalf("row %d not sorted, unique and loop-free: %v", i, row)
					}
					has[[2]int{i, int(j)}] = true
				}
			}
			for e := range has {
				if !has[[2]int{e[1], e[0]}] {
					t.Fatalf("edge %v without its reverse", e)
				}
			}
			if c.Topology == "scale_free" {
				// preferential attachment: the first nodes collect the most links
				if g.degree(0) < 10 || g.degree(n-1) > 4 {
					t.Errorf("degrees: first %d, last %d", g.degree(0), g.degree(n-1))
				}
			}
		})
	}
	g, _ := buildNetwork(context.Background(), 1_000_000, Network{Topology: "complete"}, nil)
	if !g.complete || g.off != nil || g.degree(5) != 999_999 {
		t.Errorf("a complete network must be implicit: %+v", g)
	}
}

// TestCandidatesUniform: a draw is uniform over the eligible candidates
// (not itself, not frozen, of the kind asked), also when most are frozen
// (the rank fallback), and reports none when none is eligible.
func TestCandidatesUniform(t *testing.T) {
	t.Parallel()
	const n = 50
	ids := make([]string, n)
	gs := governance.NewState(nil)
	c := &candidates{self: 0, gs: gs, ids: ids, ally: make([]bool, n), honest: make([]bool, n)}
	for i := range n {
		ids[i] = string(rune('A' + i))
		if i%5 == 0 {
			c.ally[i] = true
			c.allies = append(c.allies, int32(i))
		}
	}
	// all but three frozen: forces the fallback
	for i := range n {
		if i != 7 && i != 10 && i != 20 {
			gs.FrozenUntil[ids[i]] = 5
		}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for _, topo := range []string{"complete", "ring_like"} {
		g := &graph{n: n, complete: true}
		if topo == "ring_like" {
			var us, vs []int32
			for j := 1; j < n; j++ {
				us, vs = append(us, 0), append(vs, int32(j))
			}
			g, _ = compress(context.Background(), n, us, vs)
		}
		c.g = g
		got := map[int]int{}
		for range 30000 {
			j, ok := c.Pick(rng, agents.AnyCandidate)
			if !ok {
				t.Fatal("no candidate")
			}
			got[j]++
		}
		if d := cmp.Diff([]int{7, 10, 20}, keys(got)); d != "" {
			t.Errorf("%s: drawn (-want +got):\n%s", topo, d)
		}
		for j, k := range got {
			if math.Abs(float64(k)-10000) > 400 {
				t.Errorf("%s: candidate %d drawn %d of 30000, want about 10000", topo, j, k)
			}
		}
		if j, ok := c.Pick(rng, agents.AllyCandidate); ok && j != 10 && j != 20 {
			t.Errorf("%s: ally %d is not an eligible ally", topo, j)
		}
		if _, ok := c.Pick(rng, agents.HonestCandidate); ok {
			t.Errorf("%s: an honest candidate where there is none", topo)
		}
	}
}

func keys(m map[int]int) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestKeptInteractionsKeepTheirObservables: the engine reuses one
// interaction and one observables record between interactions; a hook that
// keeps what it is given must still see each interaction's own
// observables (v̂ recomputed from them equals the v̂ recorded).
func TestKeptInteractionsKeepTheirObservables(t *testing.T) {
	t.Parallel()
	s := load(t, "baseline.yaml")
	proxy, err := sandbox.NewProxy(s.Proxy)
	if err != nil {
		t.Fatal(err)
	}
	var kept []sandbox.Interaction
	if _, err := Run(t.Context(), s, Options{Epochs: 3, OnInteraction: func(in sandbox.Interaction) { kept = append(kept, in) }}); err != nil {
		t.Fatal(err)
	}
	if len(kept) < 100 {
		t.Fatalf("%d interactions", len(kept))
	}
	for _, in := range kept {
		if got := proxy.VHat(*in.Observables); got != in.VHat {
			t.Fatalf("%s: v̂ of its observables %v, recorded %v: the observables were overwritten", in.ID, got, in.VHat)
		}
	}
}
