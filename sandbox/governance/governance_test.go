package governance

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/swarm-dev/swarm/sandbox"
)

func state() *State {
	s := NewState(rand.New(rand.NewPCG(1, 2)))
	for _, a := range []string{"a", "b", "c", "d"} {
		s.AddAgent(a, 0.5)
		s.Stake[a] = 10
	}
	return s
}

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

func TestTransactionTax(t *testing.T) {
	t.Parallel()
	l := Build(Config{TransactionTax: TaxConfig{Enabled: true, Rate: 0.1, Split: 0.25}}, sandbox.DefaultPayoffConfig())[0]
	in := sandbox.Interaction{Initiator: "a", Counterparty: "b", P: 0.5, Accepted: true} // S = 0.5
	e := l.OnInteraction(state(), &in)
	near(t, "initiator tax", e.Costs["a"], 0.1*0.5*0.25)
	near(t, "counterparty tax", e.Costs["b"], 0.1*0.5*0.75)
	in.Accepted = false
	if e := l.OnInteraction(state(), &in); len(e.Costs) != 0 {
		t.Error("rejected interactions are not taxed")
	}
}

func TestReputationDecay(t *testing.T) {
	t.Parallel()
	s := state()
	s.SetReputation("a", 0.9)
	s.SetReputation("b", 0.1)
	e := Build(Config{ReputationDecay: DecayConfig{Enabled: true, Factor: 0.95}}, sandbox.DefaultPayoffConfig())[0].OnEpochStart(s)
	// the paper: reputation × 0.95 each epoch keeps 95% (not: moves 95% of
	// the way to 0.5)
	near(t, "0.9 keeps 95%: 0.855", 0.9+e.RepDelta["a"], 0.855)
	near(t, "0.1 keeps 95% too, decaying toward 0: 0.095", 0.1+e.RepDelta["b"], 0.095)
}

func TestStakingSlashesOnViolation(t *testing.T) {
	t.Parallel()
	s := state()
	l := Build(Config{Staking: StakingConfig{Enabled: true, MinStake: 9, SlashRate: 0.2, ViolationP: 0.4}}, sandbox.DefaultPayoffConfig())[0]
	bad := sandbox.Interaction{Initiator: "a", Counterparty: "b", P: 0.3, Accepted: true}
	e := l.OnInteraction(s, &bad)
	near(t, "slash charged", e.Costs["a"], 2)
	near(t, "stake reduced", s.Stake["a"], 8)
	if l.MayAct(s, "a") || !l.MayAct(s, "b") {
		t.Error("an agent below the minimum stake must not act; others may")
	}
	good := sandbox.Interaction{Initiator: "b", Counterparty: "a", P: 0.8, Accepted: true}
	if e := l.OnInteraction(s, &good); len(e.Costs) != 0 || s.Stake["b"] != 10 {
		t.Error("no slash without a violation")
	}
}

func TestCircuitBreaker(t *testing.T) {
	t.Parallel()
	b := NewCircuitBreaker(BreakerConfig{Enabled: true, Window: 4, Threshold: 0.5, Violations: 2, FreezeEpochs: 3})
	s := state()
	trips := 0
	for i := 0; i < 6; i++ {
		in := sandbox.Interaction{Initiator: "a", Counterparty: "b", P: 0.2, Accepted: true}
		if e := b.OnInteraction(s, &in); e.Freeze["a"] == 3 {
			trips++
		}
	}
	if trips != 1 || !b.Tripped("a") {
		t.Fatalf("trips = %d (rolling toxicity %.2f)", trips, b.Toxicity("a"))
	}
	near(t, "rolling toxicity over the window", b.Toxicity("a"), 0.8)
	if b.Observe("b", 0.9, true) || b.Tripped("b") {
		t.Error("a good agent tripped")
	}
	if b.Observe("c", 0.0, false) {
		t.Error("rejected interactions do not count")
	}
	s.FrozenUntil["a"] = 0
	s.Epoch = 5
	if e := b.OnEpochStart(s); len(e.Unfreeze) != 1 || b.Tripped("a") {
		t.Error("the breaker closes when the freeze ends")
	}
}

