package agents

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/swarm-dev/swarm/sandbox"
)

// Each type's observables, drawn directly (no engine), give a mean p near its
// target under the default proxy.
func TestObservablesHitTargetMeanP(t *testing.T) {
	t.Parallel()
	proxy, _ := sandbox.NewProxy(sandbox.DefaultProxyConfig())
	rng := rand.New(rand.NewPCG(7, 7))
	for _, typ := range []string{Honest, Opportunistic, Adversarial} {
		a, err := New(typ+"-1", typ, proxy, Params{})
		if err != nil {
			t.Fatal(err)
		}
		var s float64
		const n = 20000
		for i := 0; i < n; i++ {
			s += proxy.P(a.Observe(rng, Context{Epoch: 0, Epochs: 10, Reputation: 0.5}, proxy))
		}
		if got := s / n; math.Abs(got-Target[typ]) > 0.02 {
			t.Errorf("%s: mean p %.4f, target %.2f", typ, got, Target[typ])
		}
	}
}

func TestDeceptiveBuildsTrustThenExploits(t *testing.T) {
	t.Parallel()
	proxy, _ := sandbox.NewProxy(sandbox.DefaultProxyConfig())
	rng := rand.New(rand.NewPCG(1, 2))
	a, _ := New("d", Deceptive, proxy, Params{})
	mean := func(epoch int) float64 {
		var s float64
		for i := 0; i < 5000; i++ {
			s += proxy.P(a.Observe(rng, Context{Epoch: epoch, Epochs: 10, Reputation: 0.5}, proxy))
		}
		return s / 5000
	}
	early, late := mean(0), mean(9)
	if math.Abs(early-Target[Deceptive]) > 0.02 || late > early-0.2 {
		t.Errorf("deceptive early %.3f late %.3f", early, late)
	}
}

func TestAdversariesTargetHonestAndAcceptAllies(t *testing.T) {
	t.Parallel()
	proxy, _ := sandbox.NewProxy(sandbox.DefaultProxyConfig())
	rng := rand.New(rand.NewPCG(3, 4))
	adv, _ := New("adv-1", Adversarial, proxy, Params{})
	SetAllies(adv, []string{"adv-1", "adv-2"})
	types := map[string]string{"h": Honest, "o": Opportunistic, "o2": Opportunistic, "adv-2": Adversarial}
	allies := map[string]bool{"adv-1": true, "adv-2": true}
	choose := func(a Agent, cands ...string) map[string]int {
		got := map[string]int{}
		l := list{self: a.ID(), ids: cands, types: types, allies: allies}
		for i := 0; i < 1000; i++ {
			j, ok := a.ChooseCounterparty(rng, l)
			if !ok {
				t.Fatalf("no counterparty among %v", cands)
			}
			got[cands[j]]++
		}
		return got
	}
	// No ally within reach: target honest agents.
	if got := choose(adv, "h", "o", "o2"); got["h"] < 800 { // 80% targeted + a third of the rest at random
		t.Errorf("no ally reachable: honest chosen %d of 1000", got["h"])
	}
	// An ally within reach: coordinate with it first (default preference
	// 0.6, plus its share of the random picks), then target honest agents.
	if got := choose(adv, "h", "o", "adv-2"); got["adv-2"] < 560 || got["adv-2"] > 700 || got["h"] < 290 {
		t.Errorf("ally reachable: ally chosen %d, honest %d of 1000 (want about 627 and 347)", got["adv-2"], got["h"])
	}
	// ally_preference 0 turns coordination off; 1 trades with allies only.
	off, _ := New("adv-1", Adversarial, proxy, Params{AllyPreference: ptr(0)})
	only, _ := New("adv-1", Adversarial, proxy, Params{AllyPreference: ptr(1)})
	SetAllies(off, []string{"adv-2"})
	SetAllies(only, []string{"adv-2"})
	if got := choose(off, "h", "o", "adv-2"); got["h"] < 800 {
		t.Errorf("ally_preference 0: honest chosen %d of 1000", got["h"])
	}
	if got := choose(only, "h", "o", "adv-2"); got["adv-2"] != 1000 {
		t.Errorf("ally_preference 1: ally chosen %d of 1000", got["adv-2"])
	}
	// Without allies the preference has nobody to prefer.
	lone, _ := New("adv-3", Adversarial, proxy, Params{AllyPreference: ptr(1)})
	if got := choose(lone, "h", "o", "adv-2"); got["h"] < 800 {
		t.Errorf("adversary without allies: honest chosen %d of 1000", got["h"])
	}
	if !adv.Accept(rng, "adv-2", Adversarial, 0.01) {
		t.Error("an ally's proposal was refused")
	}
	if _, err := New("x", "wizard", proxy, Params{}); err == nil {
		t.Error("unknown type accepted")
	}
}

func TestAdaptiveAdversaryLiesLowWhenDetected(t *testing.T) {
	t.Parallel()
	proxy, _ := sandbox.NewProxy(sandbox.DefaultProxyConfig())
	rng := rand.New(rand.NewPCG(5, 6))
	a, _ := New("ad", Adaptive, proxy, Params{})
	a.Observe(rng, Context{}, proxy)
	a.Feedback(1, true) // penalised
	for i := 0; i < 20; i++ {
		a.Observe(rng, Context{}, proxy)
		if s := Strategy(a); s != "lie_low" {
			t.Fatalf("step %d after detection: strategy %s", i, s)
		}
		a.Feedback(0.1, false)
	}
}

