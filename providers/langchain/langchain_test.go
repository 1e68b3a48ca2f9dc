package langchain

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/providers"
)

type out struct {
	Name  string `json:"name"`
	Score int    `json:"score"`
}

func TestAnthropicWireFormat(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	var body map[string]any
	status, stop := 200, "end_turn"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/messages") || r.Header.Get("x-api-key") != "k" {
			t.Errorf("path %s key %q", r.URL.Path, r.Header.Get("x-api-key"))
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		if status != 200 {
			w.WriteHeader(status)
			io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
			return
		}
		io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"claude-test","stop_reason":"`+stop+`",
			"content":[{"type":"text","text":"Here: {\"name\":\"a\",\"score\":4}"}],"usage":{"input_tokens":21,"output_tokens":9}}`)
	}))
	defer srv.Close()
	t.Setenv("TEST_ANTHROPIC_KEY", "k")
	p, err := New(providers.Ref{Kind: "anthropic", Model: "claude-test"}, providers.KindConfig{BaseURL: srv.URL + "/v1", APIKeyEnv: "TEST_ANTHROPIC_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	v, res, err := providers.Structured[out](t.Context(), p, providers.Request{Messages: []providers.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "go"}}}, providers.WithSchemaName("out"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Score != 4 || res.Usage() != (providers.Usage{InputTokens: 21, OutputTokens: 9}) {
		t.Errorf("value %+v usage %+v", v, res.Usage())
	}
	sys, _ := json.Marshal(body["system"])
	if !strings.Contains(string(sys), "be brief") || !strings.Contains(string(sys), `\"score\"`) {
		t.Errorf("schema not in the system prompt: %s", sys)
	}
	stop = "max_tokens"
	if _, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "go"}}}); !errors.Is(err, providers.ErrTruncated) {
		t.Errorf("max_tokens: %v", err)
	}
	status = 429
	_, err = p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "go"}}})
	if c := providers.ClassOf(err); c != providers.ClassRateLimited {
		t.Errorf("429 class = %s (%v)", c, err)
	}
}

func TestOllamaNativeWireFormat(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			t.Errorf("path %s", r.URL.Path)
			w.WriteHeader(404)
			return
		}
		io.WriteString(w, `{"model":"llama3.1","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"{\"name\":\"b\",\"score\":2}"},"done":true,"done_reason":"stop","prompt_eval_count":33,"eval_count":7}`)
	}))
	defer srv.Close()
	p, err := New(providers.Ref{Kind: "ollama-native", Model: "llama3.1"}, providers.KindConfig{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	v, res, err := providers.Structured[out](t.Context(), p, providers.Request{Messages: []providers.Message{{Role: "user", Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Name != "b" || res.Usage() != (providers.Usage{InputTokens: 33, OutputTokens: 7}) {
		t.Errorf("value %+v usage %+v", v, res.Usage())
	}
}

func TestNormaliseUsage(t *testing.T) {
	t.Parallel()
	type mistralUsage struct{ PromptTokens, CompletionTokens, TotalTokens int }
	tests := []struct {
		name string
		info map[string]any
		want providers.Usage
	}{
		{"anthropic keys", map[string]any{"InputTokens": 10, "OutputTokens": 3}, providers.Usage{InputTokens: 10, OutputTokens: 3}},
		{"openai-style keys (ollama)", map[string]any{"PromptTokens": 7, "CompletionTokens": 2, "TotalTokens": 9}, providers.Usage{InputTokens: 7, OutputTokens: 2}},
		{"gemini / bedrock keys", map[string]any{"input_tokens": int32(5), "output_tokens": int32(6)}, providers.Usage{InputTokens: 5, OutputTokens: 6}},
		{"mistral nested struct", map[string]any{"usage": mistralUsage{PromptTokens: 4, CompletionTokens: 8}}, providers.Usage{InputTokens: 4, OutputTokens: 8}},
		{"nested map", map[string]any{"usage": map[string]any{"prompt_tokens": 1.0, "completion_tokens": 2.0}}, providers.Usage{InputTokens: 1, OutputTokens: 2}},
		{"nothing", map[string]any{}, providers.Usage{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NormaliseUsage(tc.info); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestMissingKeysAndRegistry(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"anthropic", "mistral"} {
		_, err := New(providers.Ref{Kind: kind, Model: "m"}, providers.KindConfig{APIKeyEnv: "SWARM_TEST_UNSET_KEY"})
		if !errors.Is(err, providers.ErrMissingAPIKey) {
			t.Errorf("%s: %v", kind, err)
		}
	}
	r := &providers.Registry{}
	Register(r)
	for _, k := range []string{"anthropic", "mistral", "bedrock", "ollama-native"} {
		if !r.Has(k) {
			t.Errorf("%s not registered", k)
		}
	}
}
