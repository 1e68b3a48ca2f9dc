package providers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"
)

// Middleware wraps a provider.
type Middleware func(Provider) Provider

// Chain applies middlewares so the first listed is the outermost.
func Chain(p Provider, mws ...Middleware) Provider {
	for i := len(mws) - 1; i >= 0; i-- {
		p = mws[i](p)
	}
	return p
}

// Timeout bounds every call; a deadline becomes a timeout-class error.
func Timeout(d time.Duration) Middleware {
	return func(p Provider) Provider {
		if d <= 0 {
			return p
		}
		return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
			cctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			resp, err := p.Complete(cctx, req)
			if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && ClassOf(err) != ClassTimeout {
				err = &Error{Class: ClassTimeout, Msg: fmt.Sprintf("no answer within %s", d), Err: err}
			}
			return resp, err
		})
	}
}

// RetryConfig configures Retry.
type RetryConfig struct {
	MaxRetries int           // retries after the first attempt
	Initial    time.Duration // first backoff (default 500ms)
	Max        time.Duration // cap per wait (default 30s)
	// MaxRetryAfter is the longest server-requested wait (Retry-After)
	// worth waiting for (default 5m); a longer one returns the error at once
	// rather than stall the run.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx ends (tests replace it).
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry is called before each wait.
	OnRetry func(attempt int, err error, wait time.Duration)
}

// Sleep waits d, or until ctx is done (then it returns ctx.Err()).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Retry retries only what a retry can fix (Retryable: rate limits but not
// quota, transient server and connection failures, timeouts), with
// exponential backoff and jitter; a server's Retry-After replaces the
// backoff wait. The last error is returned unchanged.
func Retry(c RetryConfig) Middleware {
	if c.Initial <= 0 {
		c.Initial = 500 * time.Millisecond
	}
	if c.Max <= 0 {
		c.Max = 30 * time.Second
	}
	if c.MaxRetryAfter <= 0 {
		c.MaxRetryAfter = 5 * time.Minute
	}
	if c.Sleep == nil {
		c.Sleep = Sleep
	}
	return func(p Provider) Provider {
		if c.MaxRetries <= 0 {
			return p
		}
		return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
			b := backoff.NewExponentialBackOff()
			b.InitialInterval, b.MaxInterval = c.Initial, c.Max
			b.Reset()
			for attempt := 0; ; attempt++ {
				resp, err := p.Complete(ctx, req)
				if err == nil || attempt >= c.MaxRetries || !Retryable(err) || ctx.Err() != nil {
					return resp, err
				}
				wait := b.NextBackOff()
				if ra := RetryAfterOf(err); ra > 0 {
					if ra > c.MaxRetryAfter {
						return resp, err // the server asks for longer than a run should stall
					}
					wait = ra
				}
				if c.OnRetry != nil {
					c.OnRetry(attempt+1, err, wait)
				}
				if serr := c.Sleep(ctx, wait); serr != nil {
					return resp, err
				}
			}
		})
	}
}

// RateLimit allows at most rpm requests per minute (bursts of one).
func RateLimit(rpm float64) Middleware {
	if rpm <= 0 {
		return func(p Provider) Provider { return p }
	}
	return limitRate(rate.NewLimiter(rate.Limit(rpm/60), 1))
}

func limitRate(lim *rate.Limiter) Middleware {
	return func(p Provider) Provider {
		if lim == nil {
			return p
		}
		return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
			if err := lim.Wait(ctx); err != nil {
				return Response{}, &Error{Class: ClassTimeout, Msg: "waiting for the rate limiter", Err: err}
			}
			return p.Complete(ctx, req)
		})
	}
}

// Concurrency caps calls in flight.
func Concurrency(n int) Middleware {
	if n <= 0 {
		return func(p Provider) Provider { return p }
	}
	return limitConcurrency(semaphore.NewWeighted(int64(n)))
}

func limitConcurrency(sem *semaphore.Weighted) Middleware {
	return func(p Provider) Provider {
		if sem == nil {
			return p
		}
		return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
			if err := sem.Acquire(ctx, 1); err != nil {
				return Response{}, err
			}
			defer sem.Release(1)
			return p.Complete(ctx, req)
		})
	}
}

// KindLimits is one provider kind's concurrency cap and rate limit. A
// kind's requests_per_minute and max_concurrency bound every model of that
// kind together, so every provider of the kind must share one KindLimits.
type KindLimits struct {
	sem *semaphore.Weighted // nil: no cap
	lim *rate.Limiter       // nil: no rate limit
	// adaptive: each model of the kind has an adaptive concurrency limit
	// (AdaptiveLimit), with ceiling maxConc, made on first use.
	adaptive bool
	maxConc  int
	amu      sync.Mutex
	models   map[string]*AdaptiveLimit
}

