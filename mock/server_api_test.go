package mock_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/providers"
)

// What `swarm mock serve` does with the parts of OpenAI's chat API that
// clients other than swarm use: tool_choice, parallel_tool_calls, tools of
// their own, n, GET /v1/models/{id} and requests the official API refuses.

// clientTools are tools no persona plans for, as an SDK user offers them.
const clientTools = `[
 {"type":"function","function":{"name":"get_weather","description":"Weather in a city.","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city","unit"],"additionalProperties":false}}},
 {"type":"function","function":{"name":"lookup_order","parameters":{"type":"object","properties":{"order_id":{"type":"string","pattern":"^ord_[0-9]{4}$"},"include":{"type":"array","items":{"type":"string","enum":["items","shipping"]},"minItems":1}},"required":["order_id"]}}},
 {"type":"function","function":{"name":"ping"}}]`

// clientSchemas are the parameters of clientTools by name (ping has none).
var clientSchemas = map[string]string{}

func init() {
	var ts []struct {
		Function struct {
			Name       string
			Parameters json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(clientTools), &ts); err != nil {
		panic(err)
	}
	for _, t := range ts {
		clientSchemas[t.Function.Name] = string(t.Function.Parameters)
	}
}

// afterCalls is a conversation whose model already called get_weather and
// got its result: under tool_choice auto the model answers now.
const afterCalls = `{"role":"user","content":"Weather in Oslo?"},
 {"role":"assistant","content":null,"tool_calls":[{"id":"call_0_0","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\",\"unit\":\"celsius\"}"}}]},
 {"role":"tool","tool_call_id":"call_0_0","content":"{\"temp\":3}"}`

type gotCall struct{ Name, Args string }

// answer is the part of a chat completion the tests compare.
type answer struct {
	Status  int
	Finish  string
	Content string
	Calls   []gotCall
}

func chatAnswer(t *testing.T, url, body string) (answer, map[string]any) {
	t.Helper()
	st, _, out := do(t, http.MethodPost, url+"/v1/chat/completions", body)
	a := answer{Status: st}
	if st != http.StatusOK {
		return a, out
	}
	ch := out["choices"].([]any)[0].(map[string]any)
	a.Finish = ch["finish_reason"].(string)
	msg := ch["message"].(map[string]any)
	a.Content, _ = msg["content"].(string)
	tcs, _ := msg["tool_calls"].([]any)
	for _, tc := range tcs {
		f := tc.(map[string]any)["function"].(map[string]any)
		a.Calls = append(a.Calls, gotCall{f["name"].(string), f["arguments"].(string)})
	}
	return a, out
}

// checkArgs fails unless every call's arguments validate against its tool's parameters.
func checkArgs(t *testing.T, calls []gotCall, schemas map[string]string) {
	t.Helper()
	for _, c := range calls {
		s := schemas[c.Name]
		if s == "" {
			if c.Args != "{}" {
				t.Errorf("%s takes no parameters, called with %s", c.Name, c.Args)
			}
			continue
		}
		v, err := providers.CompileSchema(json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Validate([]byte(c.Args)); err != nil {
			t.Errorf("%s(%s) does not validate against its parameters: %v", c.Name, c.Args, err)
		}
	}
}

func names(calls []gotCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Name)
	}
	return out
}

