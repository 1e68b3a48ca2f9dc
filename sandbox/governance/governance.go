// Package governance holds the sandbox's governance levers. Every lever is
// off by default, is configured from YAML (unknown keys are errors), and acts
// through one small interface.
package governance

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/swarm-dev/swarm/internal/stats"
	"github.com/swarm-dev/swarm/sandbox"
)

// State is what levers see and change, owned by the simulation engine.
type State struct {
	Epoch, Step int
	Rng         *rand.Rand
	// Agents by number: IDs[i] is agent i's id, Index its inverse, Rep[i]
	// its reputation in [0, 1]. A slice, not a map by id: the engine reads
	// and writes two reputations per interaction, and on a million agents
	// each map access is a cache miss (AddAgent, Reputation and
	// SetReputation work by id).
	IDs         []string
	Index       map[string]int32
	Rep         []float64
	Resources   map[string]float64
	Stake       map[string]float64
	FrozenUntil map[string]int // agent -> first epoch it may act again
	Types       map[string]string
	// interaction history
	PairCount    map[[2]string]int
	Counterparts map[string]map[string]int // agent -> counterparty -> count
	PairBenefit  map[[2]string]Benefits    // payoffs of each pair's accepted interactions
	Interactions int
}

// Benefits are the running moments of a pair's payoffs over its accepted
// interactions: X is the payoff of the first agent of the pair key (the
// smaller id), Y the second's. Constant memory per pair.
type Benefits struct {
	N, SX, SY, SXX, SYY, SXY float64
}

// Add accounts one interaction's payoffs.
func (b *Benefits) Add(x, y float64) {
	b.N++
	b.SX += x
	b.SY += y
	b.SXX += x * x
	b.SYY += y * y
	b.SXY += x * y
}

// Correlation is Pearson's r of X and Y (0 with fewer than two
// interactions or when a side's payoff is constant).
func (b Benefits) Correlation() float64 {
	if b.N < 2 {
		return 0
	}
	cov := b.SXY/b.N - (b.SX/b.N)*(b.SY/b.N)
	vx := b.SXX/b.N - (b.SX/b.N)*(b.SX/b.N)
	vy := b.SYY/b.N - (b.SY/b.N)*(b.SY/b.N)
	if vx <= 1e-15 || vy <= 1e-15 {
		return 0
	}
	return math.Max(-1, math.Min(1, cov/math.Sqrt(vx*vy)))
}

// NewState returns an empty state.
func NewState(rng *rand.Rand) *State {
	return &State{Rng: rng, Index: map[string]int32{}, Resources: map[string]float64{}, Stake: map[string]float64{},
		FrozenUntil: map[string]int{}, Types: map[string]string{}, PairCount: map[[2]string]int{},
		Counterparts: map[string]map[string]int{}, PairBenefit: map[[2]string]Benefits{}}
}

// AddAgent numbers a new agent (the next number) with reputation rep and
// returns its number. An id already present keeps its number and gets rep.
func (s *State) AddAgent(id string, rep float64) int {
	if i, ok := s.Index[id]; ok {
		s.Rep[i] = rep
		return int(i)
	}
	s.Index[id] = int32(len(s.IDs))
	s.IDs = append(s.IDs, id)
	s.Rep = append(s.Rep, rep)
	return len(s.IDs) - 1
}

// Reputation is agent's reputation (0 and false for an unknown agent).
func (s *State) Reputation(agent string) (float64, bool) {
	i, ok := s.Index[agent]
	if !ok {
		return 0, false
	}
	return s.Rep[i], true
}

// SetReputation sets a known agent's reputation; it reports false (and
// changes nothing) for an unknown one.
func (s *State) SetReputation(agent string, r float64) bool {
	i, ok := s.Index[agent]
	if ok {
		s.Rep[i] = r
	}
	return ok
}

// Frozen reports whether agent may not act this epoch.
func (s *State) Frozen(agent string) bool { return s.FrozenUntil[agent] > s.Epoch }

// Effects is what a lever asks the engine to do.
type Effects struct {
	Costs    map[string]float64 // charged to agents (reduce their payoff)
	Freeze   map[string]int     // agent -> epochs
	Unfreeze []string
	RepDelta map[string]float64
	ResDelta map[string]float64
	Reject   bool // reject the interaction at hand
	Events   []string
}