func TestRandomAudit(t *testing.T) {
	t.Parallel()
	l := Build(Config{RandomAudit: AuditConfig{Enabled: true, Probability: 1, PenaltyMultiplier: 2, ThresholdP: 0.5}}, sandbox.DefaultPayoffConfig())[0]
	in := sandbox.Interaction{Initiator: "a", Counterparty: "b", P: 0.25, Accepted: true} // E = 0.75·2 = 1.5
	e := l.OnInteraction(state(), &in)
	near(t, "penalty = multiplier × harm", e.Costs["a"], 3)
	near(t, "reputation hit", e.RepDelta["a"], -0.05)
	ok := sandbox.Interaction{Initiator: "a", Counterparty: "b", P: 0.8, Accepted: true}
	if e := l.OnInteraction(state(), &ok); len(e.Costs) != 0 {
		t.Error("a good interaction is not penalised")
	}
}

func TestCollusionDetectsTheFrequentPair(t *testing.T) {
	t.Parallel()
	s := state()
	c := Build(Config{Collusion: CollusionConfig{Enabled: true, ZThreshold: 1, BenefitCorrelation: 0.5, MinAcceptance: 0.8, QualityThreshold: 0.5, Penalty: 1}}, sandbox.DefaultPayoffConfig())[0].(*Collusion)
	// gain(i) gives the two sides' payoffs of the pair's i-th interaction.
	record := func(a, b string, n int, p float64, gain func(i int) (float64, float64)) {
		for i := 0; i < n; i++ {
			in := sandbox.Interaction{Initiator: a, Counterparty: b, P: p, Accepted: true}
			c.OnInteraction(s, &in)
			k := pairKey(a, b)
			s.PairCount[k]++
			ben := s.PairBenefit[k]
			ben.Add(gain(i))
			s.PairBenefit[k] = ben
		}
	}
	together := func(i int) (float64, float64) {
		g := 0.3 + 0.1*math.Sin(float64(i))
		return g, g + 0.01*math.Cos(float64(3*i))
	}
	record("a", "b", 30, 0.35, together) // colluders: frequent, gaining together, low quality
	record("a", "c", 3, 0.8, together)
	record("b", "d", 3, 0.8, together)
	record("c", "d", 3, 0.8, together)
	e := c.OnEpochStart(s)
	if len(c.Groups) != 1 || len(c.Groups[0]) != 2 || c.Groups[0][0] != "a" || c.Groups[0][1] != "b" {
		t.Fatalf("groups = %v", c.Groups)
	}
	near(t, "penalty a", e.Costs["a"], 1)
	near(t, "penalty b", e.Costs["b"], 1)
	if _, ok := e.Costs["c"]; ok {
		t.Error("an innocent agent was penalised")
	}

	// Just as frequent and low quality, both gaining on the whole, but when
	// one gains more the other gains less: not collusion.
	s2 := state()
	c2 := Build(Config{Collusion: CollusionConfig{Enabled: true, ZThreshold: 1, BenefitCorrelation: 0.5, MinAcceptance: 0.8, QualityThreshold: 0.5, Penalty: 1}}, sandbox.DefaultPayoffConfig())[0].(*Collusion)
	s, c = s2, c2
	record("a", "b", 30, 0.35, func(i int) (float64, float64) { d := 0.1 * math.Sin(float64(i)); return 0.3 + d, 0.3 - d })
	record("a", "c", 3, 0.8, together)
	record("b", "d", 3, 0.8, together)
	record("c", "d", 3, 0.8, together)
	if c.OnEpochStart(s); len(c.Groups) != 0 {
		t.Errorf("anti-correlated benefits flagged: %v", c.Groups)
	}
}