func TestServerToolChoice(t *testing.T) {
	// Serial: fills the package's clientSchemas map.
	srv := hardenedServer(t, mock.ServerOptions{})
	first := `{"role":"user","content":"Weather in Oslo, and where is order ord_1234?"}`
	workspaceTools := `[{"type":"function","function":{"name":"list_dir","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
	 {"type":"function","function":{"name":"grep","parameters":{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}}}]`
	brief := `{"role":"user","content":"<untrusted kind=\"brief\" nonce=\"ab12\">\nReview the session token check.\n</untrusted kind=\"brief\" nonce=\"ab12\">"}`
	atom := `"response_format":{"type":"json_schema","json_schema":{"name":"atom","schema":{"type":"object","properties":{"status":{"type":"string"}},"required":["status"]}}}`
	tests := []struct {
		name string
		body string
		// wantCalls: the tools called, in order; nil: the answer is text
		// (finish stop).
		wantCalls []string
	}{
		{"auto calls the client's tools on the user's turn (it called only swarm's workspace tools)",
			`{"model":"honest","seed":1,"messages":[` + first + `],"tools":` + clientTools + `}`, []string{"lookup_order", "ping"}},
		{"auto answers once the results are in",
			`{"model":"honest","seed":1,"messages":[` + afterCalls + `],"tools":` + clientTools + `,"tool_choice":"auto"}`, nil},
		{"none never calls",
			`{"model":"honest","seed":1,"messages":[` + first + `],"tools":` + clientTools + `,"tool_choice":"none"}`, nil},
		{"required calls even after the results (it answered text)",
			`{"model":"honest","seed":1,"messages":[` + afterCalls + `],"tools":` + clientTools + `,"tool_choice":"required"}`, []string{"lookup_order", "ping"}},
		{"a named function is the one call (it called what the persona chose)",
			`{"model":"honest","seed":1,"messages":[` + first + `],"tools":` + clientTools + `,"tool_choice":{"type":"function","function":{"name":"lookup_order"}}}`, []string{"lookup_order"}},
		{"a named function after the results still calls it",
			`{"model":"honest","seed":1,"messages":[` + afterCalls + `],"tools":` + clientTools + `,"tool_choice":{"type":"function","function":{"name":"get_weather"}}}`, []string{"get_weather"}},
		{"parallel_tool_calls false keeps one call (it made two)",
			`{"model":"honest","seed":1,"messages":[` + first + `],"tools":` + clientTools + `,"parallel_tool_calls":false}`, []string{"lookup_order"}},
		{"required with parallel_tool_calls false makes one",
			`{"model":"honest","seed":1,"messages":[` + afterCalls + `],"tools":` + clientTools + `,"tool_choice":"required","parallel_tool_calls":false}`, []string{"lookup_order"}},
		{"the honest plan over the workspace tools is kept as it was",
			`{"model":"honest","seed":1,"messages":[` + brief + `],"tools":` + workspaceTools + `,` + atom + `}`, []string{"list_dir", "grep"}},
		{"parallel_tool_calls false cuts the honest plan to its first call (it sent both)",
			`{"model":"honest","seed":1,"messages":[` + brief + `],"tools":` + workspaceTools + `,` + atom + `,"parallel_tool_calls":false}`, []string{"list_dir"}},
		{"required makes the deceptive persona, which never reads, call a tool",
			`{"model":"deceptive","seed":1,"messages":[` + brief + `],"tools":` + workspaceTools + `,` + atom + `,"tool_choice":"required"}`, []string{"list_dir", "grep"}},
		{"a named workspace tool keeps only the persona's call to it",
			`{"model":"honest","seed":1,"messages":[` + brief + `],"tools":` + workspaceTools + `,` + atom + `,"tool_choice":{"type":"function","function":{"name":"grep"}}}`, []string{"grep"}},
	}
	schemas := map[string]string{"list_dir": `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`, "grep": `{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`}
	for k, v := range clientSchemas {
		schemas[k] = v
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, out := chatAnswer(t, srv.URL, tc.body)
			if got.Status != http.StatusOK {
				t.Fatalf("status %d: %v", got.Status, out)
			}
			wantFinish := "stop"
			if tc.wantCalls != nil {
				wantFinish = "tool_calls"
			}
			if diff := cmp.Diff([]any{wantFinish, tc.wantCalls}, []any{got.Finish, names(got.Calls)}); diff != "" {
				t.Errorf("finish and calls (-want +got):\n%s", diff)
			}
			if tc.wantCalls == nil && got.Content == "" {
				t.Error("an answer without calls has no content")
			}
			if tc.wantCalls != nil && got.Content != "" {
				t.Errorf("a tool-call answer has content %q", got.Content)
			}
			checkArgs(t, got.Calls, schemas)
			again, _ := chatAnswer(t, srv.URL, tc.body)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("the same request answered differently (-first +second):\n%s", diff)
			}
		})
	}
}

