package nexus

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
)

// Rate limits read from the answers: the adaptive concurrency limit's
// events and telemetry. (Prompt-cache hits are the meter's: runfiles.CallStats.)

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
			pp.rec.emit(events.Event{Phase: events.Phase(call.Phase), Kind: events.Concurrency, Model: c.Model,
				Message: fmt.Sprintf("concurrency limit of %s: %d → %d (%s)", c.Model, c.From, c.To, c.Reason),
				Data:    events.ConcurrencyData{From: c.From, InFlight: c.InFlight, Max: c.Max, Model: c.Model, Reason: c.Reason, To: c.To}})
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
