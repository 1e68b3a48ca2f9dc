package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	Items []item   `json:"items,omitempty"`
	Meta  *meta    `json:"meta,omitempty"`
}

// item and meta make nested objects, so the strict rewrite is checked below
// the top level too.
type item struct {
	ID   string `json:"id"`
	Hint string `json:"hint,omitempty"`
}

type meta struct {
	Source string `json:"source"`
}

// checkStrict fails unless every object schema in v has additionalProperties
// false and lists all its properties as required, in property order.
func checkStrict(t *testing.T, path string, v any) int {
	t.Helper()
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			n++
			if x["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties = %v, want false", path, x["additionalProperties"])
			}
			req, _ := x["required"].([]any)
			if len(req) != len(props) {
				t.Errorf("%s: required %v does not list all of %d properties", path, req, len(props))
			}
			for _, r := range req {
				if _, ok := props[r.(string)]; !ok {
					t.Errorf("%s: required %q is not a property", path, r)
				}
			}
		}
		for k, c := range x {
			n += checkStrict(t, path+"/"+k, c)
		}
	case []any:
		for i, c := range x {
			n += checkStrict(t, fmt.Sprintf("%s/%d", path, i), c)
		}
	}
	return n
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
	t.Parallel()
	var body map[string]any
	var raw []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ = io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		io.WriteString(w, completion(`{"name":"a","score":3,"tags":[],"note":null,"items":[{"id":"x","hint":null}],"meta":null}`, "stop", ""))
	}))
	defer srv.Close()
	v, res, err := providers.Structured[out](t.Context(), newProvider(t, srv.URL), providers.Request{Messages: []providers.Message{{Role: "user", Content: "hi"}}, Caller: providers.Caller{Role: "judge", AgentID: "judge"}}, providers.WithSchemaName("out"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(out{Name: "a", Score: 3, Tags: []string{}, Items: []item{{ID: "x"}}}, v); d != "" {
		t.Errorf("value (-want +got)\n%s", d)
	}
	if res.Usage() != (providers.Usage{InputTokens: 11, OutputTokens: 7}) {
		t.Fatalf("usage %+v, want 11 in / 7 out from the response", res.Usage())
	}
	rf := body["response_format"].(map[string]any)
	js := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["strict"] != true || js["name"] != "out" {
		t.Fatalf("response_format = %v", rf)
	}
	schema := js["schema"].(map[string]any)
	if n := checkStrict(t, "schema", schema); n < 3 {
		t.Errorf("found %d object schemas, want the top level, items[] and meta", n)
	}
	if d := cmp.Diff([]any{"name", "score", "tags", "note", "items", "meta"}, schema["required"]); d != "" {
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
	t.Parallel()
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
	t.Parallel()
	// The content is a complete, valid document in every case: only the
	// finish reason or the refusal says it must not be used.
	valid := `{"name":"a","score":3,"tags":[]}`
	tests := []struct {
		name, body string
		want       error
		wantClass  providers.Class
		wantCalls  int // length gets the one repair attempt; a refusal is final
	}{
		{"finish_reason length", completion(valid, "length", ""), providers.ErrTruncated, providers.ClassUnparseable, 2},
		{"refusal", completion(valid, "stop", "I can't help with that"), providers.ErrRefused, providers.ClassRefused, 1},
		{"content filter", completion(valid, "content_filter", ""), providers.ErrRefused, providers.ClassRefused, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1); io.WriteString(w, tc.body) }))
			defer srv.Close()
			p := newProvider(t, srv.URL)
			if _, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}}); !errors.Is(err, tc.want) || providers.ClassOf(err) != tc.wantClass {
				t.Errorf("Complete: err = %v (class %q), want %v (class %q)", err, providers.ClassOf(err), tc.want, tc.wantClass)
			}
			calls.Store(0)
			v, _, err := providers.Structured[out](t.Context(), p, providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
			if !errors.Is(err, tc.want) || providers.ClassOf(err) != tc.wantClass {
				t.Fatalf("Structured: err = %v (class %q), want %v (class %q)", err, providers.ClassOf(err), tc.want, tc.wantClass)
			}
			if v.Name != "" {
				t.Errorf("the answer was parsed: %+v", v)
			}
			if got := int(calls.Load()); got != tc.wantCalls {
				t.Errorf("calls = %d, want %d", got, tc.wantCalls)
			}
		})
	}
}

func TestMissingKey(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	t.Setenv("SWARM_TEST_NO_KEY", "")
	_, err := New(providers.Ref{Kind: "openai", Model: "gpt-4.1"}, providers.KindConfig{BaseURL: "https://x", APIKeyEnv: "SWARM_TEST_NO_KEY"})
	if !errors.Is(err, providers.ErrMissingAPIKey) || !strings.Contains(err.Error(), "SWARM_TEST_NO_KEY") {
		t.Fatalf("err = %v", err)
	}
}
