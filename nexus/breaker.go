package nexus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
)

// The provider circuit breaker (docs/recovery-breaker.md): one breaker per
// model and layer, with the classic states.
//
//	closed ──(failure rate over the window ≥ failure_rate, from min_calls calls on)──► open
//	open ──(cooldown elapsed, at the next call)──► half_open
//	half_open ──(half_open_probes probe calls all succeed)──► closed
//	half_open ──(a probe fails)──► open (a fresh cooldown)
//
// A breaker only decides whether a call may go to its model; routing
// (pool.go, providerPool.routed) decides who answers when it may not.

// ErrBreakerOpen is wrapped by the error of a call refused because the
// breakers of its model (in the caller's layer) and of every fallback of
// its role are open: a transient failure, so the caller salvages or the
// recovery ladder climbs (straight to its degrade step: see
// commanders.Ladder). It is providers.ErrCircuitOpen, so that the agents
// below nexus can tell it without importing nexus.
var ErrBreakerOpen = providers.ErrCircuitOpen

// Breaker states, as breaker events write them.
const (
	breakerClosed   = "closed"
	breakerOpen     = "open"
	breakerHalfOpen = "half_open"
)

// Layers: the breakers of one model are separate per layer of the
// hierarchy, so a model that fails its workers' calls keeps serving its
// judge, and the other way round.
const (
	LayerWorkers    = "workers"
	layerSquadLeads = "squad_leads"
	layerCommanders = "commanders"
	layerReviewers  = "reviewers"
	layerJudge      = "judge"
	// layerNexus holds the Nexus's own calls: decomposition, the seal author
	// and the synthesizer. They are few and one at a time, so one window
	// gathers what they say about a model.
	layerNexus = "nexus"
)

// layerOf is the breaker layer of role; a role this package does not know
// is a layer of its own.
func layerOf(role string) string {
	switch role {
	case commanders.RoleWorker:
		return LayerWorkers
	case commanders.RoleSquadLead:
		return layerSquadLeads
	case commanders.RoleCommander:
		return layerCommanders
	case commanders.RoleReviewer:
		return layerReviewers
	case commanders.RoleJudge:
		return layerJudge
	case commanders.RoleNexus, commanders.RoleSealAuthor, commanders.RoleSynthesizer:
		return layerNexus
	}
	return role
}

// waitsForProbe says whether a call of role, finding every breaker it could
// go to open, waits for a probe slot (bounded by its context) instead of
// failing fast: roles a single failure of which ends the run or leaves a
// bundle unscored. Workers, squad leads, commanders and reviewers fail fast:
// their commander salvages what exists, a missing review is tolerated.
func waitsForProbe(role string) bool {
	switch role {
	case commanders.RoleNexus, commanders.RoleSealAuthor, commanders.RoleJudge, commanders.RoleSynthesizer:
		return true
	}
	return false
}

// breakerClock is the time a breaker sees; tests inject a fake one.
type breakerClock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// breakerSettings are a breaker's thresholds (circuit_breaker).
type breakerSettings struct {
	rate     float64
	window   int
	minCalls int
	cooldown time.Duration
	probes   int
}

func settingsOf(c config.CircuitBreaker) breakerSettings {
	return breakerSettings{rate: c.FailureRate, window: max(1, c.CallWindow), minCalls: max(1, c.MinCalls), cooldown: c.Cooldown, probes: max(1, c.HalfOpenProbes)}
}

// outcome is what a call tells its breaker.
type outcome int

const (
	outcomeIgnored outcome = iota // says nothing about the model (our own cancellation)
	outcomeOK
	outcomeFailed
)

