package langchain

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// The two kinds whose tool calls go over the OpenAI wire format, with how a
// fake server tells their native (langchaingo) requests from OpenAI-wire
// ones: Ollama's native path is /api/chat; Mistral's SDK posts to the same
// /v1/chat/completions but always sends safe_prompt, which the OpenAI
// client never does.
var wireKinds = []struct {
	kind    string
	build   func(t *testing.T, f *fake) providers.Provider
	native  func(s *seen) bool
	authHdr string // the Authorization header of an OpenAI-wire request
}{
	{"mistral", newMistral, func(s *seen) bool { _, ok := s.body["safe_prompt"]; return ok }, "Bearer mk"},
	{"ollama-native", newOllama, func(s *seen) bool { return s.path == "/api/chat" }, ""},
}

// openAIToolCalls is an OpenAI-style chat completion whose answer is tool
// calls (arguments as the model wrote them, spaces included).
func openAIToolCalls(finish string, calls ...[3]string) string {
	var tcs []any
	for _, c := range calls {
		tcs = append(tcs, map[string]any{"id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}})
	}
	b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion", "created": 1, "model": "served-model",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "", "tool_calls": tcs}, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 80, "completion_tokens": 12, "total_tokens": 92}})
	return string(b)
}

// openAITurnMessages is the OpenAI shape of toolTurn's messages.
func openAITurnMessages(t *testing.T) any {
	return jsonOf(t, `[
		{"role":"system","content":"You review code."},
		{"role":"user","content":"Find the bug."},
		{"role":"assistant","content":"Looking.","tool_calls":[
			{"id":"t1","type":"function","function":{"name":"list_dir","arguments":"{\"path\":\".\"}"}},
			{"id":"t2","type":"function","function":{"name":"grep","arguments":"{\"pattern\":\"token\"}"}}]},
		{"role":"tool","content":"{\"ok\":true,\"entries\":[]}","tool_call_id":"t1"},
		{"role":"tool","content":"{\"ok\":true,\"matches\":[]}","tool_call_id":"t2"}]`)
}

func TestWireToolCalling(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	for _, k := range wireKinds {
		t.Run(k.kind, func(t *testing.T) {
			f := newFake(t, nil,
				reply{body: openAIToolCalls("tool_calls", [3]string{"c_9", "read_file", `{"path": "a.go", "start_line": 3}`}, [3]string{"c_10", "grep", `{"pattern":"=="}`})},
				reply{body: openAIToolCalls("stop", [3]string{"", "glob", `{"pattern":"**/*.go"}`})})
			p := k.build(t, f)
			req := toolTurn()
			req.Schema = &providers.Schema{Name: "out", JSON: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`)}
			req.Seed = providers.Int64(7)
			req.Caller = providers.Caller{Role: "worker", AgentID: "w1"}
			resp, err := p.Complete(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Latency = 0
			want := providers.Response{Model: "served-model", FinishReason: providers.FinishToolCalls,
				Usage: providers.Usage{InputTokens: 80, OutputTokens: 12},
				ToolCalls: []providers.ToolCall{
					{ID: "c_9", Name: "read_file", Arguments: `{"path": "a.go", "start_line": 3}`},
					{ID: "c_10", Name: "grep", Arguments: `{"pattern":"=="}`}}}
			if d := cmp.Diff(want, resp, cmp.AllowUnexported(providers.Response{})); d != "" {
				t.Errorf("response (-want +got):\n%s", d)
			}
			s := f.last()
			if s.path != "/v1/chat/completions" || k.native(s) {
				t.Errorf("request went to %s (native %v), want the OpenAI wire at /v1/chat/completions", s.path, k.native(s))
			}
			if got := s.header.Get("Authorization"); got != k.authHdr {
				t.Errorf("Authorization %q, want %q", got, k.authHdr)
			}
			b := s.body
			var wantTools []any
			for _, tl := range readTools {
				strict, err := providers.StrictSchema(tl.Parameters)
				if err != nil {
					t.Fatal(err)
				}
				wantTools = append(wantTools, map[string]any{"type": "function", "function": map[string]any{
					"name": tl.Name, "description": tl.Description, "parameters": jsonOf(t, string(strict)), "strict": true}})
			}
			if d := cmp.Diff(wantTools, b["tools"]); d != "" {
				t.Errorf("tools (-want +got):\n%s", d)
			}
			if d := cmp.Diff(openAITurnMessages(t), b["messages"]); d != "" {
				t.Errorf("messages (-want +got):\n%s", d)
			}
			rf, _ := b["response_format"].(map[string]any)
			js, _ := rf["json_schema"].(map[string]any)
			if rf["type"] != "json_schema" || js["name"] != "out" || js["schema"] == nil {
				t.Errorf("response_format %v, want json_schema %q beside the tools", b["response_format"], "out")
			}
			if b["model"] != p.(*Provider).ref.Model {
				t.Errorf("model %v", b["model"])
			}
			// Mistral refuses fields it does not know (seed, user); Ollama takes both.
			_, hasSeed := b["seed"]
			_, hasUser := b["user"]
			if wantExtra := k.kind != "mistral"; hasSeed != wantExtra || hasUser != wantExtra {
				t.Errorf("seed sent %v, user sent %v; want %v", hasSeed, hasUser, wantExtra)
			}

			// A call without an id gets call_<index>; a server that says
			// "stop" with calls still ends a tool turn; usage is the turn's own.
			resp, err = p.Complete(t.Context(), toolTurn())
			if err != nil {
				t.Fatal(err)
			}
			wantCalls := []providers.ToolCall{{ID: "call_0", Name: "glob", Arguments: `{"pattern":"**/*.go"}`}}
			if d := cmp.Diff(wantCalls, resp.ToolCalls); d != "" || resp.FinishReason != providers.FinishToolCalls || resp.Usage != (providers.Usage{InputTokens: 80, OutputTokens: 12}) {
				t.Errorf("finish %q usage %+v calls (-want +got):\n%s", resp.FinishReason, resp.Usage, d)
			}
		})
	}
}

// The tool loop's last turn offers no tools but carries the earlier calls
// and results: on these kinds it goes over the OpenAI wire, which carries
// them as tool_calls and tool messages (no text rendering), with no tools;
// calls in the answer (none were offered) are dropped and the text is the
// answer.
func TestWireToolHistoryWithoutTools(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	for _, k := range wireKinds {
		t.Run(k.kind, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"id": "c2", "object": "chat.completion", "created": 1, "model": "m",
				"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant", "content": `{"name":"x"}`,
					"tool_calls": []any{map[string]any{"id": "z", "type": "function", "function": map[string]any{"name": "grep", "arguments": "{}"}}}}}},
				"usage": map[string]any{"prompt_tokens": 40, "completion_tokens": 5}})
			f := newFake(t, nil, reply{body: string(body)})
			req := toolTurn()
			req.Tools = nil
			resp, err := k.build(t, f).Complete(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != `{"name":"x"}` || resp.ToolCalls != nil || resp.FinishReason != providers.FinishStop || resp.Usage != (providers.Usage{InputTokens: 40, OutputTokens: 5}) {
				t.Errorf("response %+v, want the text as the answer", resp)
			}
			s := f.last()
			if s.path != "/v1/chat/completions" || k.native(s) {
				t.Errorf("request went to %s (native %v), want the OpenAI wire", s.path, k.native(s))
			}
			if _, ok := s.body["tools"]; ok {
				t.Errorf("tools sent: %v", s.body["tools"])
			}
			if d := cmp.Diff(openAITurnMessages(t), s.body["messages"]); d != "" {
				t.Errorf("messages (-want +got):\n%s", d)
			}
		})
	}
}

// A request without tools and without tool history stays on the langchaingo
// path for ollama-native; Mistral's goes over the OpenAI wire too (its
// langchaingo SDK cannot read the content arrays of Mistral's reasoning
// models; wire.go), with Mistral's own seed field.
func TestWirePlainRequestStaysNative(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	nd := map[string]string{"Content-Type": "application/x-ndjson"}
	replies := map[string]reply{
		"mistral":       {body: mistralResp("All good.", "stop", 10, 3)},
		"ollama-native": {hdr: nd, body: ollamaStream("stop", 10, 3, "All good.")},
	}
	for _, k := range wireKinds {
		t.Run(k.kind, func(t *testing.T) {
			f := newFake(t, nil, replies[k.kind])
			resp, err := k.build(t, f).Complete(t.Context(), twoSystems)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "All good." || resp.Usage != (providers.Usage{InputTokens: 10, OutputTokens: 3}) {
				t.Errorf("response %+v", resp)
			}
			s := f.last()
			if k.kind == "mistral" {
				if s.path != "/v1/chat/completions" || s.body["random_seed"] != 9.0 || s.body["seed"] != nil || s.body["user"] != nil {
					t.Errorf("a plain Mistral request went to %s %s, want the OpenAI wire with random_seed 9 and no seed or user", s.path, s.raw)
				}
				return
			}
			if !k.native(s) {
				t.Errorf("a plain request went to %s %s, want the native path", s.path, s.raw)
			}
		})
	}
}

// Errors of the OpenAI-wire path name the configured kind, not the
// delegate's, keep their class and hint, and never carry the key.
func TestWireErrors(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	tests := []struct {
		name string
		kind int // index in wireKinds
		rp   reply
		want providers.Class
		hint string
	}{
		{"mistral 401 names the key variable", 0, reply{status: 401, body: `{"object":"error","message":"Unauthorized","type":"invalid_request_error","code":null}`}, providers.ClassPermanent, "SWARM_TEST_MISTRAL"},
		{"mistral 422 quotes the body", 0, reply{status: 422, body: `{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","x"]}]},"type":"invalid_request_error"}`}, providers.ClassPermanent, "extra_forbidden"},
		{"mistral 429 is rate limited", 0, reply{status: 429, hdr: map[string]string{"Retry-After": "3"}, body: `{"message":"Requests rate limit exceeded"}`}, providers.ClassRateLimited, "429"},
		{"ollama 500 is transient", 1, reply{status: 500, body: `{"error":{"message":"llama runner process has terminated","type":"api_error"}}`}, providers.ClassTransient, "500"},
		{"ollama 404 model not found", 1, reply{status: 404, body: `{"error":{"message":"model \"llama3.1:8b\" not found, try pulling it first","type":"api_error"}}`}, providers.ClassPermanent, "not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := wireKinds[tc.kind]
			f := newFake(t, nil, tc.rp)
			const key = "sk-wire-secret-4242"
			t.Setenv("SWARM_TEST_MISTRAL", key)
			p, err := New(providers.Ref{Kind: k.kind, Model: "m1"}, providers.KindConfig{BaseURL: f.srv.URL, APIKeyEnv: "SWARM_TEST_MISTRAL"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Complete(t.Context(), toolTurn())
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *providers.Error", err)
			}
			if pe.Provider != k.kind || pe.Class != tc.want || !strings.Contains(err.Error(), tc.hint) {
				t.Errorf("provider %q class %q err %v; want provider %q class %q mentioning %q", pe.Provider, pe.Class, err, k.kind, tc.want, tc.hint)
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("the key appears in the error: %v", err)
			}
			if k.native(f.last()) {
				t.Errorf("a request with tools went to the native path")
			}
		})
	}
}
