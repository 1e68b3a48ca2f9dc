package mock_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/providers"
)

// nestedSchema is n objects, each the only property of the one above.
func nestedSchema(n int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat(`}}`, n)
}

// wideSchema is one object of n string properties.
func wideSchema(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string"}`, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

// maxAnswer is mock.DefaultMaxAnswerBytes, written out so that these tests
// compile (and fail) on the code before issue 22.
const maxAnswer = 4 << 20

// TestServerBoundsAnswers: with the default bounds (no option set), each of
// these was answered 200 on main; the answers were 6 MB (and the 256-byte
// schema of the issue, 1000 × 48 strings of minLength 10000, built 590 MB:
// it is kept out of this test so that it stays cheap on main).
func TestServerBoundsAnswers(t *testing.T) {
	t.Parallel()
	srv := hardenedServer(t, mock.ServerOptions{})
	tests := []struct {
		name, why, schema string
		status            int
		code, msg         string // of the error
	}{
		{"smallest answer over the bound", "1000 required strings of minLength 5000: no valid answer under 4 MiB",
			`{"type":"array","minItems":1000,"items":{"type":"string","minLength":5000}}`, 400, "invalid_schema", "the smallest answer the mock can build for this schema is over the bound"},
		{"optional part over the bound", "the usual answer builds the optional b (6 MB); the smallest valid one leaves it out",
			`{"type":"object","required":["a"],"properties":{"a":{"type":"string"},"b":{"type":"array","minItems":500,"items":{"type":"string","minLength":10000}}}}`, 200, "", ""},
		{"nested 100 deep", "the schema compiler's time grows faster than the square of the depth (74 KB: 17.7 s)",
			nestedSchema(100), 400, "invalid_schema", "nested more than 64 levels deep"},
		{"2000 properties", "the compiler's time grows with the square of the subschemas (40 000: 38 s)",
			wideSchema(2000), 400, "invalid_schema", "more than 500 subschemas"},
		{"at the bounds", "a schema within both is compiled and answered",
			nestedSchema(30), 200, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, _, out := do(t, http.MethodPost, srv.URL+"/v1/chat/completions", withSchema(tc.schema))
			if st != tc.status {
				t.Fatalf("%s: status %d, want %d: %.300v", tc.why, st, tc.status, out)
			}
			if tc.status != 200 {
				e, _ := out["error"].(map[string]any)
				msg, _ := e["message"].(string)
				if diff := cmp.Diff(tc.code, e["code"]); diff != "" || !strings.Contains(msg, tc.msg) {
					t.Errorf("%s: error code (-want +got):\n%s message %q, want it to contain %q", tc.why, diff, msg, tc.msg)
				}
				return
			}
			content := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
			if len(content) > maxAnswer {
				t.Errorf("%s: answer of %d bytes, over the bound of %d", tc.why, len(content), maxAnswer)
			}
			v, err := providers.CompileSchema(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Validate([]byte(content)); err != nil {
				t.Errorf("%s: answer does not validate: %v", tc.why, err)
			}
		})
	}
}

// TestServerBoundsToolSchemas: the subschemas of every tool's parameters
// and of the response format count together.
func TestServerBoundsToolSchemas(t *testing.T) {
	t.Parallel()
	srv := hardenedServer(t, mock.ServerOptions{})
	var tools []string
	for i := range 3 {
		tools = append(tools, fmt.Sprintf(`{"type":"function","function":{"name":"t%d","parameters":%s}}`, i, wideSchema(200)))
	}
	body := `{"model":"honest","messages":[{"role":"user","content":"hi"}],"tools":[` + strings.Join(tools, ",") + `]}`
	st, _, out := do(t, http.MethodPost, srv.URL+"/v1/chat/completions", body)
	e, _ := out["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if st != 400 || !strings.Contains(msg, "tools[2].function.parameters") || !strings.Contains(msg, "more than 500 subschemas") {
		t.Errorf("3 tools of 201 subschemas each: status %d, %v; want 400 naming tools[2] and the bound", st, out)
	}
}
