package mock_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/providers"
)

func hardenedServer(t *testing.T, o mock.ServerOptions) *httptest.Server {
	t.Helper()
	h, err := mock.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// do sends one request and returns the status and the decoded JSON body
// (a body that is not JSON fails the test: every answer must be JSON).
func do(t *testing.T, method, url, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: status %d, body is not JSON: %q", method, url, resp.StatusCode, b)
	}
	return resp.StatusCode, resp.Header, out
}

func withSchema(schema string) string {
	return `{"model":"honest","messages":[{"role":"user","content":"Review token rotation."}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + schema + `}}}`
}

// errorShape returns the OpenAI error object's type and code, and whether
// it has a message.
func errorShape(out map[string]any) (typ, code string, hasMsg bool) {
	e, _ := out["error"].(map[string]any)
	typ, _ = e["type"].(string)
	code, _ = e["code"].(string)
	msg, _ := e["message"].(string)
	return typ, code, msg != ""
}

func TestServerRefusesSchemasItCannotAnswerBounded(t *testing.T) {
	t.Parallel()
	srv := hardenedServer(t, mock.ServerOptions{})
	tests := []struct {
		name   string
		schema string
		want   int
		code   string
	}{
		// Each of these used to allocate without bound (minItems 1e9 asked
		// for a 16 GB slice) and kill the server.
		{"huge minItems", `{"type":"object","required":["a"],"properties":{"a":{"type":"array","minItems":1000000000,"items":{"type":"string"}}}}`, 400, "invalid_schema"},
		{"huge minLength", `{"type":"object","required":["a"],"properties":{"a":{"type":"string","minLength":1000000000}}}`, 400, "invalid_schema"},
		{"minItems beyond int", `{"type":"array","minItems":1e300,"items":{"type":"string"}}`, 400, "invalid_schema"},
		{"nested arrays multiply", `{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000,"items":{"type":"string"}}}}`, 400, "invalid_schema"},
		{"does not compile", `{"type":"object","properties":{"a":{"type":"nonsense"}}}`, 400, "invalid_schema"},
		{"not an object", `[1,2]`, 400, "invalid_schema"},
		// Within the caps: answered, and bounded by them.
		{"huge maxItems is fine (the mock makes few)", `{"type":"array","maxItems":1000000000,"items":{"type":"string"}}`, 200, ""},
		{"minItems at the cap", fmt.Sprintf(`{"type":"array","minItems":%d,"items":{"type":"integer"}}`, mock.MaxGenItems), 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, _, out := do(t, http.MethodPost, srv.URL+"/v1/chat/completions", withSchema(tc.schema))
			if st != tc.want {
				t.Fatalf("status %d, want %d: %v", st, tc.want, out)
			}
			if tc.want != 200 {
				if typ, code, hasMsg := errorShape(out); typ != "invalid_request_error" || code != tc.code || !hasMsg {
					t.Errorf("error %v, want type invalid_request_error code %s with a message", out, tc.code)
				}
				return
			}
			content := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
			v, err := providers.CompileSchema(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Validate([]byte(content)); err != nil {
				t.Errorf("answer does not validate: %v", err)
			}
			if len(content) > mock.MaxGenValues*(mock.MaxGenStringLen+8) {
				t.Errorf("answer of %d bytes", len(content))
			}
		})
	}
}

func TestServerBodyLimit(t *testing.T) {
	t.Parallel()
	srv := hardenedServer(t, mock.ServerOptions{MaxBodyBytes: 1 << 10})
	big := `{"model":"honest","messages":[{"role":"user","content":"` + strings.Repeat("a", 2<<10) + `"}]}`
	st, _, out := do(t, http.MethodPost, srv.URL+"/v1/chat/completions", big)
	if typ, code, _ := errorShape(out); st != http.StatusRequestEntityTooLarge || typ != "invalid_request_error" || code != "request_too_large" {
		t.Errorf("status %d %v, want 413 request_too_large", st, out)
	}
	small := `{"model":"honest","messages":[{"role":"user","content":"hello"}]}`
	if st, _, out := do(t, http.MethodPost, srv.URL+"/v1/chat/completions", small); st != http.StatusOK {
		t.Errorf("a body under the limit: status %d %v", st, out)
	}
}

func TestServerUnknownRoutesAreOpenAIErrors(t *testing.T) {
	t.Parallel()
	srv := hardenedServer(t, mock.ServerOptions{})
	tests := []struct {
		name, method, path string
		want               int
		code, allow        string
	}{
		{"unknown path", http.MethodGet, "/v1/nothing", 404, "unknown_url", ""},
		{"root", http.MethodGet, "/", 404, "unknown_url", ""},
		{"GET on chat completions", http.MethodGet, "/v1/chat/completions", 405, "method_not_allowed", "POST"},
		{"POST on models", http.MethodPost, "/v1/models", 405, "method_not_allowed", "GET"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, hdr, out := do(t, tc.method, srv.URL+tc.path, "")
			typ, code, hasMsg := errorShape(out)
			if diff := cmp.Diff([]any{tc.want, "invalid_request_error", tc.code, true, tc.allow}, []any{st, typ, code, hasMsg, hdr.Get("Allow")}); diff != "" {
				t.Errorf("status, type, code, message, Allow (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServerJSONObjectModeAnswersJSON(t *testing.T) {
	t.Parallel()
	srv := hardenedServer(t, mock.ServerOptions{})
	st, _, out := do(t, http.MethodPost, srv.URL+"/v1/chat/completions",
		`{"model":"honest","messages":[{"role":"user","content":"Review token rotation."}],"response_format":{"type":"json_object"}}`)
	if st != 200 {
		t.Fatalf("status %d %v", st, out)
	}
	content := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
	var doc map[string]any
	if err := json.Unmarshal([]byte(content), &doc); err != nil {
		t.Fatalf("json_object answer is not a JSON object: %q", content)
	}
	if a, _ := doc["answer"].(string); !strings.Contains(a, "token") {
		t.Errorf("answer %v does not carry the prose answer", doc)
	}
	st, _, out = do(t, http.MethodPost, srv.URL+"/v1/chat/completions",
		`{"model":"honest","messages":[{"role":"user","content":"x"}],"response_format":{"type":"yaml"}}`)
	if _, code, _ := errorShape(out); st != 400 || code != "invalid_response_format" {
		t.Errorf("unknown response_format: status %d %v", st, out)
	}
}

func TestServerHonoursMaxTokens(t *testing.T) {
	t.Parallel()
	srv := hardenedServer(t, mock.ServerOptions{})
	tests := []struct {
		name, field string
		limit       int
		wantFinish  string
	}{
		{"max_tokens below the answer cuts it", "max_tokens", 5, "length"},
		{"max_completion_tokens too", "max_completion_tokens", 5, "length"},
		{"a limit above the answer changes nothing", "max_tokens", 100000, "stop"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"model":"honest","seed":3,"%s":%d,"messages":[{"role":"user","content":"Review token rotation, session store and key management in depth."}]}`, tc.field, tc.limit)
			st, _, out := do(t, http.MethodPost, srv.URL+"/v1/chat/completions", body)
			if st != 200 {
				t.Fatalf("status %d %v", st, out)
			}
			ch := out["choices"].([]any)[0].(map[string]any)
			content := ch["message"].(map[string]any)["content"].(string)
			usage := out["usage"].(map[string]any)
			if ch["finish_reason"] != tc.wantFinish {
				t.Errorf("finish_reason %v, want %s", ch["finish_reason"], tc.wantFinish)
			}
			if tc.wantFinish == "length" && (len(content) > tc.limit*4 || usage["completion_tokens"].(float64) != float64(tc.limit)) {
				t.Errorf("content %d bytes, completion_tokens %v; want at most %d bytes and %d tokens", len(content), usage["completion_tokens"], tc.limit*4, tc.limit)
			}
		})
	}
}

func TestMockAttemptCountersAreBounded(t *testing.T) {
	t.Parallel()
	// Fault draws depend on the attempt; counters must not grow with every
	// distinct request a server ever saw. A retried request still draws a
	// new fault (its counter is among the most recent).
	f := mock.FaultConfig{ServerError: 0.5}
	m, err := mock.New(mock.Honest, mock.Options{Faults: &f})
	if err != nil {
		t.Fatal(err)
	}
	for i := range mock.MaxTrackedRequests + 10 {
		_, _ = m.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: fmt.Sprint(i)}}})
	}
	if n := m.TrackedRequests(); n > mock.MaxTrackedRequests {
		t.Errorf("%d attempt counters, want at most %d", n, mock.MaxTrackedRequests)
	}
}
