package providers_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/internal/httprec"
	"github.com/swarm-dev/swarm/providers"
)

func TestParseRateLimit(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 4, 14, 15, 51, 0, 0, time.UTC)
	tests := []struct {
		name string
		file string
		hdr  http.Header
		want *providers.RateLimitState
	}{
		{name: "OpenAI's real header set (langchaingo recording): both budgets, resets as Go durations", file: "testdata/ratelimit/openai-200.http",
			want: &providers.RateLimitState{Requests: &providers.Budget{Limit: 10000, Remaining: 9999, Reset: 6 * time.Millisecond},
				Tokens: &providers.Budget{Limit: 50000000, Remaining: 49999986}}},
		{name: "Anthropic's documented set: resets in RFC 3339 against now, input and output budgets apart", file: "testdata/ratelimit/anthropic-429.http",
			want: &providers.RateLimitState{Requests: &providers.Budget{Limit: 50, Remaining: 0, Reset: 36 * time.Second},
				Tokens:       &providers.Budget{Limit: 48000, Remaining: 8019, Reset: 99 * time.Second},
				InputTokens:  &providers.Budget{Limit: 40000, Remaining: 19, Reset: 99 * time.Second},
				OutputTokens: &providers.Budget{Limit: 8000, Remaining: 8000, Reset: 22 * time.Second}}},
		{name: "minutes and seconds as OpenAI writes a long reset", hdr: http.Header{"X-Ratelimit-Limit-Requests": {"500"}, "X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Requests": {"6m0s"}},
			want: &providers.RateLimitState{Requests: &providers.Budget{Limit: 500, Remaining: 0, Reset: 6 * time.Minute}}},
		{name: "a garbled count is unknown (-1), not zero", hdr: http.Header{"X-Ratelimit-Limit-Tokens": {"lots"}, "X-Ratelimit-Remaining-Tokens": {"20"}, "X-Ratelimit-Reset-Tokens": {"1s"}},
			want: &providers.RateLimitState{Tokens: &providers.Budget{Limit: -1, Remaining: 20, Reset: time.Second}}},
		{name: "no rate-limit headers: nil", hdr: http.Header{"Content-Type": {"application/json"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.hdr
			if tc.file != "" {
				h = httprec.Load(t, tc.file).Header
			}
			if diff := cmp.Diff(tc.want, providers.ParseRateLimit(h, now)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if h, ok := providers.ParseRateLimit(httprec.Load(t, "testdata/ratelimit/anthropic-429.http").Header, now).Headroom(); !ok || h != 0 {
		t.Errorf("headroom %v %v, want 0 (requests spent)", h, ok)
	}
}

var rateLimited = &providers.Error{Class: providers.ClassRateLimited, StatusCode: 429}

// drive admits n calls, then ends them with answers (rl, err) in order.
func drive(t *testing.T, a *providers.AdaptiveLimit, n int, rl *providers.RateLimitState, errs ...error) []providers.AdaptiveChange {
	t.Helper()
	var perms []providers.Permit
	for range n {
		p, err := a.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		perms = append(perms, p)
	}
	var out []providers.AdaptiveChange
	for i, p := range perms {
		var err error
		if i < len(errs) {
			err = errs[i]
		}
		if ch, ok := a.Done(p, rl, err); ok {
			out = append(out, ch)
		}
	}
	return out
}

func TestAdaptiveLimitAIMD(t *testing.T) {
	t.Parallel()
	a := providers.NewAdaptiveLimit("openai:gpt-4.1", 8)
	// A wave of 8 calls all answered 429: they were admitted under one
	// limit, so it is halved once, not eight times.
	got := drive(t, a, 8, nil, rateLimited, rateLimited, rateLimited, rateLimited, rateLimited, rateLimited, rateLimited, rateLimited)
	want := []providers.AdaptiveChange{{Model: "openai:gpt-4.1", From: 8, To: 4, Reason: providers.AdaptiveRateLimited, InFlight: 7, Max: 8}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a wave of 429s (-want +got):\n%s", diff)
	}
	// The next wave's 429 halves again (a new generation), down to 1 at most.
	drive(t, a, 4, nil, rateLimited)
	drive(t, a, 2, nil, rateLimited)
	drive(t, a, 1, nil, rateLimited)
	if a.Limit() != 1 {
		t.Fatalf("limit %d after four halvings from 8, want 1 (never below)", a.Limit())
	}
	// Additive increase: a window of successes as large as the limit adds one.
	for _, want := range []int{2, 3, 4} {
		for range a.Limit() {
			drive(t, a, 1, nil)
		}
		if a.Limit() != want {
			t.Fatalf("limit %d, want %d after a window of successes", a.Limit(), want)
		}
	}
	// Headers showing a budget nearly spent take one off before any 429.
	low := &providers.RateLimitState{Requests: &providers.Budget{Limit: 100, Remaining: 3}}
	if got := drive(t, a, 1, low); len(got) != 1 || got[0].To != 3 || got[0].Reason != providers.AdaptiveLowHeadroom {
		t.Errorf("low headroom: %+v, want 4 → 3", got)
	}
	// Plenty of headroom is a success like any other.
	ample := &providers.RateLimitState{Requests: &providers.Budget{Limit: 100, Remaining: 90}}
	drive(t, a, 3, ample)
	if a.Limit() != 4 {
		t.Errorf("limit %d, want 4", a.Limit())
	}
	want2 := providers.AdaptiveStats{Model: "openai:gpt-4.1", Max: 8, Min: 1, Final: 4, RateLimited: 11, Decreases: 4, LowHeadroom: 1, Increases: 4, Answers: 4}
	if diff := cmp.Diff(want2, a.Stats()); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

// TestAdaptiveLimitBlocks: with the limit reached, a call waits until one
// in flight ends; a lowered limit admits none until the calls in flight
// fall below it.
func TestAdaptiveLimitBlocks(t *testing.T) {
	t.Parallel()
	a := providers.NewAdaptiveLimit("m", 2)
	p1, _ := a.Acquire(t.Context())
	p2, _ := a.Acquire(t.Context())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := a.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a third call at limit 2: %v, want to wait (cancelled)", err)
	}
	a.Done(p1, nil, rateLimited) // limit 1, one in flight
	if _, err := a.Acquire(ctx); err == nil {
		t.Fatal("admitted at limit 1 with one call in flight")
	}
	got := make(chan error, 1)
	go func() { _, err := a.Acquire(t.Context()); got <- err }()
	a.Done(p2, nil, nil)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

// TestAdaptiveKeepsRetryAfter: the adaptive layer sits inside Retry, so a
// 429's Retry-After is still the wait, and the limit is halved.
func TestAdaptiveKeepsRetryAfter(t *testing.T) {
	t.Parallel()
	a := providers.NewAdaptiveLimit("openai:m", 4)
	calls := 0
	backend := providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		calls++
		if calls == 1 {
			return providers.Response{}, &providers.Error{Class: providers.ClassRateLimited, StatusCode: 429, RetryAfter: 7 * time.Second,
				RateLimit: &providers.RateLimitState{Requests: &providers.Budget{Limit: 60, Remaining: 0}}}
		}
		return providers.Response{Text: "ok"}, nil
	})
	var waits []time.Duration
	p := providers.Chain(backend,
		providers.Retry(providers.RetryConfig{MaxRetries: 2, Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }}),
		providers.Adaptive(a, nil))
	if _, err := p.Complete(t.Context(), providers.Request{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{7 * time.Second}, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if a.Limit() != 2 || a.Stats().RateLimited != 1 {
		t.Errorf("limit %d, stats %+v: want halved to 2 after one 429", a.Limit(), a.Stats())
	}
}

func TestAdaptiveOn(t *testing.T) {
	t.Parallel()
	off, on := false, true
	tests := []struct {
		name string
		kind string
		c    providers.KindConfig
		want bool
	}{
		{"a real provider: on by default", "openai", providers.KindConfig{}, true},
		{"the in-process mock: off by default (no headers; the README's figures)", "mock", providers.KindConfig{}, false},
		{"turned off in config", "anthropic", providers.KindConfig{AdaptiveConcurrency: &off}, false},
		{"turned on for the mock", "mock", providers.KindConfig{AdaptiveConcurrency: &on}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := providers.AdaptiveOn(tc.kind, tc.c); got != tc.want {
				t.Errorf("got %v", got)
			}
			var ls providers.LimitSet
			a := ls.For(tc.kind, tc.c).Adaptive(providers.Ref{Kind: tc.kind, Model: "m"})
			if (a != nil) != tc.want {
				t.Errorf("LimitSet adaptive limit %v, want one: %v", a, tc.want)
			}
			if tc.want && ls.For(tc.kind, tc.c).Adaptive(providers.Ref{Kind: tc.kind, Model: "m"}) != a {
				t.Error("a model's limit is not shared")
			}
		})
	}
}
