package mock

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Caps on what the generator builds, so no schema a client sends can make
// the mock allocate without bound. A schema that needs more (minItems
// 1000000000, a huge minLength) is refused with ErrBadSchema, which the
// HTTP server answers with 400.
const (
	MaxGenItems     = 1000   // items of one array (minItems above it is refused)
	MaxGenStringLen = 10_000 // bytes of one string (minLength above it is refused)
	MaxGenValues    = 50_000 // values in one document, all levels together
	maxGenDepth     = 12     // nesting; deeper properties and items are left out
)

// ErrBadSchema marks an output schema the mock cannot answer: it does not
// compile, is not a JSON object, or asks for more than the caps allow.
var ErrBadSchema = errors.New("unusable output schema")

// generator builds a JSON value valid against a JSON schema (the subset
// invopop/jsonschema and strict-mode rewrites produce: type, properties,
// required, enum, const, items, minItems/maxItems, minLength, minimum/maximum,
// anyOf/oneOf, nullable types).
type generator struct {
	rng    *rand.Rand
	words  []string
	values int   // values built so far
	err    error // the first cap exceeded
}

func (g *generator) fail(format string, args ...any) any {
	if g.err == nil {
		g.err = fmt.Errorf("%w: "+format, append([]any{ErrBadSchema}, args...)...)
	}
	return nil
}

func (g *generator) value(s map[string]any, depth int) any {
	if g.err != nil {
		return nil
	}
	if g.values++; g.values > MaxGenValues {
		return g.fail("the document would have more than %d values", MaxGenValues)
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[g.rng.IntN(len(e))]
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			// Prefer a non-null alternative.
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && m["type"] != "null" {
					return g.value(m, depth+1)
				}
			}
			if m, ok := alts[0].(map[string]any); ok {
				return g.value(m, depth+1)
			}
		}
	}
	typ := s["type"]
	if ts, ok := typ.([]any); ok && len(ts) > 0 {
		typ = ts[0]
		for _, t := range ts {
			if t != "null" {
				typ = t
				break
			}
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if m, ok := props[k].(map[string]any); ok && depth < maxGenDepth {
				out[k] = g.value(m, depth+1)
			}
		}
		return out
	case "array":
		n := 1
		if v, ok := s["minItems"].(float64); ok {
			if v > MaxGenItems {
				return g.fail("minItems %v is above the mock's cap of %d", v, MaxGenItems)
			}
			n = max(n, int(v))
		}
		if v, ok := s["maxItems"].(float64); ok && v >= 0 {
			n = min(n, int(min(v, MaxGenItems)))
		}
		items, _ := s["items"].(map[string]any)
		out := make([]any, 0, n)
		for i := 0; i < n && items != nil && depth < maxGenDepth && g.err == nil; i++ {
			out = append(out, g.value(items, depth+1))
		}
		return out
	case "string":
		w := "value"
		if len(g.words) > 0 {
			w = g.words[g.rng.IntN(len(g.words))]
		}
		if v, ok := s["minLength"].(float64); ok {
			if v > MaxGenStringLen {
				return g.fail("minLength %v is above the mock's cap of %d", v, MaxGenStringLen)
			}
			if w == "" {
				w = "value"
			}
			for len(w) < int(v) {
				w += " " + w
			}
		}
		if v, ok := s["maxLength"].(float64); ok && v >= 0 && float64(len(w)) > v {
			w = w[:int(v)]
		}
		return w
	case "integer", "number":
		lo, hi := 0.0, 10.0
		if v, ok := s["minimum"].(float64); ok {
			lo = v
			hi = math.Max(hi, lo)
		}
		if v, ok := s["maximum"].(float64); ok {
			hi = v
			lo = math.Min(lo, hi)
		}
		x := lo + g.rng.Float64()*(hi-lo)
		if typ == "integer" {
			return math.Floor(x)
		}
		return math.Round(x*100) / 100
	case "boolean":
		return g.rng.IntN(2) == 1
	case "null":
		return nil
	}
	return fmt.Sprintf("%v", g.words)
}
