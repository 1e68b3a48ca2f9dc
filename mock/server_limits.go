package mock

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/providers"
)

// Limits make the OpenAI-compatible server behave as OpenAI does about
// prompt caching and rate limits (issue 21), so a run through it shows
// cache hits and its adaptive concurrency limit at work. The zero value
// changes nothing.
type Limits struct {
	// PromptCache reports automatic prefix caching as OpenAI documents it:
	// a prompt of at least CacheMinTokens whose first N tokens (N a multiple
	// of CacheBlockTokens, at least CacheMinTokens) this server has seen in
	// an earlier request has those N tokens in
	// usage.prompt_tokens_details.cached_tokens. The prompt is what OpenAI
	// puts first: the tools, the response format's schema, then the
	// messages in order; the mock counts 4 bytes a token.
	PromptCache bool
	// RequestsPerMinute and TokensPerMinute are the budgets of each minute
	// (a window from the first request); 0: none. Every answer carries
	// OpenAI's x-ratelimit-{limit,remaining,reset}-{requests,tokens}
	// headers for the budgets set; a request over the requests budget is
	// answered 429 rate_limit_exceeded with Retry-After (the time to the
	// next window). The tokens budget is reported, and a request arriving
	// when it is spent is answered 429 too.
	RequestsPerMinute int
	TokensPerMinute   int
	// MaxInFlight answers 429 (Retry-After 1s, retry-after-ms 200) to a
	// request that arrives while that many are being answered; 0: none.
	MaxInFlight int
	// Now is the clock (nil: time.Now); tests set it.
	Now func() time.Time
}

// Prompt-caching constants, as OpenAI documents them.
const (
	CacheMinTokens   = 1024
	CacheBlockTokens = 128
	bytesPerToken    = 4
)

// limiter is a server's state for Limits.
type limiter struct {
	o Limits

	mu          sync.Mutex
	windowStart time.Time
	requests    int
	tokens      int
	inFlight    int
	// prefixes holds the SHA-256 of every block-aligned prompt prefix seen
	// (bounded: oldest forgotten first).
	prefixes *providers.BoundedMap[[sha256.Size]byte, struct{}]
}

func newLimiter(o Limits) *limiter {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &limiter{o: o, prefixes: providers.NewBoundedMap[[sha256.Size]byte, struct{}](1 << 16)}
}

func (l *limiter) active() bool {
	return l != nil && (l.o.RequestsPerMinute > 0 || l.o.TokensPerMinute > 0 || l.o.MaxInFlight > 0)
}

// window rolls the minute over; callers hold mu.
func (l *limiter) window(now time.Time) {
	if l.windowStart.IsZero() || now.Sub(l.windowStart) >= time.Minute {
		l.windowStart, l.requests, l.tokens = now, 0, 0
	}
}

// admit counts a request against the budgets, or answers it 429 (with the
// headers) and returns ok false. release must be called when the request
// has been answered.
func (l *limiter) admit(w http.ResponseWriter) (release func(), ok bool) {
	if !l.active() {
		return func() {}, true
	}
	l.mu.Lock()
	now := l.o.Now()
	l.window(now)
	reset := l.windowStart.Add(time.Minute).Sub(now)
	switch {
	case l.o.MaxInFlight > 0 && l.inFlight >= l.o.MaxInFlight:
		l.headersLocked(w, now)
		l.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		w.Header().Set("retry-after-ms", "200")
		writeError(w, http.StatusTooManyRequests, "requests", "rate_limit_exceeded", fmt.Sprintf("Rate limit reached: %d requests in flight (mock serve --max-inflight)", l.o.MaxInFlight))
		return nil, false
	case l.o.RequestsPerMinute > 0 && l.requests >= l.o.RequestsPerMinute,
		l.o.TokensPerMinute > 0 && l.tokens >= l.o.TokensPerMinute:
		l.headersLocked(w, now)
		l.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(int(max(1, (reset+time.Second-1)/time.Second))))
		w.Header().Set("retry-after-ms", strconv.FormatInt(max(1, reset.Milliseconds()), 10))
		writeError(w, http.StatusTooManyRequests, "requests", "rate_limit_exceeded", fmt.Sprintf("Rate limit reached: %d requests, %d tokens per minute (mock serve --rpm, --tpm); try again in %s", l.o.RequestsPerMinute, l.o.TokensPerMinute, reset.Round(time.Millisecond)))
		return nil, false
	}
	l.requests++
	l.inFlight++
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		l.inFlight--
		l.mu.Unlock()
	}, true
}

