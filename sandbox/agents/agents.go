// Package agents holds the sandbox's scripted agents: honest, opportunistic,
// deceptive (trust-building then exploitation), adversarial (targets honest
// agents, coordinates with allies) and the adaptive adversary (ε-greedy over
// attack strategies, lying low when detected).
package agents

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/swarm-dev/swarm/sandbox"
)

// Types.
const (
	Honest        = "honest"
	Opportunistic = "opportunistic"
	Deceptive     = "deceptive"
	Adversarial   = "adversarial"
	Adaptive      = "adaptive_adversary"
)

// Types lists every agent type.
var Types = []string{Honest, Opportunistic, Deceptive, Adversarial, Adaptive}

// Target mean p per type under the default proxy (deceptive: its early,
// trust-building phase).
var Target = map[string]float64{Honest: 0.72, Opportunistic: 0.61, Deceptive: 0.63, Adversarial: 0.40, Adaptive: 0.45}

// noiseSD is the spread of an agent's v̂ around its target.
const noiseSD = 0.15

// Context is what an agent knows when it acts.
type Context struct {
	Epoch, Epochs int
	Reputation    float64
	Detected      bool // penalised or frozen recently
}

// Agent is a scripted agent.
type Agent interface {
	ID() string
	Type() string
	// Observe produces the observables of an interaction this agent initiates.
	Observe(rng *rand.Rand, c Context, proxy *sandbox.Proxy) sandbox.Observables
	// ChooseCounterparty picks one of the candidates (false: none).
	ChooseCounterparty(rng *rand.Rand, c Candidates) (int, bool)
	// Accept decides on an interaction proposed by from with quality signal p.
	Accept(rng *rand.Rand, from string, fromType string, p float64) bool
	// Feedback reports this agent's payoff for an interaction it initiated.
	Feedback(payoff float64, detected bool)
}

// Kind selects a subset of an agent's candidates.
type Kind uint8

// Kinds of candidates.
const (
	AnyCandidate    Kind = iota
	AllyCandidate        // an adversary of a group with allies: true
	HonestCandidate      // an honest agent
)

// Candidates are the agents an agent may propose to now (its neighbours
// that are not frozen), by index. The engine implements it without
// listing them, so a complete network of a million agents costs nothing.
type Candidates interface {
	// Pick draws uniformly among the candidates of kind k; false when
	// there is none.
	Pick(rng *rand.Rand, k Kind) (int, bool)
}

// vhatCache memoises vhatFor: every agent of a type has the same centre,
// and a million agents must not redo the bisection a million times.
var vhatCache sync.Map // [3]float64{target, k, b} → float64

// vhatFor finds the v̂ centre whose mean p under noise equals target
// (bisection over a fixed quadrature of the normal noise), for the proxy's k, b.
func vhatFor(target float64, k, b float64) float64 {
	key := [3]float64{target, k, b}
	if v, ok := vhatCache.Load(key); ok {
		return v.(float64)
	}
	v := bisectVHat(target, k, b)
	vhatCache.Store(key, v)
	return v
}

