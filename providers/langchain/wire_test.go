package langchain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/providers"
)

// reply is one scripted answer of a fake provider server.
type reply struct {
	status int
	hdr    map[string]string
	body   string
}

// fake is an httptest server that records requests and plays replies in
// order (the last one repeats).
type fake struct {
	mu      sync.Mutex
	replies []reply
	reqs    []*seen
	srv     *httptest.Server
}

type seen struct {
	path, query string
	header      http.Header
	body        map[string]any
	raw         string
}

func newFake(t *testing.T, check func(t *testing.T, r *http.Request), replies ...reply) *fake {
	t.Helper()
	f := &fake{replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if check != nil {
			check(t, r)
		}
		b, _ := io.ReadAll(r.Body)
		s := &seen{path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), raw: string(b)}
		_ = json.Unmarshal(b, &s.body)
		f.mu.Lock()
		f.reqs = append(f.reqs, s)
		rp := f.replies[min(len(f.reqs), len(f.replies))-1]
		f.mu.Unlock()
		for k, v := range rp.hdr {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(cmpOr(rp.status, 200))
		io.WriteString(w, rp.body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func (f *fake) calls() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.reqs) }
func (f *fake) last() *seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reqs[len(f.reqs)-1]
}

var twoSystems = providers.Request{
	Messages:    []providers.Message{{Role: "system", Content: "You are the judge."}, {Role: "system", Content: "Be brief."}, {Role: "user", Content: "Score it."}},
	Temperature: providers.Float(0.2),
	MaxTokens:   300,
	Seed:        providers.Int64(9),
}

func errClass(err error) (providers.Class, time.Duration, int) {
	var pe *providers.Error
	if !errors.As(err, &pe) {
		return "", 0, 0
	}
	return pe.Class, pe.RetryAfter, pe.StatusCode
}

// checkStructuredRepair runs the structured-output helper against a server
// whose first answer is prose around schema-invalid JSON and whose second is
// valid, and checks the one repair.
func checkStructuredRepair(t *testing.T, p providers.Provider, f *fake, wantUsage providers.Usage) {
	t.Helper()
	before := f.calls()
	v, res, err := providers.Structured[out](t.Context(), p, providers.Request{Messages: []providers.Message{{Role: "user", Content: "rate it"}}}, providers.WithSchemaName("out"))
	if err != nil {
		t.Fatal(err)
	}
	if v != (out{Name: "fixed", Score: 5}) || f.calls()-before != 2 || !res.Repaired {
		t.Errorf("value %+v after %d calls (repaired %v), want {fixed 5} after 2", v, f.calls()-before, res.Repaired)
	}
	if res.Usage() != wantUsage {
		t.Errorf("usage over both calls %+v, want %+v", res.Usage(), wantUsage)
	}
	if !strings.Contains(f.last().raw, "score") || !strings.Contains(strings.ToLower(f.last().raw), "missing") {
		t.Errorf("repair request does not show the validation error: %s", f.last().raw)
	}
}

// ---------- Anthropic Messages API ----------

func anthropicMsg(stop string, usageIn, usageOut int, blocks ...string) string {
	var content []any
	for _, b := range blocks {
		if strings.HasPrefix(b, "thinking:") {
			content = append(content, map[string]any{"type": "thinking", "thinking": strings.TrimPrefix(b, "thinking:"), "signature": "sig"})
			continue
		}
		content = append(content, map[string]any{"type": "text", "text": b})
	}
	bs, _ := json.Marshal(map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": usageIn, "output_tokens": usageOut}})
	return string(bs)
}

func anthropicErr(typ, msg string) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg)
}

