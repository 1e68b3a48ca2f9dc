package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// metricsLine is one line of an interactions JSONL file (the input of
// `swarm sandbox metrics`): "accepted", and either "p" or "observables".
// (Its name shows in decoding errors: "Go struct field metricsLine.p".)
//
// It also reads the lines of a sandbox run's events.jsonl: its interactions
// ("type": "interaction", with the run's initiator, counterparty, epoch,
// step and v̂), its header ("type": "run": scenario, seed and the payoff
// the run used) and the lines that are no interaction (governance events,
// lever effects), which are skipped.
type metricsLine struct {
	Type        string       `json:"type"`
	ID          string       `json:"id"`
	Accepted    *bool        `json:"accepted"`
	P           *float64     `json:"p"`
	Observables *Observables `json:"observables"`
	Tau         float64      `json:"tau"`
	CA          float64      `json:"c_a"`
	CB          float64      `json:"c_b"`
	RA          float64      `json:"r_a"`
	RB          float64      `json:"r_b"`
	GroundTruth int          `json:"ground_truth"` // +1, -1, or 0 for unknown
	// A run's interaction.
	Initiator    string   `json:"initiator"`
	Counterparty string   `json:"counterparty"`
	Epoch        int      `json:"epoch"`
	Step         int      `json:"step"`
	VHat         *float64 `json:"v_hat"`
	// A run's header.
	ScenarioID string        `json:"scenario_id"`
	Seed       int64         `json:"seed"`
	Epochs     int           `json:"epochs"`
	Payoff     *PayoffConfig `json:"payoff"`
	// A run's governance event, lever or economy effect, or agent.
	Kind         string  `json:"kind"`
	Message      string  `json:"message"`
	Agent        string  `json:"agent"`
	Cost         float64 `json:"cost"`
	RepDelta     float64 `json:"rep_delta"`
	Payout       float64 `json:"payout"`
	FreezeEpochs int     `json:"freeze_epochs"`
	Unfreeze     bool    `json:"unfreeze"`
	EpochStart   bool    `json:"epoch_start"`
	Reputation   float64 `json:"reputation"`
}

// Kinds of line of a sandbox run's events.jsonl ("type").
const (
	// LineRun is the header: the scenario, seed and payoff of the run.
	LineRun = "run"
	// LineInteraction is one interaction.
	LineInteraction = "interaction"
	// LineGovernance is a governance event (a freeze, a lever's message).
	LineGovernance = "governance"
	// LineEffect is a lever's cost, reputation change or freeze for an
	// agent outside an interaction's own costs and reputation changes, or
	// an economy's payout.
	LineEffect = "effect"
	// LineAgent is an agent: its id, type and initial reputation.
	LineAgent = "agent"
)

// RunHeader is the first line of a sandbox run's events.jsonl: what is
// needed besides the interactions to recompute the run's metrics.
type RunHeader struct {
	ScenarioID string
	Seed       int64
	Epochs     int // the epochs the run was to simulate
	Payoff     PayoffConfig
}

// interaction checks the line and returns the interaction it describes,
// with v̂ and p from the line's p (v̂ by the proxy's inverse sigmoid) or
// from its observables (through the proxy).
func (r metricsLine) interaction(proxy *Proxy) (Interaction, error) {
	if r.Accepted == nil {
		return Interaction{}, errors.New(`missing "accepted"`)
	}
	in := Interaction{ID: r.ID, Accepted: *r.Accepted, Tau: r.Tau, CA: r.CA, CB: r.CB, RA: r.RA, RB: r.RB, GroundTruth: r.GroundTruth,
		Initiator: r.Initiator, Counterparty: r.Counterparty, Epoch: r.Epoch, Step: r.Step}
	switch {
	case r.P != nil && r.Observables != nil:
		return Interaction{}, errors.New(`give either "p" or "observables", not both`)
	case r.P != nil:
		if *r.P < 0 || *r.P > 1 {
			return Interaction{}, fmt.Errorf("p = %v is outside [0, 1]", *r.P)
		}
		in.P = *r.P
		if r.VHat != nil {
			in.VHat = *r.VHat // a run's own v̂
		} else {
			in.VHat = InverseSigmoid(in.P, proxy.Config().K, proxy.Config().B)
		}
	case r.Observables != nil:
		in.Observables = r.Observables
		in.VHat = proxy.VHat(*r.Observables)
		in.P = proxy.P(*r.Observables)
	default:
		return Interaction{}, errors.New(`needs "p" or "observables"`)
	}
	if r.GroundTruth != 0 && r.GroundTruth != 1 && r.GroundTruth != -1 {
		return Interaction{}, errors.New("ground_truth must be +1 or -1")
	}
	return in, nil
}

