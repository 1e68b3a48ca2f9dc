package economy

import (
	"fmt"
	"math"
)

// Cascade phases.
const (
	PhasePreCrash     = "pre_crash"
	PhaseTrigger      = "trigger"
	PhaseCascade      = "cascade"
	PhaseCircuitBreak = "circuit_break"
	PhaseRecovery     = "recovery"
	PhasePostCrash    = "post_crash"
)

// Cascade shocks.
const (
	ShockLiquidity  = "liquidity_shock" // C −= 0.4/max(depth, 0.01) (the default)
	ShockErosion    = "erosion"         // C −= 0.2
	ShockWithdrawal = "coordinated_withdrawal"
)

// CascadeConfig configures the confidence-cascade model (the reference's
// FlashCrashEngine in swarm/scenarios/flash_crash.py).
type CascadeConfig struct {
	InitialConfidence float64 // (0.8)
	TriggerEpoch      int     // (5)
	Shock             string  // ShockLiquidity (default), ShockErosion or ShockWithdrawal
	MarketDepth       float64 // (1.0)
	CircuitBreaker    bool    // (true)
	BreakerThreshold  float64 // C ≤ it trips the breaker (0.2)
	BreakerSteps      int     // steps the breaker lasts (5)
	RecoveryThreshold float64 // C ≥ it ends recovery (0.76)
	AgentNoise        float64 // σ of the per-agent confidence noise (0.05)
	WithdrawBelow     float64 // agents below it may withdraw (0.4)
	ReenterAbove      float64 // withdrawn agents above it may re-enter (0.48)
}

// DefaultCascadeConfig is the reference's default.
func DefaultCascadeConfig() CascadeConfig {
	return CascadeConfig{InitialConfidence: 0.8, TriggerEpoch: 5, Shock: ShockLiquidity, MarketDepth: 1, CircuitBreaker: true,
		BreakerThreshold: 0.2, BreakerSteps: 5, RecoveryThreshold: 0.76, AgentNoise: 0.05, WithdrawBelow: 0.4, ReenterAbove: 0.48}
}

// Validate checks the configuration.
func (c CascadeConfig) Validate() error {
	switch {
	case !(c.InitialConfidence >= 0 && c.InitialConfidence <= 1):
		return fmt.Errorf("%w: initial_confidence = %v, want in [0, 1]", ErrInvalidConfig, c.InitialConfidence)
	case c.Shock != ShockLiquidity && c.Shock != ShockErosion && c.Shock != ShockWithdrawal:
		return fmt.Errorf("%w: shock = %q, want %s, %s or %s", ErrInvalidConfig, c.Shock, ShockLiquidity, ShockErosion, ShockWithdrawal)
	case !(c.MarketDepth >= 0):
		return fmt.Errorf("%w: market_depth = %v, want ≥ 0", ErrInvalidConfig, c.MarketDepth)
	case c.BreakerSteps < 1:
		return fmt.Errorf("%w: breaker_steps = %d, want ≥ 1", ErrInvalidConfig, c.BreakerSteps)
	case !(c.AgentNoise >= 0):
		return fmt.Errorf("%w: agent_noise = %v, want ≥ 0", ErrInvalidConfig, c.AgentNoise)
	}
	return nil
}

// CascadeAgent is one market participant's confidence.
type CascadeAgent struct {
	ID         string
	Confidence float64
	Withdrawn  bool
}

// Cascade is the confidence-cascade model: a market confidence C that a
// shock knocks down, that cascades while agents withdraw, that a circuit
// breaker can pause, and that recovers when interactions are good.
type Cascade struct {
	cfg          CascadeConfig
	rng          NormSource
	c            float64
	phase        string
	history      []float64
	trips        int
	lastTrip     int
	breakerLeft  int
	peak, trough float64
	agents       []CascadeAgent
}

// NewCascade returns a model in phase pre_crash. Agents start at the
// initial confidence, active. rng draws the agent noise and the withdrawal
// samples; nil means NewRand(0).
func NewCascade(cfg CascadeConfig, agents []string, rng NormSource) (*Cascade, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rng == nil {
		rng = NewRand(0)
	}
	m := &Cascade{cfg: cfg, rng: rng, c: cfg.InitialConfidence, phase: PhasePreCrash, peak: cfg.InitialConfidence, trough: cfg.InitialConfidence}
	for _, a := range agents {
		m.agents = append(m.agents, CascadeAgent{ID: a, Confidence: cfg.InitialConfidence})
	}
	return m, nil
}

func (m *Cascade) lower(d float64) { m.c = max(0.05, m.c-d) }

