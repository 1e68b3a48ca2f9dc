package providers

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type testOut struct {
	Name  string   `json:"name" jsonschema:"minLength=1"`
	Score int      `json:"score" jsonschema:"minimum=0,maximum=10"`
	Tags  []string `json:"tags"`
	Note  string   `json:"note,omitempty"`
}

func scripted(answers ...string) (Provider, *[]Request) {
	var seen []Request
	i := 0
	return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
		seen = append(seen, req)
		a := answers[min(i, len(answers)-1)]
		i++
		return Response{Text: a, Usage: Usage{InputTokens: 10, OutputTokens: 5}, Model: "m"}, nil
	}), &seen
}

func TestStructured(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		answers   []string
		wantCalls int
		wantClass Class
		wantScore int
	}{
		{"valid first time needs one call", []string{`{"name":"a","score":3,"tags":[]}`}, 1, ClassNone, 3},
		{"fenced JSON with prose is extracted", []string{"Sure:\n```json\n{\"name\":\"a\",\"score\":4,\"tags\":[\"x\"]}\n```"}, 1, ClassNone, 4},
		{"out of range is repaired once", []string{`{"name":"a","score":11,"tags":[]}`, `{"name":"a","score":9,"tags":[]}`}, 2, ClassNone, 9},
		{"still invalid after repair is schema_invalid", []string{`{"name":"a","score":11,"tags":[]}`}, 2, ClassSchemaInvalid, 0},
		{"no JSON at all is unparseable", []string{`I cannot do that`}, 2, ClassUnparseable, 0},
		{"missing required field is schema_invalid", []string{`{"name":"a","tags":[]}`}, 2, ClassSchemaInvalid, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, seen := scripted(tc.answers...)
			got, res, err := Structured[testOut](t.Context(), p, Request{Messages: []Message{{Role: RoleUser, Content: "go"}}}, WithSchemaName("test_out"))
			if len(*seen) != tc.wantCalls {
				t.Fatalf("calls = %d, want %d", len(*seen), tc.wantCalls)
			}
			if (*seen)[0].Schema == nil || (*seen)[0].Schema.Name != "test_out" {
				t.Fatalf("schema not attached: %+v", (*seen)[0].Schema)
			}
			if ClassOf(err) != tc.wantClass {
				t.Fatalf("class = %q (%v), want %q", ClassOf(err), err, tc.wantClass)
			}
			if err != nil {
				var pe *Error
				if !errors.As(err, &pe) || pe.Raw == "" {
					t.Fatalf("error should carry raw text: %#v", err)
				}
				return
			}
			if got.Score != tc.wantScore {
				t.Fatalf("score = %d, want %d", got.Score, tc.wantScore)
			}
			if len(res.Responses) != tc.wantCalls || res.Usage().InputTokens != 10*tc.wantCalls {
				t.Fatalf("usage not summed: %+v", res)
			}
			if tc.wantCalls == 2 {
				last := (*seen)[1].Messages
				if !strings.Contains(last[len(last)-1].Content, "/score") {
					t.Fatalf("repair prompt should name the invalid field: %q", last[len(last)-1].Content)
				}
			}
		})
	}
}

func TestSchemaOfRequiresNonOmitempty(t *testing.T) {
	t.Parallel()
	raw, err := SchemaOf[testOut]()
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	if !strings.Contains(s, `"required":["name","score","tags"]`) || !strings.Contains(s, `"additionalProperties":false`) {
		t.Fatalf("unexpected schema %s", s)
	}
}