func (e *Effects) cost(a string, c float64) {
	if e.Costs == nil {
		e.Costs = map[string]float64{}
	}
	e.Costs[a] += c
}

func (e *Effects) rep(a string, d float64) {
	if e.RepDelta == nil {
		e.RepDelta = map[string]float64{}
	}
	e.RepDelta[a] += d
}

func (e *Effects) freeze(a string, epochs int) {
	if e.Freeze == nil {
		e.Freeze = map[string]int{}
	}
	e.Freeze[a] = max(e.Freeze[a], epochs)
}

// Merge adds o into e.
func (e *Effects) Merge(o Effects) {
	for k, v := range o.Costs {
		e.cost(k, v)
	}
	for k, v := range o.RepDelta {
		e.rep(k, v)
	}
	for k, v := range o.Freeze {
		e.freeze(k, v)
	}
	for k, v := range o.ResDelta {
		if e.ResDelta == nil {
			e.ResDelta = map[string]float64{}
		}
		e.ResDelta[k] += v
	}
	e.Unfreeze = append(e.Unfreeze, o.Unfreeze...)
	e.Reject = e.Reject || o.Reject
	e.Events = append(e.Events, o.Events...)
}

// Lever is one governance mechanism. OnInteraction's interaction is valid
// for the call only: the engine reuses it.
type Lever interface {
	Name() string
	OnEpochStart(s *State) Effects
	OnStep(s *State) Effects
	OnInteraction(s *State, in *sandbox.Interaction) Effects
	MayAct(s *State, agent string) bool
}

// HistoryUser is a lever that reads the interaction history (PairCount,
// Counterparts, PairBenefit). The engine keeps that history only when an
// enabled lever says it uses it.
type HistoryUser interface {
	UsesHistory() bool
}

// base gives levers no-op defaults.
type base struct{}

func (base) OnEpochStart(*State) Effects                        { return Effects{} }
func (base) OnStep(*State) Effects                              { return Effects{} }
func (base) OnInteraction(*State, *sandbox.Interaction) Effects { return Effects{} }
func (base) MayAct(*State, string) bool                         { return true }

// ---- transaction tax ----

// TaxConfig: a tax of Rate × |surplus| per accepted interaction, split
// between initiator (Split) and counterparty (1 − Split).
type TaxConfig struct {
	Enabled bool    `yaml:"enabled"`
	Rate    float64 `yaml:"rate"`
	Split   float64 `yaml:"split"`
}

type tax struct {
	base
	c   TaxConfig
	pay sandbox.PayoffConfig
}

func (tax) Name() string { return "transaction_tax" }
func (t tax) OnInteraction(s *State, in *sandbox.Interaction) Effects {
	var e Effects
	if !in.Accepted {
		return e
	}
	amount := t.c.Rate * math.Abs(t.pay.Payoff(*in).S)
	e.cost(in.Initiator, amount*t.c.Split)
	e.cost(in.Counterparty, amount*(1-t.c.Split))
	return e
}

// ---- reputation decay ----

// DecayConfig: at each epoch's start every reputation is multiplied by
// Factor, as in the paper and the reference (0.95 keeps 95%, so
// reputation decays toward 0). The key was `rate` when decay pulled
// reputation toward 0.5 by the rate; scenarios still using it are refused.
type DecayConfig struct {
	Enabled bool    `yaml:"enabled"`
	Factor  float64 `yaml:"factor"`
}

type decay struct {
	base
	c DecayConfig
}

func (decay) Name() string { return "reputation_decay" }
func (d decay) OnEpochStart(s *State) Effects {
	var e Effects
	for i, r := range s.Rep {
		e.rep(s.IDs[i], r*d.c.Factor-r)
	}
	return e
}

// ---- staking ----

// StakingConfig: agents need MinStake to act; a violation (an accepted
// interaction with p < ViolationP) slashes SlashRate of the stake.
type StakingConfig struct {
	Enabled    bool    `yaml:"enabled"`
	MinStake   float64 `yaml:"min_stake"`
	SlashRate  float64 `yaml:"slash_rate"`
	ViolationP float64 `yaml:"violation_p"`
}

type staking struct {
	base
	c StakingConfig
}

