package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

type out struct {
	Name  string   `json:"name"`
	Score int      `json:"score" jsonschema:"minimum=0,maximum=10"`
	Tags  []string `json:"tags"`
	Note  string   `json:"note,omitempty"`
}

func completion(content, finish string, refusal string) string {
	msg := map[string]any{"role": "assistant", "content": content}
	if refusal != "" {
		msg["refusal"] = refusal
	}
	b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})
	return string(b)
}

func newProvider(t *testing.T, url string) providers.Provider {
	t.Helper()
	p, err := New(providers.Ref{Kind: "openai-compatible", Model: "gpt-test"}, providers.KindConfig{BaseURL: url + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStrictSchemaIsSent(t *testing.T) {
	var body map[string]any
	var raw []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ = io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		io.WriteString(w, completion(`{"name":"a","score":3,"tags":[],"note":null}`, "stop", ""))
	}))
	defer srv.Close()
	v, res, err := providers.Structured[out](t.Context(), newProvider(t, srv.URL), providers.Request{Messages: []providers.Message{{Role: "user", Content: "hi"}}, Caller: providers.Caller{Role: "judge", AgentID: "judge"}}, providers.WithSchemaName("out"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Score != 3 || res.Usage() != (providers.Usage{InputTokens: 11, OutputTokens: 7}) {
		t.Fatalf("value %+v usage %+v", v, res.Usage())
	}
	rf := body["response_format"].(map[string]any)
	js := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["strict"] != true || js["name"] != "out" {
		t.Fatalf("response_format = %v", rf)
	}
	schema := js["schema"].(map[string]any)
	if d := cmp.Diff([]any{"name", "score", "tags", "note"}, schema["required"]); d != "" {
		t.Errorf("required (-want +got)\n%s", d)
	}
	if schema["additionalProperties"] != false {
		t.Error("additionalProperties not false")
	}
	note := schema["properties"].(map[string]any)["note"].(map[string]any)
	if d := cmp.Diff([]any{map[string]any{"type": "string"}, map[string]any{"type": "null"}}, note["anyOf"]); d != "" {
		t.Errorf("optional field not anyOf null (-want +got)\n%s", d)
	}
	// field order kept in the wire bytes
	s := string(raw)
	if !(strings.Index(s, `"name":{`) < strings.Index(s, `"score":{`) && strings.Index(s, `"score":{`) < strings.Index(s, `"tags":{`)) {
		t.Errorf("property order not kept: %s", s)
	}
	if body["user"] != "judge/judge" {
		t.Errorf("caller not sent as user: %v", body["user"])
	}
}

func TestErrorsAndRetries(t *testing.T) {
	tests := []struct {
		name      string
		status    []int // per attempt; 0 = success
		header    map[string]string
		code      string
		wantCalls int
		wantClass providers.Class
		wantWait  time.Duration
	}{
		{"429 with Retry-After is retried after that delay", []int{429, 0}, map[string]string{"Retry-After": "1"}, "rate_limit_exceeded", 2, providers.ClassNone, time.Second},
		{"429 insufficient_quota is not retried", []int{429, 0}, nil, "insufficient_quota", 1, providers.ClassQuota, 0},
		{"400 is not retried", []int{400, 0}, nil, "invalid_request", 1, providers.ClassPermanent, 0},
		{"500 is retried with backoff", []int{500, 0}, nil, "server_error", 2, providers.ClassNone, 0},
		{"retries exhausted returns the class", []int{503, 503, 503}, nil, "server_error", 3, providers.ClassTransient, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1)) - 1
				st := tc.status[min(n, len(tc.status)-1)]
				if st == 0 {
					io.WriteString(w, completion("ok", "stop", ""))
					return
				}
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(st)
				io.WriteString(w, `{"error":{"message":"boom","type":"x","code":"`+tc.code+`"}}`)
			}))
			defer srv.Close()
			var waits []time.Duration
			p := providers.Retry(providers.RetryConfig{MaxRetries: 2, Initial: time.Millisecond,
				Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }})(newProvider(t, srv.URL))
			_, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
			if got := int(calls.Load()); got != tc.wantCalls {
				t.Errorf("calls = %d, want %d", got, tc.wantCalls)
			}
			if providers.ClassOf(err) != tc.wantClass {
				t.Errorf("class = %q (%v), want %q", providers.ClassOf(err), err, tc.wantClass)
			}
			if tc.wantWait > 0 && (len(waits) == 0 || waits[0] != tc.wantWait) {
				t.Errorf("waits = %v, want first %v (Retry-After)", waits, tc.wantWait)
			}
		})
	}
}

func TestLengthAndRefusalAreTypedErrors(t *testing.T) {
	tests := []struct {
		name, body string
		want       error
	}{
		{"finish_reason length", completion(`{"name":"a"`, "length", ""), providers.ErrTruncated},
		{"refusal", completion("", "stop", "I can't help with that"), providers.ErrRefused},
		{"content filter", completion("", "content_filter", ""), providers.ErrRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, tc.body) }))
			defer srv.Close()
			_, _, err := providers.Structured[out](t.Context(), newProvider(t, srv.URL), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestMissingKey(t *testing.T) {
	t.Setenv("SWARM_TEST_NO_KEY", "")
	_, err := New(providers.Ref{Kind: "openai", Model: "gpt-4.1"}, providers.KindConfig{BaseURL: "https://x", APIKeyEnv: "SWARM_TEST_NO_KEY"})
	if !errors.Is(err, providers.ErrMissingAPIKey) || !strings.Contains(err.Error(), "SWARM_TEST_NO_KEY") {
		t.Fatalf("err = %v", err)
	}
}