// LineError is a bad line of a JSONL input: NAME:LINE: message.
type LineError struct {
	Name string // the file, or "-" for stdin
	Line int    // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// maxRecordBytes bounds one line of a JSONL input (interactions, decisions).
const maxRecordBytes = 16 << 20

// ReadInteractions reads an interactions JSONL file from r (name names it in
// errors) and calls fn with each interaction and its line number, in order.
// Blank lines are skipped. A line that is not one interaction record (an
// unknown field, a wrong type, a missing or contradictory value) stops the
// reading with a *LineError naming the line; an error of fn stops it too and
// is returned as is.
//
// It also reads a sandbox run's events.jsonl: its interactions are read,
// its other lines skipped (see ReadRunInteractions for its header).
func ReadInteractions(name string, r io.Reader, proxy *Proxy, fn func(line int, in Interaction) error) error {
	return ReadRunInteractions(name, r, proxy, nil, fn)
}

// ReadRunInteractions is ReadInteractions that also calls onRun (when not
// nil) with the header of a sandbox run's events.jsonl. A header must come
// before every interaction and only once; lines of another type than run,
// agent, interaction, governance or effect are errors.
func ReadRunInteractions(name string, r io.Reader, proxy *Proxy, onRun func(line int, h RunHeader) error, fn func(line int, in Interaction) error) error {
	seen, header := false, false // an interaction, a header
	return ReadJSONLines(name, r, func(n int, rec metricsLine) error {
		switch rec.Type {
		case "", LineInteraction:
		case LineRun:
			switch {
			case header:
				return &LineError{Name: name, Line: n, Err: errors.New("a second run header")}
			case seen:
				return &LineError{Name: name, Line: n, Err: errors.New("a run header after interactions")}
			case rec.Payoff == nil:
				return &LineError{Name: name, Line: n, Err: errors.New(`run header without "payoff"`)}
			}
			header = true
			if onRun == nil {
				return nil
			}
			return onRun(n, RunHeader{ScenarioID: rec.ScenarioID, Seed: rec.Seed, Epochs: rec.Epochs, Payoff: *rec.Payoff})
		case LineGovernance, LineEffect, LineAgent:
			return nil
		default:
			return &LineError{Name: name, Line: n, Err: fmt.Errorf("unknown type %q (want interaction, run, agent, governance or effect)", rec.Type)}
		}
		seen = true
		in, err := rec.interaction(proxy)
		if err != nil {
			return &LineError{Name: name, Line: n, Err: err}
		}
		return fn(n, in)
	}, func(_ int, err error) error {
		return fmt.Errorf("%s: %w", name, err)
	})
}

// ReadJSONLines reads r line by line (name names it in errors; a line may
// be up to maxRecordBytes long) and calls fn with the number of each
// non-blank line and the line decoded strictly (unknown fields are errors)
// into a T. A line that is not a T stops the reading with a *LineError; an
// error of fn stops it too and is returned as is. A read error (a line too
// long: bufio.ErrTooLong) is returned through readErr with the number of
// the line being read.
func ReadJSONLines[T any](name string, r io.Reader, fn func(line int, rec T) error, readErr func(line int, err error) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxRecordBytes)
	n := 0
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var rec T
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return &LineError{Name: name, Line: n, Err: err}
		}
		if err := fn(n, rec); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return readErr(n+1, err)
	}
	return nil
}

// ErrLineTooLong is wrapped by the error for a line longer than a JSONL
// reader accepts.
var ErrLineTooLong = errors.New("line too long")

// ReadDecisions reads a decision-records JSONL file (the input of `swarm
// sandbox incoherence`) from r (name names it in errors) and calls fn with
// each record and its line number, in order. Blank lines are skipped. A
// line that is not one decision record (not JSON, an unknown field, a wrong
// type, no decision_id) or is longer than 16 MiB stops the reading with a
// *LineError naming the line; an error of fn stops it too and is returned
// as is.
func ReadDecisions(name string, r io.Reader, fn func(line int, d Decision) error) error {
	return ReadJSONLines(name, r, func(n int, d Decision) error {
		if d.DecisionID == "" {
			return &LineError{Name: name, Line: n, Err: errors.New("missing decision_id")}
		}
		return fn(n, d)
	}, func(n int, err error) error {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("%w: over %d bytes", ErrLineTooLong, maxRecordBytes)
		}
		return &LineError{Name: name, Line: n, Err: err}
	})
}
