package openai_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/internal/httprec"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/openai"
)

// TestRateLimitFromRecordedAnswer replays a real api.openai.com answer
// (testdata/ORIGIN): its x-ratelimit-* headers reach Response.RateLimit; a
// 429 with the same headers carries them on the error.
func TestRateLimitFromRecordedAnswer(t *testing.T) {
	t.Parallel()
	rec := httprec.Load(t, "../testdata/ratelimit/openai-200.http")
	body := rec.Body
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range rec.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		if status == http.StatusOK {
			w.Write(body)
			return
		}
		io.WriteString(w, `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`)
	}))
	t.Cleanup(srv.Close)
	p, err := openai.New(providers.Ref{Kind: "openai-compatible", Model: "gpt-3.5-turbo"}, providers.KindConfig{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "What kind of mammal am I?"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := &providers.RateLimitState{Requests: &providers.Budget{Limit: 10000, Remaining: 9999, Reset: 6000000},
		Tokens: &providers.Budget{Limit: 50000000, Remaining: 49999986}}
	if diff := cmp.Diff(want, resp.RateLimit); diff != "" {
		t.Errorf("response rate limit (-want +got):\n%s", diff)
	}
	status = http.StatusTooManyRequests
	_, err = p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "again"}}})
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.ClassRateLimited {
		t.Fatalf("error %v, want rate_limited", err)
	}
	if diff := cmp.Diff(want, pe.RateLimit); diff != "" {
		t.Errorf("error rate limit (-want +got):\n%s", diff)
	}
}

// TestCachedTokensRead: usage.prompt_tokens_details.cached_tokens (OpenAI's
// automatic prefix caching, as mock serve --prompt-cache reports it) is
// Usage.CacheReadTokens, a part of InputTokens.
func TestCachedTokensRead(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920}}}`)
	}))
	t.Cleanup(srv.Close)
	p, err := openai.New(providers.Ref{Kind: "openai-compatible", Model: "m"}, providers.KindConfig{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(providers.Usage{InputTokens: 2006, OutputTokens: 300, CacheReadTokens: 1920}, resp.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}
