package sim

// Acceptance rules (simulation.acceptance).
const (
	// AcceptPolicy: the counterparty's own policy decides (each agent
	// type's threshold on a noisy p; agents[].params). The default.
	AcceptPolicy = "policy"
	// AcceptTrust: the reference's trust-based acceptance: the
	// counterparty accepts when its trust in the initiator, the mean p of
	// the accepted interactions between the two so far (0.5 before any),
	// is at least simulation.trust_threshold.
	AcceptTrust = "trust"
)

// DefaultTrustThreshold is the reference's honest agent's default: its
// acceptance threshold 0.4 less its 0.1 leniency for pending proposals.
const DefaultTrustThreshold = 0.3

// trustThreshold is simulation.trust_threshold or its default.
func (s Simulation) trustThreshold() float64 {
	if s.TrustThreshold != nil {
		return *s.TrustThreshold
	}
	return DefaultTrustThreshold
}

// initiationProbability is the probability that an agent of g proposes
// an interaction at a step: agents[].initiation_probability, else
// simulation.initiation_probability, else 1 (every agent, every step).
func (s Scenario) initiationProbability(g AgentGroup) float64 {
	if g.InitiationProbability != nil {
		return *g.InitiationProbability
	}
	if s.Simulation.InitiationProbability != nil {
		return *s.Simulation.InitiationProbability
	}
	return 1
}

// trustBook is what each pair of agents knows of the other: the count and
// p sum of their accepted interactions (either side initiating).
type trustBook struct {
	pairs map[uint64]trustEntry
}

type trustEntry struct {
	n    int32
	sumP float64
}

func newTrustBook() *trustBook { return &trustBook{pairs: map[uint64]trustEntry{}} }

func pairIndex(a, b int) uint64 {
	if a > b {
		a, b = b, a
	}
	return uint64(a)<<32 | uint64(b)
}

// trust is the mean p of a and b's accepted interactions, 0.5 before any.
func (t *trustBook) trust(a, b int) float64 {
	e, ok := t.pairs[pairIndex(a, b)]
	if !ok || e.n == 0 {
		return 0.5
	}
	return e.sumP / float64(e.n)
}

// add records an accepted interaction of a and b with quality p.
func (t *trustBook) add(a, b int, p float64) {
	k := pairIndex(a, b)
	e := t.pairs[k]
	e.n++
	e.sumP += p
	t.pairs[k] = e
}
