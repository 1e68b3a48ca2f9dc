package providers

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checking wraps p the way a run's recorder does: every answer is checked
// (for telemetry) before it goes back to the Structured call. mutate, when
// set, changes the text after the check.
func checking(p Provider, mutate func(string) string) Provider {
	return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
		resp, err := p.Complete(ctx, req)
		if err != nil {
			return resp, err
		}
		resp, _ = CheckOutput(req, resp)
		if mutate != nil {
			resp.Text = mutate(resp.Text)
		}
		return resp, nil
	})
}

func TestEveryAnswerIsValidatedOnce(t *testing.T) {
	// Serial: reads the process-wide validation counter.
	tests := []struct {
		name            string
		why             string
		answers         []string
		mutate          func(string) string
		wantValidations int64
		wantScore       int
	}{
		{name: "valid answer", why: "the check's outcome is reused, not validated again",
			answers: []string{`{"name":"a","score":3,"tags":[]}`}, wantValidations: 1, wantScore: 3},
		{name: "repaired answer", why: "two answers, each validated once",
			answers: []string{`{"name":"a","score":11,"tags":[]}`, `{"name":"a","score":9,"tags":[]}`}, wantValidations: 2, wantScore: 9},
		{name: "text changed after the check", why: "an outcome is reused only for the very text it was computed on",
			answers: []string{`{"name":"a","score":3,"tags":[]}`}, mutate: func(string) string { return `{"name":"b","score":4,"tags":[]}` },
			wantValidations: 2, wantScore: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := scripted(tc.answers...)
			before := validateCalls.Load()
			got, _, err := Structured[testOut](t.Context(), checking(p, tc.mutate), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}})
			if err != nil {
				t.Fatal(err)
			}
			if n := validateCalls.Load() - before; n != tc.wantValidations || got.Score != tc.wantScore {
				t.Errorf("%s: %d validations, score %d; want %d, %d", tc.why, n, got.Score, tc.wantValidations, tc.wantScore)
			}
		})
	}
}

// The check and Structured judge an answer alike: an optional member that
// comes back null (OpenAI strict mode) is absent, not a schema violation.
func TestCheckOutputDropsNullsLikeStructured(t *testing.T) {
	t.Parallel()
	s, err := SchemaFor[testOut]("test_out")
	if err != nil {
		t.Fatal(err)
	}
	_, err = CheckOutput(Request{Schema: s}, Response{Text: `{"name":"a","score":3,"tags":[],"note":null}`})
	if err != nil {
		t.Errorf("null optional member: %v", err)
	}
	_, err = CheckOutput(Request{Schema: s}, Response{Text: `{"name":"a","score":30,"tags":[]}`})
	if ClassOf(err) != ClassSchemaInvalid {
		t.Errorf("out of range: class %q, want %q", ClassOf(err), ClassSchemaInvalid)
	}
}

// A turn of tool calls is not an answer yet: it is not checked against the
// schema (its empty text would read as unparseable output).
func TestCheckOutputPassesToolCallTurns(t *testing.T) {
	t.Parallel()
	s, err := SchemaFor[testOut]("test_out")
	if err != nil {
		t.Fatal(err)
	}
	turn := Response{FinishReason: FinishToolCalls, ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: `{}`}}}
	if _, err := CheckOutput(Request{Schema: s}, turn); err != nil {
		t.Errorf("tool-call turn: %v, want no check", err)
	}
	if _, err := CheckOutput(Request{Schema: s}, Response{}); ClassOf(err) != ClassUnparseable {
		t.Errorf("empty answer without tool calls: class %q, want %q", ClassOf(err), ClassUnparseable)
	}
}

// Finding the compiled validator of a schema does not copy the schema.
func TestSchemaLookupDoesNotCopyTheSchema(t *testing.T) {
	// Serial: counts the whole process's allocations.
	raw, err := SchemaOf[testOut]()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CompileSchema(raw); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = CompileSchema(raw) }); n != 0 {
		t.Errorf("CompileSchema of a known schema allocates %.0f times per call, want 0", n)
	}
}

// The cache key names a schema by its name and hash: the same schema gives
// the same key whether its hash was computed once (Structured) or now, and
// another schema under the same name gives another key.
func TestCacheKeyIdentifiesTheSchema(t *testing.T) {
	t.Parallel()
	s, err := SchemaFor[testOut]("out")
	if err != nil {
		t.Fatal(err)
	}
	ref := Ref{Kind: "mock", Model: "honest"}
	req := func(s *Schema) Request {
		return Request{Messages: []Message{{Role: RoleUser, Content: "x"}}, Schema: s}
	}
	literal := &Schema{Name: "out", JSON: append(json.RawMessage(nil), s.JSON...)}
	other := &Schema{Name: "out", JSON: json.RawMessage(`{"type":"object"}`)}
	renamed := &Schema{Name: "other", JSON: s.JSON}
	got := []bool{
		CacheKey(ref, "", req(s)) == CacheKey(ref, "", req(literal)),
		CacheKey(ref, "", req(s)) == CacheKey(ref, "", req(other)),
		CacheKey(ref, "", req(s)) == CacheKey(ref, "", req(renamed)),
	}
	if d := cmp.Diff([]bool{true, false, false}, got); d != "" {
		t.Errorf("same schema / other JSON / other name share the key (-want +got):\n%s", d)
	}
}
