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
// events and telemetry. (Prompt-cache hits are the meter's: runs.CallStats.)

// adaptiveFor is ref's adaptive concurrency limit (nil: none) and the hook
// that makes each change an event of this run.
func (pp *providerPool) adaptiveFor(ref providers.Ref, limits *providers.KindLimits) providers.StandardOptions {
	a := limits.Adaptive(ref)
	if a == nil {
		return providers.StandardOptions{}
	}
	pp.amu.Lock()
	if pp.adaptive == nil {
		pp.adaptive = map[string]*providers.AdaptiveLimit{}
	}
	pp.adaptive[ref.String()] = a
	pp.amu.Unlock()
	return providers.StandardOptions{Adaptive: a, OnAdaptive: func(ctx context.Context, c providers.AdaptiveChange) {
		pp.rec.emit(events.Event{Phase: pp.rec.phaseOf(ctx), Kind: events.Concurrency, Model: c.Model,
			Message: fmt.Sprintf("concurrency limit of %s: %d → %d (%s)", c.Model, c.From, c.To, c.Reason),
			Data:    events.ConcurrencyData{From: c.From, InFlight: c.InFlight, Max: c.Max, Model: c.Model, Reason: c.Reason, To: c.To}})
	}}
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