func bisectVHat(target float64, k, b float64) float64 {
	lo, hi := -1.0, 1.0
	meanP := func(c float64) float64 {
		const n = 41
		var s float64
		for i := 0; i < n; i++ {
			u := (float64(i) + 0.5) / n
			eps := noiseSD * math.Sqrt2 * math.Erfinv(2*u-1)
			s += sandbox.Sigmoid(math.Max(-1, math.Min(1, c+eps)), k, b)
		}
		return s / n
	}
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if meanP(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// counts are an agent type's typical rework, rejections and misuse.
type counts struct{ rework, reject, misuse, engagement float64 }

var typeCounts = map[string]counts{
	Honest:        {0.2, 0.1, 0, 0.4},
	Opportunistic: {0.6, 0.4, 0.1, 0.2},
	Deceptive:     {0.3, 0.2, 0.1, 0.5},
	Adversarial:   {1.2, 1.0, 0.8, -0.2},
	Adaptive:      {0.8, 0.6, 0.5, 0},
}

// synth draws observables whose v̂ is centre + noise: counts and engagement
// follow tc, and task progress makes up the rest (clamped to [−1, 1]).
func synth(rng *rand.Rand, tc counts, centre float64, proxy *sandbox.Proxy) sandbox.Observables {
	o := sandbox.Observables{
		Rework:             poisson(rng, tc.rework),
		VerifierRejections: poisson(rng, tc.reject),
		ToolMisuse:         poisson(rng, tc.misuse),
		Engagement:         math.Max(-1, math.Min(1, tc.engagement+rng.NormFloat64()*0.2)),
	}
	want := math.Max(-1, math.Min(1, centre+rng.NormFloat64()*noiseSD))
	w := proxy.Config().Weights
	partial := proxy.VHat(o) // with progress 0
	if w.Progress > 0 {
		o.TaskProgress = math.Max(-1, math.Min(1, (want-partial)/w.Progress))
	}
	return o
}

func poisson(rng *rand.Rand, lambda float64) float64 {
	if lambda <= 0 {
		return 0
	}
	l, k, p := math.Exp(-lambda), 0.0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// blend mixes two count profiles: (1−f)·a + f·b.
func blend(a, b counts, f float64) counts {
	return counts{a.rework + f*(b.rework-a.rework), a.reject + f*(b.reject-a.reject),
		a.misuse + f*(b.misuse-a.misuse), a.engagement + f*(b.engagement-a.engagement)}
}

// centres are an agent's target v̂ per phase or strategy (fields, not a
// map: a million agents).
type centres struct{ def, trust, exploit, probe, lieLow float64 }

// of is the centre of an adaptive adversary's strategy.
func (c *centres) of(strategy string) float64 {
	switch strategy {
	case "exploit":
		return c.exploit
	case "probe":
		return c.probe
	case "lie_low":
		return c.lieLow
	}
	return c.def
}

// scripted is the common implementation.
type scripted struct {
	id, typ string
	params  Params
	centre  centres         // target v̂ by phase
	allies  map[string]bool // shared with the other allies; may hold this agent
	// hasAllies: allies holds another agent than this one
	hasAllies bool
	// adaptive adversary
	strategies []string
	value      map[string]float64
	tries      map[string]int
	current    string
	epsilon    float64
	lieLow     int
}

// Params tune an agent (a scenario's agents[].params); zero values mean
// the defaults.
type Params struct {
	// TrustFraction is the share of the run a deceptive agent spends
	// building trust before it exploits (default 0.3).
	TrustFraction float64 `yaml:"trust_fraction"`
	// Epsilon is the adaptive adversary's exploration rate (default 0.1).
	Epsilon float64 `yaml:"epsilon"`
	// Threshold overrides the agent's acceptance threshold on the (noisy) p
	// signal of proposals it receives (defaults: honest 0.5, deceptive 0.45,
	// opportunistic 0.4, adversaries 0.35; adversaries still accept allies).
	Threshold float64 `yaml:"threshold"`
	// AllyPreference is the probability that an adversary with allies
	// (adversarial or adaptive_adversary, allies: true) proposes to one of
	// its allies when any is among its candidates; otherwise it targets
	// honest agents as usual. Absent: DefaultAllyPreference; 0 turns the
	// coordination off. A pointer, because 0 is a meaningful value.
	AllyPreference *float64 `yaml:"ally_preference"`
	// Acceptance is the agent's acceptance policy for proposals it
	// receives: AcceptQuality (the default) accepts when the noisy p is at
	// least the threshold; AcceptPrice buys on price: better work costs
	// more, so it accepts when the noisy p is at most the threshold (its
	// budget, default 0.5), taking the cheap, low-quality offers and
	// turning the good ones down (adverse selection).
	Acceptance string `yaml:"acceptance"`
}

// Acceptance policies.
const (
	AcceptQuality = "quality"
	AcceptPrice   = "price"
)

// defaultBudget is a price-driven agent's default threshold.
const defaultBudget = 0.5

// DefaultAllyPreference is the share of an allied adversary's proposals
// that go to its allies (when one is reachable).
const DefaultAllyPreference = 0.6

// honestTargeting is the probability that an adversary's proposal that is
// not for an ally goes to an honest agent (when one is reachable).
const honestTargeting = 0.8

// Validate checks the ranges: every parameter in [0, 1].
func (p Params) Validate() error {
	vals := map[string]float64{"trust_fraction": p.TrustFraction, "epsilon": p.Epsilon, "threshold": p.Threshold}
	if p.AllyPreference != nil {
		vals["ally_preference"] = *p.AllyPreference
	}
	for _, name := range []string{"trust_fraction", "epsilon", "threshold", "ally_preference"} {
		if v, ok := vals[name]; ok && !(v >= 0 && v <= 1) {
			return fmt.Errorf("params.%s = %v: want 0..1", name, v)
		}
	}
	switch p.Acceptance {
	case "", AcceptQuality, AcceptPrice:
	default:
		return fmt.Errorf("params.acceptance %q: want %s or %s", p.Acceptance, AcceptQuality, AcceptPrice)
	}
	return nil
}

// TrustEpochs is how many epochs of a run of epochs a deceptive agent with
// trust fraction f (0: the default 0.3) spends building trust.
func TrustEpochs(f float64, epochs int) int {
	if f <= 0 {
		f = 0.3
	}
	return int(math.Ceil(f * float64(max(1, epochs))))
}

// Exploiting reports whether a is a deceptive agent past its trust-building
// phase at epoch.
func Exploiting(a Agent, epoch, epochs int) bool {
	s, ok := a.(*scripted)
	return ok && s.typ == Deceptive && epoch >= TrustEpochs(s.params.TrustFraction, epochs)
}

// New returns an agent of typ with params p.
func New(id, typ string, proxy *sandbox.Proxy, p Params) (Agent, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	k, b := proxy.Config().K, proxy.Config().B
	s := &scripted{id: id, typ: typ, params: p}
	switch typ {
	case Honest, Opportunistic, Adversarial:
		s.centre.def = vhatFor(Target[typ], k, b)
	case Deceptive:
		s.centre.trust = vhatFor(Target[Deceptive], k, b)
		s.centre.exploit = vhatFor(0.30, k, b)
	case Adaptive:
		s.strategies = []string{"exploit", "probe", "lie_low"}
		s.centre.exploit = vhatFor(0.28, k, b)
		s.centre.probe = vhatFor(0.50, k, b)
		s.centre.lieLow = vhatFor(0.70, k, b)
		s.value, s.tries = map[string]float64{}, map[string]int{}
		s.epsilon = 0.1
		if p.Epsilon > 0 {
			s.epsilon = p.Epsilon
		}
		s.current = "probe"
	default:
		return nil, fmt.Errorf("unknown agent type %q (types: %v)", typ, Types)
	}
	return s, nil
}

func (s *scripted) ID() string   { return s.id }
func (s *scripted) Type() string { return s.typ }

// SetAllies marks coordinating adversaries.
func SetAllies(a Agent, allies []string) {
	set := make(map[string]bool, len(allies))
	for _, x := range allies {
		set[x] = true
	}
	ShareAllies(a, set)
}

// ShareAllies makes a coordinate with the members of set (which may hold
// a itself). The set is shared, not copied: a group of a million allies
// costs one set, not a million. The caller must not change it afterwards.
func ShareAllies(a Agent, set map[string]bool) {
	if s, ok := a.(*scripted); ok {
		s.allies = set
		s.hasAllies = len(set) > 1 || len(set) == 1 && !set[s.id]
	}
}

// Strategy is the adaptive adversary's current strategy ("" for others).
func Strategy(a Agent) string {
	if s, ok := a.(*scripted); ok {
		return s.current
	}
	return ""
}

func (s *scripted) Observe(rng *rand.Rand, c Context, proxy *sandbox.Proxy) sandbox.Observables {
	centre := s.centre.def
	tc := typeCounts[s.typ]
	switch s.typ {
	case Deceptive:
		// Trust first, then a linear slide into exploitation.
		trust := TrustEpochs(s.params.TrustFraction, c.Epochs)
		if c.Epoch < trust {
			centre = s.centre.trust
		} else {
			f := math.Min(1, float64(c.Epoch-trust+1)/float64(max(1, c.Epochs-trust)))
			centre = s.centre.trust + f*(s.centre.exploit-s.centre.trust)
			// Exploitation shows in rework, rejections and misuse too.
			tc = blend(typeCounts[Deceptive], typeCounts[Adversarial], f)
		}
	case Adaptive:
		if s.lieLow > 0 {
			s.current = "lie_low"
			s.lieLow--
		} else if rng.Float64() < s.epsilon {
			s.current = s.strategies[rng.IntN(len(s.strategies))]
		} else {
			best, bv := "probe", math.Inf(-1)
			for _, st := range s.strategies {
				v := s.value[st]
				if s.tries[st] == 0 {
					v = math.Inf(1) // try everything once
				}
				if v > bv {
					best, bv = st, v
				}
			}
			s.current = best
		}
		centre = s.centre.of(s.current)
		switch s.current {
		case "lie_low":
			tc = typeCounts[Honest]
		case "exploit":
			tc = typeCounts[Adversarial]
		}
	}
	// Reputation modulates slightly: well-regarded agents are given (and
	// deliver) a little more.
	centre += 0.02 * (c.Reputation - 0.5)
	return synth(rng, tc, centre, proxy)
}

func (s *scripted) ChooseCounterparty(rng *rand.Rand, c Candidates) (int, bool) {
	if s.typ == Adversarial || s.typ == Adaptive {
		// Coordinate: trade with allies first (the collusion the
		// detector looks for), then target honest agents. Each preference
		// applies only when such a candidate exists.
		if s.hasAllies && rng.Float64() < s.allyPreference() {
			if j, ok := c.Pick(rng, AllyCandidate); ok {
				return j, true
			}
		}
		if rng.Float64() < honestTargeting {
			if j, ok := c.Pick(rng, HonestCandidate); ok {
				return j, true
			}
		}
	}
	return c.Pick(rng, AnyCandidate)
}

func (s *scripted) allyPreference() float64 {
	if s.params.AllyPreference != nil {
		return *s.params.AllyPreference
	}
	return DefaultAllyPreference
}

func (s *scripted) Accept(rng *rand.Rand, from, fromType string, p float64) bool {
	signal := p + rng.NormFloat64()*0.05 // counterparties see p with noise
	th := 0.35                           // adversaries: accept allies always, others when profitable-looking
	switch s.typ {
	case Honest:
		th = 0.5
	case Opportunistic:
		th = 0.4
	case Deceptive:
		th = 0.45
	default:
		if from != s.id && s.allies[from] {
			return true
		}
	}
	if s.params.Acceptance == AcceptPrice {
		th = defaultBudget
		if s.params.Threshold > 0 {
			th = s.params.Threshold
		}
		return signal <= th
	}
	if s.params.Threshold > 0 {
		th = s.params.Threshold
	}
	return signal >= th
}

func (s *scripted) Feedback(payoff float64, detected bool) {
	if s.typ != Adaptive {
		return
	}
	s.tries[s.current]++
	n := float64(s.tries[s.current])
	s.value[s.current] += (payoff - s.value[s.current]) / n
	if detected {
		s.value[s.current] -= 1
		s.lieLow = 20
	}
}

// SortedIDs returns agent ids sorted.
func SortedIDs(as []Agent) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID()
	}
	sort.Strings(out)
	return out
}