func (staking) Name() string                     { return "staking" }
func (k staking) MayAct(s *State, a string) bool { return s.Stake[a] >= k.c.MinStake }
func (k staking) OnInteraction(s *State, in *sandbox.Interaction) Effects {
	var e Effects
	if in.Accepted && in.P < k.c.ViolationP {
		slash := s.Stake[in.Initiator] * k.c.SlashRate
		s.Stake[in.Initiator] -= slash // slashing is applied, not just reported
		e.cost(in.Initiator, slash)
		e.Events = append(e.Events, fmt.Sprintf("staking: slashed %s by %.3f", in.Initiator, slash))
	}
	return e
}

// ---- circuit breaker ----

// BreakerConfig: per agent, the rolling toxicity (1 − p over its last Window
// accepted interactions) above Threshold is a violation; after Violations of
// them the agent is frozen for FreezeEpochs.
type BreakerConfig struct {
	Enabled      bool    `yaml:"enabled"`
	Window       int     `yaml:"window"`
	Threshold    float64 `yaml:"threshold"`
	Violations   int     `yaml:"violations"`
	FreezeEpochs int     `yaml:"freeze_epochs"`
}

// CircuitBreaker is usable on its own, on real agents (a mission's
// commanders and models): Observe each interaction and ask Tripped; Reset
// closes it again. Inside the simulation a trip freezes the agent in State.
type CircuitBreaker struct {
	base
	c          BreakerConfig
	window     map[string][]float64
	violations map[string]int
	tripped    map[string]bool
}

// NewCircuitBreaker returns a breaker (defaults: window 10, 3 violations, 2 epochs).
func NewCircuitBreaker(c BreakerConfig) *CircuitBreaker {
	if c.Window <= 0 {
		c.Window = 10
	}
	if c.Violations <= 0 {
		c.Violations = 3
	}
	if c.FreezeEpochs <= 0 {
		c.FreezeEpochs = 2
	}
	return &CircuitBreaker{c: c, window: map[string][]float64{}, violations: map[string]int{}, tripped: map[string]bool{}}
}

func (*CircuitBreaker) Name() string { return "circuit_breaker" }

// Observe records one accepted interaction of agent with quality p and
// reports whether the breaker trips now.
func (b *CircuitBreaker) Observe(agent string, p float64, accepted bool) bool {
	if !accepted {
		return false
	}
	w := append(b.window[agent], 1-p)
	if len(w) > b.c.Window {
		w = w[len(w)-b.c.Window:]
	}
	b.window[agent] = w
	if b.Toxicity(agent) > b.c.Threshold && len(w) >= min(b.c.Window, 3) {
		b.violations[agent]++
		if b.violations[agent] >= b.c.Violations && !b.tripped[agent] {
			b.tripped[agent] = true
			return true
		}
	}
	return false
}

// Toxicity is agent's rolling toxicity.
func (b *CircuitBreaker) Toxicity(agent string) float64 {
	return stats.Mean(b.window[agent]) // 0 for an empty window
}

// Tripped reports whether agent's breaker is open.
func (b *CircuitBreaker) Tripped(agent string) bool { return b.tripped[agent] }

// Reset closes agent's breaker.
func (b *CircuitBreaker) Reset(agent string) {
	delete(b.tripped, agent)
	b.violations[agent] = 0
	b.window[agent] = nil
}

func (b *CircuitBreaker) OnInteraction(s *State, in *sandbox.Interaction) Effects {
	var e Effects
	if b.Observe(in.Initiator, in.P, in.Accepted) {
		e.freeze(in.Initiator, b.c.FreezeEpochs)
		e.Events = append(e.Events, fmt.Sprintf("circuit_breaker: froze %s (rolling toxicity %.2f)", in.Initiator, b.Toxicity(in.Initiator)))
	}
	return e
}

func (b *CircuitBreaker) OnEpochStart(s *State) Effects {
	var e Effects
	for a := range b.tripped {
		if !s.Frozen(a) {
			b.Reset(a)
			e.Unfreeze = append(e.Unfreeze, a)
		}
	}
	slices.Sort(e.Unfreeze) // the same seed unfreezes in the same order (events.jsonl)
	return e
}

// ---- random audit ----

// AuditConfig: each interaction is audited with Probability; an audited
// interaction with p < ThresholdP costs its initiator PenaltyMultiplier × the
// harm it caused and a reputation hit.
type AuditConfig struct {
	Enabled           bool    `yaml:"enabled"`
	Probability       float64 `yaml:"probability"`
	PenaltyMultiplier float64 `yaml:"penalty_multiplier"`
	ThresholdP        float64 `yaml:"threshold_p"`
}

