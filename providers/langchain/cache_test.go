package langchain

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// systemText is an Anthropic request's system prompt, written as a string
// or as text blocks.
func systemText(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case []any:
		out := ""
		for _, b := range s {
			if m, ok := b.(map[string]any); ok {
				t, _ := m["text"].(string)
				out += t
			}
		}
		return out
	}
	return ""
}

// TestAnthropicCacheControlOnSystem: the system prompt (the prefix agents of
// a role share) goes on the wire as one text block marked cache_control
// ephemeral, so Anthropic's prompt cache serves it after the first call.
func TestAnthropicCacheControlOnSystem(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	f := newFake(t, anthropicCheck, reply{body: anthropicMsg("end_turn", 40, 12, "ok")})
	p := newAnthropic(t, f, nil)
	if _, err := p.Complete(t.Context(), twoSystems); err != nil {
		t.Fatal(err)
	}
	want := []any{map[string]any{"type": "text", "text": "You are the judge.\n\nBe brief.", "cache_control": map[string]any{"type": "ephemeral"}}}
	if diff := cmp.Diff(want, f.last().body["system"]); diff != "" {
		t.Errorf("system on the wire (-want +got):\n%s", diff)
	}
	// A request without a system prompt is sent as it was.
	if _, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if _, has := f.last().body["system"]; has {
		t.Errorf("system %v added to a request without one", f.last().body["system"])
	}
}

// TestAnthropicRateLimitHeaders: a 429 carrying Anthropic's rate-limit
// headers (documented format; testdata/ORIGIN) is rate_limited with its
// budgets on the error, and a success's headers reach the Response.
func TestAnthropicRateLimitHeaders(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	rec := recorded(t, "../../testdata/ratelimit/anthropic-429.http")
	okHdr := map[string]string{"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "49"}
	f := newFake(t, anthropicCheck, rec, reply{hdr: okHdr, body: anthropicMsg("end_turn", 4, 2, "ok")})
	p := newAnthropic(t, f, nil)
	_, err := p.Complete(t.Context(), twoSystems)
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.ClassRateLimited || pe.RateLimit == nil {
		t.Fatalf("error %v: want rate_limited with its rate-limit headers", err)
	}
	if pe.RateLimit.Requests == nil || pe.RateLimit.Requests.Limit != 50 || pe.RateLimit.Requests.Remaining != 0 ||
		pe.RateLimit.InputTokens == nil || pe.RateLimit.InputTokens.Remaining != 19 {
		t.Errorf("rate limit %+v", pe.RateLimit)
	}
	resp, err := p.Complete(t.Context(), twoSystems)
	if err != nil {
		t.Fatal(err)
	}
	if resp.RateLimit == nil || resp.RateLimit.Requests == nil || resp.RateLimit.Requests.Remaining != 49 {
		t.Errorf("response rate limit %+v, want requests 49/50", resp.RateLimit)
	}
}
