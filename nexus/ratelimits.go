package nexus

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/swarm-dev/swarm/providers"
)

// Rate limits read from the answers: the adaptive concurrency limit's
// events and telemetry. (Prompt-cache hits are the meter's: CallStats.)

// EvConcurrency is a change of a model's adaptive concurrency limit
// (ConcurrencyData): halved on a 429, one less when the answers' rate-limit
// headers show a budget nearly spent, one more after a window of successes.
const EvConcurrency Kind = "concurrency_limit"

// ConcurrencyData is one change of a model's adaptive concurrency limit.
type ConcurrencyData struct {
	From     int    `json:"from"`
	InFlight int    `json:"in_flight"`
	Max      int    `json:"max"` // the ceiling (the kind's max_concurrency)
	Model    string `json:"model"`
	// Reason is rate_limited (a 429: halved), low_headroom (the headers
	// showed less than 10% of a budget left: -1) or successes (+1).
	Reason string `json:"reason"`
	To     int    `json:"to"`
}

func (ConcurrencyData) payload() {}

// adaptiveLayer is the adaptive layer of ref's stack (stack.go): the
// model's adaptive concurrency limit (nil: none), each change an event of
// this run in the phase of the call that caused it.
func (pp *providerPool) adaptiveLayer(ref providers.Ref, limits *providers.KindLimits) providers.Around {
	a := limits.Adaptive(ref)
	if a == nil {
		return nil
	}
	pp.amu.Lock()
	if pp.adaptive == nil {
		pp.adaptive = map[string]*providers.AdaptiveLimit{}
	}
	pp.adaptive[ref.String()] = a
	pp.amu.Unlock()
	return func(ctx context.Context, call *providers.Call, next func(context.Context)) {
		providers.Wrap(providers.Adaptive(a, func(_ context.Context, c providers.AdaptiveChange) {
			pp.rec.emit(Event{Phase: Phase(call.Phase), Kind: EvConcurrency, Model: c.Model,
				Message: fmt.Sprintf("concurrency limit of %s: %d → %d (%s)", c.Model, c.From, c.To, c.Reason),
				Data:    ConcurrencyData{From: c.From, InFlight: c.InFlight, Max: c.Max, Model: c.Model, Reason: c.Reason, To: c.To}})
		}))(ctx, call, next)
	}
}

// adaptiveStats is telemetry's adaptive_concurrency: every model of the run
// with an adaptive limit, by name; nil when none has one. The limits are
// shared by the runs that share the LimitSet (compare's contenders), so a
// model's counts are theirs together.
func (pp *providerPool) adaptiveStats() []providers.AdaptiveStats {
	pp.amu.Lock()
	defer pp.amu.Unlock()
	var out []providers.AdaptiveStats
	for _, a := range pp.adaptive {
		out = append(out, a.Stats())
	}
	slices.SortFunc(out, func(a, b providers.AdaptiveStats) int { return cmp.Compare(a.Model, b.Model) })
	return out
}