func (m *Cascade) activeFraction() float64 {
	if len(m.agents) == 0 {
		return 1
	}
	n := 0
	for _, a := range m.agents {
		if !a.Withdrawn {
			n++
		}
	}
	return float64(n) / float64(len(m.agents))
}

// Step runs exactly one phase branch for (epoch, step) given the mean p of
// the step's interactions, then updates the agents. It returns C.
func (m *Cascade) Step(epoch int, avgP float64) float64 {
	switch m.phase {
	case PhasePreCrash:
		if epoch >= m.cfg.TriggerEpoch {
			m.shock()
			m.phase = PhaseTrigger
		}
	case PhaseTrigger, PhaseCascade:
		m.phase = PhaseCascade
		m.lower(0.3*(1-m.c)/max(m.activeFraction()*m.cfg.MarketDepth, 0.1) + 0.2*max(0, 0.5-avgP))
		if m.cfg.CircuitBreaker && m.c <= m.cfg.BreakerThreshold && (m.trips == 0 || epoch-m.lastTrip >= 1) {
			m.trips++
			m.lastTrip = epoch
			m.breakerLeft = m.cfg.BreakerSteps
			m.phase = PhaseCircuitBreak
		} else if n := len(m.history); n >= 3 {
			stable := true
			for _, h := range m.history[n-3:] {
				if !(h <= m.c+0.001 && math.Abs(h-m.c) <= 0.01) {
					stable = false
				}
			}
			if stable {
				m.phase = PhaseRecovery
			}
		}
	case PhaseCircuitBreak:
		m.c = min(1, m.c+0.02)
		m.breakerLeft--
		if m.breakerLeft <= 0 {
			m.phase = PhaseRecovery
		}
	case PhaseRecovery:
		if avgP >= 0.5 {
			m.c += 0.05 * (1 - m.c)
		} else {
			m.lower(0.01)
		}
		switch {
		case m.cfg.CircuitBreaker && m.c <= m.cfg.BreakerThreshold:
			m.phase = PhaseCascade
		case m.c >= m.cfg.RecoveryThreshold:
			m.phase = PhasePostCrash
		}
	}
	m.updateAgents()
	m.history = append(m.history, m.c)
	m.peak, m.trough = max(m.peak, m.c), min(m.trough, m.c)
	return m.c
}

func (m *Cascade) shock() {
	switch m.cfg.Shock {
	case ShockErosion:
		m.lower(0.2)
	case ShockWithdrawal:
		n := len(m.agents)
		if n == 0 {
			return
		}
		k := max(1, int(math.Floor(0.3*float64(n))))
		// A partial Fisher–Yates draw of k distinct agents.
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		for i := range k {
			j := i + int(m.rng.Float64()*float64(n-i))
			idx[i], idx[j] = idx[j], idx[i]
			m.agents[idx[i]].Withdrawn = true
		}
		m.lower(0.3 * float64(k) / float64(n))
	default:
		m.lower(0.4 / max(m.cfg.MarketDepth, 0.01))
	}
}

func (m *Cascade) updateAgents() {
	for i := range m.agents {
		a := &m.agents[i]
		a.Confidence = clamp01(a.Confidence + 0.5*(m.c-a.Confidence) + m.cfg.AgentNoise*m.rng.NormFloat64())
		switch {
		case !a.Withdrawn && a.Confidence < m.cfg.WithdrawBelow:
			if m.rng.Float64() < (m.cfg.WithdrawBelow-a.Confidence)/m.cfg.WithdrawBelow {
				a.Withdrawn = true
			}
		case a.Withdrawn && a.Confidence > m.cfg.ReenterAbove:
			if m.rng.Float64() < 0.3*(a.Confidence-m.cfg.WithdrawBelow) {
				a.Withdrawn = false
			}
		}
	}
}

// Confidence is C.
func (m *Cascade) Confidence() float64 { return m.c }

// Phase is the current phase.
func (m *Cascade) Phase() string { return m.phase }

// BreakerTrips counts the circuit-breaker trips.
func (m *Cascade) BreakerTrips() int { return m.trips }

// CrashDepth is the highest confidence seen minus the lowest.
func (m *Cascade) CrashDepth() float64 { return m.peak - m.trough }

// History returns C after every step.
func (m *Cascade) History() []float64 { return append([]float64(nil), m.history...) }

// Agents returns the agents' states.
func (m *Cascade) Agents() []CascadeAgent { return append([]CascadeAgent(nil), m.agents...) }

// ActiveFraction is the share of agents not withdrawn (1 with no agents).
func (m *Cascade) ActiveFraction() float64 { return m.activeFraction() }
