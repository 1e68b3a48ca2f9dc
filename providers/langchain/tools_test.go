package langchain

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// readTools are two tools shaped like the workspace read tools.
var readTools = []providers.Tool{
	{Name: "list_dir", Description: "List a directory.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Directory, relative to the root."}},"required":["path"],"additionalProperties":false}`)},
	{Name: "grep", Description: "Search files.", Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"},"context":{"type":"integer"}},"required":["pattern"],"additionalProperties":false}`)},
}

// toolTurn is a conversation after one assistant turn that called two tools
// (with some text) and got both results, built the way the tool loop
// builds it.
func toolTurn() providers.Request {
	calls := providers.Response{Text: "Looking.", ToolCalls: []providers.ToolCall{
		{ID: "t1", Name: "list_dir", Arguments: `{"path":"."}`},
		{ID: "t2", Name: "grep", Arguments: `{"pattern":"token"}`},
	}}
	return providers.Request{
		Messages: []providers.Message{
			{Role: "system", Content: "You review code."},
			{Role: "user", Content: "Find the bug."},
			providers.AssistantToolCalls(calls),
			providers.ToolResult(calls.ToolCalls[0], `{"ok":true,"entries":[]}`),
			providers.ToolResult(calls.ToolCalls[1], `{"ok":true,"matches":[]}`),
		},
		Tools: readTools,
	}
}

// jsonOf decodes s (a test literal) to compare with a decoded request body.
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func schemaOf(t *testing.T, tl providers.Tool) any { return jsonOf(t, string(tl.Parameters)) }

func toolUse(id, name, input string) map[string]any {
	var in any
	_ = json.Unmarshal([]byte(input), &in)
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": in}
}

func anthropicToolMsg(stop string, blocks ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": blocks,
		"stop_reason": stop, "usage": map[string]any{"input_tokens": 90, "output_tokens": 20}})
	return string(b)
}

// anthropicTurnMessages is the Anthropic shape of toolTurn's messages: the
// assistant's text and both tool_use blocks in one assistant message, both
// tool_result blocks in the next user message.
func anthropicTurnMessages(t *testing.T) any {
	return jsonOf(t, `[
		{"role":"user","content":[{"type":"text","text":"Find the bug."}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Looking."},
			{"type":"tool_use","id":"t1","name":"list_dir","input":{"path":"."}},
			{"type":"tool_use","id":"t2","name":"grep","input":{"pattern":"token"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"t1","content":"{\"ok\":true,\"entries\":[]}"},
			{"type":"tool_result","tool_use_id":"t2","content":"{\"ok\":true,\"matches\":[]}"}]}]`)
}

func anthropicToolDefs(t *testing.T) any {
	var want []any
	for _, tl := range readTools {
		want = append(want, map[string]any{"name": tl.Name, "description": tl.Description, "input_schema": schemaOf(t, tl)})
	}
	return want
}

func TestAnthropicToolCalling(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	f := newFake(t, anthropicCheck,
		reply{body: anthropicToolMsg("tool_use", map[string]any{"type": "text", "text": "Reading it."}, toolUse("toolu_9", "grep", `{"pattern":"==","context":2}`))},
		reply{body: anthropicToolMsg("tool_use", toolUse("toolu_a", "list_dir", `{"path":"internal"}`), toolUse("toolu_b", "list_dir", `{"path":"cmd"}`))})
	p := newAnthropic(t, f, nil)
	resp, err := p.Complete(t.Context(), toolTurn())
	if err != nil {
		t.Fatal(err)
	}
	want := providers.Response{Text: "Reading it.", Model: "claude-test", FinishReason: providers.FinishToolCalls,
		Usage:     providers.Usage{InputTokens: 90, OutputTokens: 20},
		ToolCalls: []providers.ToolCall{{ID: "toolu_9", Name: "grep", Arguments: `{"context":2,"pattern":"=="}`}}}
	resp.Latency = 0
	if d := cmp.Diff(want, resp, cmp.AllowUnexported(providers.Response{})); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
	b := f.last().body
	if d := cmp.Diff(anthropicToolDefs(t), b["tools"]); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if d := cmp.Diff(anthropicTurnMessages(t), b["messages"]); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}

	// Parallel calls and no text: a tool turn, not an empty answer.
	resp, err = p.Complete(t.Context(), toolTurn())
	if err != nil {
		t.Fatalf("a tool-call turn without text: %v", err)
	}
	wantCalls := []providers.ToolCall{{ID: "toolu_a", Name: "list_dir", Arguments: `{"path":"internal"}`}, {ID: "toolu_b", Name: "list_dir", Arguments: `{"path":"cmd"}`}}
	if d := cmp.Diff(wantCalls, resp.ToolCalls); d != "" || resp.Text != "" || resp.FinishReason != providers.FinishToolCalls {
		t.Errorf("text %q finish %q calls (-want +got):\n%s", resp.Text, resp.FinishReason, d)
	}
}

