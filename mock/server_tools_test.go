package mock

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/openai"
)

// recorder is a provider behind the server that records every request it
// is given and answers with answer(req).
type recorder struct {
	mu     sync.Mutex
	seen   []providers.Request
	answer func(providers.Request) providers.Response
}

func (r *recorder) Complete(_ context.Context, req providers.Request) (providers.Response, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req)
	r.mu.Unlock()
	return r.answer(req), nil
}

func (r *recorder) requests() []providers.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]providers.Request(nil), r.seen...)
}

func stubServer(t *testing.T, rec *recorder) *httptest.Server {
	t.Helper()
	h, err := newServer(ServerOptions{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
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
	return resp.StatusCode, b
}

// secondTurn is an SDK-shaped request after one parallel tool turn: the
// assistant message has content null and two calls, each answered.
const secondTurn = `{"model":"honest","messages":[
 {"role":"user","content":"find the bug"},
 {"role":"assistant","content":null,"tool_calls":[
   {"id":"call_0_0","type":"function","function":{"name":"list_dir","arguments":"{\"path\":\".\"}"}},
   {"id":"call_0_1","type":"function","function":{"name":"grep","arguments":"{\"pattern\":\"token\"}"}}]},
 {"role":"tool","tool_call_id":"call_0_0","content":"{\"ok\":true,\"entries\":[]}"},
 {"role":"tool","tool_call_id":"call_0_1","content":[{"type":"text","text":"{\"ok\":true,\"matches\":[]}"}]}],
 "tools":[
   {"type":"function","function":{"name":"list_dir","description":"List a directory.","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
   {"type":"function","function":{"name":"grep","parameters":{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}}}],
 "parallel_tool_calls":true,"tool_choice":"auto"}`

func TestServerMapsToolRequests(t *testing.T) {
	t.Parallel()
	rec := &recorder{answer: func(providers.Request) providers.Response { return providers.Response{Text: "ok"} }}
	srv := stubServer(t, rec)
	if status, b := post(t, srv.URL, secondTurn); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, b)
	}
	got := rec.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests reached the provider, want 1", len(got))
	}
	wantMsgs := []providers.Message{
		{Role: "user", Content: "find the bug"},
		{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "call_0_0", Name: "list_dir", Arguments: `{"path":"."}`}, {ID: "call_0_1", Name: "grep", Arguments: `{"pattern":"token"}`}}},
		{Role: "tool", Content: `{"ok":true,"entries":[]}`, ToolCallID: "call_0_0", ToolName: "list_dir"},
		{Role: "tool", Content: `{"ok":true,"matches":[]}`, ToolCallID: "call_0_1", ToolName: "grep"},
	}
	if diff := cmp.Diff(wantMsgs, got[0].Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	var names []string
	for _, tl := range got[0].Tools {
		names = append(names, tl.Name+": "+tl.Description+" "+string(tl.Parameters))
	}
	wantTools := []string{
		`list_dir: List a directory. {"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		`grep:  {"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`,
	}
	if diff := cmp.Diff(wantTools, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	// tool_choice none withholds the tools, as OpenAI's does.
	none := strings.Replace(secondTurn, `"tool_choice":"auto"`, `"tool_choice":"none"`, 1)
	if status, b := post(t, srv.URL, none); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, b)
	}
	if got := rec.requests(); len(got) != 2 || got[1].Tools != nil {
		t.Errorf("tool_choice none: tools %v reached the provider", got[len(got)-1].Tools)
	}
}

