package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// StrictSchema rewrites a JSON schema for OpenAI's strict structured output:
// every object gets additionalProperties false and lists all its properties
// as required; a property that was optional becomes anyOf [T, null], with
// its description on the anyOf. Keywords strict mode rejects (minLength,
// maxLength, uniqueItems, ...; see strictUnsupported) are removed and
// written into the schema's description instead, so the model still reads
// them; Structured's own validation, against the original schema, still
// enforces them. Descriptions are kept. The order of properties is kept
// (decoding preserves key order). The rewrite is idempotent.
//
// It lives here rather than in providers/openai because the mock provider
// counts the schema's tokens in this form: in-process it gets the original
// schema, behind its OpenAI-compatible server the rewritten one, and it
// reports the same usage either way.
func StrictSchema(raw json.RawMessage) (json.RawMessage, error) {
	v, err := decodeOrdered(json.NewDecoder(bytes.NewReader(raw)))
	if err != nil {
		return nil, fmt.Errorf("strict schema: %w", err)
	}
	out := strictify(v)
	var b bytes.Buffer
	if err := encodeOrdered(&b, out); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// object is a JSON object that keeps its key order.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(k string) (any, bool) { v, ok := o.vals[k]; return v, ok }

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func decodeOrdered(d *json.Decoder) (any, error) {
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	return decodeValue(d, tok)
}

func decodeValue(d *json.Decoder, tok json.Token) (any, error) {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{vals: map[string]any{}}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				vt, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(d, vt)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			_, err := d.Token()
			return o, err
		case '[':
			var arr []any
			for d.More() {
				vt, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(d, vt)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := d.Token()
			if arr == nil {
				arr = []any{}
			}
			return arr, err
		}
	}
	return tok, nil
}

func encodeOrdered(w io.Writer, v any) error {
	switch t := v.(type) {
	case *object:
		io.WriteString(w, "{")
		for i, k := range t.keys {
			if i > 0 {
				io.WriteString(w, ",")
			}
			kb, _ := json.Marshal(k)
			w.Write(kb)
			io.WriteString(w, ":")
			if err := encodeOrdered(w, t.vals[k]); err != nil {
				return err
			}
		}
		io.WriteString(w, "}")
	case []any:
		io.WriteString(w, "[")
		for i, x := range t {
			if i > 0 {
				io.WriteString(w, ",")
			}
			if err := encodeOrdered(w, x); err != nil {
				return err
			}
		}
		io.WriteString(w, "]")
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		w.Write(b)
	}
	return nil
}

// strictUnsupported are the JSON Schema keywords OpenAI's strict mode
// rejects ("'minLength' is not permitted"). Strict mode accepts type,
// properties, required, additionalProperties, items, enum, const, anyOf,
// $ref/$defs, description, title, pattern, the formats in strictFormats,
// minimum/maximum (and their exclusive forms), multipleOf and
// minItems/maxItems.
var strictUnsupported = map[string]bool{
	"minLength": true, "maxLength": true,
	"patternProperties": true, "unevaluatedProperties": true, "propertyNames": true,
	"minProperties": true, "maxProperties": true,
	"unevaluatedItems": true, "contains": true, "minContains": true, "maxContains": true, "uniqueItems": true,
	"default": true, "examples": true, "readOnly": true, "writeOnly": true, "deprecated": true,
	"contentEncoding": true, "contentMediaType": true, "$comment": true,
}

// strictFormats are the string formats strict mode accepts.
var strictFormats = map[string]bool{
	"date-time": true, "time": true, "date": true, "duration": true, "email": true,
	"hostname": true, "ipv4": true, "ipv6": true, "uuid": true,
}

// foldUnsupported removes the keywords strict mode rejects from one schema
// object and appends them to its description, e.g. "A title. {minLength: 1}".
func foldUnsupported(t *object) {
	var notes []string
	keys := t.keys[:0:0]
	for _, k := range t.keys {
		v := t.vals[k]
		drop := strictUnsupported[k]
		if k == "format" {
			f, _ := v.(string)
			drop = !strictFormats[f]
		}
		if !drop {
			keys = append(keys, k)
			continue
		}
		delete(t.vals, k)
		switch k {
		case "default", "examples", "readOnly", "writeOnly", "deprecated", "$comment":
			continue // annotations: nothing a model must obey
		}
		var b bytes.Buffer
		if encodeOrdered(&b, v) == nil {
			notes = append(notes, k+": "+b.String())
		}
	}
	t.keys = keys
	if len(notes) == 0 {
		return
	}
	sort.Strings(notes)
	d, _ := t.vals["description"].(string)
	note := "{" + strings.Join(notes, ", ") + "}"
	t.set("description", strings.TrimSpace(d+" "+note))
}

func strictify(v any) any {
	switch t := v.(type) {
	case []any:
		for i := range t {
			t[i] = strictify(t[i])
		}
		return t
	case *object:
		foldUnsupported(t)
		for _, k := range t.keys {
			switch k {
			case "properties", "enum", "const":
				continue // handled below, or values rather than schemas
			case "$defs", "definitions":
				// A map of names to schemas: rewrite each schema, never
				// read a name as a keyword.
				if defs, ok := t.vals[k].(*object); ok {
					for _, n := range defs.keys {
						defs.vals[n] = strictify(defs.vals[n])
					}
					continue
				}
			}
			t.vals[k] = strictify(t.vals[k])
		}
		props, ok := t.get("properties")
		po, isObj := props.(*object)
		if !ok || !isObj {
			if typ, _ := t.get("type"); typ == "object" {
				t.set("additionalProperties", false)
			}
			return t
		}
		required := map[string]bool{}
		if r, ok := t.get("required"); ok {
			if arr, ok := r.([]any); ok {
				for _, x := range arr {
					if s, ok := x.(string); ok {
						required[s] = true
					}
				}
			}
		}
		all := make([]any, 0, len(po.keys))
		for _, k := range po.keys {
			ps := strictify(po.vals[k])
			if !required[k] {
				ps = nullable(ps)
			}
			po.vals[k] = ps
			all = append(all, k)
		}
		t.set("required", all)
		t.set("additionalProperties", false)
		return t
	}
	return v
}

// nullable makes an optional property's schema anyOf [T, null], the strict
// form of "may be absent". The description moves to the anyOf, where a model
// reads it for the property as a whole.
func nullable(ps any) any {
	null := &object{keys: []string{"type"}, vals: map[string]any{"type": "null"}}
	o, ok := ps.(*object)
	if !ok {
		return &object{keys: []string{"anyOf"}, vals: map[string]any{"anyOf": []any{ps, null}}}
	}
	w := &object{vals: map[string]any{}}
	if d, ok := o.get("description"); ok {
		w.set("description", d)
		delete(o.vals, "description")
		keys := o.keys[:0:0]
		for _, k := range o.keys {
			if k != "description" {
				keys = append(keys, k)
			}
		}
		o.keys = keys
	}
	w.set("anyOf", []any{o, null})
	return w
}