// A tool turn cut at max_tokens is a truncation (ErrTruncated), not calls
// to run: the arguments of the last call may be cut short.
func TestAnthropicToolTurnCutOff(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	f := newFake(t, anthropicCheck, reply{body: anthropicToolMsg("max_tokens", toolUse("toolu_1", "read_file", `{"path":"a.go"}`))})
	_, err := newAnthropic(t, f, nil).Complete(t.Context(), toolTurn())
	if !errors.Is(err, providers.ErrTruncated) || providers.ClassOf(err) != providers.ClassUnparseable {
		t.Errorf("err = %v (class %q), want ErrTruncated", err, providers.ClassOf(err))
	}
}

// With a schema and tools, the schema instruction stays and says it is
// about the final answer; the tools are still offered.
func TestAnthropicToolsWithSchema(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	f := newFake(t, anthropicCheck, reply{body: anthropicMsg("end_turn", 50, 10, `{"name":"x","score":1}`)})
	req := toolTurn()
	req.Schema = &providers.Schema{Name: "out", JSON: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)}
	resp, err := newAnthropic(t, f, nil).Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != providers.FinishStop || resp.ToolCalls != nil {
		t.Errorf("an answer: finish %q calls %v", resp.FinishReason, resp.ToolCalls)
	}
	b := f.last().body
	sys := systemText(b["system"])
	if !strings.Contains(sys, "You review code.") || !strings.Contains(sys, `named "out"`) || !strings.HasSuffix(sys, providers.ToolsInstruction) {
		t.Errorf("system prompt:\n%s", sys)
	}
	if tools, _ := b["tools"].([]any); len(tools) != 2 {
		t.Errorf("tools %v, want both offered beside the schema", b["tools"])
	}
}

// A model that calls tools it was not offered: no calls reported, the text
// is the answer.
func TestAnthropicUnofferedToolCall(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	f := newFake(t, anthropicCheck, reply{body: anthropicToolMsg("tool_use", map[string]any{"type": "text", "text": "ok"}, toolUse("toolu_1", "grep", `{}`))})
	resp, err := newAnthropic(t, f, nil).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "ok" || resp.ToolCalls != nil || resp.FinishReason != providers.FinishStop {
		t.Errorf("response %+v", resp)
	}
	if _, ok := f.last().body["tools"]; ok {
		t.Errorf("tools sent though none were offered: %v", f.last().body["tools"])
	}
}

func TestBedrockToolCalling(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	bedrockEnv(t)
	f := newFake(t, bedrockCheck, reply{body: anthropicToolMsg("tool_use", toolUse("toolu_7", "read_file", `{"path":"main.go"}`))})
	resp, err := newBedrock(t, f).Complete(t.Context(), toolTurn())
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []providers.ToolCall{{ID: "toolu_7", Name: "read_file", Arguments: `{"path":"main.go"}`}}
	if d := cmp.Diff(wantCalls, resp.ToolCalls); d != "" || resp.FinishReason != providers.FinishToolCalls || resp.Text != "" {
		t.Errorf("text %q finish %q calls (-want +got):\n%s", resp.Text, resp.FinishReason, d)
	}
	b := f.last().body
	if d := cmp.Diff(anthropicToolDefs(t), b["tools"]); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if d := cmp.Diff(anthropicTurnMessages(t), b["messages"]); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
}