func TestServerRefusesBadToolInput(t *testing.T) {
	t.Parallel()
	user := `{"role":"user","content":"x"}`
	tests := []struct {
		name     string
		body     string
		wantCode string
		wantMsg  string // part of the error message: the field it names
	}{
		{"tool type other than function", `{"messages":[` + user + `],"tools":[{"type":"code_interpreter"}]}`, "invalid_tools", `tools[0].type "code_interpreter"`},
		{"tool without a name", `{"messages":[` + user + `],"tools":[{"type":"function","function":{"parameters":{"type":"object"}}}]}`, "invalid_tools", "tools[0].function.name is required"},
		{"parameters not an object", `{"messages":[` + user + `],"tools":[{"type":"function","function":{"name":"a","parameters":"x"}}]}`, "invalid_tools", "tools[0].function.parameters must be a JSON schema object"},
		{"parameters not a schema", `{"messages":[` + user + `],"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"nonsense"}}}]}`, "invalid_tools", "tools[0].function.parameters"},
		{"tool result answering no call", `{"messages":[` + user + `,{"role":"tool","tool_call_id":"call_9","content":"{}"}]}`, "invalid_tool_calls", `messages[1].tool_call_id "call_9" answers no tool call`},
		{"tool result before its call", `{"messages":[` + user + `,{"role":"tool","tool_call_id":"c","content":"{}"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"a","arguments":"{}"}}]}]}`, "invalid_tool_calls", `messages[1].tool_call_id "c"`},
		{"tool calls on a user message", `{"messages":[{"role":"user","content":"x","tool_calls":[{"id":"c","type":"function","function":{"name":"a","arguments":"{}"}}]}]}`, "invalid_tool_calls", "messages[0].tool_calls: only assistant messages"},
		{"tool call without an id", `{"messages":[` + user + `,{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"a","arguments":"{}"}}]}]}`, "invalid_tool_calls", "messages[1].tool_calls[0]: id and function.name are required"},
		{"bad content keeps its code", `{"messages":[{"role":"user","content":42}]}`, "invalid_content", "messages[0].content"},
	}
	rec := &recorder{answer: func(providers.Request) providers.Response { return providers.Response{Text: "ok"} }}
	srv := stubServer(t, rec)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, b := post(t, srv.URL, tc.body)
			var out struct {
				Error struct{ Message, Type, Code string }
			}
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatalf("body is not JSON: %s", b)
			}
			if status != http.StatusBadRequest || out.Error.Code != tc.wantCode || !strings.Contains(out.Error.Message, tc.wantMsg) {
				t.Errorf("status %d error %+v, want 400 %s naming %q", status, out.Error, tc.wantCode, tc.wantMsg)
			}
		})
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("%d bad requests reached the provider", n)
	}
}

func TestServerWritesToolCalls(t *testing.T) {
	t.Parallel()
	calls := []providers.ToolCall{{ID: "call_1_0", Name: "read_file", Arguments: `{"path":"a.go","start_line":3}`}, {Name: "grep", Arguments: `{"pattern":"x"}`}}
	rec := &recorder{answer: func(providers.Request) providers.Response {
		return providers.Response{ToolCalls: calls, FinishReason: providers.FinishToolCalls}
	}}
	srv := stubServer(t, rec)
	wantCalls := []any{
		map[string]any{"id": "call_1_0", "type": "function", "function": map[string]any{"name": "read_file", "arguments": `{"path":"a.go","start_line":3}`}},
		map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "grep", "arguments": `{"pattern":"x"}`}},
	}
	t.Run("json", func(t *testing.T) {
		status, b := post(t, srv.URL, secondTurn)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil || status != http.StatusOK {
			t.Fatalf("status %d body %s", status, b)
		}
		ch := out["choices"].([]any)[0].(map[string]any)
		msg := ch["message"].(map[string]any)
		if c, has := msg["content"]; !has || c != nil {
			t.Errorf("content = %v (present %v), want null", c, has)
		}
		if ch["finish_reason"] != "tool_calls" {
			t.Errorf("finish_reason %v", ch["finish_reason"])
		}
		if diff := cmp.Diff(wantCalls, msg["tool_calls"]); diff != "" {
			t.Errorf("tool_calls (-want +got):\n%s", diff)
		}
		if u := out["usage"].(map[string]any); u["completion_tokens"].(float64) < 2 {
			t.Errorf("usage %v: the calls' arguments are output", u)
		}
	})
	t.Run("stream", func(t *testing.T) {
		stream := strings.Replace(secondTurn, `"parallel_tool_calls":true`, `"stream":true`, 1)
		status, b := post(t, srv.URL, stream)
		if status != http.StatusOK {
			t.Fatalf("status %d body %s", status, b)
		}
		var deltas []any
		var finishes []any
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var c map[string]any
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatalf("chunk %q: %v", data, err)
			}
			for _, ch := range c["choices"].([]any) {
				ch := ch.(map[string]any)
				if d := ch["delta"].(map[string]any); d["tool_calls"] != nil {
					deltas = append(deltas, d["tool_calls"].([]any)...)
				}
				finishes = append(finishes, ch["finish_reason"])
			}
		}
		for i, w := range wantCalls {
			w.(map[string]any)["index"] = float64(i)
		}
		if diff := cmp.Diff(wantCalls, deltas); diff != "" {
			t.Errorf("streamed tool_calls (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]any{nil, "tool_calls"}, finishes); diff != "" {
			t.Errorf("finish reasons (-want +got):\n%s", diff)
		}
	})
}