func TestServerRefusesBadToolChoice(t *testing.T) {
	t.Parallel()
	srv := hardenedServer(t, mock.ServerOptions{})
	user := `{"role":"user","content":"x"}`
	tests := []struct {
		name, body, wantParam, wantMsg string
	}{
		{"a named function that is not offered", `{"messages":[` + user + `],"tools":` + clientTools + `,"tool_choice":{"type":"function","function":{"name":"delete_everything"}}}`,
			"tool_choice", `"delete_everything", which is not among the tools`},
		{"required with no tools", `{"messages":[` + user + `],"tool_choice":"required"}`, "tool_choice", "only allowed when tools are given"},
		{"a named function with no tools", `{"messages":[` + user + `],"tool_choice":{"type":"function","function":{"name":"ping"}}}`, "tool_choice", "only allowed when tools are given"},
		{"an unknown mode", `{"messages":[` + user + `],"tools":` + clientTools + `,"tool_choice":"always"}`, "tool_choice", `tool_choice "always"`},
		{"a choice of another type", `{"messages":[` + user + `],"tools":` + clientTools + `,"tool_choice":{"type":"file_search"}}`, "tool_choice.type", `"file_search"`},
		{"a named function without its name", `{"messages":[` + user + `],"tools":` + clientTools + `,"tool_choice":{"type":"function","function":{}}}`, "tool_choice.function.name", "is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, _, out := do(t, http.MethodPost, srv.URL+"/v1/chat/completions", tc.body)
			e, _ := out["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if st != http.StatusBadRequest || e["type"] != "invalid_request_error" || e["param"] != tc.wantParam || !strings.Contains(msg, tc.wantMsg) {
				t.Errorf("status %d error %v, want 400 invalid_request_error, param %s, naming %q", st, e, tc.wantParam, tc.wantMsg)
			}
		})
	}
}

func TestServerCallsAnyOfferedTool(t *testing.T) {
	// Serial: fills the package's clientSchemas map.
	srv := hardenedServer(t, mock.ServerOptions{})
	tests := []struct {
		name   string
		schema string
	}{
		{"required properties, enums and bounds", clientSchemas["get_weather"]},
		{"a pattern and an array of enums", clientSchemas["lookup_order"]},
		{"nested objects and nullable types (strict mode)",
			`{"type":"object","properties":{"filter":{"type":"object","properties":{"status":{"type":["string","null"],"enum":["open","closed",null]},"limit":{"type":["integer","null"]}},"required":["status","limit"],"additionalProperties":false}},"required":["filter"],"additionalProperties":false}`},
		{"$defs and $ref, as pydantic and zod write them",
			`{"type":"object","properties":{"address":{"$ref":"#/$defs/Address"}},"required":["address"],"$defs":{"Address":{"type":"object","properties":{"zip":{"type":"string","pattern":"^[0-9]{5}$"},"country":{"const":"NO"}},"required":["zip","country"]}}}`},
		{"allOf parts merged",
			`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"boolean"}},"required":["b"]}]}`},
		{"formats and exclusive bounds",
			`{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"email":{"type":"string","format":"email"},"ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},"count":{"type":"integer","exclusiveMinimum":10}},"required":["when","email","ratio","count"]}`},
		{"string lengths", `{"type":"object","properties":{"code":{"type":"string","minLength":12,"maxLength":12}},"required":["code"]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"model":"honest","messages":[{"role":"user","content":"Do the thing for Oslo."}],"tools":[{"type":"function","function":{"name":"act","parameters":` + tc.schema + `}}]}`
			got, out := chatAnswer(t, srv.URL, body)
			if got.Status != http.StatusOK || len(got.Calls) != 1 {
				t.Fatalf("status %d, calls %v: %v", got.Status, got.Calls, out)
			}
			checkArgs(t, got.Calls, map[string]string{"act": tc.schema})
		})
	}

	// The tool called is chosen by the request: over seeds, each of the
	// offered tools comes first at least once.
	first := map[string]bool{}
	for seed := range 12 {
		got, out := chatAnswer(t, srv.URL, fmt.Sprintf(`{"model":"honest","seed":%d,"messages":[{"role":"user","content":"Go."}],"tools":%s,"parallel_tool_calls":false}`, seed, clientTools))
		if len(got.Calls) != 1 {
			t.Fatalf("seed %d: calls %v: %v", seed, got.Calls, out)
		}
		first[got.Calls[0].Name] = true
	}
	if diff := cmp.Diff(map[string]bool{"get_weather": true, "lookup_order": true, "ping": true}, first); diff != "" {
		t.Errorf("tools chosen over 12 seeds (-want +got):\n%s", diff)
	}

	// A schema the mock cannot satisfy is refused, naming the tool, rather
	// than answered with arguments that do not validate.
	st, _, out := do(t, http.MethodPost, srv.URL+"/v1/chat/completions",
		`{"model":"honest","messages":[{"role":"user","content":"Go."}],"tools":[{"type":"function","function":{"name":"odd","parameters":{"type":"object","properties":{"n":{"type":"integer","multipleOf":7,"minimum":1,"maximum":6}},"required":["n"]}}}]}`)
	e, _ := out["error"].(map[string]any)
	if msg, _ := e["message"].(string); st != http.StatusBadRequest || e["code"] != "invalid_schema" || !strings.Contains(msg, `"odd"`) {
		t.Errorf("unsatisfiable parameters: status %d %v, want 400 invalid_schema naming odd", st, out)
	}
}

