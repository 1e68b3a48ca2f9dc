package nexus

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swarm-dev/swarm/providers"
)

// providerPool holds a run's providers: each model of the roster built once
// from the registry with its kind's config, wrapped (WithProviderWrap),
// recorded, protected by a circuit breaker, and stacked with timeout,
// retries, rate limit and concurrency cap (the kind's, from limits).
type providerPool struct {
	cfg         *Config
	reg         *providers.Registry
	built       map[string]providers.Provider // the roster's raw providers, built before the run directory exists
	wrap        func(providers.Ref, providers.Provider) providers.Provider
	limits      *providers.LimitSet
	personality string
	scaleCall   time.Duration // the scale's timeouts.call
	factor      float64       // the personality's timeout factor
	rec         *recorder
	meter       *meter
	// journal is the run's journal.jsonl (replay layer, journal.go); the
	// counters count recorded calls answered from it and by a model.
	journal                   *journal
	replayedCalls, freshCalls atomic.Int64

	mu    sync.Mutex
	provs map[string]providers.Provider
}

// forRole is the provider an agent of role whose model is ref calls: the
// seam where a run decides who answers a request. The layers, outside in:
//
//   - replay (issue 12, resume): a request the run's journal already holds
//     an answer for is answered from it (recorded as a replayed llm_call),
//     whichever model answered it then;
//   - routing: the breaker of (ref, role's layer); while it is open the
//     role's fallback models (Roster.FallbacksFor) answer instead;
//   - provider(ref): the model's own stack (retries, rate limit,
//     concurrency cap, timeout, recording).
//
// Today routing is provider(ref).
func (pp *providerPool) forRole(role string, ref providers.Ref) (providers.Provider, error) {
	_ = role
	p, err := pp.provider(ref)
	if err != nil {
		return nil, err
	}
	return pp.replaying(ref, p), nil
}

// provider returns the (cached) provider for ref.
func (pp *providerPool) provider(ref providers.Ref) (providers.Provider, error) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if p, ok := pp.provs[ref.String()]; ok {
		return p, nil
	}
	kc := pp.cfg.Providers[ref.Kind]
	raw, ok := pp.built[ref.String()]
	var err error
	if !ok {
		raw, err = pp.reg.New(ref, kc)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadInput, ref, err)
	}
	p := raw
	if pp.wrap != nil {
		p = pp.wrap(ref, p)
	}
	// The role's token ceiling applies before the cache looks the call up.
	p = pp.recorded(ref, pp.tokenCeiling(p))
	if pp.cfg.CircuitBreaker.Enabled {
		b := &breaker{threshold: pp.cfg.CircuitBreaker.FailureThreshold, cooldown: pp.cfg.CircuitBreaker.Cooldown, onTrip: func(ctx context.Context) {
			pp.meter.noteTrip()
			pp.rec.emit(Event{Phase: pp.rec.phaseOf(ctx), Kind: EvBreakerTrip, Model: ref.String(), Message: "provider circuit breaker opened after consecutive failures"})
		}}
		p = b.wrap(p)
	}
	ck := kc
	ck.Timeout = pp.callTimeout(kc.Timeout)
	p = stack(p, ck, pp.personality, pp.cfg, pp.limits.For(ref.Kind, kc))
	pp.provs[ref.String()] = p
	return p, nil
}

// callTimeout is the per-call (per attempt) timeout: the smaller of the
// provider kind's timeout and the scale's timeouts.call, scaled by the
// personality's timeout factor. Calls are further bounded by the deadline of
// the layer that makes them (worker, squad lead, commander, mission), so
// timeouts only tighten going down.
func (pp *providerPool) callTimeout(kind time.Duration) time.Duration {
	d := kind
	if pp.scaleCall > 0 && (d <= 0 || pp.scaleCall < d) {
		d = pp.scaleCall
	}
	if d <= 0 {
		return 0
	}
	return time.Duration(float64(d) * pp.factor)
}

// tokenCeiling caps every call's max_tokens at run.max_tokens for the
// caller's role (the smaller of the two when the call already sets one, as a
// capsule's constraints do).
func (pp *providerPool) tokenCeiling(p providers.Provider) providers.Provider {
	if len(pp.cfg.Run.MaxTokens) == 0 {
		return p
	}
	return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		if n := pp.cfg.Run.MaxTokens[req.Caller.Role]; n > 0 && (req.MaxTokens == 0 || n < req.MaxTokens) {
			req.MaxTokens = n
		}
		return p.Complete(ctx, req)
	})
}
