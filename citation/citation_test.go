package citation_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/providers"
)

func TestRef(t *testing.T) {
	cases := []struct {
		name string // why the case exists
		c    citation.Citation
		want string
	}{
		{"one line is written without a range", citation.Citation{Path: "a.go", StartLine: 7, EndLine: 7}, "a.go:7"},
		{"several lines are written as a range", citation.Citation{Path: "internal/auth/session.go", StartLine: 6, EndLine: 8}, "internal/auth/session.go:6-8"},
		{"the quote is not part of the reference", citation.Citation{Path: "a.go", StartLine: 1, EndLine: 2, Quote: "x"}, "a.go:1-2"},
		{"an inverted range is written as given, not repaired", citation.Citation{Path: "a.go", StartLine: 7, EndLine: 6}, "a.go:7-6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if d := cmp.Diff(tc.want, tc.c.Ref()); d != "" {
				t.Errorf("Ref() (-want +got):\n%s", d)
			}
		})
	}
}

// TestJSONShape pins the wire form of a citation: it is what agents answer
// with, what the journal and result.json record and what evidence files
// hold, so moving or renaming the Go type must not change a byte of it.
func TestJSONShape(t *testing.T) {
	t.Parallel()
	c := citation.Citation{Path: "internal/auth/session.go", StartLine: 6, EndLine: 8, Quote: "return a == b"}
	got, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"path":"internal/auth/session.go","start_line":6,"end_line":8,"quote":"return a == b"}`
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf("json (-want +got):\n%s", d)
	}
	var back citation.Citation
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(c, back); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

// TestSchema pins the JSON schema generated from the type (models are shown
// it inside every output schema that carries evidence, and its hash is part
// of what runs record), so a move or a rename of the type cannot change it.
func TestSchema(t *testing.T) {
	t.Parallel()
	got, err := providers.SchemaOf[citation.Citation]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"path":{"type":"string","minLength":1,"description":"The cited file, relative to the workspace root, with forward slashes (e.g. internal/auth/session.go)."},"start_line":{"type":"integer","minimum":1,"description":"First cited line, 1-based, as numbered by read_file."},"end_line":{"type":"integer","minimum":1,"description":"Last cited line, 1-based and inclusive (equal to start_line for one line)."},"quote":{"type":"string","minLength":1,"description":"The cited lines' text, copied exactly from the file (without the line numbers read_file adds)."}},"additionalProperties":false,"type":"object","required":["path","start_line","end_line","quote"],"description":"One piece of evidence: lines of a workspace file and their exact text."}`
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf("schema (-want +got):\n%s", d)
	}
}
