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
	proxy, _ := sandbox.NewProxy(sandbox.DefaultProxyConfig())
	rng := rand.New(rand.NewPCG(7, 7))
	for _, typ := range []string{Honest, Opportunistic, Adversarial} {
		a, err := New(typ+"-1", typ, proxy)
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
	proxy, _ := sandbox.NewProxy(sandbox.DefaultProxyConfig())
	rng := rand.New(rand.NewPCG(1, 2))
	a, _ := New("d", Deceptive, proxy)
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
	proxy, _ := sandbox.NewProxy(sandbox.DefaultProxyConfig())
	rng := rand.New(rand.NewPCG(3, 4))
	adv, _ := New("adv-1", Adversarial, proxy)
	SetAllies(adv, []string{"adv-1", "adv-2"})
	types := map[string]string{"h": Honest, "o": Opportunistic, "adv-2": Adversarial}
	honest := 0
	for i := 0; i < 1000; i++ {
		if adv.ChooseCounterparty(rng, []string{"h", "o", "adv-2"}, types) == "h" {
			honest++
		}
	}
	if honest < 800 { // 80% targeted + a third of the rest at random
		t.Errorf("honest chosen %d of 1000", honest)
	}
	if !adv.Accept(rng, "adv-2", Adversarial, 0.01) {
		t.Error("an ally's proposal was refused")
	}
	if _, err := New("x", "wizard", proxy); err == nil {
		t.Error("unknown type accepted")
	}
}

func TestAdaptiveAdversaryLiesLowWhenDetected(t *testing.T) {
	proxy, _ := sandbox.NewProxy(sandbox.DefaultProxyConfig())
	rng := rand.New(rand.NewPCG(5, 6))
	a, _ := New("ad", Adaptive, proxy)
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
