package sim

import (
	"fmt"
	"math"

	"github.com/swarm-dev/swarm/internal/textsafe"
)

// LeverRange is the range the paper (§8) studies a lever's value over.
type LeverRange struct {
	// Field is the scenario key, e.g. governance.transaction_tax.rate.
	Field    string
	Min, Max float64
	// value reads the field from a scenario; ok is false when the lever
	// is off (its value then does nothing).
	value func(s *Scenario) (v float64, ok bool)
}

// PaperRanges are the paper's lever ranges (§8): transaction tax 0–0.5,
// reputation decay 0.8–1.0, circuit-breaker freeze threshold 0.3–1.0,
// audit probability 0–0.5. `swarm sandbox run` and `sweep` refuse a
// scenario with an enabled lever outside them unless --allow-out-of-range.
func PaperRanges() []LeverRange {
	return []LeverRange{
		{"governance.transaction_tax.rate", 0, 0.5, func(s *Scenario) (float64, bool) {
			return s.Governance.TransactionTax.Rate, s.Governance.TransactionTax.Enabled
		}},
		{"governance.reputation_decay.factor", 0.8, 1, func(s *Scenario) (float64, bool) {
			return s.Governance.ReputationDecay.Factor, s.Governance.ReputationDecay.Enabled
		}},
		{"governance.circuit_breaker.threshold", 0.3, 1, func(s *Scenario) (float64, bool) {
			return s.Governance.CircuitBreaker.Threshold, s.Governance.CircuitBreaker.Enabled
		}},
		{"governance.random_audit.probability", 0, 0.5, func(s *Scenario) (float64, bool) {
			return s.Governance.RandomAudit.Probability, s.Governance.RandomAudit.Enabled
		}},
	}
}

// RangeError is a lever value outside the paper's range.
type RangeError struct {
	File  string // the scenario (or sweep) file
	Field string
	Value float64
	Min   float64
	Max   float64
	// Point names the sweep point that set it ("" for a scenario).
	Point string
}

func (e *RangeError) Error() string {
	at := e.File
	if e.Point != "" {
		at += " (sweep point " + e.Point + ")"
	}
	return textsafe.Printable(fmt.Sprintf("%s: %s: %v is outside the paper's range %v..%v (§8)", at, e.Field, e.Value, e.Min, e.Max))
}

// OutOfRange lists the enabled levers of s (read from file) whose value is
// outside PaperRanges, in that order; nil when all are in range.
func OutOfRange(file string, s Scenario) []*RangeError {
	var out []*RangeError
	for _, r := range PaperRanges() {
		v, on := r.value(&s)
		if on && (v < r.Min || v > r.Max || math.IsNaN(v)) {
			out = append(out, &RangeError{File: file, Field: r.Field, Value: v, Min: r.Min, Max: r.Max})
		}
	}
	return out
}

// SweepOutOfRange lists, for every point of the sweep read from file (its
// scenario's text base), the levers outside PaperRanges, each once per
// point that sets it out of range.
func SweepOutOfRange(file string, sw Sweep, base []byte) ([]*RangeError, error) {
	var out []*RangeError
	for _, pt := range sw.Points() {
		doc, err := applyPoint(file, base, pt)
		if err != nil {
			return nil, err
		}
		s, err := ParseScenario(fmt.Sprintf("%s with %v", file, pt), doc)
		if err != nil {
			return nil, err
		}
		for _, e := range OutOfRange(file, s) {
			e.Point = fmt.Sprint(pt)
			out = append(out, e)
		}
	}
	return out, nil
}