func newAnthropic(t *testing.T, f *fake, opts map[string]string) providers.Provider {
	t.Helper()
	t.Setenv("SWARM_TEST_ANTHROPIC", "sk-ant-test")
	p, err := New(providers.Ref{Kind: "anthropic", Model: "claude-test"}, providers.KindConfig{BaseURL: f.srv.URL + "/v1/", APIKeyEnv: "SWARM_TEST_ANTHROPIC", Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func anthropicCheck(t *testing.T, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != "sk-ant-test" || r.Header.Get("anthropic-version") != "2023-06-01" {
		t.Errorf("%s %s x-api-key=%q anthropic-version=%q", r.Method, r.URL.Path, r.Header.Get("x-api-key"), r.Header.Get("anthropic-version"))
	}
}

func TestAnthropicMessagesAPI(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	f := newFake(t, anthropicCheck, reply{body: anthropicMsg("end_turn", 40, 12, "thinking:hmm", "All ", "good.")})
	p := newAnthropic(t, f, nil)
	resp, err := p.Complete(t.Context(), twoSystems)
	if err != nil {
		t.Fatal(err)
	}
	// A thinking block and two text blocks: the text is joined, the usage
	// (repeated by langchaingo on every block) counted once.
	if resp.Text != "All good." || resp.Usage != (providers.Usage{InputTokens: 40, OutputTokens: 12}) || resp.FinishReason != providers.FinishStop {
		t.Errorf("response %+v", resp)
	}
	b := f.last().body
	if systemText(b["system"]) != "You are the judge.\n\nBe brief." {
		t.Errorf("system = %q, want both system messages joined, at the top level", b["system"])
	}
	msgs := b["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" {
		t.Errorf("messages %v: want only the user turn", msgs)
	}
	if b["max_tokens"] != 300.0 || b["model"] != "claude-test" || b["temperature"] != 0.2 {
		t.Errorf("max_tokens %v model %v temperature %v", b["max_tokens"], b["model"], b["temperature"])
	}
	// max_tokens is required by the API: a default is always sent.
	if _, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if f.last().body["max_tokens"] != float64(DefaultAnthropicMaxTokens) {
		t.Errorf("default max_tokens %v, want %d", f.last().body["max_tokens"], DefaultAnthropicMaxTokens)
	}
	p2 := newAnthropic(t, f, map[string]string{"max_tokens": "8192"})
	if _, err := p2.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if f.last().body["max_tokens"] != 8192.0 {
		t.Errorf("options.max_tokens not used: %v", f.last().body["max_tokens"])
	}
}

func TestAnthropicStructuredRepair(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	f := newFake(t, anthropicCheck,
		reply{body: anthropicMsg("end_turn", 50, 10, "Sure! Here it is:\n```json\n{\"name\":\"first\"}\n```")},
		reply{body: anthropicMsg("end_turn", 80, 9, `{"name":"fixed","score":5}`)})
	p := newAnthropic(t, f, nil)
	checkStructuredRepair(t, p, f, providers.Usage{InputTokens: 130, OutputTokens: 19})
	sys := systemText(f.last().body["system"])
	if !strings.Contains(sys, `"score"`) || !strings.Contains(sys, `"out"`) {
		t.Errorf("schema not in the system prompt: %s", sys)
	}
}

func TestAnthropicStopReasonsAndErrors(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	valid := `{"name":"a","score":1}`
	tests := []struct {
		name  string
		rp    reply
		want  providers.Class
		trunc bool
		wait  time.Duration
	}{
		{"max_tokens is truncated", reply{body: anthropicMsg("max_tokens", 5, 300, valid)}, providers.ClassUnparseable, true, 0},
		{"refusal", reply{body: anthropicMsg("refusal", 5, 3, "I can't help with that.")}, providers.ClassRefused, false, 0},
		{"refusal without content", reply{body: `{"id":"m","type":"message","role":"assistant","model":"c","content":[],"stop_reason":"refusal","usage":{"input_tokens":5,"output_tokens":0}}`}, providers.ClassRefused, false, 0},
		{"429 rate_limit_error with retry-after", reply{status: 429, hdr: map[string]string{"retry-after": "3"}, body: anthropicErr("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")}, providers.ClassRateLimited, false, 3 * time.Second},
		{"529 overloaded_error", reply{status: 529, body: anthropicErr("overloaded_error", "Overloaded")}, providers.ClassTransient, false, 0},
		{"500 api_error", reply{status: 500, body: anthropicErr("api_error", "Internal server error")}, providers.ClassTransient, false, 0},
		{"400 prompt too long", reply{status: 400, body: anthropicErr("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")}, providers.ClassPermanent, false, 0},
		{"400 credit balance", reply{status: 400, body: anthropicErr("invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.")}, providers.ClassQuota, false, 0},
		{"401 authentication_error", reply{status: 401, body: anthropicErr("authentication_error", "invalid x-api-key")}, providers.ClassPermanent, false, 0},
		{"403 permission_error", reply{status: 403, body: anthropicErr("permission_error", "Your API key does not have permission to use the specified resource.")}, providers.ClassPermanent, false, 0},
		{"404 not_found_error", reply{status: 404, body: anthropicErr("not_found_error", "model: claude-nope")}, providers.ClassPermanent, false, 0},
		{"413 request_too_large", reply{status: 413, body: anthropicErr("request_too_large", "Request exceeds the maximum allowed number of bytes.")}, providers.ClassPermanent, false, 0},
		{"502 HTML", reply{status: 502, hdr: map[string]string{"Content-Type": "text/html"}, body: "<html>bad gateway</html>"}, providers.ClassTransient, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, anthropicCheck, tc.rp)
			_, err := newAnthropic(t, f, nil).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
			c, wait, _ := errClass(err)
			if c != tc.want || wait != tc.wait || errors.Is(err, providers.ErrTruncated) != tc.trunc {
				t.Errorf("class %q retry-after %s truncated %v (%v), want %q %s %v", c, wait, errors.Is(err, providers.ErrTruncated), err, tc.want, tc.wait, tc.trunc)
			}
		})
	}
}

// ---------- native Ollama /api/chat (NDJSON stream) ----------

func ollamaStream(done string, promptEval, eval int, chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		l, _ := json.Marshal(map[string]any{"model": "llama3.1", "created_at": "2025-01-01T00:00:00Z", "message": map[string]any{"role": "assistant", "content": c}, "done": false})
		b.Write(l)
		b.WriteByte('\n')
	}
	l, _ := json.Marshal(map[string]any{"model": "llama3.1", "created_at": "2025-01-01T00:00:01Z", "message": map[string]any{"role": "assistant", "content": ""},
		"done": true, "done_reason": done, "total_duration": 123456, "prompt_eval_count": promptEval, "eval_count": eval})
	b.Write(l)
	b.WriteByte('\n')
	return b.String()
}

func newOllama(t *testing.T, f *fake) providers.Provider {
	t.Helper()
	p, err := New(providers.Ref{Kind: "ollama-native", Model: "llama3.1:8b"}, providers.KindConfig{BaseURL: f.srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ollamaCheck(t *testing.T, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/chat" {
		t.Errorf("%s %s", r.Method, r.URL.Path)
	}
}

func TestOllamaNativeChat(t *testing.T) {
	t.Parallel()
	nd := map[string]string{"Content-Type": "application/x-ndjson"}
	f := newFake(t, ollamaCheck, reply{hdr: nd, body: ollamaStream("stop", 33, 7, "All ", "good.")})
	p := newOllama(t, f)
	resp, err := p.Complete(t.Context(), twoSystems)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "All good." || resp.Usage != (providers.Usage{InputTokens: 33, OutputTokens: 7}) {
		t.Errorf("response %+v", resp)
	}
	b := f.last().body
	o := b["options"].(map[string]any)
	if b["model"] != "llama3.1:8b" || o["num_predict"] != 300.0 || o["temperature"] != 0.2 || o["seed"] != 9.0 {
		t.Errorf("model %v options %v", b["model"], o)
	}
	msgs := b["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["content"] != "You are the judge.\n\nBe brief." {
		t.Errorf("messages %v", msgs)
	}

	f2 := newFake(t, ollamaCheck, reply{hdr: nd, body: ollamaStream("stop", 20, 5, `Here: {"name":"first"}`)}, reply{hdr: nd, body: ollamaStream("stop", 30, 6, `{"name":"fixed",`, `"score":5}`)})
	checkStructuredRepair(t, newOllama(t, f2), f2, providers.Usage{InputTokens: 50, OutputTokens: 11})
	if f2.last().body["format"] != "json" {
		t.Errorf("format %v, want json for a schema request", f2.last().body["format"])
	}
}

func TestOllamaNativeLengthAndErrors(t *testing.T) {
	t.Parallel()
	nd := map[string]string{"Content-Type": "application/x-ndjson"}
	tests := []struct {
		name  string
		rp    reply
		want  providers.Class
		trunc bool
	}{
		{"done_reason length is truncated", reply{hdr: nd, body: ollamaStream("length", 10, 300, `{"name":"a",`, `"score":1}`)}, providers.ClassUnparseable, true},
		{"404 model not found", reply{status: 404, body: `{"error":"model \"llama3.1:8b\" not found, try pulling it first"}`}, providers.ClassPermanent, false},
		{"400 bad options", reply{status: 400, body: `{"error":"invalid options"}`}, providers.ClassPermanent, false},
		{"500 runner crashed", reply{status: 500, body: `{"error":"llama runner process has terminated: signal: killed"}`}, providers.ClassTransient, false},
		{"503 server busy", reply{status: 503, body: `{"error":"server busy, please try again.  maximum pending requests exceeded"}`}, providers.ClassTransient, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, ollamaCheck, tc.rp)
			_, err := newOllama(t, f).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
			c, _, _ := errClass(err)
			if c != tc.want || errors.Is(err, providers.ErrTruncated) != tc.trunc {
				t.Errorf("class %q truncated %v (%v), want %q %v", c, errors.Is(err, providers.ErrTruncated), err, tc.want, tc.trunc)
			}
		})
	}
}

// ---------- Mistral /v1/chat/completions ----------

func mistralResp(content, finish string, in, outTok int) string {
	b, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": "mistral-small-latest",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": in, "completion_tokens": outTok, "total_tokens": in + outTok}})
	return string(b)
}

