package providers

import (
	"context"
	"errors"
	"sync"
)

// AdaptiveLimit is an adaptive concurrency limit for one model: how many of
// its calls may be in flight at once, adjusted from what the provider's
// answers say (AIMD, as TCP's congestion window):
//
//   - additive increase: after a window of successes (as many as the current
//     limit) the limit grows by one, up to Max;
//   - multiplicative decrease: a rate-limited answer (429, ClassRateLimited)
//     halves it (never below 1);
//   - pre-emptive slow-down: an answer whose rate-limit headers show less
//     than LowHeadroom of a budget left (remaining/limit of requests or
//     tokens) takes one off the limit and holds off the increase.
//
// Calls already in flight when the limit drops were admitted under the
// old limit; what they answer neither raises it nor lowers it again (one decrease per
// generation, as TCP decreases once per window), so a burst of 429s from
// one wave halves the limit once, not once per call.
//
// It is a resizable semaphore (golang.org/x/sync/semaphore has a fixed
// size): Acquire waits while the calls in flight are at the limit; a lower
// limit lets in-flight calls finish and admits no new one until they fall
// below it. No clock is involved: the limit moves only on answers, so tests
// drive it with events.
type AdaptiveLimit struct {
	// Model is "kind:model", for stats and events.
	Model string

	mu       sync.Mutex
	limit    int
	max      int
	inFlight int
	gen      int // bumped at every decrease
	ok       int // successes since the last change
	waiters  []chan struct{}
	stats    AdaptiveStats
}

// LowHeadroom is the share of a rate-limit budget below which an answer
// slows the model down before the provider refuses it.
const LowHeadroom = 0.1

// DefaultAdaptiveCeiling is an adaptive limit's ceiling when the kind sets
// no max_concurrency: the widest layer of the largest scale.
const DefaultAdaptiveCeiling = 256

// Reasons an adaptive limit changed.
const (
	AdaptiveIncrease    = "successes"    // a window of successes: +1
	AdaptiveRateLimited = "rate_limited" // a 429: halved
	AdaptiveLowHeadroom = "low_headroom" // the headers showed a budget nearly spent: -1
)

// AdaptiveChange is one change of an adaptive limit.
type AdaptiveChange struct {
	Model    string `json:"model"`
	From     int    `json:"from"`
	To       int    `json:"to"`
	Reason   string `json:"reason"`
	InFlight int    `json:"in_flight"`
	Max      int    `json:"max"`
}

// AdaptiveStats is what an adaptive limit did over a run (telemetry).
type AdaptiveStats struct {
	Model string `json:"model"`
	// Max is the ceiling (the kind's max_concurrency); Min and Final the
	// lowest and the last limit.
	Max   int `json:"max"`
	Min   int `json:"min"`
	Final int `json:"final"`
	// RateLimited counts rate-limited answers (429) seen; Decreases the
	// times they halved the limit; LowHeadroom the slow-downs the headers
	// caused; Increases the additive steps back up.
	RateLimited int `json:"rate_limited"`
	Decreases   int `json:"decreases"`
	LowHeadroom int `json:"low_headroom"`
	Increases   int `json:"increases"`
	// Answers counts the answers that carried rate-limit headers.
	Answers int `json:"answers_with_headers"`
}

// NewAdaptiveLimit returns a limit starting at its ceiling max (at least 1).
func NewAdaptiveLimit(model string, max int) *AdaptiveLimit {
	if max <= 0 {
		max = DefaultAdaptiveCeiling
	}
	return &AdaptiveLimit{Model: model, limit: max, max: max, stats: AdaptiveStats{Model: model, Max: max, Min: max, Final: max}}
}

// Limit is the current limit.
func (a *AdaptiveLimit) Limit() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.limit
}

// Stats is what the limit did so far.
func (a *AdaptiveLimit) Stats() AdaptiveStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.stats
	s.Final = a.limit
	return s
}

// Permit is one admitted call; pass it to Done.
type Permit struct{ gen int }

