package nexus

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
)

// providerPool holds a run's providers: each model of the roster built once
// from the registry with its kind's config, wrapped (WithProviderWrap),
// recorded, and stacked with timeout, retries, rate limit and concurrency
// cap (the kind's, from limits); and the circuit breakers, one per model and
// layer, that route a role to its fallbacks while its model's is open.
type providerPool struct {
	cfg         *config.Config
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
	// fallbacks are each role's fallback models (Roster.Fallbacks).
	fallbacks map[string][]providers.Ref
	// clock is the breakers' time (nil: the wall clock).
	clock breakerClock

	mu    sync.Mutex
	provs map[string]*providers.Stack // each model's own stack (modelStack)

	// adaptive are the adaptive concurrency limits of the run's models
	// (ratelimits.go); cache counts prompt-cache hits per role.
	amu      sync.Mutex
	adaptive map[string]*providers.AdaptiveLimit

	bmu      sync.Mutex
	circuits map[string]*circuit // per model and layer
	wake     chan struct{}       // closed (and replaced) when a waiting call may be let through
}

// forRole is the provider an agent of role whose model is ref calls: the
// seam where a run decides who answers a request. Its layers are the
// stack's (stack.go), outside in:
//
//   - replay (issue 12, resume): a request the run's journal already holds
//     an answer for is answered from it (recorded as a replayed llm_call),
//     whichever model answered it then;
//   - routing (routed): the breaker of (ref, role's layer); while it is
//     open the role's fallback models (Roster.FallbacksFor) answer instead;
//   - the model's own stack (provider: retries, rate limit, concurrency
//     cap, timeout, recording).
func (pp *providerPool) forRole(role string, ref providers.Ref) (providers.Provider, error) {
	route, err := pp.routed(role, ref)
	if err != nil {
		return nil, err
	}
	return pp.entry(ref, pp.roleStack(route)), nil
}

// routed is the routing layer of forRole: calls go to ref's stack while the
// breaker of ref in role's layer lets them through; while it does not, to
// the first of the role's fallbacks whose own breaker (same layer) does,
// each such call a model_swap event. A call that fails on its model and
// leaves that model's breaker open (it opened it, or it was a failed probe)
// is sent on to the next fallback that lets it through. When no breaker
// lets a call through, a call of a role whose failure ends the run or
// leaves a bundle unscored (waitsForProbe) waits, bounded by its context
// and by one failed probe of every candidate, for a probe slot or a
// fallback; any other fails fast with ErrBreakerOpen
// (transient), so its commander salvages. See docs/recovery-breaker.md.
// Whichever model answers is reported on the call (Call.Ref).
func (pp *providerPool) routed(role string, ref providers.Ref) (func(context.Context, *providers.Call), error) {
	st, err := pp.provider(ref)
	if err != nil {
		return nil, err
	}
	if !pp.cfg.CircuitBreaker.Enabled {
		return func(ctx context.Context, c *providers.Call) {
			c.Ref = ref
			st.Run(ctx, c)
		}, nil
	}
	var fbs []providers.Ref
	for _, f := range pp.fallbacks[role] {
		if f == ref || slices.Contains(fbs, f) {
			continue
		}
		if _, err := pp.provider(f); err != nil {
			return nil, err
		}
		fbs = append(fbs, f)
	}
	cands := append([]providers.Ref{ref}, fbs...)
	layer := layerOf(role)
	return func(ctx context.Context, c *providers.Call) {
		c.Response, c.Err = pp.route(ctx, c, role, layer, cands)
	}, nil
}