func newMistral(t *testing.T, f *fake) providers.Provider {
	t.Helper()
	t.Setenv("SWARM_TEST_MISTRAL", "mk")
	p, err := New(providers.Ref{Kind: "mistral", Model: "mistral-small-latest"}, providers.KindConfig{BaseURL: f.srv.URL, APIKeyEnv: "SWARM_TEST_MISTRAL", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mistralCheck(t *testing.T, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer mk" {
		t.Errorf("%s auth %q", r.URL.Path, r.Header.Get("Authorization"))
	}
}

func TestMistralChat(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	f := newFake(t, mistralCheck, reply{body: mistralResp("All good.", "stop", 21, 4)})
	resp, err := newMistral(t, f).Complete(t.Context(), twoSystems)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "All good." || resp.Usage != (providers.Usage{InputTokens: 21, OutputTokens: 4}) {
		t.Errorf("response %+v", resp)
	}
	b := f.last().body
	if b["model"] != "mistral-small-latest" || b["max_tokens"] != 300.0 || b["temperature"] != 0.2 || b["random_seed"] != 9.0 {
		t.Errorf("body %v", b)
	}
	f2 := newFake(t, mistralCheck, reply{body: mistralResp(`{"name":"first"}`, "stop", 10, 3)}, reply{body: mistralResp(`{"name":"fixed","score":5}`, "stop", 15, 4)})
	checkStructuredRepair(t, newMistral(t, f2), f2, providers.Usage{InputTokens: 25, OutputTokens: 7})
}

func TestMistralLengthErrorsAndContext(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	tests := []struct {
		name  string
		rp    reply
		want  providers.Class
		trunc bool
	}{
		{"finish_reason length", reply{body: mistralResp(`{"name":`, "length", 10, 300)}, providers.ClassUnparseable, true},
		{"429", reply{status: 429, body: `{"object":"error","message":"Requests rate limit exceeded","type":"rate_limited","param":null,"code":"1300"}`}, providers.ClassRateLimited, false},
		{"401", reply{status: 401, body: `{"message":"Unauthorized","request_id":"x"}`}, providers.ClassPermanent, false},
		{"400 too long", reply{status: 400, body: `{"object":"error","message":"Prompt contains 40000 tokens, too large for model with 32768 maximum context length","type":"invalid_request_error"}`}, providers.ClassPermanent, false},
		{"503", reply{status: 503, body: `{"object":"error","message":"Service unavailable"}`}, providers.ClassTransient, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, mistralCheck, tc.rp)
			_, err := newMistral(t, f).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
			c, _, _ := errClass(err)
			if c != tc.want || errors.Is(err, providers.ErrTruncated) != tc.trunc {
				t.Errorf("class %q truncated %v (%v), want %q %v", c, errors.Is(err, providers.ErrTruncated), err, tc.want, tc.trunc)
			}
			// The SDK's own retries are off: one request, swarm's middleware decides.
			if f.calls() != 1 {
				t.Errorf("%d requests, want 1", f.calls())
			}
		})
	}
	t.Run("context deadline is honoured", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
		defer srv.Close()
		defer close(release) // runs first: the handler returns, then Close
		t.Setenv("SWARM_TEST_MISTRAL", "mk")
		p, err := New(providers.Ref{Kind: "mistral", Model: "m"}, providers.KindConfig{BaseURL: srv.URL, APIKeyEnv: "SWARM_TEST_MISTRAL", Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = p.Complete(ctx, providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
		if c := providers.ClassOf(err); c != providers.ClassTimeout || time.Since(start) > 5*time.Second {
			t.Errorf("class %q after %s (%v)", c, time.Since(start), err)
		}
	})
}

// described is an output type with a type and field descriptions, as every
// output type of the program has.
type described struct {
	Verdict string  `json:"verdict" jsonschema:"enum=pass,enum=fail" jsonschema_description:"pass or fail, nothing else."`
	Score   float64 `json:"score" jsonschema:"minimum=0,maximum=1" jsonschema_description:"Confidence, from 0 (none) to 1 (certain)."`
}

func (described) SchemaDescription() string { return "A verdict on one criterion." }

// The backends here get the schema in the prompt only, so the prompt is the
// only place a model can learn what a field means: the type's description
// and every field's must be in it.
func TestSchemaInPromptCarriesDescriptions(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	f := newFake(t, anthropicCheck, reply{body: anthropicMsg("end_turn", 50, 10, `{"verdict":"pass","score":0.5}`)})
	p := newAnthropic(t, f, nil)
	if _, _, err := providers.Structured[described](t.Context(), p, providers.Request{Messages: []providers.Message{{Role: "user", Content: "judge it"}}}, providers.WithSchemaName("described")); err != nil {
		t.Fatal(err)
	}
	sys := systemText(f.last().body["system"])
	for _, want := range []string{
		`named "described" (A verdict on one criterion)`,
		`"description":"pass or fail, nothing else."`,
		`"description":"Confidence, from 0 (none) to 1 (certain)."`,
		`"description":"A verdict on one criterion."`,
	} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %s:\n%s", want, sys)
		}
	}
}
