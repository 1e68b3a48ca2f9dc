package openai

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// readFileTool has optional parameters, so the strict rewrite must make
// them nullable; grepTool has only required ones.
var (
	readFileTool = providers.Tool{Name: "read_file", Description: "Read lines of a file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"start_line":{"type":"integer","minimum":1},"end_line":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`)}
	grepTool = providers.Tool{Name: "grep", Description: "Search files.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"],"additionalProperties":false}`)}
)

// toolConversation is the second turn of a tool loop: the model called two
// tools in parallel, one with arguments that are not valid JSON (they must
// still travel verbatim), and both results follow.
var toolConversation = providers.Request{
	Messages: []providers.Message{
		{Role: "system", Content: "review the code"},
		{Role: "user", Content: "find the session bug"},
		{Role: "assistant", ToolCalls: []providers.ToolCall{
			{ID: "call_a", Name: "grep", Arguments: `{"pattern":"token =="}`},
			{ID: "call_b", Name: "read_file", Arguments: `{"path": "auth.go", "start_line": 3,}`},
		}},
		{Role: "tool", ToolCallID: "call_a", ToolName: "grep", Content: `{"ok":true,"matches":[]}`},
		{Role: "tool", ToolCallID: "call_b", ToolName: "read_file", Content: `{"ok":false,"refusal":"bad_arguments","error":"not JSON"}`},
	},
	Tools:  []providers.Tool{grepTool, readFileTool},
	Schema: &providers.Schema{Name: "out", JSON: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)},
}

func TestToolRequestWirePerKind(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	t.Setenv("SWARM_TEST_OPENAI_KEY", "sk-test")
	wantMsgs := []any{
		map[string]any{"role": "system", "content": "review the code"},
		map[string]any{"role": "user", "content": "find the session bug"},
		map[string]any{"role": "assistant", "tool_calls": []any{
			map[string]any{"id": "call_a", "type": "function", "function": map[string]any{"name": "grep", "arguments": `{"pattern":"token =="}`}},
			map[string]any{"id": "call_b", "type": "function", "function": map[string]any{"name": "read_file", "arguments": `{"path": "auth.go", "start_line": 3,}`}},
		}},
		map[string]any{"role": "tool", "tool_call_id": "call_a", "content": `{"ok":true,"matches":[]}`},
		map[string]any{"role": "tool", "tool_call_id": "call_b", "content": `{"ok":false,"refusal":"bad_arguments","error":"not JSON"}`},
	}
	// Every kind this package serves goes through the same mapping; the
	// table lists them all so a kind given its own path later is caught.
	for _, k := range kinds {
		t.Run(k.Kind, func(t *testing.T) {
			srv, c := echoServer(t, completion(`{"a":"x"}`, "stop", ""))
			cfg := providers.KindConfig{BaseURL: srv.URL + "/v1", APIKeyEnv: "SWARM_TEST_OPENAI_KEY"}
			if k.Kind == "azure" {
				cfg.BaseURL = srv.URL
			}
			if _, err := mustNew(t, k.Kind, "gpt-4.1", cfg).Complete(t.Context(), toolConversation); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantMsgs, c.body["messages"]); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			tools, _ := c.body["tools"].([]any)
			if len(tools) != 2 {
				t.Fatalf("tools %v, want grep and read_file", c.body["tools"])
			}
			for i, name := range []string{"grep", "read_file"} {
				tool := tools[i].(map[string]any)
				fn := tool["function"].(map[string]any)
				if tool["type"] != "function" || fn["name"] != name || fn["strict"] != true || fn["description"] == "" {
					t.Errorf("tools[%d] = %v, want strict function %s with its description", i, tool, name)
				}
				checkStrict(t, name, fn["parameters"])
			}
			// read_file's optional lines become nullable under strict mode.
			rp := tools[1].(map[string]any)["function"].(map[string]any)["parameters"].(map[string]any)
			wantStart := map[string]any{"anyOf": []any{map[string]any{"type": "integer", "minimum": 1.0}, map[string]any{"type": "null"}}}
			if diff := cmp.Diff(wantStart, rp["properties"].(map[string]any)["start_line"]); diff != "" {
				t.Errorf("start_line (-want +got):\n%s", diff)
			}
			rf, _ := c.body["response_format"].(map[string]any)
			if rf["type"] != "json_schema" || rf["json_schema"].(map[string]any)["name"] != "out" {
				t.Errorf("response_format %v, want json_schema out beside the tools", rf)
			}
			if v, has := c.body["parallel_tool_calls"]; has {
				t.Errorf("parallel_tool_calls = %v sent; the default (parallel allowed) is wanted", v)
			}
		})
	}
}

func TestNoToolsNoToolFields(t *testing.T) {
	t.Parallel()
	srv, c := echoServer(t, completion(`{"a":"x"}`, "stop", ""))
	if _, err := newProvider(t, srv.URL).Complete(t.Context(), schemaReq); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"tools", "tool_choice", "parallel_tool_calls"} {
		if v, has := c.body[f]; has {
			t.Errorf("%s = %v sent without tools", f, v)
		}
	}
}

func TestToolParametersStrictness(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		params     string
		wantStrict bool
		wantParams string // the parameters sent; "" = not checked beyond strictness
	}{
		{"no parameters become an empty strict object", ``, true, `{"type":"object","properties":{},"required":[],"additionalProperties":false}`},
		{"closed object is strict", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, true, `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`},
		{"free-form object would lose its keys under strict", `{"type":"object"}`, false, `{"type":"object"}`},
		{"map-valued object cannot be strict", `{"type":"object","properties":{"env":{"type":"object","additionalProperties":{"type":"string"}}}}`, false, ""},
		{"additionalProperties true is open", `{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":true}`, false, ""},
		{"oneOf is not strict-mode JSON schema", `{"type":"object","properties":{"q":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`, false, ""},
		{"a property named like a keyword is a property", `{"type":"object","properties":{"not":{"type":"string"},"if":{"type":"string"}}}`, true, ""},
		{"top level without type object", `{"properties":{"q":{"type":"string"}}}`, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := echoServer(t, completion("ok", "stop", ""))
			req := providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}},
				Tools: []providers.Tool{{Name: "t", Description: "d", Parameters: json.RawMessage(tc.params)}}}
			if _, err := newProvider(t, srv.URL).Complete(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			tools, _ := c.body["tools"].([]any)
			if len(tools) != 1 {
				t.Fatalf("tools %v, want one", c.body["tools"])
			}
			fn := tools[0].(map[string]any)["function"].(map[string]any)
			if got := fn["strict"] == true; got != tc.wantStrict {
				t.Errorf("strict = %v, want %v (parameters %v)", got, tc.wantStrict, fn["parameters"])
			}
			if tc.wantParams != "" {
				var want any
				if err := json.Unmarshal([]byte(tc.wantParams), &want); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, fn["parameters"]); diff != "" {
					t.Errorf("parameters (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestBadToolIsPermanentAndNotSent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tool providers.Tool
	}{
		{"parameters not JSON", providers.Tool{Name: "t", Parameters: json.RawMessage(`{"type":`)}},
		{"parameters not an object", providers.Tool{Name: "t", Parameters: json.RawMessage(`["a"]`)}},
		{"no name", providers.Tool{Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			hits := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				hits++
				mu.Unlock()
				io.WriteString(w, completion("ok", "stop", ""))
			}))
			defer srv.Close()
			_, err := newProvider(t, srv.URL).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}, Tools: []providers.Tool{tc.tool}})
			if c := providers.ClassOf(err); c != providers.ClassPermanent {
				t.Errorf("class %q (%v), want permanent", c, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if hits != 0 {
				t.Errorf("request sent %d times", hits)
			}
		})
	}
}