// AdaptiveOn says whether a kind's models get an adaptive concurrency limit:
// the kind's adaptive_concurrency when set, else on for every kind but the
// in-process mock (which sends no rate-limit headers and whose figures are
// the README's).
func AdaptiveOn(kind string, c KindConfig) bool {
	if c.AdaptiveConcurrency != nil {
		return *c.AdaptiveConcurrency
	}
	return kind != "mock"
}

// Adaptive returns model's adaptive concurrency limit, made on first use;
// nil when the kind has none (AdaptiveOn). ref names the model.
func (l *KindLimits) Adaptive(ref Ref) *AdaptiveLimit {
	if l == nil || !l.adaptive {
		return nil
	}
	l.amu.Lock()
	defer l.amu.Unlock()
	if l.models == nil {
		l.models = map[string]*AdaptiveLimit{}
	}
	a, ok := l.models[ref.Model]
	if !ok {
		a = NewAdaptiveLimit(ref.String(), l.maxConc)
		l.models[ref.Model] = a
	}
	return a
}

// NewKindLimits builds the limits of c.
// A kind's adaptive limits are on only when c says so (LimitSet.For
// applies the per-kind default, AdaptiveOn).
func NewKindLimits(c KindConfig) *KindLimits {
	l := &KindLimits{maxConc: c.MaxConcurrency, adaptive: c.AdaptiveConcurrency != nil && *c.AdaptiveConcurrency}
	if c.MaxConcurrency > 0 {
		l.sem = semaphore.NewWeighted(int64(c.MaxConcurrency))
	}
	if c.RequestsPerMin > 0 {
		l.lim = rate.NewLimiter(rate.Limit(c.RequestsPerMin/60), 1)
	}
	return l
}

// LimitSet hands out one KindLimits per provider kind, created on first use
// from that kind's config. Several runs that share a LimitSet (compare's
// parallel contenders) share each kind's limits. Safe for concurrent use.
type LimitSet struct {
	mu    sync.Mutex
	kinds map[string]*KindLimits
}

// For returns kind's limits, creating them from c on first use.
func (s *LimitSet) For(kind string, c KindConfig) *KindLimits {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kinds == nil {
		s.kinds = map[string]*KindLimits{}
	}
	l, ok := s.kinds[kind]
	if !ok {
		l = NewKindLimits(c)
		l.adaptive = AdaptiveOn(kind, c)
		s.kinds[kind] = l
	}
	return l
}

// Standard wraps p with a kind's settings, outermost first: concurrency cap,
// retries (each attempt waits for the rate limiter and has its own timeout),
// rate limit, per-attempt timeout. The cap and the rate limit come from
// limits (shared by every provider of the kind); nil builds fresh ones.
func Standard(p Provider, c KindConfig, extraRetries int, limits *KindLimits) Provider {
	return StandardWith(p, c, extraRetries, limits, StandardOptions{})
}

// StandardOptions are Standard's optional layers.
type StandardOptions struct {
	// Adaptive is the model's adaptive concurrency limit (KindLimits.Adaptive;
	// nil: none). Each attempt waits for it inside the retries, after the
	// kind's cap, so a Retry-After wait holds none of its slots.
	Adaptive *AdaptiveLimit
	// OnAdaptive hears of each change of Adaptive a call made.
	OnAdaptive func(context.Context, AdaptiveChange)
}

// StandardWith is Standard with o's layers: concurrency cap, retries, then
// per attempt the adaptive limit, the rate limit and the timeout.
func StandardWith(p Provider, c KindConfig, extraRetries int, limits *KindLimits, o StandardOptions) Provider {
	if limits == nil {
		limits = NewKindLimits(c)
	}
	return Chain(p,
		limits.Cap(),
		Retry(StandardRetry(c, extraRetries)),
		Adaptive(o.Adaptive, o.OnAdaptive),
		limits.Rate(),
		Timeout(c.Timeout),
	)
}

// StandardRetry is the retry configuration of a kind (its retries plus
// extraRetries, first wait 200ms), as Standard retries.
func StandardRetry(c KindConfig, extraRetries int) RetryConfig {
	return RetryConfig{MaxRetries: c.Retries + extraRetries, Initial: 200 * time.Millisecond}
}

// Cap is the kind's concurrency cap as a middleware (none: p itself).
func (l *KindLimits) Cap() Middleware { return limitConcurrency(l.sem) }

// Rate is the kind's rate limit as a middleware (none: p itself).
func (l *KindLimits) Rate() Middleware { return limitRate(l.lim) }