// Acceptance is mutual: a pair in which one side accepts everything the
// other proposes but has its own proposals turned down (an honest agent
// pestered by an adversary) is not a colluding pair, however often they
// meet; the pooled share of accepted interactions (2/3 here) once said it was.
func TestCollusionAcceptanceIsMutual(t *testing.T) {
	t.Parallel()
	cfg := CollusionConfig{Enabled: true, ZThreshold: 1, BenefitCorrelation: 0.5, MinAcceptance: 0.5, QualityThreshold: 0.6, Penalty: 1}
	run := func(aAccepts bool) [][]string {
		s := state()
		c := Build(Config{Collusion: cfg}, sandbox.DefaultPayoffConfig())[0].(*Collusion)
		record := func(a, b string, p float64, accepted bool) {
			in := sandbox.Interaction{Initiator: a, Counterparty: b, P: p, Accepted: accepted}
			c.OnInteraction(s, &in)
			k := pairKey(a, b)
			s.PairCount[k]++
			if accepted {
				ben := s.PairBenefit[k]
				g := 0.2 + 0.1*p*float64(s.PairCount[k]%5)
				ben.Add(g, g)
				s.PairBenefit[k] = ben
			}
		}
		for i := 0; i < 20; i++ {
			record("a", "b", 0.72, true)     // b accepts all of a's good work
			record("b", "a", 0.35, aAccepts) // a refuses (or accepts) b's bad work
			record("a", "b", 0.30, true)     // b accepts a's bad work too
		}
		for _, pr := range [][2]string{{"a", "c"}, {"b", "d"}, {"c", "d"}} {
			for i := 0; i < 3; i++ {
				record(pr[0], pr[1], 0.8, true)
			}
		}
		c.OnEpochStart(s)
		return c.Groups
	}
	if g := run(false); len(g) != 0 {
		t.Errorf("one-sided acceptance flagged as collusion: %v", g)
	}
	if g := run(true); len(g) != 1 || len(g[0]) != 2 {
		t.Errorf("mutual acceptance not flagged: %v", g)
	}
}

func TestBenefitsCorrelation(t *testing.T) {
	t.Parallel()
	var b Benefits
	for _, xy := range [][2]float64{{1, 2}, {2, 4}, {3, 6.5}} {
		b.Add(xy[0], xy[1])
	}
	// Pearson r of (1,2,3) and (2,4,6.5): cov 1.5, sd 0.8165 and 1.8409
	near(t, "r", b.Correlation(), 1.5/(math.Sqrt(2.0/3)*math.Sqrt(61.0/18)))
	var c Benefits
	c.Add(1, 5)
	c.Add(1, 6)
	if c.Correlation() != 0 {
		t.Error("a constant side has no correlation")
	}
}

func TestSybilSimilarity(t *testing.T) {
	t.Parallel()
	a := map[string]int{"x": 2, "y": 2}
	b := map[string]int{"x": 1, "y": 1}
	c := map[string]int{"z": 5}
	near(t, "jaccard identical sets", Jaccard(a, b), 1)
	near(t, "cosine parallel vectors", Cosine(a, b), 1)
	near(t, "disjoint", Similarity(a, c), 0)
	near(t, "jaccard partial", Jaccard(map[string]int{"x": 1, "y": 1}, map[string]int{"y": 1, "z": 1}), 1.0/3)
	near(t, "cosine partial", Cosine(map[string]int{"x": 1, "y": 1}, map[string]int{"y": 1, "z": 1}), 0.5)
	s := state()
	s.Counterparts = map[string]map[string]int{"a": {"x": 10, "y": 10}, "b": {"x": 9, "y": 11}, "c": {"z": 20}}
	e := Build(Config{Sybil: SybilConfig{Enabled: true, Threshold: 0.95, MinHistory: 10, FreezeEpochs: 2}}, sandbox.DefaultPayoffConfig())[0].OnEpochStart(s)
	if e.Freeze["a"] != 2 || e.Freeze["b"] != 2 || e.Freeze["c"] != 0 {
		t.Errorf("freezes %v", e.Freeze)
	}
}

