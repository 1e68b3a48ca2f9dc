package nexus_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"
)

type outputSchema struct {
	name   string // the schema name sent with the request (the mock dispatches on it)
	schema func() (json.RawMessage, error)
	desc   string // the type's description, sent as the request schema's description
}

func output[T interface {
	providers.Named
	providers.Described
}]() outputSchema {
	var zero T
	return outputSchema{name: zero.SchemaName(), schema: providers.SchemaOf[T], desc: zero.SchemaDescription()}
}

// outputSchemas are every type the program passes to providers.Structured or
// StructuredRetry, by package-qualified type name.
var outputSchemas = map[string]outputSchema{
	"nexus.Decomposition":    output[nexus.Decomposition](),
	"nexus.Synthesis":        output[nexus.Synthesis](),
	"shadow.SealedCriteria":  output[shadow.SealedCriteria](),
	"shadow.Verdicts":        output[shadow.Verdicts](),
	"commanders.ShardPlan":   output[commanders.ShardPlan](),
	"commanders.MicroBriefs": output[commanders.MicroBriefs](),
	"commanders.Atom":        output[commanders.Atom](),
	"commanders.Bundle":      output[commanders.Bundle](),
	"commanders.ReviewCards": output[commanders.ReviewCards](),
}

// structuredCallTypes finds, in the module's non-test sources, the type
// argument of every providers.Structured[T] and providers.StructuredRetry[T],
// qualified with the package that makes the call.
func structuredCallTypes(t *testing.T) []string {
	t.Helper()
	found := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != ".." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ix, ok := n.(*ast.IndexExpr)
			if !ok {
				return true
			}
			sel, ok := ix.X.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Structured" && sel.Sel.Name != "StructuredRetry") {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "providers" {
				return true
			}
			switch arg := ix.Index.(type) {
			case *ast.Ident:
				found[f.Name.Name+"."+arg.Name] = true
			case *ast.SelectorExpr:
				found[arg.X.(*ast.Ident).Name+"."+arg.Sel.Name] = true
			default:
				t.Errorf("%s: type argument %T not understood", path, arg)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range found {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestOutputSchemasListEveryStructuredCall(t *testing.T) {
	t.Parallel()
	var listed []string
	for k := range outputSchemas {
		listed = append(listed, k)
	}
	sort.Strings(listed)
	if d := cmp.Diff(listed, structuredCallTypes(t)); d != "" {
		t.Errorf("output types listed here vs passed to providers.Structured/StructuredRetry (-listed +called); list every new one\n%s", d)
	}
}

// checkDescribed walks a schema and reports every object without a
// description and every property without one (on the property itself or, in
// the strict form of an optional property, on its anyOf). With strict set it
// also reports keywords OpenAI's strict mode rejects.
func checkDescribed(t *testing.T, path string, s map[string]any, strict bool) {
	t.Helper()
	if strict {
		for k := range s {
			if !strictKeywords[k] {
				t.Errorf("%s: keyword %q is not allowed in OpenAI strict mode", path, k)
			}
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		if d, _ := s["description"].(string); strings.TrimSpace(d) == "" {
			t.Errorf("%s: object has no description", path)
		}
		if strict {
			if s["additionalProperties"] != false || len(s["required"].([]any)) != len(props) {
				t.Errorf("%s: not strict (additionalProperties %v, required %v)", path, s["additionalProperties"], s["required"])
			}
		}
		for name, p := range props {
			ps := p.(map[string]any)
			if d, _ := ps["description"].(string); strings.TrimSpace(d) == "" {
				t.Errorf("%s/%s: field has no description", path, name)
			}
			checkDescribed(t, path+"/"+name, ps, strict)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		checkDescribed(t, path+"/items", items, strict)
	}
	if alts, ok := s["anyOf"].([]any); ok {
		for _, a := range alts {
			checkDescribed(t, path+"/anyOf", a.(map[string]any), strict)
		}
	}
}

// strictKeywords are the JSON Schema keywords OpenAI's strict structured
// output accepts.
var strictKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "anyOf": true, "$ref": true, "$defs": true,
	"description": true, "title": true, "pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minItems": true, "maxItems": true,
}

// TestEveryOutputFieldIsDescribed: a real model sees nothing of an output
// type but its schema, so every field and every object of every output
// schema must say what it means, in the generated schema and in the strict
// form sent to OpenAI.
func TestEveryOutputFieldIsDescribed(t *testing.T) {
	t.Parallel()
	names := map[string]string{}
	for typ, o := range outputSchemas {
		t.Run(typ, func(t *testing.T) {
			if other, dup := names[o.name]; dup {
				t.Errorf("schema name %q is used by %s too", o.name, other)
			}
			names[o.name] = typ
			raw, err := o.schema()
			if err != nil {
				t.Fatal(err)
			}
			var s map[string]any
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			if s["description"] != o.desc || strings.TrimSpace(o.desc) == "" {
				t.Errorf("schema description %q, want the type's %q", s["description"], o.desc)
			}
			checkDescribed(t, o.name, s, false)

			strict, err := providers.StrictSchema(raw)
			if err != nil {
				t.Fatal(err)
			}
			var ss map[string]any
			if err := json.Unmarshal(strict, &ss); err != nil {
				t.Fatal(err)
			}
			checkDescribed(t, o.name+"(strict)", ss, true)
			if _, err := providers.CompileSchema(strict); err != nil {
				t.Errorf("strict schema does not compile: %v", err)
			}
		})
	}
}
