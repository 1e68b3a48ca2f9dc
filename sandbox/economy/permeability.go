package economy

import (
	"fmt"
	"math"
)

// PermeabilityConfig configures the permeability and contagion model.
type PermeabilityConfig struct {
	BasePermeability       float64 `json:"base_permeability" yaml:"base_permeability"`             // [0,1] (0.5)
	InformationDecay       float64 `json:"information_decay" yaml:"information_decay"`             // [0,1] (0.1)
	ContagionRate          float64 `json:"contagion_rate" yaml:"contagion_rate"`                   // r_c in [0,1] (0.05)
	SpilloverAmplification float64 `json:"spillover_amplification" yaml:"spillover_amplification"` // ≥ 0 (1.5)
	Adaptive               bool    `json:"adaptive" yaml:"adaptive"`                               // (true)
	ThreatSensitivity      float64 `json:"threat_sensitivity" yaml:"threat_sensitivity"`           // ≥ 0 (1.0)
}

// DefaultPermeabilityConfig is the reference's default.
func DefaultPermeabilityConfig() PermeabilityConfig {
	return PermeabilityConfig{BasePermeability: 0.5, InformationDecay: 0.1, ContagionRate: 0.05,
		SpilloverAmplification: 1.5, Adaptive: true, ThreatSensitivity: 1.0}
}

// Validate checks the configuration.
func (c PermeabilityConfig) Validate() error {
	in01 := func(name string, v float64) error {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("%w: %s = %v, want in [0, 1]", ErrInvalidConfig, name, v)
		}
		return nil
	}
	for _, e := range []error{in01("base_permeability", c.BasePermeability), in01("information_decay", c.InformationDecay),
		in01("contagion_rate", c.ContagionRate)} {
		if e != nil {
			return e
		}
	}
	if !(c.SpilloverAmplification >= 0) {
		return fmt.Errorf("%w: spillover_amplification = %v, want ≥ 0", ErrInvalidConfig, c.SpilloverAmplification)
	}
	if !(c.ThreatSensitivity >= 0) {
		return fmt.Errorf("%w: threat_sensitivity = %v, want ≥ 0", ErrInvalidConfig, c.ThreatSensitivity)
	}
	return nil
}

// Spillover is one contagion event (direction is always outbound in the
// reference). Harm is recorded even when the crossing was blocked.
type Spillover struct {
	InteractionID string
	P             float64
	Harm          float64
	Blocked       bool
}

// Permeability is the boundary model: an effective permeability π that
// adapts to threat and trust, and the spillover of harm across it.
type Permeability struct {
	cfg        PermeabilityConfig
	rng        Source
	effective  float64
	threat     float64
	spillovers int
	blocked    int
	harm       float64
	history    []Spillover
}

// NewPermeability returns a model at π = base. rng draws the spillovers;
// nil means NewRand(0).
func NewPermeability(cfg PermeabilityConfig, rng Source) (*Permeability, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rng == nil {
		rng = NewRand(0)
	}
	return &Permeability{cfg: cfg, rng: rng, effective: cfg.BasePermeability}, nil
}

// EffectivePermeability is the pure formula: base when not adaptive, else
// clamp01(base·clamp01(1 − threat·sensitivity)·(0.5 + 0.5·trust)) (trust
// itself is not clamped).
func EffectivePermeability(cfg PermeabilityConfig, threat, trust float64) float64 {
	if !cfg.Adaptive {
		return cfg.BasePermeability
	}
	tf := clamp01(1 - threat*cfg.ThreatSensitivity)
	return clamp01(cfg.BasePermeability * tf * (0.5 + 0.5*trust))
}

// ComputeEffective sets and returns π from threat and trust (the reference's
// defaults are threat 0, trust 0.5). A non-adaptive model returns base and
// keeps its state.
func (m *Permeability) ComputeEffective(threat, trust float64) float64 {
	pi := EffectivePermeability(m.cfg, threat, trust)
	if m.cfg.Adaptive {
		m.effective, m.threat = pi, threat
	}
	return pi
}

// Effective is the stored π.
func (m *Permeability) Effective() float64 { return m.effective }