// toolAnswer is a chat completion whose message carries calls (content null).
func toolAnswer(finish string, calls []any, in, out int) string {
	b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish,
			"message": map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}}},
		"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}})
	return string(b)
}

func call(id, name, args string) map[string]any {
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
}

func TestToolCallsDecoded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		body       string
		want       []providers.ToolCall
		wantFinish string
	}{
		{"parallel calls keep their order and arguments verbatim",
			toolAnswer("tool_calls", []any{call("call_x", "list_dir", `{"path":"."}`), call("call_y", "grep", `{ "pattern" : "a\\s+b" }`), call("call_z", "read_file", `{"path":"a.go",`)}, 10, 5),
			[]providers.ToolCall{{ID: "call_x", Name: "list_dir", Arguments: `{"path":"."}`}, {ID: "call_y", Name: "grep", Arguments: `{ "pattern" : "a\\s+b" }`}, {ID: "call_z", Name: "read_file", Arguments: `{"path":"a.go",`}},
			providers.FinishToolCalls},
		{"a server that says stop with calls still means tool_calls",
			toolAnswer("stop", []any{call("c1", "glob", `{"pattern":"**/*.go"}`)}, 10, 5),
			[]providers.ToolCall{{ID: "c1", Name: "glob", Arguments: `{"pattern":"**/*.go"}`}},
			providers.FinishToolCalls},
		{"calls without ids get call_<index>",
			toolAnswer("tool_calls", []any{call("", "list_dir", `{"path":"."}`), call("", "glob", `{"pattern":"*"}`)}, 10, 5),
			[]providers.ToolCall{{ID: "call_0", Name: "list_dir", Arguments: `{"path":"."}`}, {ID: "call_1", Name: "glob", Arguments: `{"pattern":"*"}`}},
			providers.FinishToolCalls},
		{"a plain answer has no calls", completion(`{"a":"x"}`, "stop", ""), nil, providers.FinishStop},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := echoServer(t, tc.body)
			resp, err := newProvider(t, srv.URL).Complete(t.Context(), toolConversation)
			if err != nil {
				t.Fatalf("err %v: tool calls with empty content are an answer, not a failure", err)
			}
			if diff := cmp.Diff(tc.want, resp.ToolCalls); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			if resp.FinishReason != tc.wantFinish {
				t.Errorf("finish %q, want %q", resp.FinishReason, tc.wantFinish)
			}
			if tc.want != nil && resp.Text != "" {
				t.Errorf("text %q, want empty (content null)", resp.Text)
			}
		})
	}
}