func TestFilteringLevers(t *testing.T) {
	t.Parallel()
	pay := sandbox.DefaultPayoffConfig()
	low := func() *sandbox.Interaction {
		return &sandbox.Interaction{ID: "i", Initiator: "a", Counterparty: "b", P: 0.3, Accepted: true}
	}
	if !Build(Config{Refinery: RefineryConfig{Enabled: true, ThresholdP: 0.4}}, pay)[0].OnInteraction(state(), low()).Reject {
		t.Error("refinery keeps p below its threshold")
	}
	mod := Build(Config{Moderator: ModeratorConfig{Enabled: true, ReviewRate: 1, ThresholdP: 0.4, Cost: 0.1}}, pay)[0].OnInteraction(state(), low())
	if !mod.Reject || mod.Costs["a"] != 0.1 {
		t.Errorf("moderator %+v", mod)
	}
	tr := Build(Config{Transparency: TransparencyConfig{Enabled: true, Bonus: 0.02, MinP: 0.7}}, pay)[0]
	if e := tr.OnInteraction(state(), &sandbox.Interaction{Initiator: "a", P: 0.9, Accepted: true}); e.RepDelta["a"] != 0.02 {
		t.Error("transparency bonus not given")
	}
	// self-ensemble of 101 samples at p = 0.1 rejects (majority says no)
	if !Build(Config{SelfEnsemble: SelfEnsembleConfig{Enabled: true, Samples: 101}}, pay)[0].OnInteraction(state(), &sandbox.Interaction{P: 0.1, Accepted: true}).Reject {
		t.Error("self-ensemble kept a p = 0.1 interaction")
	}
	fr := Build(Config{Friction: FrictionConfig{Enabled: true, Band: 0.1, Cost: 0.05}}, pay)[0].OnInteraction(state(), &sandbox.Interaction{Initiator: "a", Counterparty: "b", P: 0.55})
	if fr.Costs["a"] != 0.05 || fr.Costs["b"] != 0.05 {
		t.Errorf("friction %+v", fr)
	}
	s := state()
	s.Step = 10
	dc := Build(Config{Decomposition: DecompositionConfig{Enabled: true, Every: 5, Cost: 0.01}}, pay)[0].OnStep(s)
	if len(dc.Costs) != 4 {
		t.Errorf("checkpoint costs %v", dc.Costs)
	}
	ib := Build(Config{IncoherenceBreaker: IncoherenceBreakerConfig{Enabled: true, Window: 4, MaxFlipRate: 1, FreezeEpochs: 1}}, pay)[0]
	var frozen bool
	for i, acc := range []bool{true, false, true, false} {
		e := ib.OnInteraction(s, &sandbox.Interaction{ID: string(rune('a' + i)), Initiator: "a", Counterparty: "b", Accepted: acc})
		frozen = frozen || e.Freeze["b"] == 1
	}
	if !frozen {
		t.Error("a counterparty flipping every time was not frozen")
	}
}

func TestEveryLeverOffByDefault(t *testing.T) {
	t.Parallel()
	if ls := Build(Config{}, sandbox.DefaultPayoffConfig()); len(ls) != 0 {
		t.Errorf("%d levers on by default", len(ls))
	}
}

func TestNewRandomAuditStandsAlone(t *testing.T) {
	t.Parallel()
	l := NewRandomAudit(AuditConfig{Probability: 1, PenaltyMultiplier: 1, ThresholdP: 0.5}, sandbox.DefaultPayoffConfig())
	in := sandbox.Interaction{Initiator: "a", P: 0.5 - 0.25, Accepted: true} // E = 0.75·2
	if e := l.OnInteraction(state(), &in); e.Costs["a"] != 1.5 {
		t.Errorf("costs %v, want 1.5", e.Costs)
	}
}