// outcomeOf classifies a call's result for its breaker. A failure is an
// error the model's stack returned after its retries (rate limited,
// timeout, transient, quota, permanent), or the caller's deadline running
// out during the call (the model was too slow). Not failures: the run's own
// cancellation (Ctrl-C, the cost ceiling, a sibling's failure cancelling
// the group), and answers that arrived but were unparseable, invalid for
// their schema or a refusal: the model is up, and what it said is for the
// structured-output repair and the recovery ladder to handle.
func outcomeOf(ctx context.Context, err error) outcome {
	if err == nil {
		return outcomeOK
	}
	if errors.Is(ctx.Err(), context.Canceled) || errors.Is(err, context.Canceled) {
		return outcomeIgnored
	}
	if errors.Is(err, ErrBreakerOpen) {
		return outcomeIgnored
	}
	switch providers.ClassOf(err) {
	case providers.ClassUnparseable, providers.ClassSchemaInvalid, providers.ClassRefused:
		return outcomeOK
	}
	return outcomeFailed
}

// transition is one state change of a breaker, reported as a breaker event.
type transition struct {
	ctx                            context.Context // the call that caused it
	model, layer, from, to, reason string
	rate                           *float64
	calls                          int
}

// permit is a breaker's leave for one call to go to its model.
type permit struct {
	gen   int // the breaker's generation (state change count) when issued
	probe bool
}

// circuit is the breaker of one model in one layer. Safe for concurrent
// use; onChange is called under its lock, so transitions are reported in
// the order they happen (it must not call back into the circuit).
type circuit struct {
	model, layer string
	set          breakerSettings
	clock        breakerClock
	onChange     func(transition) // a transition happened
	onRelease    func()           // a waiter may now be admitted (transition or freed probe slot)

	mu       sync.Mutex
	state    string
	gen      int
	window   []bool // the latest outcomes (true = failed), a ring of set.window
	next     int    // where the next outcome goes
	filled   int    // outcomes in the window
	failed   int    // failed outcomes in the window
	openedAt time.Time
	admitted int // probes let through in this half-open spell
	passed   int // of them, succeeded
	reopened int // half-open spells a failed probe ended (route's waiters)
	// foundDown: the breaker is open because a probe failed (not only
	// because of the failure rate): the model was tried after a cooldown
	// and was still down. Calls that would wait for it give up instead.
	foundDown bool

	// Telemetry.
	opened, halfOpened, closed int
	routed                     int           // calls that went to a fallback instead
	openFor                    time.Duration // time not closed, spells that ended
	leftClosed                 time.Time     // when the spell under way began
}

func newCircuit(model, layer string, set breakerSettings, clock breakerClock) *circuit {
	return &circuit{model: model, layer: layer, set: set, clock: clock, state: breakerClosed, window: make([]bool, set.window)}
}

// acquire asks to send a call to the model. ok false: the breaker is open
// (cooldown under way) or half-open with every probe slot taken; retryIn
// is then how long until the cooldown ends (0 when only a probe slot, not
// time, can free it).
func (c *circuit) acquire(ctx context.Context) (p permit, ok bool, retryIn time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == breakerOpen {
		left := c.openedAt.Add(c.set.cooldown).Sub(c.clock.Now())
		if left > 0 {
			return permit{}, false, left
		}
		c.move(ctx, breakerHalfOpen, "cooldown", nil, 0)
	}
	if c.state == breakerHalfOpen {
		if c.admitted >= c.set.probes {
			return permit{}, false, 0
		}
		c.admitted++
		return permit{gen: c.gen, probe: true}, true, 0
	}
	return permit{gen: c.gen}, true, 0
}

