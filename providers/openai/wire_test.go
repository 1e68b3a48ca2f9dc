package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/providers"
)

// captured is one request as the server saw it.
type captured struct {
	path, query string
	header      http.Header
	body        map[string]any
}

// echoServer answers every chat completion with a fixed body and records
// the request.
func echoServer(t *testing.T, answer string) (*httptest.Server, *captured) {
	t.Helper()
	c := &captured{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.path, c.query, c.header = r.URL.Path, r.URL.RawQuery, r.Header.Clone()
		b, _ := io.ReadAll(r.Body)
		c.body = nil
		if err := json.Unmarshal(b, &c.body); err != nil {
			t.Errorf("request body is not JSON: %s", b)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

func mustNew(t *testing.T, kind, model string, cfg providers.KindConfig) providers.Provider {
	t.Helper()
	p, err := New(providers.Ref{Kind: kind, Model: model}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var schemaReq = providers.Request{
	Messages:    []providers.Message{{Role: "system", Content: "be exact"}, {Role: "user", Content: "go"}},
	Temperature: providers.Float(0),
	MaxTokens:   300,
	Seed:        providers.Int64(7),
	Schema:      &providers.Schema{Name: "out", JSON: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)},
}

func TestRequestShapePerKind(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	t.Setenv("SWARM_TEST_OPENAI_KEY", "sk-test")
	tests := []struct {
		kind, model string
		opts        map[string]string
		wantPath    string
		wantQuery   string
		wantAuth    string // Authorization header
		wantAPIKey  string // Azure api-key header
		wantTokens  string // which token-limit field carries 300
		wantTemp    bool   // temperature present
	}{
		{"openai", "gpt-4.1", nil, "/v1/chat/completions", "", "Bearer sk-test", "", "max_completion_tokens", true},
		{"openai", "o3-mini", nil, "/v1/chat/completions", "", "Bearer sk-test", "", "max_completion_tokens", false},
		{"openai", "gpt-5-mini", nil, "/v1/chat/completions", "", "Bearer sk-test", "", "max_completion_tokens", false},
		{"azure", "my-gpt-4.1", nil, "/openai/deployments/my-gpt-4.1/chat/completions", "api-version=" + DefaultAzureAPIVersion, "", "sk-test", "max_tokens", true},
		{"azure", "gpt-3.5-prod", map[string]string{"api_version": "2025-01-01-preview"}, "/openai/deployments/gpt-3.5-prod/chat/completions", "api-version=2025-01-01-preview", "", "sk-test", "max_tokens", true},
		{"azure", "o4-mini", nil, "/openai/deployments/o4-mini/chat/completions", "api-version=" + DefaultAzureAPIVersion, "", "sk-test", "max_completion_tokens", false},
		{"azure", "gpt-4o", map[string]string{"token_limit_param": "max_completion_tokens"}, "/openai/deployments/gpt-4o/chat/completions", "api-version=" + DefaultAzureAPIVersion, "", "sk-test", "max_completion_tokens", true},
		{"ollama", "llama3.1:8b", nil, "/v1/chat/completions", "", "", "", "max_tokens", true},
		{"vllm", "Qwen/Qwen2.5-7B-Instruct", nil, "/v1/chat/completions", "", "", "", "max_tokens", true},
		{"lmstudio", "qwen2.5-7b-instruct", nil, "/v1/chat/completions", "", "", "", "max_tokens", true},
		{"openai-compatible", "any", nil, "/v1/chat/completions", "", "Bearer sk-test", "", "max_tokens", true},
	}
	for _, tc := range tests {
		t.Run(tc.kind+"/"+tc.model, func(t *testing.T) {
			srv, c := echoServer(t, completion(`{"a":"x"}`, "stop", ""))
			cfg := providers.KindConfig{BaseURL: srv.URL + "/v1", Options: tc.opts}
			if tc.kind == "azure" {
				cfg.BaseURL = srv.URL + "/" // trailing slash must not double up
			}
			if tc.kind == "openai" || tc.kind == "azure" || tc.kind == "openai-compatible" {
				cfg.APIKeyEnv = "SWARM_TEST_OPENAI_KEY"
			}
			resp, err := mustNew(t, tc.kind, tc.model, cfg).Complete(t.Context(), schemaReq)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != `{"a":"x"}` || resp.Usage != (providers.Usage{InputTokens: 11, OutputTokens: 7}) {
				t.Errorf("response %+v", resp)
			}
			if c.path != tc.wantPath || c.query != tc.wantQuery {
				t.Errorf("URL %s?%s, want %s?%s", c.path, c.query, tc.wantPath, tc.wantQuery)
			}
			if got := c.header.Get("Authorization"); got != tc.wantAuth {
				t.Errorf("Authorization %q, want %q", got, tc.wantAuth)
			}
			if got := c.header.Get("api-key"); got != tc.wantAPIKey {
				t.Errorf("api-key %q, want %q", got, tc.wantAPIKey)
			}
			other := map[string]string{"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}[tc.wantTokens]
			if c.body[tc.wantTokens] != 300.0 || c.body[other] != nil {
				t.Errorf("token limit: %s=%v %s=%v, want %s=300 only", tc.wantTokens, c.body[tc.wantTokens], other, c.body[other], tc.wantTokens)
			}
			temp, has := c.body["temperature"]
			if has != tc.wantTemp {
				t.Errorf("temperature present=%v (%v), want present=%v", has, temp, tc.wantTemp)
			}
			if has && temp.(float64) > 1e-6 {
				t.Errorf("temperature 0 sent as %v", temp)
			}
			if c.body["seed"] != 7.0 || c.body["model"] != tc.model {
				t.Errorf("seed %v model %v", c.body["seed"], c.body["model"])
			}
			js := c.body["response_format"].(map[string]any)["json_schema"].(map[string]any)
			if js["strict"] != true || js["name"] != "out" {
				t.Errorf("json_schema %v", js)
			}
			msgs := c.body["messages"].([]any)
			if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" {
				t.Errorf("messages %v", msgs)
			}
		})
	}
}

func TestTemperatureOmittedOnlyWhenUnset(t *testing.T) {
	t.Parallel()
	srv, c := echoServer(t, completion("ok", "stop", ""))
	p := mustNew(t, "ollama", "m", providers.KindConfig{BaseURL: srv.URL + "/v1"})
	if _, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if _, has := c.body["temperature"]; has {
		t.Errorf("temperature sent although unset: %v", c.body["temperature"])
	}
	if _, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}, Temperature: providers.Float(0.7)}); err != nil {
		t.Fatal(err)
	}
	if got := c.body["temperature"].(float64); got < 0.699 || got > 0.701 {
		t.Errorf("temperature %v, want 0.7", got)
	}
}

func TestTokenLimitParamOption(t *testing.T) {
	t.Parallel()
	if _, err := New(providers.Ref{Kind: "openai-compatible", Model: "o3"}, providers.KindConfig{BaseURL: "http://x", Options: map[string]string{"token_limit_param": "max_tokens"}}); err == nil {
		t.Error("max_tokens accepted for a reasoning model (go-openai would refuse every request)")
	}
	if _, err := New(providers.Ref{Kind: "openai-compatible", Model: "m"}, providers.KindConfig{BaseURL: "http://x", Options: map[string]string{"token_limit_param": "tokens"}}); err == nil {
		t.Error("unknown token_limit_param accepted")
	}
	for model, want := range map[string]bool{"o1": true, "o3-mini": true, "o4-mini-2025-04-16": true, "gpt-5": true, "gpt-5.1": true, "gpt-5-nano": true,
		"openai/o3": true, "gpt-4.1": false, "gpt-4o": false, "o1x": false, "llama3.1": false, "omni-moderation": false} {
		if got := isReasoningModel(model); got != want {
			t.Errorf("isReasoningModel(%q) = %v, want %v", model, got, want)
		}
	}
}

// errServer answers with status and body, setting headers.
func errServer(t *testing.T, status int, body string, hdr map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range hdr {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func oaErr(typ, code, msg string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
	return string(b)
}

func TestErrorClasses(t *testing.T) {
	t.Parallel()
	azureFilter := `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":true,"severity":"high"}}}}}`
	tests := []struct {
		name   string
		status int
		body   string
		want   providers.Class
	}{
		{"429 rate limit", 429, oaErr("requests", "rate_limit_exceeded", "Rate limit reached for gpt-4.1 on requests per min (RPM): Limit 500"), providers.ClassRateLimited},
		{"429 insufficient_quota", 429, oaErr("insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan and billing details."), providers.ClassQuota},
		{"429 Azure token rate", 429, `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current tier."}}`, providers.ClassRateLimited},
		{"400 context length", 400, oaErr("invalid_request_error", "context_length_exceeded", "This model's maximum context length is 128000 tokens."), providers.ClassPermanent},
		{"400 invalid schema", 400, oaErr("invalid_request_error", "invalid_json_schema", "Invalid schema for response_format 'out'"), providers.ClassPermanent},
		{"400 Azure content filter", 400, azureFilter, providers.ClassRefused},
		{"401 bad key", 401, oaErr("invalid_request_error", "invalid_api_key", "Incorrect API key provided"), providers.ClassPermanent},
		{"403 region", 403, oaErr("invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"), providers.ClassPermanent},
		{"404 model", 404, oaErr("invalid_request_error", "model_not_found", "The model `gpt-9` does not exist"), providers.ClassPermanent},
		{"408", 408, oaErr("server_error", "", "timeout"), providers.ClassTimeout},
		{"500", 500, oaErr("server_error", "", "The server had an error while processing your request."), providers.ClassTransient},
		{"502 HTML from a proxy", 502, "<html><body>502 Bad Gateway</body></html>", providers.ClassTransient},
		{"503 overloaded", 503, oaErr("server_error", "", "The engine is currently overloaded, please try again later"), providers.ClassTransient},
		{"504 gateway timeout", 504, "", providers.ClassTimeout},
		{"529 overloaded", 529, oaErr("overloaded_error", "", "Overloaded"), providers.ClassTransient},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := errServer(t, tc.status, tc.body, nil)
			_, err := newProvider(t, srv.URL).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err %v is not a *providers.Error", err)
			}
			if pe.Class != tc.want || pe.StatusCode != tc.status {
				t.Errorf("class %q status %d (%v), want %q %d", pe.Class, pe.StatusCode, err, tc.want, tc.status)
			}
			if providers.Retryable(err) != (tc.want == providers.ClassRateLimited || tc.want == providers.ClassTransient || tc.want == providers.ClassTimeout) {
				t.Errorf("Retryable = %v for class %s", providers.Retryable(err), tc.want)
			}
		})
	}
}