// The other side of each filtering lever: what it must leave alone.
func TestFilteringLeversLeaveGoodWorkAlone(t *testing.T) {
	t.Parallel()
	pay := sandbox.DefaultPayoffConfig()
	good := func() *sandbox.Interaction {
		return &sandbox.Interaction{ID: "g", Initiator: "a", Counterparty: "b", P: 0.8, Accepted: true}
	}
	if e := Build(Config{Refinery: RefineryConfig{Enabled: true, ThresholdP: 0.4}}, pay)[0].OnInteraction(state(), good()); e.Reject {
		t.Error("refinery rejected p above its threshold")
	}
	if e := Build(Config{Moderator: ModeratorConfig{Enabled: true, ReviewRate: 1, ThresholdP: 0.4, Cost: 0.1}}, pay)[0].OnInteraction(state(), good()); e.Reject || e.Costs["a"] != 0.1 {
		t.Errorf("moderator: a reviewed good interaction is kept and the review still costs: %+v", e)
	}
	if e := Build(Config{Moderator: ModeratorConfig{Enabled: true, ReviewRate: 0, ThresholdP: 0.9, Cost: 0.1}}, pay)[0].OnInteraction(state(), good()); e.Reject || len(e.Costs) != 0 {
		t.Errorf("moderator with review rate 0 acted: %+v", e)
	}
	if e := Build(Config{Transparency: TransparencyConfig{Enabled: true, Bonus: 0.02, MinP: 0.9}}, pay)[0].OnInteraction(state(), good()); len(e.RepDelta) != 0 {
		t.Error("transparency bonus below its min_p")
	}
	se := Build(Config{SelfEnsemble: SelfEnsembleConfig{Enabled: true, Samples: 101}}, pay)[0]
	if se.OnInteraction(state(), &sandbox.Interaction{P: 0.9, Accepted: true}).Reject {
		t.Error("self-ensemble rejected a p = 0.9 interaction (majority says yes)")
	}
	// near p = 0.5 the majority of 3 samples goes both ways
	s, kept := state(), 0
	for i := 0; i < 400; i++ {
		if !se.OnInteraction(s, &sandbox.Interaction{P: 0.5, Accepted: true}).Reject {
			kept++
		}
	}
	if kept < 120 || kept > 280 {
		t.Errorf("self-ensemble kept %d of 400 at p = 0.5", kept)
	}
	fr := Build(Config{Friction: FrictionConfig{Enabled: true, Band: 0.1, Cost: 0.05}}, pay)[0]
	if e := fr.OnInteraction(state(), good()); len(e.Costs) != 0 {
		t.Errorf("friction outside the uncertain band: %v", e.Costs)
	}
	st := state()
	st.Step = 7
	dc := Build(Config{Decomposition: DecompositionConfig{Enabled: true, Every: 5, Cost: 0.01}}, pay)[0]
	if e := dc.OnStep(st); len(e.Costs) != 0 {
		t.Errorf("checkpoint off its schedule: %v", e.Costs)
	}
	st.Step, st.Epoch, st.FrozenUntil["c"] = 5, 1, 3
	if e := dc.OnStep(st); len(e.Costs) != 3 || e.Costs["c"] != 0 {
		t.Errorf("a frozen agent pays no checkpoint: %v", e.Costs)
	}
	ib := Build(Config{IncoherenceBreaker: IncoherenceBreakerConfig{Enabled: true, Window: 4, MaxFlipRate: 0.6, FreezeEpochs: 1}}, pay)[0]
	for _, acc := range []bool{true, true, true, false, false, false} { // one flip in every window
		if e := ib.OnInteraction(state(), &sandbox.Interaction{Initiator: "a", Counterparty: "b", Accepted: acc}); len(e.Freeze) != 0 {
			t.Fatal("a consistent counterparty was frozen")
		}
	}
	tax := Build(Config{TransactionTax: TaxConfig{Enabled: true, Rate: 0.1, Split: 1}}, pay)[0]
	// |S| is taxed: S(0.2) = 0.4 − 0.8 = −0.4
	if e := tax.OnInteraction(state(), &sandbox.Interaction{Initiator: "a", Counterparty: "b", P: 0.2, Accepted: true}); math.Abs(e.Costs["a"]-0.04) > 1e-12 || e.Costs["b"] != 0 {
		t.Errorf("tax on a loss-making interaction, split 1: %v", e.Costs)
	}
}

// TestReputationByNumber: agents are numbered in the order added; by id,
// an unknown agent reads as absent and is never created by a write.
func TestReputationByNumber(t *testing.T) {
	t.Parallel()
	s := NewState(rand.New(rand.NewPCG(1, 2)))
	if i, j := s.AddAgent("a", 0.5), s.AddAgent("b", 0.7); i != 0 || j != 1 {
		t.Fatalf("numbers %d, %d; want 0, 1", i, j)
	}
	if !s.SetReputation("b", 0.2) || s.Rep[1] != 0.2 {
		t.Errorf("SetReputation(b) did not write Rep[1]: %v", s.Rep)
	}
	if r, ok := s.Reputation("a"); !ok || r != 0.5 {
		t.Errorf("Reputation(a) = %v, %v", r, ok)
	}
	if s.SetReputation("ghost", 1) || len(s.Rep) != 2 {
		t.Errorf("an unknown agent was created: %v", s.Rep)
	}
	if _, ok := s.Reputation("ghost"); ok {
		t.Error("an unknown agent has a reputation")
	}
}
