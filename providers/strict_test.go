package providers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStrictSchemaKeepsDescriptionsAndDropsWhatStrictModeRejects checks the
// rewrite on a hand-written schema with every case at once, because a
// generated one has only some of them.
func TestStrictSchemaKeepsDescriptionsAndDropsWhatStrictModeRejects(t *testing.T) {
	t.Parallel()
	in := `{"type":"object","description":"Top.","properties":{` +
		`"id":{"type":"string","description":"An id.","minLength":1,"maxLength":8,"pattern":"^a"},` +
		`"tags":{"type":"array","description":"Tags.","items":{"type":"string"},"uniqueItems":true,"minItems":1},` +
		`"when":{"type":"string","description":"When.","format":"date-time"},` +
		`"site":{"type":"string","format":"uri","default":"x"},` +
		`"note":{"type":"string","description":"Optional note.","minLength":2},` +
		`"kind":{"type":"string","description":"Kind.","enum":["minLength","default"]}` +
		`},"required":["id","tags","when","site","kind"],"additionalProperties":false,` +
		`"$defs":{"default":{"type":"object","properties":{"x":{"type":"integer","description":"X.","minimum":0}},"required":["x"]}}}`
	out, err := StrictSchema(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	props := got["properties"].(map[string]any)
	want := map[string]any{
		"id":   map[string]any{"type": "string", "description": `An id. {maxLength: 8, minLength: 1}`, "pattern": "^a"},
		"tags": map[string]any{"type": "array", "description": "Tags. {uniqueItems: true}", "items": map[string]any{"type": "string"}, "minItems": 1.0},
		"when": map[string]any{"type": "string", "description": "When.", "format": "date-time"},
		"site": map[string]any{"type": "string", "description": `{format: "uri"}`},
		"note": map[string]any{"description": "Optional note. {minLength: 2}", "anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "null"}}},
		"kind": map[string]any{"type": "string", "description": "Kind.", "enum": []any{"minLength", "default"}},
	}
	if d := cmp.Diff(want, props); d != "" {
		t.Errorf("properties (-want +got)\n%s", d)
	}
	if d := cmp.Diff([]any{"id", "tags", "when", "site", "note", "kind"}, got["required"]); d != "" {
		t.Errorf("required (-want +got)\n%s", d)
	}
	def := got["$defs"].(map[string]any)["default"].(map[string]any)
	if def["additionalProperties"] != false || def["properties"].(map[string]any)["x"].(map[string]any)["minimum"] != 0.0 {
		t.Errorf("a definition named like a keyword was not rewritten as a schema: %v", def)
	}
	if got["description"] != "Top." {
		t.Errorf("top-level description %v", got["description"])
	}
	again, err := StrictSchema(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(out) {
		t.Errorf("not idempotent:\n%s\n%s", out, again)
	}
	if _, err := CompileSchema(out); err != nil {
		t.Errorf("strict schema does not compile: %v", err)
	}
	if !strings.Contains(string(out), `"properties":{"id":`) {
		t.Errorf("property order not kept: %s", out)
	}
}

type describedOut struct {
	Name string `json:"name" jsonschema_description:"A name, with a comma."`
}

func (describedOut) SchemaDescription() string { return "A described output." }

type undescribedOut struct {
	Name string `json:"name"`
}

func TestSchemaDescriptionReachesTheRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(p Provider) error
		want string
	}{
		{"the type's description by default", func(p Provider) error {
			_, _, err := Structured[describedOut](t.Context(), p, Request{})
			return err
		}, "A described output."},
		{"an explicit description wins", func(p Provider) error {
			_, _, err := Structured[describedOut](t.Context(), p, Request{}, WithSchemaDescription("Given."))
			return err
		}, "Given."},
		{"none for a type without one", func(p Provider) error {
			_, _, err := Structured[undescribedOut](t.Context(), p, Request{})
			return err
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, seen := scripted(`{"name":"a"}`)
			if err := tc.run(p); err != nil {
				t.Fatal(err)
			}
			if got := (*seen)[0].Schema.Description; got != tc.want {
				t.Errorf("Schema.Description = %q, want %q", got, tc.want)
			}
		})
	}
	raw, _ := SchemaOf[describedOut]()
	var s struct {
		Description string                                  `json:"description"`
		Properties  map[string]struct{ Description string } `json:"properties"`
	}
	_ = json.Unmarshal(raw, &s)
	if s.Description != "A described output." || s.Properties["name"].Description != "A name, with a comma." {
		t.Errorf("descriptions not in the schema: %s", raw)
	}
}