// record reports the outcome of a call acquire let through. It returns
// whether the breaker is open afterwards.
func (c *circuit) record(ctx context.Context, p permit, o outcome) (open bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() { open = c.state == breakerOpen }()
	if p.gen != c.gen {
		// Issued before the last transition (a call to a closed breaker
		// that ended after it opened, the second probe after the first
		// failed): the breaker has decided without it.
		return
	}
	if p.probe {
		switch o {
		case outcomeIgnored:
			c.admitted-- // the slot is free for another probe
			c.release()
		case outcomeOK:
			c.passed++
			if c.passed >= c.set.probes {
				rate := 0.0
				c.move(ctx, breakerClosed, "probes_succeeded", &rate, c.passed)
			}
		case outcomeFailed:
			rate := 1 / float64(c.passed+1)
			c.reopened++
			c.move(ctx, breakerOpen, "probe_failed", &rate, c.passed+1)
		}
		return
	}
	if o == outcomeIgnored || c.state != breakerClosed {
		return
	}
	if c.filled == len(c.window) {
		if c.window[c.next] {
			c.failed--
		}
	} else {
		c.filled++
	}
	c.window[c.next] = o == outcomeFailed
	if o == outcomeFailed {
		c.failed++
	}
	c.next = (c.next + 1) % len(c.window)
	if c.filled >= c.set.minCalls {
		if rate := float64(c.failed) / float64(c.filled); rate >= c.set.rate {
			c.move(ctx, breakerOpen, "failure_rate", &rate, c.filled)
		}
	}
	return
}

// move changes state (c.mu held), resets what the new state starts afresh
// and reports the transition.
func (c *circuit) move(ctx context.Context, to, reason string, rate *float64, calls int) {
	from, now := c.state, c.clock.Now()
	c.state = to
	c.gen++
	c.admitted, c.passed = 0, 0
	c.foundDown = to == breakerOpen && reason == "probe_failed"
	switch to {
	case breakerOpen:
		c.openedAt = now
		if from == breakerClosed {
			c.opened++
			c.leftClosed = now
		}
	case breakerHalfOpen:
		c.halfOpened++
	case breakerClosed:
		c.closed++
		c.openFor += now.Sub(c.leftClosed)
		c.filled, c.failed, c.next = 0, 0, 0
	}
	if c.onChange != nil {
		c.onChange(transition{ctx: ctx, model: c.model, layer: c.layer, from: from, to: to, reason: reason, rate: rate, calls: calls})
	}
	c.release()
}

func (c *circuit) release() {
	if c.onRelease != nil {
		c.onRelease()
	}
}

// knownDown says whether c is open because its last probe failed, and its
// cooldown has not ended: its model was found still down, and a call that
// waits for it now would idle a whole cooldown for a probe that will most
// likely fail the same way.
func (c *circuit) knownDown() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state == breakerOpen && c.foundDown && c.clock.Now().Before(c.openedAt.Add(c.set.cooldown))
}

// probesFailed is how many half-open spells of c a failed probe ended.
func (c *circuit) probesFailed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reopened
}

// noteRouted counts a call that went to a fallback because c would not let
// it through.
func (c *circuit) noteRouted() {
	c.mu.Lock()
	c.routed++
	c.mu.Unlock()
}

// stats returns c's telemetry, ok false when it never left closed.
func (c *circuit) stats() (runfiles.BreakerStats, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.opened == 0 {
		return runfiles.BreakerStats{}, false
	}
	open := c.openFor
	if c.state != breakerClosed {
		open += c.clock.Now().Sub(c.leftClosed)
	}
	return runfiles.BreakerStats{Model: c.model, Layer: c.layer, Opened: c.opened, HalfOpened: c.halfOpened, Closed: c.closed,
		RoutedToFallback: c.routed, OpenMS: open.Milliseconds(), State: c.state}, true
}

// breakerOpenError is the error of a call no breaker let through; its
// text names the model and the layer ("transient: mock:down in layer
// workers, no fallback model for the role: circuit breaker open").
func breakerOpenError(ref providers.Ref, layer string, fallbacks []providers.Ref) error {
	msg := fmt.Sprintf("%s in layer %s, no fallback model for the role", ref, layer)
	if len(fallbacks) > 0 {
		msg = fmt.Sprintf("%s in layer %s and its %d fallback model(s)", ref, layer, len(fallbacks))
	}
	return providers.NewError(providers.ClassTransient, msg, ErrBreakerOpen)
}