// Acquire waits until fewer calls than the limit are in flight (or ctx
// ends) and admits one.
func (a *AdaptiveLimit) Acquire(ctx context.Context) (Permit, error) {
	for {
		a.mu.Lock()
		if a.inFlight < a.limit {
			a.inFlight++
			p := Permit{gen: a.gen}
			a.mu.Unlock()
			return p, nil
		}
		ch := make(chan struct{})
		a.waiters = append(a.waiters, ch)
		a.mu.Unlock()
		select {
		case <-ctx.Done():
			a.mu.Lock()
			found := false
			for i, w := range a.waiters {
				if w == ch {
					a.waiters = append(a.waiters[:i], a.waiters[i+1:]...)
					found = true
					break
				}
			}
			if !found {
				a.wakeLocked() // woken as it gave up: pass the turn on
			}
			a.mu.Unlock()
			return Permit{}, ctx.Err()
		case <-ch:
		}
	}
}

// Done releases p's slot and adjusts the limit from the call's answer:
// its rate-limit headers (rl, nil when it had none) and its error. It
// returns the change this answer made, if it made one.
func (a *AdaptiveLimit) Done(p Permit, rl *RateLimitState, err error) (AdaptiveChange, bool) {
	a.mu.Lock()
	a.inFlight--
	from := a.limit
	reason := ""
	if rl != nil {
		a.stats.Answers++
	}
	switch {
	case err != nil && ClassOf(err) == ClassRateLimited && !errors.Is(err, context.Canceled):
		a.stats.RateLimited++
		if p.gen == a.gen {
			a.limit = max(1, a.limit/2)
			a.gen++
			a.ok = 0
			a.stats.Decreases++
			reason = AdaptiveRateLimited
		}
	case lowHeadroom(rl):
		a.ok = 0
		if p.gen == a.gen && a.limit > 1 {
			a.limit--
			a.gen++
			a.stats.LowHeadroom++
			reason = AdaptiveLowHeadroom
		}
	case err == nil && p.gen == a.gen:
		// Only calls admitted under the current limit judge it.
		a.ok++
		if a.ok >= a.limit && a.limit < a.max {
			a.limit++
			a.ok = 0
			a.stats.Increases++
			reason = AdaptiveIncrease
		}
	}
	if a.limit < a.stats.Min {
		a.stats.Min = a.limit
	}
	ch := AdaptiveChange{Model: a.Model, From: from, To: a.limit, Reason: reason, InFlight: a.inFlight, Max: a.max}
	a.wakeLocked()
	a.mu.Unlock()
	return ch, reason != "" && from != ch.To
}

// wakeLocked lets as many waiters try again as there are free slots.
func (a *AdaptiveLimit) wakeLocked() {
	for free := a.limit - a.inFlight; free > 0 && len(a.waiters) > 0; free-- {
		close(a.waiters[0])
		a.waiters = a.waiters[1:]
	}
}

func lowHeadroom(rl *RateLimitState) bool {
	h, ok := rl.Headroom()
	return ok && h < LowHeadroom
}

// Adaptive admits each call through a (nil: no limit) and tells it how the
// call went; onChange (may be nil) hears of every change a call of this
// provider caused. It sits inside Retry, so every attempt is admitted and
// judged on its own, and a Retry-After wait holds no slot.
func Adaptive(a *AdaptiveLimit, onChange func(context.Context, AdaptiveChange)) Middleware {
	return func(p Provider) Provider {
		if a == nil {
			return p
		}
		return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
			perm, err := a.Acquire(ctx)
			if err != nil {
				return Response{}, &Error{Class: ClassTimeout, Msg: "waiting for the adaptive concurrency limit", Err: err}
			}
			resp, err := p.Complete(ctx, req)
			rl := resp.RateLimit
			if rl == nil {
				rl = RateLimitOf(err)
			}
			if ch, ok := a.Done(perm, rl, err); ok && onChange != nil {
				onChange(ctx, ch)
			}
			return resp, err
		})
	}
}