// route answers c with the first of cands (the primary, then the role's
// fallbacks) whose breaker in layer lets it through (see routed). A call
// that waits gives up (ErrBreakerOpen) once a probe of every candidate
// failed while it waited: the models were found still down, and waiting on
// would queue it behind the other waiters for one cooldown per
// half_open_probes of them.
func (pp *providerPool) route(ctx context.Context, c *providers.Call, role, layer string, cands []providers.Ref) (providers.Response, error) {
	var waitedFrom []int // each candidate's failed probes when the call began waiting
	for {
		wake := pp.wakeup() // before asking, so a release while we ask is not missed
		soonest := time.Duration(-1)
		for i, ref := range cands {
			cb := pp.circuit(ref, layer)
			perm, ok, retryIn := cb.acquire(ctx)
			if ok {
				return pp.send(ctx, c, role, layer, cands, i, cb, perm)
			}
			if retryIn > 0 && (soonest < 0 || retryIn < soonest) {
				soonest = retryIn
			}
		}
		if !waitsForProbe(role) || pp.probedWhileWaiting(&waitedFrom, layer, cands) || pp.allKnownDown(layer, cands) {
			return providers.Response{}, breakerOpenError(cands[0], layer, cands[1:])
		}
		var timer <-chan time.Time
		if soonest > 0 {
			timer = pp.breakerClock().After(soonest)
		}
		select {
		case <-ctx.Done():
			return providers.Response{}, fmt.Errorf("%s in layer %s: waiting for the circuit breaker to let a probe through: %w", cands[0], layer, ctx.Err())
		case <-wake:
		case <-timer:
		}
	}
}

// send makes the call c on cands[i], which cb (its breaker) let through
// with perm, and tells cb how it went; a failure that leaves cb open sends
// the call on to the next fallback that lets it through.
func (pp *providerPool) send(ctx context.Context, c *providers.Call, role, layer string, cands []providers.Ref, i int, cb *circuit, perm permit) (providers.Response, error) {
	req := c.Request
	for {
		ref := cands[i]
		if i > 0 {
			pp.circuit(cands[0], layer).noteRouted()
			pp.rec.emit(events.Event{Phase: events.Phase(c.Phase), Kind: events.ModelSwap, Role: role, AgentID: req.Caller.AgentID, Model: ref.String(),
				Message: fmt.Sprintf("%s answers for %s: its breaker in layer %s is open", ref, cands[0], layer),
				Data:    events.ModelSwapData{AgentID: req.Caller.AgentID, From: cands[0].String(), Reason: events.SwapBreakerOpen, Role: role, To: ref.String()}})
		}
		st, err := pp.provider(ref)
		if err != nil {
			cb.record(ctx, perm, outcomeIgnored)
			return providers.Response{}, err
		}
		c.Ref = ref
		st.Run(ctx, c)
		resp, err := c.Response, c.Err
		o := outcomeOf(ctx, err)
		if open := cb.record(ctx, perm, o); o != outcomeFailed || !open {
			return resp, err
		}
		next := -1
		for j := i + 1; j < len(cands) && next < 0; j++ {
			cj := pp.circuit(cands[j], layer)
			if pj, ok, _ := cj.acquire(ctx); ok {
				next, cb, perm = j, cj, pj
			}
		}
		if next < 0 {
			return resp, err
		}
		i = next
	}
}

// probedWhileWaiting says whether a probe of every one of cands (in layer)
// failed since the call began waiting; the first time (*from nil) it
// records where their counts stand.
func (pp *providerPool) probedWhileWaiting(from *[]int, layer string, cands []providers.Ref) bool {
	first := *from == nil
	all := !first
	for i, ref := range cands {
		n := pp.circuit(ref, layer).probesFailed()
		if first {
			*from = append(*from, n)
		} else if n <= (*from)[i] {
			all = false
		}
	}
	return all
}

// allKnownDown says whether every one of cands (in layer) is open because
// a probe of it failed and its cooldown is still under way: every route
// the call could take is known to be down, so a call that would wait for
// one gives up at once instead of idling a cooldown (issue 22: a dead
// judge endpoint idled a run for eight cooldowns, one per judge call that
// came after the last failed probe). When a cooldown ends, the next call
// is that model's probe again.
func (pp *providerPool) allKnownDown(layer string, cands []providers.Ref) bool {
	for _, ref := range cands {
		if !pp.circuit(ref, layer).knownDown() {
			return false
		}
	}
	return true
}

