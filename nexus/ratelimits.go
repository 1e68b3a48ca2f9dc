package nexus

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/swarm-dev/swarm/providers"
)

// Issue 21: rate limits read from the answers and prompt-cache hits.

// EvConcurrency is a change of a model's adaptive concurrency limit
// (ConcurrencyData): halved on a 429, one less when the answers' rate-limit
// headers show a budget nearly spent, one more after a window of successes.
const EvConcurrency Kind = "concurrency_limit"

// ConcurrencyData is one change of a model's adaptive concurrency limit.
type ConcurrencyData struct {
	From     int    `json:"from"`
	InFlight int    `json:"in_flight"`
	Max      int    `json:"max"` // the ceiling (the kind's max_concurrency)
	Model    string `json:"model"`
	// Reason is rate_limited (a 429: halved), low_headroom (the headers
	// showed less than 10% of a budget left: -1) or successes (+1).
	Reason string `json:"reason"`
	To     int    `json:"to"`
}

func (ConcurrencyData) payload() {}

// PromptCacheStats is one role's prompt-cache use (telemetry
// prompt_cache): its input tokens and, of them, those the provider read
// from its prompt cache (Usage.CacheReadTokens) and wrote to it.
type PromptCacheStats struct {
	Calls             int     `json:"calls"`
	InputTokens       int     `json:"input_tokens"`
	CachedInputTokens int     `json:"cached_input_tokens"`
	CacheWriteTokens  int     `json:"cache_write_tokens,omitempty"`
	CachedShare       float64 `json:"cached_share"` // cached / input, 0..1
}

// cacheTally counts each role's input and cached input tokens.
type cacheTally struct {
	mu     sync.Mutex
	byRole map[string]*PromptCacheStats
	any    bool // some call reported a cache read or write
}

func (c *cacheTally) note(role string, u providers.Usage) {
	if c == nil || u.InputTokens == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byRole == nil {
		c.byRole = map[string]*PromptCacheStats{}
	}
	s := c.byRole[role]
	if s == nil {
		s = &PromptCacheStats{}
		c.byRole[role] = s
	}
	s.Calls++
	s.InputTokens += u.InputTokens
	s.CachedInputTokens += u.CacheReadTokens
	s.CacheWriteTokens += u.CacheWriteTokens
	c.any = c.any || u.CacheReadTokens > 0 || u.CacheWriteTokens > 0
}

// stats is telemetry's prompt_cache: per role, and "all"; nil when no
// call reported a cache read or write (a provider that reports none, or a
// run whose prompts never hit), so no 0% is shown for what was not measured.
func (c *cacheTally) stats() map[string]PromptCacheStats {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.any {
		return nil
	}
	out := map[string]PromptCacheStats{}
	var all PromptCacheStats
	for role, s := range c.byRole {
		v := *s
		v.CachedShare = share(v.CachedInputTokens, v.InputTokens)
		out[role] = v
		all.Calls += v.Calls
		all.InputTokens += v.InputTokens
		all.CachedInputTokens += v.CachedInputTokens
		all.CacheWriteTokens += v.CacheWriteTokens
	}
	all.CachedShare = share(all.CachedInputTokens, all.InputTokens)
	out["all"] = all
	return out
}

func share(a, b int) float64 {
	if b <= 0 {
		return 0
	}
	return float64(int(float64(a)/float64(b)*1000+0.5)) / 1000
}

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
		pp.rec.emit(Event{Phase: pp.rec.phaseOf(ctx), Kind: EvConcurrency, Model: c.Model,
			Message: fmt.Sprintf("concurrency limit of %s: %d → %d (%s)", c.Model, c.From, c.To, c.Reason),
			Data:    ConcurrencyData{From: c.From, InFlight: c.InFlight, Max: c.Max, Model: c.Model, Reason: c.Reason, To: c.To}})
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