// The params of a scenario's agent group change behaviour; zero means default.
func TestParamsReachTheAgent(t *testing.T) {
	t.Parallel()
	proxy, _ := sandbox.NewProxy(sandbox.DefaultProxyConfig())
	rng := rand.New(rand.NewPCG(9, 9))
	meanP := func(a Agent, epoch int) float64 {
		var s float64
		for i := 0; i < 5000; i++ {
			s += proxy.P(a.Observe(rng, Context{Epoch: epoch, Epochs: 10, Reputation: 0.5}, proxy))
		}
		return s / 5000
	}
	def, _ := New("d1", Deceptive, proxy, Params{})
	long, _ := New("d2", Deceptive, proxy, Params{TrustFraction: 0.8})
	if Exploiting(long, 5, 10) || !Exploiting(def, 5, 10) || Exploiting(def, 2, 10) {
		t.Error("trust_fraction 0.8 keeps building trust at epoch 5 of 10; the default 0.3 exploits from epoch 3")
	}
	if d, l := meanP(def, 5), meanP(long, 5); math.Abs(l-Target[Deceptive]) > 0.02 || d > l-0.05 {
		t.Errorf("epoch 5 of 10: default %.3f, trust_fraction 0.8 %.3f", d, l)
	}

	strict, _ := New("h", Honest, proxy, Params{Threshold: 0.9})
	lax, _ := New("h", Honest, proxy, Params{})
	acc := func(a Agent) (n int) {
		for i := 0; i < 1000; i++ {
			if a.Accept(rng, "x", Opportunistic, 0.7) {
				n++
			}
		}
		return n
	}
	if s, l := acc(strict), acc(lax); s != 0 || l < 990 {
		t.Errorf("p 0.7 accepted %d/1000 with threshold 0.9, %d/1000 with the default 0.5", s, l)
	}

	// epsilon 1: the adaptive adversary explores all the time, never settling.
	explorer, _ := New("ad", Adaptive, proxy, Params{Epsilon: 1})
	seen := map[string]int{}
	for i := 0; i < 3000; i++ {
		explorer.Observe(rng, Context{}, proxy)
		seen[Strategy(explorer)]++
		explorer.Feedback(map[string]float64{"exploit": 1, "probe": 0, "lie_low": 0}[Strategy(explorer)], false)
	}
	for _, st := range []string{"exploit", "probe", "lie_low"} {
		if seen[st] < 800 {
			t.Errorf("epsilon 1: %s chosen %d of 3000 (want about a third)", st, seen[st])
		}
	}

	for _, bad := range []Params{{Epsilon: 1.5}, {TrustFraction: -0.1}, {Threshold: 2}, {AllyPreference: ptr(1.2)}, {AllyPreference: ptr(-0.1)}, {Acceptance: "cheapest"}} {
		if _, err := New("x", Honest, proxy, bad); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

func ptr(x float64) *float64 { return &x }

// acceptance: price buys on price: a proposal is accepted when its noisy p
// is at most the budget (threshold, default 0.5), so cheap, bad work gets
// through and good work is turned down; adversaries still accept allies.
func TestPriceDrivenAcceptance(t *testing.T) {
	t.Parallel()
	proxy, _ := sandbox.NewProxy(sandbox.DefaultProxyConfig())
	rng := rand.New(rand.NewPCG(11, 12))
	acc := func(a Agent, from string, p float64) (n int) {
		for i := 0; i < 1000; i++ {
			if a.Accept(rng, from, Honest, p) {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		why    string
		params Params
		p      float64
		lo, hi int
	}{
		{"quality policy takes good work", Params{}, 0.7, 990, 1000},
		{"quality policy refuses bad work", Params{}, 0.3, 0, 10},
		{"price policy takes cheap, bad work", Params{Acceptance: AcceptPrice}, 0.3, 990, 1000},
		{"price policy refuses good, dear work", Params{Acceptance: AcceptPrice}, 0.7, 0, 10},
		{"a higher budget affords it", Params{Acceptance: AcceptPrice, Threshold: 0.9}, 0.7, 990, 1000},
		{"at the budget it is a coin toss", Params{Acceptance: AcceptPrice}, 0.5, 400, 600},
	} {
		a, err := New("h", Honest, proxy, c.params)
		if err != nil {
			t.Fatal(err)
		}
		if n := acc(a, "x", c.p); n < c.lo || n > c.hi {
			t.Errorf("%s: p %.1f accepted %d/1000, want %d..%d", c.why, c.p, n, c.lo, c.hi)
		}
	}
	adv, _ := New("adv-1", Adversarial, proxy, Params{Acceptance: AcceptPrice})
	SetAllies(adv, []string{"adv-2"})
	if n := acc(adv, "adv-2", 0.9); n != 1000 {
		t.Errorf("a price-driven adversary accepted %d/1000 of an ally's proposals", n)
	}
}

// list is Candidates over a slice of ids, filtered by listing.
type list struct {
	self   string
	ids    []string
	types  map[string]string
	allies map[string]bool
}

func (l list) Pick(rng *rand.Rand, k Kind) (int, bool) {
	var ok []int
	for i, id := range l.ids {
		if id != l.self && (k == AnyCandidate || k == AllyCandidate && l.allies[id] || k == HonestCandidate && l.types[id] == Honest) {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return 0, false
	}
	return ok[rng.IntN(len(ok))], true
}