func (pp *providerPool) breakerClock() breakerClock {
	if pp.clock == nil {
		return realClock{}
	}
	return pp.clock
}

// circuit returns the breaker of ref in layer, made on first use.
func (pp *providerPool) circuit(ref providers.Ref, layer string) *circuit {
	pp.bmu.Lock()
	defer pp.bmu.Unlock()
	k := ref.String() + "\x00" + layer
	if c, ok := pp.circuits[k]; ok {
		return c
	}
	if pp.circuits == nil {
		pp.circuits = map[string]*circuit{}
	}
	c := newCircuit(ref.String(), layer, settingsOf(pp.cfg.CircuitBreaker), pp.breakerClock())
	c.onChange = pp.breakerEvent
	c.onRelease = pp.release
	pp.circuits[k] = c
	return c
}

// wakeup is the channel closed when a waiting call should ask again.
func (pp *providerPool) wakeup() <-chan struct{} {
	pp.bmu.Lock()
	defer pp.bmu.Unlock()
	if pp.wake == nil {
		pp.wake = make(chan struct{})
	}
	return pp.wake
}

// release wakes the calls waiting for a breaker (a transition, a probe slot
// freed).
func (pp *providerPool) release() {
	pp.bmu.Lock()
	defer pp.bmu.Unlock()
	if pp.wake != nil {
		close(pp.wake)
		pp.wake = nil
	}
}

// breakerEvent reports a transition as a breaker event, with the phase of
// the call that caused it.
func (pp *providerPool) breakerEvent(t transition) {
	msg := fmt.Sprintf("circuit breaker of %s in layer %s: %s → %s (%s", t.model, t.layer, t.from, t.to, t.reason)
	if t.rate != nil {
		msg += fmt.Sprintf(": failure rate %.2f over %d calls", *t.rate, t.calls)
	}
	msg += ")"
	pp.rec.emit(events.Event{Phase: pp.rec.phaseOf(t.ctx), Kind: events.Breaker, Model: t.model, Message: msg,
		Data: events.BreakerData{FailureRate: t.rate, From: t.from, Layer: t.layer, Model: t.model, Reason: t.reason, To: t.to, WindowCalls: t.calls}})
}

// breakerStats is telemetry.json's breakers: every breaker that left the
// closed state, by model then layer (nil when none did).
func (pp *providerPool) breakerStats() []runfiles.BreakerStats {
	pp.bmu.Lock()
	cs := slices.Collect(maps.Values(pp.circuits))
	pp.bmu.Unlock()
	var out []runfiles.BreakerStats
	for _, c := range cs {
		if s, ok := c.stats(); ok {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b runfiles.BreakerStats) int {
		return cmp.Or(strings.Compare(a.Model, b.Model), strings.Compare(a.Layer, b.Layer))
	})
	return out
}

// provider returns the (cached) stack of model ref (modelStack): the
// model's own stack, below routing.
func (pp *providerPool) provider(ref providers.Ref) (*providers.Stack, error) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if st, ok := pp.provs[ref.String()]; ok {
		return st, nil
	}
	kc := pp.cfg.Providers[ref.Kind]
	raw, ok := pp.built[ref.String()]
	var err error
	if !ok {
		raw, err = pp.reg.New(ref, kc)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", config.ErrBadInput, ref, err)
	}
	p := raw
	if pp.wrap != nil {
		p = pp.wrap(ref, p)
	}
	ck := kc
	ck.Timeout = pp.callTimeout(kc.Timeout)
	st := pp.modelStack(ref, p, ck, pp.limits.For(ref.Kind, kc))
	if pp.provs == nil {
		pp.provs = map[string]*providers.Stack{}
	}
	pp.provs[ref.String()] = st
	return st, nil
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