func TestMockCallsClientToolsInProcess(t *testing.T) {
	// Serial: fills the package's clientSchemas map.
	// The in-process mock makes the same calls as its server: a
	// providers.Request offering a client's tools gets them called once per
	// user turn.
	m, err := mock.New(mock.Honest, mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tool := providers.Tool{Name: "get_weather", Parameters: json.RawMessage(clientSchemas["get_weather"])}
	req := providers.Request{Messages: []providers.Message{{Role: "user", Content: "Weather in Oslo?"}}, Tools: []providers.Tool{tool}}
	resp, err := m.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "get_weather" || resp.FinishReason != providers.FinishToolCalls {
		t.Fatalf("first turn: %+v, want one get_weather call", resp)
	}
	checkArgs(t, []gotCall{{resp.ToolCalls[0].Name, resp.ToolCalls[0].Arguments}}, clientSchemas)
	req.Messages = append(req.Messages, providers.AssistantToolCalls(resp), providers.ToolResult(resp.ToolCalls[0], `{"temp":3}`))
	resp, err = m.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 0 || resp.Text == "" {
		t.Errorf("after the result: %+v, want a text answer", resp)
	}
}

func TestServerNChoices(t *testing.T) {
	t.Parallel()
	srv := hardenedServer(t, mock.ServerOptions{})
	schema := `{"type":"object","properties":{"score":{"type":"integer","minimum":0,"maximum":1000000},"word":{"type":"string"}},"required":["score","word"]}`
	body := func(n string) string {
		return `{"model":"honest","seed":5,` + n + `"messages":[{"role":"user","content":"Rate the token rotation design."}],"response_format":{"type":"json_schema","json_schema":{"name":"rating","schema":` + schema + `}}}`
	}
	st, _, one := do(t, http.MethodPost, srv.URL+"/v1/chat/completions", body(""))
	if st != 200 {
		t.Fatalf("n unset: status %d %v", st, one)
	}
	st, _, three := do(t, http.MethodPost, srv.URL+"/v1/chat/completions", body(`"n":3,`))
	if st != 200 {
		t.Fatalf("n 3: status %d %v", st, three)
	}
	content := func(ch any) string { return ch.(map[string]any)["message"].(map[string]any)["content"].(string) }
	chs := three["choices"].([]any)
	if len(chs) != 3 {
		t.Fatalf("%d choices, want 3", len(chs))
	}
	seen := map[string]bool{}
	for i, ch := range chs {
		if idx := ch.(map[string]any)["index"]; idx != float64(i) {
			t.Errorf("choice %d has index %v", i, idx)
		}
		c := content(ch)
		if seen[c] {
			t.Errorf("choice %d repeats an earlier one: %s", i, c)
		}
		seen[c] = true
	}
	if diff := cmp.Diff(content(one["choices"].([]any)[0]), content(chs[0])); diff != "" {
		t.Errorf("choice 0 is not the answer n=1 gets (-n1 +n3):\n%s", diff)
	}
	u1, u3 := one["usage"].(map[string]any), three["usage"].(map[string]any)
	if u1["prompt_tokens"] != u3["prompt_tokens"] || u3["completion_tokens"].(float64) < 2*u1["completion_tokens"].(float64) {
		t.Errorf("usage n=1 %v, n=3 %v: the prompt counts once, every choice's completion counts", u1, u3)
	}

	t.Run("streamed", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"honest","n":2,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		finishes := map[float64]any{}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var c struct{ Choices []map[string]any }
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatal(err)
			}
			for _, ch := range c.Choices {
				if f := ch["finish_reason"]; f != nil {
					finishes[ch["index"].(float64)] = f
				}
			}
		}
		if diff := cmp.Diff(map[float64]any{0: "stop", 1: "stop"}, finishes); diff != "" {
			t.Errorf("finish reason by choice index (-want +got):\n%s", diff)
		}
	})

	for _, tc := range []struct{ n, param, code string }{
		{`"n":0,`, "n", "integer_below_min_value"},
		{`"n":-1,`, "n", "integer_below_min_value"},
		{`"n":129,`, "n", "integer_above_max_value"},
	} {
		st, _, out := do(t, http.MethodPost, srv.URL+"/v1/chat/completions", body(tc.n))
		e, _ := out["error"].(map[string]any)
		if st != 400 || e["param"] != tc.param || e["code"] != tc.code {
			t.Errorf("%s: status %d %v, want 400 %s", tc.n, st, out, tc.code)
		}
	}
}

