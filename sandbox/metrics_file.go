package sandbox

import (
	"encoding/json"
	"io"
)

// MetricsFile is what `swarm sandbox metrics` prints for an interactions
// file: every metric of the Report, the number of clamped proxy inputs and,
// when asked, each line's v̂, p and payoffs. Its JSON is one object with
// the Report's keys, clamped_inputs and interactions, in key order.
type MetricsFile struct {
	Report        Report
	ClampedInputs int64
	// PerInteraction says whether Interactions was asked for (and is
	// printed, as null when the file holds no interaction).
	PerInteraction bool
	Interactions   []LineMetrics
}

// LineMetrics is one interaction of an interactions file.
type LineMetrics struct {
	Line int     `json:"line"`
	ID   string  `json:"id,omitempty"`
	VHat float64 `json:"v_hat"`
	P    float64 `json:"p"`
	PiA  float64 `json:"pi_a"`
	PiB  float64 `json:"pi_b"`
}

// ReadMetricsFile reads an interactions JSONL file (see ReadInteractions;
// name names it in errors) and computes its metrics under payoff;
// perInteraction also keeps each line's values.
func ReadMetricsFile(name string, r io.Reader, proxy *Proxy, payoff PayoffConfig, perInteraction bool) (*MetricsFile, error) {
	return ReadRunMetricsFile(name, r, proxy, payoff, nil, perInteraction)
}

// ReadRunMetricsFile is ReadMetricsFile that also reads a sandbox run's
// events.jsonl: when runPayoff is not nil and the file starts with a run
// header, the metrics are computed under runPayoff(the header's payoff)
// (the caller decides what wins over the run's own payoff), so that they
// equal the run's own.
func ReadRunMetricsFile(name string, r io.Reader, proxy *Proxy, payoff PayoffConfig, runPayoff func(PayoffConfig) PayoffConfig, perInteraction bool) (*MetricsFile, error) {
	m := NewMetrics(payoff)
	var lines []LineMetrics
	onRun := func(_ int, h RunHeader) error {
		if runPayoff != nil {
			payoff = runPayoff(h.Payoff)
			m = NewMetrics(payoff) // no interaction yet
		}
		return nil
	}
	err := ReadRunInteractions(name, r, proxy, onRun, func(n int, in Interaction) error {
		m.Add(in)
		if perInteraction {
			pay := payoff.Payoff(in)
			lines = append(lines, LineMetrics{Line: n, ID: in.ID, VHat: in.VHat, P: in.P, PiA: pay.PiA, PiB: pay.PiB})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &MetricsFile{Report: m.Report(), ClampedInputs: proxy.Clamped(), PerInteraction: perInteraction, Interactions: lines}, nil
}

// MarshalJSON writes one object: the Report's members, clamped_inputs and
// (when asked for) interactions, keys sorted.
func (f MetricsFile) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(f.Report)
	if err != nil {
		return nil, err
	}
	obj := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	if obj["clamped_inputs"], err = json.Marshal(f.ClampedInputs); err != nil {
		return nil, err
	}
	if f.PerInteraction {
		if obj["interactions"], err = json.Marshal(f.Interactions); err != nil {
			return nil, err
		}
	}
	return json.Marshal(obj)
}