type audit struct {
	base
	c   AuditConfig
	pay sandbox.PayoffConfig
}

// NewRandomAudit returns the random-audit lever on its own, for use outside
// the simulation (call OnInteraction with a State whose Rng drives the draws).
func NewRandomAudit(c AuditConfig, pay sandbox.PayoffConfig) Lever { return audit{c: c, pay: pay} }

func (audit) Name() string { return "random_audit" }
func (a audit) OnInteraction(s *State, in *sandbox.Interaction) Effects {
	var e Effects
	if s.Rng.Float64() >= a.c.Probability {
		return e
	}
	if in.P < a.c.ThresholdP {
		harm := a.pay.Payoff(*in).E
		e.cost(in.Initiator, a.c.PenaltyMultiplier*harm)
		e.rep(in.Initiator, -0.05)
		e.Events = append(e.Events, fmt.Sprintf("audit: %s penalised %.3f", in.Initiator, a.c.PenaltyMultiplier*harm))
	}
	return e
}

// ---- collusion detection ----

// CollusionConfig: at each epoch start, pairs whose interaction frequency has
// a z-score above ZThreshold, who both gain and whose per-interaction
// payoffs are correlated (Pearson r ≥ BenefitCorrelation), whose mutual
// acceptance is ≥ MinAcceptance and whose mean quality is below
// QualityThreshold are flagged; connected flagged pairs form groups; every
// member pays Penalty and loses reputation. Mutual acceptance is the lower
// of the two directions' acceptance shares (each side accepting what the
// other proposes; a direction without proposals is not counted), so an
// honest agent that accepts a pest's work but whose own is accepted, or the
// other way round, is not mistaken for its accomplice.
type CollusionConfig struct {
	Enabled            bool    `yaml:"enabled"`
	ZThreshold         float64 `yaml:"z_threshold"`
	BenefitCorrelation float64 `yaml:"benefit_correlation"`
	MinAcceptance      float64 `yaml:"min_acceptance"`
	QualityThreshold   float64 `yaml:"quality_threshold"`
	Penalty            float64 `yaml:"penalty"`
}

// Collusion is the collusion detector.
type Collusion struct {
	base
	c    CollusionConfig
	dirs map[[2]string]*directions
	sumP map[[2]string]float64
	// Groups found at the last epoch start (each sorted, in order of their
	// first member).
	Groups [][]string
}

func (*Collusion) Name() string { return "collusion_detection" }

// UsesHistory implements HistoryUser: the detector reads pair counts and
// pair payoffs.
func (*Collusion) UsesHistory() bool { return true }

func pairKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// directions count a pair's proposals and acceptances by direction: index
// 0 for proposals by the first agent of the pair key, 1 by the second.
type directions struct{ n, acc [2]int }

// mutual is the lower acceptance share over the directions with proposals.
func (d *directions) mutual() float64 {
	m, any := 1.0, false
	for i := range 2 {
		if d.n[i] > 0 {
			m, any = math.Min(m, float64(d.acc[i])/float64(d.n[i])), true
		}
	}
	if !any {
		return 0
	}
	return m
}

func (c *Collusion) OnInteraction(s *State, in *sandbox.Interaction) Effects {
	k := pairKey(in.Initiator, in.Counterparty)
	d := c.dirs[k]
	if d == nil {
		d = &directions{}
		c.dirs[k] = d
	}
	i := 0
	if in.Initiator != k[0] {
		i = 1
	}
	d.n[i]++
	if in.Accepted {
		d.acc[i]++
	}
	c.sumP[k] += in.P
	return Effects{}
}

