package mock

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// generator builds a JSON value valid against a JSON schema (the subset
// invopop/jsonschema and strict-mode rewrites produce: type, properties,
// required, enum, const, items, minItems/maxItems, minLength, minimum/maximum,
// anyOf/oneOf, nullable types).
type generator struct {
	rng   *rand.Rand
	words []string
}

func (g *generator) value(s map[string]any, depth int) any {
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
			if m, ok := props[k].(map[string]any); ok && depth < 12 {
				out[k] = g.value(m, depth+1)
			}
		}
		return out
	case "array":
		n := 1
		if v, ok := s["minItems"].(float64); ok {
			n = max(n, int(v))
		}
		if v, ok := s["maxItems"].(float64); ok {
			n = min(n, int(v))
		}
		items, _ := s["items"].(map[string]any)
		out := make([]any, 0, n)
		for i := 0; i < n && items != nil && depth < 12; i++ {
			out = append(out, g.value(items, depth+1))
		}
		return out
	case "string":
		w := "value"
		if len(g.words) > 0 {
			w = g.words[g.rng.IntN(len(g.words))]
		}
		if v, ok := s["minLength"].(float64); ok {
			for len(w) < int(v) {
				w += " " + w
			}
		}
		if v, ok := s["maxLength"].(float64); ok && len(w) > int(v) {
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
