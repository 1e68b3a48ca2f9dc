package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// StrictSchema rewrites a JSON schema for OpenAI's strict structured output:
// every object gets additionalProperties false and lists all its properties
// as required; a property that was optional becomes anyOf [T, null]. The
// order of properties is kept (decoding preserves key order).
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

func strictify(v any) any {
	switch t := v.(type) {
	case []any:
		for i := range t {
			t[i] = strictify(t[i])
		}
		return t
	case *object:
		for _, k := range t.keys {
			if k == "properties" {
				continue
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
				ps = &object{keys: []string{"anyOf"}, vals: map[string]any{"anyOf": []any{ps, &object{keys: []string{"type"}, vals: map[string]any{"type": "null"}}}}}
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