// Bedrock model families whose langchaingo adapter cannot call tools refuse
// a request that offers them, before any request is made. (mistral and
// ollama-native call tools over the OpenAI wire: wire_tools_test.go.)
func TestToolsUnsupported(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	bedrockEnv(t)
	tests := []struct {
		name  string
		build func(t *testing.T, f *fake) providers.Provider
		hint  string
	}{
		{"bedrock meta model: only Anthropic models get tools", func(t *testing.T, f *fake) providers.Provider {
			p, err := New(providers.Ref{Kind: "bedrock", Model: "meta.llama3-70b-instruct-v1:0"}, providers.KindConfig{BaseURL: f.srv.URL, Options: map[string]string{"region": "us-west-2"}})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}, `"meta" models`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, nil, reply{status: 500})
			_, err := tc.build(t, f).Complete(t.Context(), toolTurn())
			if providers.ClassOf(err) != providers.ClassPermanent || !errors.Is(err, ErrToolsUnsupported) ||
				!strings.Contains(err.Error(), "does not support tool calling") || !strings.Contains(err.Error(), tc.hint) {
				t.Errorf("err = %v (class %q), want a permanent ErrToolsUnsupported naming %s", err, providers.ClassOf(err), tc.hint)
			}
			if f.calls() != 0 {
				t.Errorf("%d requests sent", f.calls())
			}
		})
	}
}

func TestBadToolParameters(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	f := newFake(t, anthropicCheck, reply{body: anthropicMsg("end_turn", 1, 1, "x")})
	req := toolTurn()
	req.Tools = []providers.Tool{{Name: "broken", Parameters: json.RawMessage(`[1,2]`)}}
	_, err := newAnthropic(t, f, nil).Complete(t.Context(), req)
	if providers.ClassOf(err) != providers.ClassPermanent || !strings.Contains(err.Error(), "tools[0] (broken)") || f.calls() != 0 {
		t.Errorf("err = %v after %d requests, want a permanent error naming tools[0] (broken) before any request", err, f.calls())
	}
}

func TestJoinTurns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string // want "" = left as it is
	}{
		{"alternating turns are left as they are", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}],"model":"m"}`, ""},
		{"consecutive user turns join, string content becomes a text block",
			`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"1","content":"r"}]},{"role":"user","content":"more"}],"model":"m"}`,
			`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"1","content":"r"},{"type":"text","text":"more"}]}],"model":"m"}`},
		{"not a messages body", `{"prompt":"x"}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := joinTurns([]byte(tc.in))
			if tc.want == "" {
				if ok {
					t.Errorf("rewritten to %s", got)
				}
				return
			}
			if !ok {
				t.Fatal("not rewritten")
			}
			if d := cmp.Diff(jsonOf(t, tc.want), jsonOf(t, string(got))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// The tool loop's last turn offers no tools but carries the earlier calls
// and results: they go as text (Anthropic and Bedrock refuse tool_use and
// tool_result blocks in a request without tools), the results of one turn
// in one user message.
func TestToolHistoryWithoutTools(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	f := newFake(t, anthropicCheck, reply{body: anthropicMsg("end_turn", 50, 10, `{"name":"x","score":1}`)})
	req := toolTurn()
	req.Tools = nil
	if _, err := newAnthropic(t, f, nil).Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	b := f.last().body
	if _, ok := b["tools"]; ok {
		t.Errorf("tools sent: %v", b["tools"])
	}
	want := jsonOf(t, `[
		{"role":"user","content":[{"type":"text","text":"Find the bug."}]},
		{"role":"assistant","content":[{"type":"text","text":"Looking.\n[tool call list_dir (id t1): {\"path\":\".\"}]\n[tool call grep (id t2): {\"pattern\":\"token\"}]"}]},
		{"role":"user","content":[{"type":"text","text":"[tool result of list_dir (id t1)]\n{\"ok\":true,\"entries\":[]}\n\n[tool result of grep (id t2)]\n{\"ok\":true,\"matches\":[]}"}]}]`)
	if d := cmp.Diff(want, b["messages"]); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
}
