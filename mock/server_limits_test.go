package mock

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func postChat(t *testing.T, h http.Handler, system, user string) (*httptest.ResponseRecorder, int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "honest", "messages": []any{
		map[string]any{"role": "system", "content": system}, map[string]any{"role": "user", "content": user}}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(string(body))))
	var out struct {
		Usage struct {
			Details *struct {
				Cached int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	cached := -1
	if out.Usage.Details != nil {
		cached = out.Usage.Details.Cached
	}
	return w, cached
}

// TestServerPromptCache: a prompt prefix of at least 1024 tokens seen in an
// earlier request is reported cached, in 128-token blocks; a short prompt
// never is; without the option there are no details.
func TestServerPromptCache(t *testing.T) {
	t.Parallel()
	h, err := NewServer(ServerOptions{Limits: Limits{PromptCache: true}})
	if err != nil {
		t.Fatal(err)
	}
	shared := strings.Repeat("shared instructions. ", 300) // 6300 bytes, 1575 tokens
	steps := []struct {
		why        string
		system     string
		user       string
		wantCached int
	}{
		{"first sight of the prefix: nothing cached", shared, "brief one", 0},
		{"the same system prompt, another brief: the shared whole blocks are cached", shared, "brief two", 1536},
		{"a prompt under 1024 tokens is never cached", "short", "brief", 0},
		{"the same short prompt again: still under the minimum", "short", "brief", 0},
		{"a prefix that differs from the first byte shares nothing", "X" + shared, "brief one", 0},
	}
	for _, s := range steps {
		w, cached := postChat(t, h, s.system, s.user)
		if w.Code != http.StatusOK || cached != s.wantCached {
			t.Errorf("%s: status %d cached %d, want %d", s.why, w.Code, cached, s.wantCached)
		}
	}
	plain, _ := NewServer(ServerOptions{})
	if _, cached := postChat(t, plain, shared, "x"); cached != -1 {
		t.Errorf("without --prompt-cache: cached_tokens %d reported", cached)
	}
}

// TestServerRateLimits: every answer carries x-ratelimit-* headers; a
// request over the minute's budget is answered 429 with Retry-After until
// the next window.
func TestServerRateLimits(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	h, err := NewServer(ServerOptions{Limits: Limits{RequestsPerMinute: 2, TokensPerMinute: 100000, Now: func() time.Time { return now }}})
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		Code                                    int
		Limit, Remaining, Reset, RetryAfter, MS string
	}
	get := func() seen {
		w, _ := postChat(t, h, "sys", "hello")
		g := w.Header().Get
		return seen{w.Code, g("x-ratelimit-limit-requests"), g("x-ratelimit-remaining-requests"), g("x-ratelimit-reset-requests"), g("Retry-After"), g("retry-after-ms")}
	}
	var got []seen
	got = append(got, get())
	now = now.Add(20 * time.Second)
	got = append(got, get(), get())
	now = now.Add(41 * time.Second) // the next minute
	got = append(got, get())
	want := []seen{
		{Code: 200, Limit: "2", Remaining: "1", Reset: "1m0s"},
		{Code: 200, Limit: "2", Remaining: "0", Reset: "40s"},
		{Code: 429, Limit: "2", Remaining: "0", Reset: "40s", RetryAfter: "40", MS: "40000"},
		{Code: 200, Limit: "2", Remaining: "1", Reset: "1m0s"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