func (c *Collusion) OnEpochStart(s *State) Effects {
	var e Effects
	c.Groups = nil
	if len(s.PairCount) < 2 {
		return e
	}
	var xs []float64
	for _, n := range s.PairCount {
		xs = append(xs, float64(n))
	}
	mean, sd := sandbox.MeanSD(xs)
	adj := map[string][]string{}
	for k, n := range s.PairCount {
		z := 0.0
		if sd > 0 {
			z = (float64(n) - mean) / sd
		}
		ben := s.PairBenefit[k]
		both := ben.SX > 0 && ben.SY > 0 // both gain overall
		corr := ben.Correlation()        // and their gains rise and fall together
		acc := 0.0
		if d := c.dirs[k]; d != nil {
			acc = d.mutual()
		}
		q := c.sumP[k] / float64(n)
		if z > c.c.ZThreshold && both && corr >= c.c.BenefitCorrelation && acc >= c.c.MinAcceptance && q < c.c.QualityThreshold {
			adj[k[0]] = append(adj[k[0]], k[1])
			adj[k[1]] = append(adj[k[1]], k[0])
		}
	}
	c.Groups = components(adj)
	for _, g := range c.Groups {
		for _, a := range g {
			e.cost(a, c.c.Penalty)
			e.rep(a, -0.1)
		}
		e.Events = append(e.Events, fmt.Sprintf("collusion: group %v penalised", g))
	}
	return e
}

func components(adj map[string][]string) [][]string {
	seen := map[string]bool{}
	var keys []string
	for k := range adj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out [][]string
	for _, k := range keys {
		if seen[k] {
			continue
		}
		var g []string
		stack := []string{k}
		seen[k] = true
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			g = append(g, x)
			for _, y := range adj[x] {
				if !seen[y] {
					seen[y] = true
					stack = append(stack, y)
				}
			}
		}
		sort.Strings(g)
		out = append(out, g)
	}
	return out
}

// ---- Sybil detection ----

// SybilConfig: agents whose counterparty patterns are too similar (the mean
// of the Jaccard similarity of their counterparty sets and the cosine
// similarity of their counterparty count vectors ≥ Threshold) are flagged
// as Sybils and frozen.
type SybilConfig struct {
	Enabled      bool    `yaml:"enabled"`
	Threshold    float64 `yaml:"threshold"`
	MinHistory   int     `yaml:"min_history"`
	FreezeEpochs int     `yaml:"freeze_epochs"`
}

type sybil struct {
	base
	c SybilConfig
}

func (sybil) Name() string { return "sybil_detection" }

// UsesHistory implements HistoryUser: similarity is over counterparts.
func (sybil) UsesHistory() bool { return true }

