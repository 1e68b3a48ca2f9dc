package economy

import "fmt"

// SybilConfig is the Sybil lever's part of the governance configuration
// (the reference's sybil_* fields).
type SybilConfig struct {
	Enabled             bool    // (false)
	SimilarityThreshold float64 // in [0, 1] (0.8)
	PenaltyMultiplier   float64 // ≥ 0 (1.0)
	RealtimePenalty     bool    // (false)
	RealtimeRate        float64 // ≥ 0 (0.1)
	// MaxClusterSize: agents in a larger cluster may not act (1; the
	// reference's docs say 3 but its code and loader use 1).
	MaxClusterSize int
}

// DefaultSybilConfig is the reference's default.
func DefaultSybilConfig() SybilConfig {
	return SybilConfig{SimilarityThreshold: 0.8, PenaltyMultiplier: 1, RealtimeRate: 0.1, MaxClusterSize: 1}
}

// Validate checks the configuration.
func (c SybilConfig) Validate() error {
	switch {
	case !(c.SimilarityThreshold >= 0 && c.SimilarityThreshold <= 1):
		return fmt.Errorf("%w: sybil_similarity_threshold = %v, want in [0, 1]", ErrInvalidConfig, c.SimilarityThreshold)
	case !(c.PenaltyMultiplier >= 0):
		return fmt.Errorf("%w: sybil_penalty_multiplier = %v, want ≥ 0", ErrInvalidConfig, c.PenaltyMultiplier)
	case !(c.RealtimeRate >= 0):
		return fmt.Errorf("%w: sybil_realtime_rate = %v, want ≥ 0", ErrInvalidConfig, c.RealtimeRate)
	case c.MaxClusterSize < 1:
		return fmt.Errorf("%w: sybil_max_cluster_size = %d, want ≥ 1", ErrInvalidConfig, c.MaxClusterSize)
	}
	return nil
}

// SybilPenalty is what the loop applies to one clustered agent at epoch
// start (unclamped, as in the reference).
type SybilPenalty struct {
	Agent           string
	ReputationDelta float64 // −0.1·multiplier
	ResourceDelta   float64 // −1·multiplier
}

// SybilLever is the governance lever the simulation loop calls at three
// points: OnInteraction for every finalized interaction, OnEpochStart once
// per epoch, and CanAct when it schedules agents. It does nothing while
// disabled. Not safe for concurrent use: the loop calls it from one
// goroutine.
type SybilLever struct {
	cfg       SybilConfig
	patterns  *Patterns
	clusters  [][]string
	clusterOf map[string]int // agent → cluster size
}

// NewSybilLever returns a lever with no recorded patterns.
func NewSybilLever(cfg SybilConfig) (*SybilLever, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &SybilLever{cfg: cfg, patterns: NewPatterns(), clusterOf: map[string]int{}}, nil
}

// OnInteraction records one finalized interaction (accepted or not) in both
// directions, initiator first, and returns the realtime costs to add to
// the interaction's c_a and c_b before payoffs: the realtime rate on each
// side when the penalty is on and both parties are flagged, else 0.
func (l *SybilLever) OnInteraction(initiator, counterparty string) (costA, costB float64) {
	if !l.cfg.Enabled {
		return 0, 0
	}
	l.patterns.Add(initiator, counterparty, 1)
	l.patterns.Add(counterparty, initiator, 1)
	if l.cfg.RealtimePenalty && l.Flagged(initiator) && l.Flagged(counterparty) {
		return l.cfg.RealtimeRate, l.cfg.RealtimeRate
	}
	return 0, 0
}

// OnEpochStart clusters every pattern recorded so far, flags the clustered
// agents (replacing the previous flags) and returns their penalties, in
// cluster order. The penalty repeats every epoch an agent stays clustered.
func (l *SybilLever) OnEpochStart() []SybilPenalty {
	if !l.cfg.Enabled {
		return nil
	}
	l.clusters = Cluster(l.patterns, l.cfg.SimilarityThreshold)
	clear(l.clusterOf)
	var out []SybilPenalty
	for _, c := range l.clusters {
		for _, a := range c {
			l.clusterOf[a] = len(c)
			out = append(out, SybilPenalty{Agent: a, ReputationDelta: -0.1 * l.cfg.PenaltyMultiplier, ResourceDelta: -1 * l.cfg.PenaltyMultiplier})
		}
	}
	return out
}

// Flagged reports whether agent was clustered at the last epoch start.
func (l *SybilLever) Flagged(agent string) bool { _, ok := l.clusterOf[agent]; return ok }

// CanAct is false for an agent whose cluster is larger than MaxClusterSize.
func (l *SybilLever) CanAct(agent string) bool {
	if !l.cfg.Enabled {
		return true
	}
	return l.clusterOf[agent] <= l.cfg.MaxClusterSize
}

// Clusters returns the clusters found at the last epoch start.
func (l *SybilLever) Clusters() [][]string {
	out := make([][]string, len(l.clusters))
	for i, c := range l.clusters {
		out[i] = append([]string(nil), c...)
	}
	return out
}

// Patterns returns the recorded interaction patterns.
func (l *SybilLever) Patterns() *Patterns { return l.patterns }
