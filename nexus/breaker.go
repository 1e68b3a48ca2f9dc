package nexus

import (
	"context"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/providers"
)

// breaker is a provider-level circuit breaker: after threshold consecutive
// failures (of classes a retry could not fix in the stack) it opens for
// cooldown and fails calls fast with a transient error.
type breaker struct {
	threshold int
	cooldown  time.Duration
	onTrip    func(ctx context.Context) // ctx: the call that tripped it

	mu        sync.Mutex
	failures  int
	openUntil time.Time
}

var errBreakerOpen = providers.NewError(providers.ClassTransient, "circuit breaker open", nil)

func (b *breaker) wrap(p providers.Provider) providers.Provider {
	return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		b.mu.Lock()
		if time.Now().Before(b.openUntil) {
			b.mu.Unlock()
			return providers.Response{}, errBreakerOpen
		}
		b.mu.Unlock()
		resp, err := p.Complete(ctx, req)
		b.mu.Lock()
		tripped := false
		switch {
		case err == nil:
			b.failures = 0
		case ctx.Err() != nil:
			// Our own cancellation is not the provider's fault.
		default:
			b.failures++
			if b.threshold > 0 && b.failures >= b.threshold {
				b.openUntil = time.Now().Add(b.cooldown)
				b.failures = 0
				tripped = true
			}
		}
		b.mu.Unlock()
		if tripped && b.onTrip != nil {
			b.onTrip(ctx)
		}
		return resp, err
	})
}
