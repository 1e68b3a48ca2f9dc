package providers

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestConcurrencyCapsCallsInFlight(t *testing.T) {
	t.Parallel()
	var in, peak atomic.Int32
	slow := ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
		n := in.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		in.Add(-1)
		return Response{}, nil
	})
	p := Concurrency(3)(slow)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { _, _ = p.Complete(t.Context(), Request{}) })
	}
	wg.Wait()
	if got := peak.Load(); got != 3 {
		t.Errorf("peak in flight = %d, want 3", got)
	}
}

func TestRateLimitSpacesCalls(t *testing.T) {
	t.Parallel()
	p := RateLimit(1200)(ProviderFunc(func(context.Context, Request) (Response, error) { return Response{}, nil })) // one per 50ms
	start := time.Now()
	for range 4 {
		if _, err := p.Complete(t.Context(), Request{}); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el < 140*time.Millisecond {
		t.Errorf("4 calls at 1200 rpm took %v, want at least 150ms (less scheduling slack)", el)
	}
}

func TestRetryOnlyWhatARetryCanFix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		err       error
		wantCalls int
	}{
		{"rate limit is retried", &Error{Class: ClassRateLimited}, 4},
		{"5xx is retried", &Error{Class: ClassTransient, StatusCode: 503}, 4},
		{"timeout is retried", &Error{Class: ClassTimeout}, 4},
		{"quota is not retried", &Error{Class: ClassQuota, StatusCode: 429}, 1},
		{"bad request is not retried", &Error{Class: ClassPermanent, StatusCode: 400}, 1},
		{"refusal is not retried", &Error{Class: ClassRefused}, 1},
		{"cancellation is not retried", context.Canceled, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			var waits []time.Duration
			p := Retry(RetryConfig{MaxRetries: 3, Initial: 100 * time.Millisecond, Max: time.Second,
				Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})(
				ProviderFunc(func(context.Context, Request) (Response, error) { calls++; return Response{}, tc.err }))
			_, err := p.Complete(t.Context(), Request{})
			if calls != tc.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tc.wantCalls)
			}
			if !errors.Is(err, tc.err) && ClassOf(err) != ClassOf(tc.err) {
				t.Errorf("err = %v, want the last error unchanged", err)
			}
			// exponential backoff with jitter: each wait within ±50% of 100ms·1.5^i (backoff/v5 defaults)
			for i, w := range waits {
				base := float64(100*time.Millisecond) * pow(1.5, i)
				if float64(w) < 0.5*base-1 || float64(w) > 1.5*base+1 {
					t.Errorf("wait %d = %v, want about %v", i, w, time.Duration(base))
				}
			}
		})
	}
}

func TestRetryHonoursRetryAfterUpToALimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		retryAfter time.Duration
		wantCalls  int
		wantWaits  []time.Duration
	}{
		{"a short Retry-After is waited for exactly", 3 * time.Second, 3, []time.Duration{3 * time.Second, 3 * time.Second}},
		{"a Retry-After at the limit is still waited for", time.Minute, 3, []time.Duration{time.Minute, time.Minute}},
		{"a longer Retry-After returns the error at once", time.Hour, 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			var waits []time.Duration
			p := Retry(RetryConfig{MaxRetries: 2, MaxRetryAfter: time.Minute,
				Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})(
				ProviderFunc(func(context.Context, Request) (Response, error) {
					calls++
					return Response{}, &Error{Class: ClassRateLimited, StatusCode: 429, RetryAfter: tc.retryAfter}
				}))
			_, err := p.Complete(t.Context(), Request{})
			if calls != tc.wantCalls || ClassOf(err) != ClassRateLimited {
				t.Errorf("calls = %d (%v), want %d and the rate-limit error", calls, err, tc.wantCalls)
			}
			if d := cmp.Diff(tc.wantWaits, waits); d != "" {
				t.Errorf("waits (-want +got)\n%s", d)
			}
		})
	}
}

func pow(b float64, n int) float64 {
	r := 1.0
	for range n {
		r *= b
	}
	return r
}