// headersLocked writes the x-ratelimit-* headers of the budgets set.
func (l *limiter) headersLocked(w http.ResponseWriter, now time.Time) {
	reset := l.windowStart.Add(time.Minute).Sub(now).Round(time.Millisecond)
	if reset <= 0 {
		reset = time.Minute
	}
	set := func(kind string, limit, used int) {
		if limit <= 0 {
			return
		}
		w.Header().Set("x-ratelimit-limit-"+kind, strconv.Itoa(limit))
		w.Header().Set("x-ratelimit-remaining-"+kind, strconv.Itoa(max(0, limit-used)))
		r := time.Duration(0)
		if used > 0 {
			r = reset
		}
		w.Header().Set("x-ratelimit-reset-"+kind, r.String())
	}
	set("requests", l.o.RequestsPerMinute, l.requests)
	set("tokens", l.o.TokensPerMinute, l.tokens)
}

// answered counts an answer's tokens against the budget, writes the
// rate-limit headers and, with PromptCache, the prompt's cached tokens into
// usage. It is called before the answer is written.
func (l *limiter) answered(w http.ResponseWriter, cr chatRequest, usage map[string]any, promptTokens, totalTokens int) {
	if l == nil {
		return
	}
	if l.o.PromptCache {
		usage["prompt_tokens_details"] = map[string]any{"cached_tokens": l.cached(cr, promptTokens)}
	}
	if !l.active() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.o.Now()
	l.window(now)
	l.tokens += totalTokens
	l.headersLocked(w, now)
}

// cached is how many of the prompt's first tokens were seen before, in
// whole blocks from CacheMinTokens on (0 below it), capped at
// promptTokens; it remembers this prompt's prefixes.
func (l *limiter) cached(cr chatRequest, promptTokens int) int {
	p := promptBytes(cr)
	block := CacheBlockTokens * bytesPerToken
	h := sha256.New()
	// Every prefix of a prompt is remembered with it, so a seen prefix's
	// shorter prefixes were seen too: the longest seen is the hit.
	hit, done := 0, 0
	for end := block; end <= len(p); end += block {
		h.Write(p[done:end])
		done = end
		var k [sha256.Size]byte
		copy(k[:], h.Sum(nil))
		tok := end / bytesPerToken
		if _, seen := l.prefixes.Get(k); seen && tok >= CacheMinTokens {
			hit = tok
		}
		l.prefixes.Put(k, struct{}{})
	}
	if promptTokens < CacheMinTokens {
		return 0
	}
	return min(hit, promptTokens)
}

// promptBytes is the request's prompt in the order OpenAI reads it for
// caching: tools, the response format's schema, then each message.
func promptBytes(cr chatRequest) []byte {
	var b []byte
	for _, t := range cr.Tools {
		if t.Function != nil {
			b = append(b, t.Function.Name...)
			b = append(b, t.Function.Description...)
			b = append(b, t.Function.Parameters...)
		}
	}
	if rf := cr.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		b = append(b, rf.JSONSchema.Name...)
		b = append(b, rf.JSONSchema.Schema...)
	}
	for _, m := range cr.Messages {
		b = append(b, m.Role...)
		b = append(b, 0)
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			b = append(b, s...)
		} else {
			b = append(b, m.Content...)
		}
		for _, tc := range m.ToolCalls {
			b = append(b, tc.ID...)
			b = append(b, tc.Function.Name...)
			b = append(b, tc.Function.Arguments...)
		}
		b = append(b, m.ToolCallID...)
		b = append(b, 0)
	}
	return b
}