// finalSchema is the answer the model gives once it stops calling tools.
var finalSchema = json.RawMessage(`{"type":"object","properties":{"finding":{"type":"string"},"path":{"type":"string"},"line":{"type":"integer","minimum":1}},"required":["finding","path","line"],"additionalProperties":false}`)

// toolPlan answers like a model working through two tool turns: two
// parallel calls, then one read, then the final answer built from what the
// tool results said. The turn is the number of assistant messages with
// tool calls already in the conversation.
func toolPlan(req providers.Request) providers.Response {
	turn, lastResult := 0, ""
	for _, m := range req.Messages {
		if len(m.ToolCalls) > 0 {
			turn++
		}
		if m.Role == providers.RoleTool {
			lastResult = m.Content
		}
	}
	u := providers.Usage{InputTokens: 100 * (turn + 1), OutputTokens: 10 + turn}
	switch {
	case len(req.Tools) > 0 && turn == 0:
		return providers.Response{Usage: u, FinishReason: providers.FinishToolCalls, ToolCalls: []providers.ToolCall{
			{ID: "call_0_0", Name: "list_dir", Arguments: `{"path":"."}`},
			{ID: "call_0_1", Name: "grep", Arguments: `{"pattern":"token =="}`},
		}}
	case len(req.Tools) > 0 && turn == 1:
		return providers.Response{Usage: u, FinishReason: providers.FinishToolCalls, ToolCalls: []providers.ToolCall{
			{ID: "call_1_0", Name: "read_file", Arguments: `{"path":"auth.go","start_line":12,"end_line":12}`},
		}}
	}
	var read struct{ Path, Content string }
	_ = json.Unmarshal([]byte(lastResult), &read)
	b, _ := json.Marshal(map[string]any{"finding": "token compared with == : " + read.Content, "path": read.Path, "line": 12})
	return providers.Response{Text: string(b), Usage: u, FinishReason: providers.FinishStop}
}

// runTool is the caller's side: a stub workspace answering each call.
func runTool(c providers.ToolCall) string {
	switch c.Name {
	case "list_dir":
		return `{"ok":true,"path":".","entries":[{"name":"auth.go","type":"file","size":300}],"truncated":false}`
	case "grep":
		return `{"ok":true,"pattern":"token ==","matches":[{"path":"auth.go","line":12,"text":"if token == want {"}],"truncated":false}`
	case "read_file":
		return `{"ok":true,"path":"auth.go","start_line":12,"end_line":12,"total_lines":30,"truncated":false,"content":"12\tif token == want {"}`
	}
	return `{"ok":false,"refusal":"bad_arguments","error":"unknown tool"}`
}