// Jaccard is |A∩B| / |A∪B| of two key sets (0 when both are empty).
func Jaccard(a, b map[string]int) float64 {
	inter, union := 0, len(a)
	for k := range b {
		if _, ok := a[k]; ok {
			inter++
		} else {
			union++
		}
	}
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// Cosine is the cosine similarity of two count vectors.
func Cosine(a, b map[string]int) float64 {
	var dot, na, nb float64
	for k, x := range a {
		dot += float64(x) * float64(b[k])
		na += float64(x) * float64(x)
	}
	for _, y := range b {
		nb += float64(y) * float64(y)
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// Similarity is the mean of Jaccard and cosine.
func Similarity(a, b map[string]int) float64 { return (Jaccard(a, b) + Cosine(a, b)) / 2 }

func (y sybil) OnEpochStart(s *State) Effects {
	var e Effects
	var agents []string
	for a, cp := range s.Counterparts {
		total := 0
		for _, n := range cp {
			total += n
		}
		if total >= y.c.MinHistory {
			agents = append(agents, a)
		}
	}
	sort.Strings(agents)
	for i := range agents {
		for j := i + 1; j < len(agents); j++ {
			a, b := agents[i], agents[j]
			if sim := Similarity(s.Counterparts[a], s.Counterparts[b]); sim >= y.c.Threshold {
				e.freeze(a, y.c.FreezeEpochs)
				e.freeze(b, y.c.FreezeEpochs)
				e.Events = append(e.Events, fmt.Sprintf("sybil: %s and %s similarity %.2f", a, b, sim))
			}
		}
	}
	return e
}

// ---- refinery ----

// RefineryConfig rejects interactions below a quality threshold.
type RefineryConfig struct {
	Enabled    bool    `yaml:"enabled"`
	ThresholdP float64 `yaml:"threshold_p"`
}

type refinery struct {
	base
	c RefineryConfig
}

func (refinery) Name() string { return "refinery" }
func (r refinery) OnInteraction(s *State, in *sandbox.Interaction) Effects {
	if in.Accepted && in.P < r.c.ThresholdP {
		return Effects{Reject: true}
	}
	return Effects{}
}

// ---- transparency bonus ----

// TransparencyConfig rewards accepted interactions with p ≥ MinP by Bonus reputation.
type TransparencyConfig struct {
	Enabled bool    `yaml:"enabled"`
	Bonus   float64 `yaml:"bonus"`
	MinP    float64 `yaml:"min_p"`
}

type transparency struct {
	base
	c TransparencyConfig
}

func (transparency) Name() string { return "transparency_bonus" }
func (t transparency) OnInteraction(s *State, in *sandbox.Interaction) Effects {
	var e Effects
	if in.Accepted && in.P >= t.c.MinP {
		e.rep(in.Initiator, t.c.Bonus)
	}
	return e
}

// ---- moderator review ----

// ModeratorConfig: a moderator reviews a ReviewRate share of accepted
// interactions and rejects those whose p is below ThresholdP, at Cost to the
// initiator.
type ModeratorConfig struct {
	Enabled    bool    `yaml:"enabled"`
	ReviewRate float64 `yaml:"review_rate"`
	ThresholdP float64 `yaml:"threshold_p"`
	Cost       float64 `yaml:"cost"`
}

type moderator struct {
	base
	c ModeratorConfig
}

func (moderator) Name() string { return "moderator_review" }
func (m moderator) OnInteraction(s *State, in *sandbox.Interaction) Effects {
	var e Effects
	if in.Accepted && s.Rng.Float64() < m.c.ReviewRate {
		e.cost(in.Initiator, m.c.Cost)
		if in.P < m.c.ThresholdP {
			e.Reject = true
			e.Events = append(e.Events, "moderator: rejected "+in.ID)
		}
	}
	return e
}

// ---- self-ensemble ----

// SelfEnsembleConfig: the acceptance decision is the majority of N sampled
// decisions (each accepting with probability p).
type SelfEnsembleConfig struct {
	Enabled bool `yaml:"enabled"`
	Samples int  `yaml:"samples"`
}

type selfEnsemble struct {
	base
	c SelfEnsembleConfig
}

func (selfEnsemble) Name() string { return "self_ensemble" }
func (se selfEnsemble) OnInteraction(s *State, in *sandbox.Interaction) Effects {
	if !in.Accepted {
		return Effects{}
	}
	yes := 0
	n := max(1, se.c.Samples)
	for i := 0; i < n; i++ {
		if s.Rng.Float64() < in.P {
			yes++
		}
	}
	if yes*2 <= n {
		return Effects{Reject: true}
	}
	return Effects{}
}

// ---- incoherence levers ----

// IncoherenceBreakerConfig: an agent whose decisions at the same kind of
// task flip too often (share of flips among its last Window accept/reject
// outcomes as counterparty ≥ MaxFlipRate) is frozen.
type IncoherenceBreakerConfig struct {
	Enabled      bool    `yaml:"enabled"`
	Window       int     `yaml:"window"`
	MaxFlipRate  float64 `yaml:"max_flip_rate"`
	FreezeEpochs int     `yaml:"freeze_epochs"`
}

type incoherenceBreaker struct {
	base
	c    IncoherenceBreakerConfig
	hist map[string][]bool
}

func (*incoherenceBreaker) Name() string { return "incoherence_breaker" }
func (b *incoherenceBreaker) OnInteraction(s *State, in *sandbox.Interaction) Effects {
	var e Effects
	h := append(b.hist[in.Counterparty], in.Accepted)
	w := max(2, b.c.Window)
	if len(h) > w {
		h = h[len(h)-w:]
	}
	b.hist[in.Counterparty] = h
	if len(h) == w {
		flips := 0
		for i := 1; i < len(h); i++ {
			if h[i] != h[i-1] {
				flips++
			}
		}
		if float64(flips)/float64(w-1) >= b.c.MaxFlipRate {
			e.freeze(in.Counterparty, b.c.FreezeEpochs)
			b.hist[in.Counterparty] = nil
			e.Events = append(e.Events, "incoherence_breaker: froze "+in.Counterparty)
		}
	}
	return e
}

// DecompositionConfig: every Every steps (step 0 included) a checkpoint
// costs each agent that is not frozen Cost: long tasks are split into
// checked pieces, and checking has a price.
type DecompositionConfig struct {
	Enabled bool    `yaml:"enabled"`
	Every   int     `yaml:"every"`
	Cost    float64 `yaml:"cost"`
}

type decomposition struct {
	base
	c DecompositionConfig
}

func (decomposition) Name() string { return "decomposition_checkpoints" }
func (d decomposition) OnStep(s *State) Effects {
	var e Effects
	if d.c.Every <= 0 || s.Step%d.c.Every != 0 {
		return e
	}
	for _, a := range s.IDs {
		if !s.Frozen(a) {
			e.cost(a, d.c.Cost)
		}
	}
	e.Events = append(e.Events, fmt.Sprintf("checkpoint at step %d", s.Step))
	return e
}

// FrictionConfig: interactions in the uncertain band (|p − 0.5| < Band) cost
// both sides Cost: friction where decisions are least coherent.
type FrictionConfig struct {
	Enabled bool    `yaml:"enabled"`
	Band    float64 `yaml:"band"`
	Cost    float64 `yaml:"cost"`
}

type friction struct {
	base
	c FrictionConfig
}

func (friction) Name() string { return "incoherence_friction" }
func (f friction) OnInteraction(s *State, in *sandbox.Interaction) Effects {
	var e Effects
	if math.Abs(in.P-0.5) < f.c.Band {
		e.cost(in.Initiator, f.c.Cost)
		e.cost(in.Counterparty, f.c.Cost)
	}
	return e
}

// Config is the scenario's governance section.
type Config struct {
	TransactionTax     TaxConfig                `yaml:"transaction_tax"`
	ReputationDecay    DecayConfig              `yaml:"reputation_decay"`
	Staking            StakingConfig            `yaml:"staking"`
	CircuitBreaker     BreakerConfig            `yaml:"circuit_breaker"`
	RandomAudit        AuditConfig              `yaml:"random_audit"`
	Collusion          CollusionConfig          `yaml:"collusion_detection"`
	Sybil              SybilConfig              `yaml:"sybil_detection"`
	Refinery           RefineryConfig           `yaml:"refinery"`
	Transparency       TransparencyConfig       `yaml:"transparency_bonus"`
	Moderator          ModeratorConfig          `yaml:"moderator_review"`
	SelfEnsemble       SelfEnsembleConfig       `yaml:"self_ensemble"`
	IncoherenceBreaker IncoherenceBreakerConfig `yaml:"incoherence_breaker"`
	Decomposition      DecompositionConfig      `yaml:"decomposition_checkpoints"`
	Friction           FrictionConfig           `yaml:"incoherence_friction"`
}

// Build returns the enabled levers, in a fixed order.
func Build(c Config, pay sandbox.PayoffConfig) []Lever {
	var ls []Lever
	if c.TransactionTax.Enabled {
		ls = append(ls, tax{c: c.TransactionTax, pay: pay})
	}
	if c.ReputationDecay.Enabled {
		ls = append(ls, decay{c: c.ReputationDecay})
	}
	if c.Staking.Enabled {
		ls = append(ls, staking{c: c.Staking})
	}
	if c.CircuitBreaker.Enabled {
		ls = append(ls, NewCircuitBreaker(c.CircuitBreaker))
	}
	if c.RandomAudit.Enabled {
		ls = append(ls, audit{c: c.RandomAudit, pay: pay})
	}
	if c.Collusion.Enabled {
		ls = append(ls, &Collusion{c: c.Collusion, dirs: map[[2]string]*directions{}, sumP: map[[2]string]float64{}})
	}
	if c.Sybil.Enabled {
		ls = append(ls, sybil{c: c.Sybil})
	}
	if c.Refinery.Enabled {
		ls = append(ls, refinery{c: c.Refinery})
	}
	if c.Transparency.Enabled {
		ls = append(ls, transparency{c: c.Transparency})
	}
	if c.Moderator.Enabled {
		ls = append(ls, moderator{c: c.Moderator})
	}
	if c.SelfEnsemble.Enabled {
		ls = append(ls, selfEnsemble{c: c.SelfEnsemble})
	}
	if c.IncoherenceBreaker.Enabled {
		ls = append(ls, &incoherenceBreaker{c: c.IncoherenceBreaker, hist: map[string][]bool{}})
	}
	if c.Decomposition.Enabled {
		ls = append(ls, decomposition{c: c.Decomposition})
	}
	if c.Friction.Enabled {
		ls = append(ls, friction{c: c.Friction})
	}
	return ls
}