func TestServerModelByID(t *testing.T) {
	t.Parallel()
	srv := hardenedServer(t, mock.ServerOptions{})
	tests := []struct {
		name, method, id string
		want             int
		wantBody         map[string]any
	}{
		{"a persona", http.MethodGet, "honest", 200, map[string]any{"id": "honest", "object": "model", "created": float64(0), "owned_by": "swarm-mock"}},
		{"a persona as chat answers name it", http.MethodGet, "mock-sloppy", 200, map[string]any{"id": "mock-sloppy", "object": "model", "created": float64(0), "owned_by": "swarm-mock"}},
		{"an unknown model", http.MethodGet, "gpt-4o", 404, map[string]any{"error": map[string]any{"type": "invalid_request_error", "code": "model_not_found", "param": "model",
			"message": `The model "gpt-4o" does not exist (models: adversarial, deceptive, flaky, honest, noisy, sloppy)`}}},
		{"a wrong method", http.MethodDelete, "honest", 405, map[string]any{"error": map[string]any{"type": "invalid_request_error", "code": "method_not_allowed", "param": nil,
			"message": "DELETE /v1/models/honest: use GET"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, _, out := do(t, tc.method, srv.URL+"/v1/models/"+tc.id, "")
			if diff := cmp.Diff([]any{tc.want, tc.wantBody}, []any{st, out}); diff != "" {
				t.Errorf("status and body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServerRefusesInvalidMessages(t *testing.T) {
	t.Parallel()
	srv := hardenedServer(t, mock.ServerOptions{})
	user := `{"role":"user","content":"x"}`
	tests := []struct {
		name, messages string
		want           int
		wantMsg        string // part of the error message: the field it names
	}{
		{"an unknown role", `[` + user + `,{"role":"robot","content":"beep"}]`, 400, `messages[1].role "robot"`},
		{"an empty role", `[{"content":"x"}]`, 400, `messages[0].role ""`},
		{"the deprecated function role", `[` + user + `,{"role":"function","name":"f","content":"1"}]`, 400, `messages[1].role "function"`},
		{"a tool message without tool_call_id", `[` + user + `,{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"a","arguments":"{}"}}]},{"role":"tool","content":"1"}]`, 400, "messages[2].tool_call_id is required"},
		{"an assistant message with neither content nor tool_calls", `[` + user + `,{"role":"assistant"},` + user + `]`, 400, "messages[1].content is required"},
		{"no messages", `[]`, 400, "messages must not be empty"},
		{"developer is the system role's newer name", `[{"role":"developer","content":"Be brief."},` + user + `]`, 200, ""},
		{"an assistant message with empty content is fine", `[` + user + `,{"role":"assistant","content":""},` + user + `]`, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, _, out := do(t, http.MethodPost, srv.URL+"/v1/chat/completions", `{"model":"honest","messages":`+tc.messages+`}`)
			if st != tc.want {
				t.Fatalf("status %d, want %d: %v", st, tc.want, out)
			}
			if tc.want == 200 {
				return
			}
			e, _ := out["error"].(map[string]any)
			if msg, _ := e["message"].(string); e["type"] != "invalid_request_error" || e["param"] != "messages" || !strings.Contains(msg, tc.wantMsg) {
				t.Errorf("error %v, want invalid_request_error about messages naming %q", e, tc.wantMsg)
			}
		})
	}
	st, _, out := do(t, http.MethodPost, srv.URL+"/v1/chat/completions", `{"model":"honest"}`)
	if e, _ := out["error"].(map[string]any); st != 400 || e["param"] != "messages" {
		t.Errorf("messages missing: status %d %v", st, out)
	}
}