// TestOpenAIAdapterToolLoopThroughServer runs the real openai adapter
// (kind openai-compatible) against the server over HTTP for two tool turns
// and a final structured answer.
func TestOpenAIAdapterToolLoopThroughServer(t *testing.T) {
	t.Parallel()
	rec := &recorder{answer: toolPlan}
	srv := stubServer(t, rec)
	p, err := openai.New(providers.Ref{Kind: "openai-compatible", Model: "mock-honest"}, providers.KindConfig{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	tools := []providers.Tool{
		{Name: "list_dir", Description: "List a directory.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "grep", Description: "Search.", Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"},"path_glob":{"type":"string"}},"required":["pattern"],"additionalProperties":false}`)},
		{Name: "read_file", Description: "Read lines.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"start_line":{"type":"integer","minimum":1},"end_line":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`)},
	}
	req := providers.Request{
		Messages: []providers.Message{{Role: "system", Content: "You review code."}, {Role: "user", Content: "Find the session bug."}},
		Tools:    tools,
		Schema:   &providers.Schema{Name: "finding", JSON: finalSchema},
	}
	var usages []providers.Usage
	var finishes []string
	var final providers.Response
	for turn := 0; ; turn++ {
		if turn > 3 {
			t.Fatal("no final answer after 3 tool turns")
		}
		resp, err := p.Complete(t.Context(), req)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		usages, finishes = append(usages, resp.Usage), append(finishes, resp.FinishReason)
		if len(resp.ToolCalls) == 0 {
			final = resp
			break
		}
		req.Messages = append(req.Messages, providers.AssistantToolCalls(resp))
		for _, c := range resp.ToolCalls {
			req.Messages = append(req.Messages, providers.ToolResult(c, runTool(c)))
		}
	}

	if diff := cmp.Diff([]string{"tool_calls", "tool_calls", "stop"}, finishes); diff != "" {
		t.Errorf("finish reasons (-want +got):\n%s", diff)
	}
	// Each turn reports its own output tokens (the server computes input
	// tokens from the request itself).
	var outs []int
	for _, u := range usages {
		outs = append(outs, u.OutputTokens)
	}
	if diff := cmp.Diff([]int{10, 11, 12}, outs); diff != "" {
		t.Errorf("output tokens per turn (-want +got):\n%s", diff)
	}
	v, err := providers.CompileSchema(finalSchema)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate([]byte(final.Text)); err != nil {
		t.Errorf("final answer %s does not validate: %v", final.Text, err)
	}
	if !strings.Contains(final.Text, `"path":"auth.go"`) || !strings.Contains(final.Text, "if token == want") {
		t.Errorf("final answer %s is not built from the tool results", final.Text)
	}

	// What the server passed to the provider, turn by turn.
	seen := rec.requests()
	if len(seen) != 3 {
		t.Fatalf("server saw %d requests, want 3", len(seen))
	}
	type turnView struct {
		Tools    []string
		Schema   string
		Messages []string
	}
	view := func(r providers.Request) turnView {
		var v turnView
		for _, tl := range r.Tools {
			v.Tools = append(v.Tools, tl.Name)
		}
		if r.Schema != nil {
			v.Schema = r.Schema.Name
		}
		for _, m := range r.Messages {
			s := m.Role
			for _, c := range m.ToolCalls {
				s += fmt.Sprintf(" call %s %s %s", c.ID, c.Name, c.Arguments)
			}
			if m.Role == providers.RoleTool {
				s += fmt.Sprintf(" result %s %s ok=%v", m.ToolCallID, m.ToolName, strings.Contains(m.Content, `"ok":true`))
			}
			v.Messages = append(v.Messages, s)
		}
		return v
	}
	base := []string{"system", "user"}
	turn1 := append(append([]string{}, base...),
		`assistant call call_0_0 list_dir {"path":"."} call call_0_1 grep {"pattern":"token =="}`,
		"tool result call_0_0 list_dir ok=true",
		"tool result call_0_1 grep ok=true")
	turn2 := append(append([]string{}, turn1...),
		`assistant call call_1_0 read_file {"path":"auth.go","start_line":12,"end_line":12}`,
		"tool result call_1_0 read_file ok=true")
	names := []string{"list_dir", "grep", "read_file"}
	want := []turnView{{names, "finding", base}, {names, "finding", turn1}, {names, "finding", turn2}}
	var got []turnView
	for _, r := range seen {
		got = append(got, view(r))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests the server saw (-want +got):\n%s", diff)
	}
	// The adapter sent the tools in strict mode: grep's optional path_glob
	// arrives as nullable, the schema the model is bound by.
	var grep map[string]any
	if err := json.Unmarshal(seen[0].Tools[1].Parameters, &grep); err != nil {
		t.Fatal(err)
	}
	wantGlob := map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "null"}}}
	if diff := cmp.Diff(wantGlob, grep["properties"].(map[string]any)["path_glob"]); diff != "" {
		t.Errorf("grep path_glob as the server saw it (-want +got):\n%s", diff)
	}
}