func TestTransportFailures(t *testing.T) {
	t.Parallel()
	req := providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}}
	t.Run("connection refused is transient", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		_, err = newProvider(t, "http://"+addr).Complete(t.Context(), req)
		if c := providers.ClassOf(err); c != providers.ClassTransient || !providers.Retryable(err) {
			t.Errorf("class %q (%v)", c, err)
		}
	})
	t.Run("no answer within the timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(release)
		p := providers.Timeout(50 * time.Millisecond)(newProvider(t, srv.URL))
		start := time.Now()
		_, err := p.Complete(t.Context(), req)
		if c := providers.ClassOf(err); c != providers.ClassTimeout || time.Since(start) > 5*time.Second {
			t.Errorf("class %q after %s (%v)", c, time.Since(start), err)
		}
	})
	t.Run("cancelled context is not retryable", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // the server notices a gone client only once the body is read
			<-r.Context().Done()
		}))
		defer srv.Close()
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := newProvider(t, srv.URL).Complete(ctx, req)
		if err == nil || providers.Retryable(err) {
			t.Errorf("err %v retryable=%v", err, providers.Retryable(err))
		}
	})
	t.Run("body cut off mid-answer is transient", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hal`)
		}))
		defer srv.Close()
		_, err := newProvider(t, srv.URL).Complete(t.Context(), req)
		if c := providers.ClassOf(err); c != providers.ClassTransient {
			t.Errorf("class %q (%v)", c, err)
		}
	})
	t.Run("request never sent is permanent", func(t *testing.T) {
		// A malformed base_url fails before the transport; no retry can fix it.
		p := mustNew(t, "openai-compatible", "m", providers.KindConfig{BaseURL: "http://[::1/v1"})
		_, err := p.Complete(t.Context(), req)
		if c := providers.ClassOf(err); c != providers.ClassPermanent || providers.Retryable(err) {
			t.Errorf("class %q (%v)", c, err)
		}
	})
}

func TestRetryAfterForms(t *testing.T) {
	t.Parallel()
	date := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name    string
		hdr     map[string]string
		min     time.Duration
		max     time.Duration
		subject int
	}{
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second, 7 * time.Second, 429},
		{"HTTP date", map[string]string{"Retry-After": date}, 28 * time.Second, 30 * time.Second, 429},
		{"retry-after-ms wins", map[string]string{"Retry-After": "7", "retry-after-ms": "1500"}, 1500 * time.Millisecond, 1500 * time.Millisecond, 429},
		{"x-ratelimit reset of the exhausted budget", map[string]string{"x-ratelimit-remaining-requests": "12", "x-ratelimit-reset-requests": "1s", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s"}, 6 * time.Minute, 6 * time.Minute, 429},
		{"Retry-After on a 503", map[string]string{"Retry-After": "2"}, 2 * time.Second, 2 * time.Second, 503},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, 0, 429},
		{"none", nil, 0, 0, 429},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := errServer(t, tc.subject, oaErr("requests", "rate_limit_exceeded", "slow down"), tc.hdr)
			_, err := newProvider(t, srv.URL).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
			if got := providers.RetryAfterOf(err); got < tc.min || got > tc.max {
				t.Errorf("RetryAfter %s, want %s..%s (%v)", got, tc.min, tc.max, err)
			}
		})
	}
}

func TestUsageWithReasoningTokens(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	body := `{"id":"x","object":"chat.completion","model":"o3-mini-2025-01-31","choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\":\"b\"}","refusal":null},"finish_reason":"stop"}],
	"usage":{"prompt_tokens":120,"completion_tokens":560,"total_tokens":680,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":512}}}`
	srv, _ := echoServer(t, body)
	t.Setenv("SWARM_TEST_OPENAI_KEY", "k")
	resp, err := mustNew(t, "openai", "o3-mini", providers.KindConfig{BaseURL: srv.URL + "/v1", APIKeyEnv: "SWARM_TEST_OPENAI_KEY"}).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	// Reasoning tokens are billed as output and are part of
	// completion_tokens; cached tokens are part of prompt_tokens: both are
	// reported as details of the totals, which stay as the wire says.
	if resp.Usage != (providers.Usage{InputTokens: 120, OutputTokens: 560, ReasoningTokens: 512, CacheReadTokens: 64}) || resp.Model != "o3-mini-2025-01-31" || !strings.Contains(resp.Text, `"a"`) {
		t.Errorf("response %+v", resp)
	}
}
