package mock

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
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
	rng   *rand.Rand
	words []string
	// root is the whole schema, for local $ref ("#/$defs/x"); nil: a
	// $ref is not followed.
	root   map[string]any
	refs   int   // $refs followed so far
	values int   // values built so far
	err    error // the first cap exceeded
	// budget bounds the answer's bytes (nil: DefaultMaxAnswerBytes);
	// bytes is what the value built so far takes as JSON, reserved from
	// budget before the value is built.
	budget *answerBudget
	bytes  int64
	// minimal builds the smallest answer the schema allows: required
	// properties only, minItems items, minLength characters, null where
	// null is allowed (build tries it when the first answer is too large).
	minimal bool
}

// build generates a value for schema within the budget: the mock's usual
// answer when it fits, else the smallest answer the schema allows, else an
// ErrAnswerTooLarge error (wrapping ErrBadSchema) naming the bound.
func (g *generator) build(schema map[string]any) (any, error) {
	if g.budget == nil {
		g.budget = newAnswerBudget(0, nil)
	}
	start := *g
	val := g.value(schema, 0)
	if errors.Is(g.err, ErrAnswerTooLarge) {
		*g = start
		g.minimal = true
		val = g.value(schema, 0)
		if errors.Is(g.err, ErrAnswerTooLarge) {
			return nil, fmt.Errorf("%w: the smallest answer the mock can build for this schema is over the bound: %w", ErrBadSchema, g.err)
		}
	}
	return val, g.err
}

// charge counts n more bytes of the answer; false once over the budget (or
// any cap), with g.err set.
func (g *generator) charge(n int64) bool {
	if g.err != nil {
		return false
	}
	g.bytes += n
	if g.budget == nil {
		g.budget = newAnswerBudget(0, nil)
	}
	if err := g.budget.reserve(g.bytes); err != nil {
		g.err = err
		return false
	}
	return true
}

// chargeJSON counts the bytes of v as JSON (a schema's const or enum
// value).
func (g *generator) chargeJSON(v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		g.fail("a const or enum value is not JSON: %v", err)
		return false
	}
	return g.charge(int64(len(b)))
}

