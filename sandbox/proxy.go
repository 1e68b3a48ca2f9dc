// Package sandbox is the distributional safety sandbox: soft probabilistic
// labels from observable signals, soft payoffs, streaming distributional
// metrics (toxicity, quality gap, welfare, calibration), incoherence, and the
// bridge that turns mission outcomes into interactions. Sub-packages hold the
// leakage detector (boundary), governance levers, scripted agents and the
// simulation engine.
package sandbox

import (
	"fmt"
	"math"
	"sync/atomic"
)

// Observables are one interaction's signals.
type Observables struct {
	TaskProgress       float64 `json:"task_progress" yaml:"task_progress"`             // [-1, 1]
	Rework             float64 `json:"rework" yaml:"rework"`                           // count >= 0
	VerifierRejections float64 `json:"verifier_rejections" yaml:"verifier_rejections"` // count >= 0
	ToolMisuse         float64 `json:"tool_misuse" yaml:"tool_misuse"`                 // count >= 0
	Engagement         float64 `json:"engagement" yaml:"engagement"`                   // [-1, 1]
}

// ProxyWeights weight the four channels of v̂.
type ProxyWeights struct {
	Progress   float64 `json:"progress" yaml:"progress"`
	Rework     float64 `json:"rework" yaml:"rework"`
	Verifier   float64 `json:"verifier" yaml:"verifier"`
	Engagement float64 `json:"engagement" yaml:"engagement"`
}

// ProxyConfig configures the proxy and the sigmoid.
type ProxyConfig struct {
	Weights         ProxyWeights `json:"weights" yaml:"weights"`
	DecayRework     float64      `json:"decay_rework" yaml:"decay_rework"`
	DecayRejections float64      `json:"decay_rejections" yaml:"decay_rejections"`
	DecayMisuse     float64      `json:"decay_misuse" yaml:"decay_misuse"`
	K               float64      `json:"k" yaml:"k"`
	B               float64      `json:"b" yaml:"b"`
}

// DefaultProxyConfig: weights 0.4/0.2/0.2/0.2, decays 0.3/0.4/0.5, k 2, b 0.
func DefaultProxyConfig() ProxyConfig {
	return ProxyConfig{Weights: ProxyWeights{0.4, 0.2, 0.2, 0.2}, DecayRework: 0.3, DecayRejections: 0.4, DecayMisuse: 0.5, K: 2}
}

// Proxy maps observables to v̂ and p. Safe for concurrent use.
type Proxy struct {
	c       ProxyConfig
	clamped atomic.Int64
}

// NewProxy validates the config: weights ≥ 0, normalised to sum 1 (all
// zero: equal weights); 0 < k ≤ 100; decays in (0, 1].
func NewProxy(c ProxyConfig) (*Proxy, error) {
	w := c.Weights
	for name, v := range map[string]float64{"progress": w.Progress, "rework": w.Rework, "verifier": w.Verifier, "engagement": w.Engagement} {
		if v < 0 || math.IsNaN(v) {
			return nil, fmt.Errorf("proxy.weights.%s = %v: weights must be >= 0", name, v)
		}
	}
	sum := w.Progress + w.Rework + w.Verifier + w.Engagement
	if sum == 0 {
		c.Weights = ProxyWeights{0.25, 0.25, 0.25, 0.25}
	} else {
		c.Weights = ProxyWeights{w.Progress / sum, w.Rework / sum, w.Verifier / sum, w.Engagement / sum}
	}
	if !(c.K > 0 && c.K <= 100) {
		return nil, fmt.Errorf("proxy.k = %v: want 0 < k <= 100", c.K)
	}
	for name, d := range map[string]float64{"decay_rework": c.DecayRework, "decay_rejections": c.DecayRejections, "decay_misuse": c.DecayMisuse} {
		if !(d > 0 && d <= 1) {
			return nil, fmt.Errorf("proxy.%s = %v: want 0 < decay <= 1", name, d)
		}
	}
	return &Proxy{c: c}, nil
}

// Config returns the normalised configuration.
func (p *Proxy) Config() ProxyConfig { return p.c }

// Clamped counts out-of-range inputs that were clamped.
func (p *Proxy) Clamped() int64 { return p.clamped.Load() }

func (p *Proxy) clamp(x, lo, hi float64) float64 {
	if math.IsNaN(x) {
		p.clamped.Add(1)
		return lo
	}
	if x < lo {
		p.clamped.Add(1)
		return lo
	}
	if x > hi {
		p.clamped.Add(1)
		return hi
	}
	return x
}

// countSignal maps a count c with decay d to 2·d^c − 1 (zero → +1).
func countSignal(c, d float64) float64 { return 2*math.Pow(d, c) - 1 }

// VHat is the weighted proxy score in [−1, 1].
func (p *Proxy) VHat(o Observables) float64 {
	prog := p.clamp(o.TaskProgress, -1, 1)
	eng := p.clamp(o.Engagement, -1, 1)
	rw := countSignal(p.clamp(o.Rework, 0, math.MaxFloat64), p.c.DecayRework)
	rej := countSignal(p.clamp(o.VerifierRejections, 0, math.MaxFloat64), p.c.DecayRejections)
	mis := countSignal(p.clamp(o.ToolMisuse, 0, math.MaxFloat64), p.c.DecayMisuse)
	w := p.c.Weights
	v := w.Progress*prog + w.Rework*rw + w.Verifier*(rej+mis)/2 + w.Engagement*eng
	return math.Max(-1, math.Min(1, v))
}

// P is σ(k(v̂ − b)).
func (p *Proxy) P(o Observables) float64 { return Sigmoid(p.VHat(o), p.c.K, p.c.B) }

// Sigmoid is 1 / (1 + e^(−k(v − b))).
func Sigmoid(v, k, b float64) float64 { return 1 / (1 + math.Exp(-k*(v-b))) }

// InverseSigmoid returns v with Sigmoid(v, k, b) = p (p clamped to (0, 1)).
func InverseSigmoid(p, k, b float64) float64 {
	p = math.Max(1e-15, math.Min(1-1e-15, p))
	return b + math.Log(p/(1-p))/k
}

// SigmoidDerivative is dp/dv = k·p·(1 − p).
func SigmoidDerivative(v, k, b float64) float64 {
	s := Sigmoid(v, k, b)
	return k * s * (1 - s)
}

// UncertaintyBand returns the v̂ interval in which p lies in [lo, hi]
// (default use: 0.3..0.7, the "uncertain" band).
func UncertaintyBand(lo, hi, k, b float64) (vlo, vhi float64) {
	return InverseSigmoid(lo, k, b), InverseSigmoid(hi, k, b)
}