func TestToolCallsCutOffAreTruncated(t *testing.T) {
	t.Parallel()
	srv, _ := echoServer(t, toolAnswer("length", []any{call("c1", "read_file", `{"path":"a`)}, 10, 5))
	_, err := newProvider(t, srv.URL).Complete(t.Context(), toolConversation)
	if !errors.Is(err, providers.ErrTruncated) {
		t.Errorf("err %v, want ErrTruncated: calls cut at the token limit are not to be run", err)
	}
}

// TestToolTurnsUsage runs a two-turn loop against one server: each
// response reports its own turn's usage, not a running total.
func TestToolTurnsUsage(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []map[string]any
	answers := []string{
		toolAnswer("tool_calls", []any{call("call_1", "grep", `{"pattern":"x"}`)}, 100, 20),
		completion(`{"a":"done"}`, "stop", ""), // 11 in, 7 out
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		mu.Lock()
		n := len(seen)
		seen = append(seen, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answers[min(n, len(answers)-1)])
	}))
	defer srv.Close()
	p := newProvider(t, srv.URL)
	req := providers.Request{Messages: []providers.Message{{Role: "user", Content: "go"}}, Tools: []providers.Tool{grepTool}, Schema: toolConversation.Schema}
	r1, err := p.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(r1.ToolCalls) != 1 {
		t.Fatalf("first turn %+v, want one tool call", r1)
	}
	req.Messages = append(req.Messages, providers.AssistantToolCalls(r1), providers.ToolResult(r1.ToolCalls[0], `{"ok":true,"matches":[]}`))
	r2, err := p.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]providers.Usage{{InputTokens: 100, OutputTokens: 20}, {InputTokens: 11, OutputTokens: 7}}, []providers.Usage{r1.Usage, r2.Usage}); diff != "" {
		t.Errorf("usage per turn (-want +got):\n%s", diff)
	}
	if r2.Text != `{"a":"done"}` || r2.FinishReason != providers.FinishStop || r2.ToolCalls != nil {
		t.Errorf("final turn %+v", r2)
	}
	mu.Lock()
	defer mu.Unlock()
	last := seen[1]["messages"].([]any)
	if got := last[2].(map[string]any); got["tool_call_id"] != "call_1" || got["role"] != "tool" {
		t.Errorf("tool result message %v", got)
	}
}