// numberBytes is the most bytes encoding/json writes for a float64.
const numberBytes = 24

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
	if ref, ok := s["$ref"].(string); ok && g.root != nil {
		target, ok := g.resolve(ref)
		if !ok {
			return g.fail("$ref %q does not name a part of the schema", ref)
		}
		if g.refs++; g.refs > MaxGenValues || depth >= maxGenDepth {
			return g.fail("$ref %q nests deeper than %d levels", ref, maxGenDepth)
		}
		return g.value(target, depth+1)
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 && g.root != nil {
		return g.value(mergeAllOf(s, all), depth+1)
	}
	if c, ok := s["const"]; ok {
		g.chargeJSON(c)
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		v := e[g.rng.IntN(len(e))]
		g.chargeJSON(v)
		return v
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			if g.minimal {
				for _, a := range alts {
					if m, ok := a.(map[string]any); ok && m["type"] == "null" {
						return g.value(m, depth+1)
					}
				}
			}
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
		if g.minimal && slices.Contains(ts, any("null")) {
			typ = "null"
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		var required map[string]bool
		if g.minimal {
			required = map[string]bool{}
			r, _ := s["required"].([]any)
			for _, k := range r {
				if k, ok := k.(string); ok {
					required[k] = true
				}
			}
		}
		keys := make([]string, 0, len(props))
		for k := range props {
			if required == nil || required[k] {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		if !g.charge(2) {
			return nil
		}
		for _, k := range keys {
			if m, ok := props[k].(map[string]any); ok && depth < maxGenDepth {
				if !g.charge(jsonStringLen(k) + 2) { // "key": and a comma
					return nil
				}
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
			if g.minimal {
				n = max(0, int(v))
			}
		} else if g.minimal {
			n = 0
		}
		if v, ok := s["maxItems"].(float64); ok && v >= 0 {
			n = min(n, int(min(v, MaxGenItems)))
		}
		items, _ := s["items"].(map[string]any)
		if !g.charge(2) {
			return nil
		}
		out := make([]any, 0, min(n, 64))
		for i := 0; i < n && items != nil && depth < maxGenDepth && g.charge(1); i++ {
			out = append(out, g.value(items, depth+1))
		}
		return out
	case "string":
		w := g.str(s)
		g.charge(jsonStringLen(w))
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
		// Exclusive bounds (draft 6 and later: numbers), honoured only
		// where a schema sets them, so no other answer changes.
		exLo, hasExLo := s["exclusiveMinimum"].(float64)
		exHi, hasExHi := s["exclusiveMaximum"].(float64)
		if hasExLo && lo <= exLo {
			lo = exLo
			hi = math.Max(hi, lo+1)
		}
		if hasExHi && hi >= exHi {
			hi = exHi
			lo = math.Min(lo, hi-1)
		}
		g.charge(numberBytes)
		x := lo + g.rng.Float64()*(hi-lo)
		if typ == "integer" {
			x = math.Floor(x)
			if hasExLo && x <= exLo {
				x = math.Floor(exLo) + 1
			}
			return x
		}
		x = math.Round(x*100) / 100
		if hasExLo && x <= exLo || hasExHi && x >= exHi {
			x = (lo + hi) / 2
		}
		return x
	case "boolean":
		g.charge(5)
		return g.rng.IntN(2) == 1
	case "null":
		g.charge(4)
		return nil
	}
	w := fmt.Sprintf("%v", g.words)
	g.charge(jsonStringLen(w))
	return w
}

// str is a string valid against s: its format's example, a match of its
// pattern, else one of the request's words repeated to minLength and cut
// to maxLength (in minimal mode: minLength x's).
func (g *generator) str(s map[string]any) string {
	if f, ok := s["format"].(string); ok && formatExamples[f] != "" {
		return formatExamples[f]
	}
	if p, ok := s["pattern"].(string); ok {
		if w, ok := fromPattern(p); ok {
			return w
		}
	}
	minLen, hasMin := s["minLength"].(float64)
	if hasMin && minLen > MaxGenStringLen {
		g.fail("minLength %v is above the mock's cap of %d", minLen, MaxGenStringLen)
		return ""
	}
	if g.minimal {
		if hasMin && minLen > 0 {
			return strings.Repeat("x", int(minLen))
		}
		return ""
	}
	w := "value"
	if len(g.words) > 0 {
		w = g.words[g.rng.IntN(len(g.words))]
	}
	if hasMin {
		if w == "" {
			w = "value"
		}
		for len(w) < int(minLen) {
			w += " " + w
		}
	}
	if v, ok := s["maxLength"].(float64); ok && v >= 0 && float64(len(w)) > v {
		w = w[:int(v)]
	}
	return w
}

// formatExamples are values of the string formats a tool schema commonly
// names (JSON Schema's format keyword).
var formatExamples = map[string]string{
	"date-time": "2025-01-02T03:04:05Z",
	"date":      "2025-01-02",
	"time":      "03:04:05Z",
	"email":     "mock@example.com",
	"uri":       "https://example.com/mock",
	"url":       "https://example.com/mock",
	"uuid":      "00000000-0000-4000-8000-000000000000",
	"hostname":  "example.com",
	"ipv4":      "192.0.2.1",
	"ipv6":      "2001:db8::1",
}

// resolve follows a local reference ("#", "#/$defs/x", "#/definitions/x")
// within g.root.
func (g *generator) resolve(ref string) (map[string]any, bool) {
	if ref == "#" {
		return g.root, true
	}
	ptr, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	var cur any = g.root
	for _, tok := range strings.Split(ptr, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	m, ok := cur.(map[string]any)
	return m, ok
}

// mergeAllOf is s with its allOf parts merged in (properties and required
// joined; other keywords of s first, then of each part in order).
func mergeAllOf(s map[string]any, all []any) map[string]any {
	out := map[string]any{}
	props := map[string]any{}
	var required []any
	add := func(m map[string]any) {
		for k, v := range m {
			switch k {
			case "allOf":
			case "properties":
				if p, ok := v.(map[string]any); ok {
					for pk, pv := range p {
						if _, seen := props[pk]; !seen {
							props[pk] = pv
						}
					}
				}
			case "required":
				if r, ok := v.([]any); ok {
					required = append(required, r...)
				}
			default:
				if _, seen := out[k]; !seen {
					out[k] = v
				}
			}
		}
	}
	add(s)
	for _, a := range all {
		if m, ok := a.(map[string]any); ok {
			add(m)
		}
	}
	if len(props) > 0 {
		out["properties"] = props
		if _, ok := out["type"]; !ok {
			out["type"] = "object"
		}
	}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// fromPattern returns a short string the regular expression p matches (the
// fewest repetitions, the first alternative, a printable rune of each
// class), or false when p does not parse as RE2 or asks for more than
// MaxGenStringLen bytes.
func fromPattern(p string) (string, bool) {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !genMatch(&b, re.Simplify(), 0) {
		return "", false
	}
	return b.String(), true
}

func genMatch(b *strings.Builder, re *syntax.Regexp, depth int) bool {
	if depth > maxGenDepth*4 || b.Len() > MaxGenStringLen {
		return false
	}
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpStar, syntax.OpQuest:
		return true
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
		return true
	case syntax.OpCharClass:
		if len(re.Rune) < 2 {
			return false
		}
		r := re.Rune[0]
	pick:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := max(re.Rune[i], '0'); c <= re.Rune[i+1] && c <= '~'; c++ {
				if c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
					r = c
					break pick
				}
			}
		}
		b.WriteRune(r)
		return true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('x')
		return true
	case syntax.OpCapture, syntax.OpPlus:
		return genMatch(b, re.Sub[0], depth+1)
	case syntax.OpRepeat:
		for range re.Min {
			if !genMatch(b, re.Sub[0], depth+1) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !genMatch(b, sub, depth+1) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		return genMatch(b, re.Sub[0], depth+1)
	}
	return false
}
