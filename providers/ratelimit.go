package providers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimitState is what a provider's answer said about the caller's rate-limit
// budgets, read from its headers (ParseRateLimit): OpenAI's x-ratelimit-*
// and Anthropic's anthropic-ratelimit-*. A budget the answer did not name
// is nil. Reset is the time until the budget is whole again, relative to
// when the answer was read.
type RateLimitState struct {
	Requests *Budget `json:"requests,omitempty"`
	// Tokens is the combined token budget (OpenAI's tokens, Anthropic's
	// tokens for older models).
	Tokens *Budget `json:"tokens,omitempty"`
	// InputTokens and OutputTokens are Anthropic's separate budgets.
	InputTokens  *Budget `json:"input_tokens,omitempty"`
	OutputTokens *Budget `json:"output_tokens,omitempty"`
}

// Budget is one rate-limit budget: its size per period, what is left, and
// when it is refilled. Limit or Remaining is -1 when the answer did not say.
type Budget struct {
	Limit     int64         `json:"limit"`
	Remaining int64         `json:"remaining"`
	Reset     time.Duration `json:"reset,omitempty"`
}

// Headroom is Remaining / Limit in [0, 1]; ok is false when either is
// unknown or Limit is 0.
func (b *Budget) Headroom() (float64, bool) {
	if b == nil || b.Limit <= 0 || b.Remaining < 0 {
		return 0, false
	}
	return min(1, float64(b.Remaining)/float64(b.Limit)), true
}

// Headroom is the smallest headroom of any budget the answer named; ok is
// false when it named none with both a limit and a remaining count.
func (r *RateLimitState) Headroom() (h float64, ok bool) {
	if r == nil {
		return 0, false
	}
	h = 1
	for _, b := range []*Budget{r.Requests, r.Tokens, r.InputTokens, r.OutputTokens} {
		if v, has := b.Headroom(); has {
			h, ok = min(h, v), true
		}
	}
	return h, ok
}

// ParseRateLimit reads the rate-limit headers of an answer (a success or
// an error): OpenAI's x-ratelimit-{limit,remaining,reset}-{requests,tokens}
// (reset as a Go-style duration: "6m0s", "1s", "20ms") and Anthropic's
// anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,
// remaining,reset} (reset as an RFC 3339 time, read against now). It
// returns nil when the headers name no budget.
func ParseRateLimit(h http.Header, now time.Time) *RateLimitState {
	if h == nil {
		return nil
	}
	var r RateLimitState
	named := false
	set := func(dst **Budget, b *Budget) {
		if b != nil {
			*dst, named = b, true
		}
	}
	set(&r.Requests, openAIBudget(h, "requests"))
	set(&r.Tokens, openAIBudget(h, "tokens"))
	if r.Requests == nil {
		set(&r.Requests, anthropicBudget(h, "requests", now))
	}
	if r.Tokens == nil {
		set(&r.Tokens, anthropicBudget(h, "tokens", now))
	}
	set(&r.InputTokens, anthropicBudget(h, "input-tokens", now))
	set(&r.OutputTokens, anthropicBudget(h, "output-tokens", now))
	if !named {
		return nil
	}
	return &r
}

func openAIBudget(h http.Header, kind string) *Budget {
	lim, rem, reset := h.Get("x-ratelimit-limit-"+kind), h.Get("x-ratelimit-remaining-"+kind), h.Get("x-ratelimit-reset-"+kind)
	if lim == "" && rem == "" {
		return nil
	}
	b := &Budget{Limit: headerInt(lim), Remaining: headerInt(rem)}
	if d, err := time.ParseDuration(strings.TrimSpace(reset)); err == nil && d > 0 {
		b.Reset = d
	}
	return b
}

func anthropicBudget(h http.Header, kind string, now time.Time) *Budget {
	p := "anthropic-ratelimit-" + kind + "-"
	lim, rem, reset := h.Get(p+"limit"), h.Get(p+"remaining"), h.Get(p+"reset")
	if lim == "" && rem == "" {
		return nil
	}
	b := &Budget{Limit: headerInt(lim), Remaining: headerInt(rem)}
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(reset)); err == nil && t.After(now) {
		b.Reset = t.Sub(now)
	}
	return b
}

// headerInt is a header's integer value, -1 when it has none.
func headerInt(v string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// RateLimitOf returns the rate-limit state carried by err (a *Error), if any.
func RateLimitOf(err error) *RateLimitState {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.RateLimit
	}
	return nil
}