// Threat is the last threat level given to ComputeEffective.
func (m *Permeability) Threat() float64 { return m.threat }

// ContagionProbability is clamp01(r_c·(1−p)·π).
func ContagionProbability(cfg PermeabilityConfig, p, pi float64) float64 {
	return clamp01(cfg.ContagionRate * (1 - p) * pi)
}

// ShouldCross makes one draw: crossing is allowed when it is < π·(0.5+0.5p);
// the quality that crosses is p·(1 − decay), else p.
func (m *Permeability) ShouldCross(pi, p float64) (bool, float64) {
	if m.rng.Float64() < pi*(0.5+0.5*p) {
		return true, p * (1 - m.cfg.InformationDecay)
	}
	return false, p
}

// SimulateSpillover runs the contagion over ixs in order at π (nil: the
// stored π). Rejected interactions are skipped without a draw; otherwise one
// draw decides contagion and, on contagion, a second (ShouldCross) decides
// whether the harm (1−p)·amplification crosses or is blocked.
func (m *Permeability) SimulateSpillover(ixs []Interaction, pi *float64) []Spillover {
	p := m.effective
	if pi != nil {
		p = *pi
	}
	var out []Spillover
	for _, in := range ixs {
		if !in.Accepted {
			continue
		}
		if m.rng.Float64() >= ContagionProbability(m.cfg, in.P, p) {
			continue
		}
		harm := (1 - in.P) * m.cfg.SpilloverAmplification
		allowed, _ := m.ShouldCross(p, in.P)
		ev := Spillover{InteractionID: in.ID, P: in.P, Harm: harm, Blocked: !allowed}
		if allowed {
			m.spillovers++
			m.harm += harm
		} else {
			m.blocked++
		}
		m.history = append(m.history, ev)
		out = append(out, ev)
	}
	return out
}

// SpilloverHarm is the harm of the unblocked events.
func SpilloverHarm(evs []Spillover) float64 {
	h := 0.0
	for _, e := range evs {
		if !e.Blocked {
			h += e.Harm
		}
	}
	return h
}

// Counts returns the spillovers that crossed, those blocked, and the
// cumulative external harm since the last Reset.
func (m *Permeability) Counts() (spilled, blocked int, harm float64) {
	return m.spillovers, m.blocked, m.harm
}

// History returns every spillover event since the last Reset.
func (m *Permeability) History() []Spillover { return append([]Spillover(nil), m.history...) }

// ContainmentRate is blocked/(blocked + spilled). ok is false when no
// contagion has happened (the reference returns 1.0 then).
func (m *Permeability) ContainmentRate() (float64, bool) {
	n := m.blocked + m.spillovers
	if n == 0 {
		return 0, false
	}
	return float64(m.blocked) / float64(n), true
}

// Reset clears the state and history (π back to base).
func (m *Permeability) Reset() {
	*m = Permeability{cfg: m.cfg, rng: m.rng, effective: m.cfg.BasePermeability}
}

// OptimalPermeability searches π = i/n, i = 0..n, for the highest
// Σ_acc p·π − w·Σ_acc contagion(π)·(1−p)·amp; the first strictly higher
// score wins, starting from −∞ at π = 0. n must be ≥ 1.
func OptimalPermeability(cfg PermeabilityConfig, ixs []Interaction, harmWeight float64, n int) (float64, error) {
	if n < 1 {
		return 0, fmt.Errorf("%w: optimal permeability needs n ≥ 1 grid steps, got %d", ErrInvalidConfig, n)
	}
	best, bestPi := math.Inf(-1), 0.0
	for i := 0; i <= n; i++ {
		pi := float64(i) / float64(n)
		var benefit, harm float64
		for _, in := range ixs {
			if !in.Accepted {
				continue
			}
			benefit += in.P * pi
			harm += ContagionProbability(cfg, in.P, pi) * (1 - in.P) * cfg.SpilloverAmplification
		}
		if s := benefit - harmWeight*harm; s > best {
			best, bestPi = s, pi
		}
	}
	return bestPi, nil
}
