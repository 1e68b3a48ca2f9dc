package providers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/invopop/jsonschema"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Named is implemented by output types that name their own schema.
type Named interface{ SchemaName() string }

// Described is implemented by output types (and the struct types nested in
// them) that describe themselves: the text becomes the "description" of the
// type's object schema and, for an output type, the default description of
// the Request's Schema (what a model reads about the whole answer).
type Described interface{ SchemaDescription() string }

var describedType = reflect.TypeFor[Described]()

// typeDescription returns t's SchemaDescription, or "".
func typeDescription(t reflect.Type) string {
	if t == nil {
		return ""
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(describedType) {
		return reflect.Zero(t).Interface().(Described).SchemaDescription()
	}
	if reflect.PointerTo(t).Implements(describedType) {
		return reflect.New(t).Interface().(Described).SchemaDescription()
	}
	return ""
}

// SchemaOf returns the JSON schema of T, generated with invopop/jsonschema:
// inline (no $ref), additionalProperties false, fields without omitempty
// required. Use `jsonschema:"..."` struct tags for enums and bounds, the
// `jsonschema_description:"..."` tag for a field's description (it may
// contain commas, which the `jsonschema` tag would split on) and
// SchemaDescription (Described) for a struct type's own description. A real
// model sees nothing but the field names, types and these descriptions, so
// every field of an output type should have one.
func SchemaOf[T any]() (json.RawMessage, error) {
	var zero T
	return schemaOfType(reflect.TypeOf(zero))
}

// schemaEntry is one Go type's schema: generated, hashed and compiled once.
type schemaEntry struct {
	raw json.RawMessage
	id  string // "sha256:<hex>" of raw
	v   *Validator
}

var schemaCache sync.Map // reflect.Type -> *schemaEntry

func schemaOfType(t reflect.Type) (json.RawMessage, error) {
	e, err := schemaEntryOf(t)
	if err != nil {
		return nil, err
	}
	return e.raw, nil
}

func schemaEntryOf(t reflect.Type) (*schemaEntry, error) {
	if v, ok := schemaCache.Load(t); ok {
		return v.(*schemaEntry), nil
	}
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true,
		// Only a type's own description comes from here (field name "");
		// fields are described by their jsonschema_description tags.
		LookupComment: func(t reflect.Type, field string) string {
			if field != "" {
				return ""
			}
			return typeDescription(t)
		}}
	s := r.ReflectFromType(t)
	s.Version = ""
	s.ID = ""
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("schema for %v: %w", t, err)
	}
	v, err := CompileSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("schema for %v: %w", t, err)
	}
	actual, _ := schemaCache.LoadOrStore(t, &schemaEntry{raw: raw, id: schemaHash(raw), v: v})
	return actual.(*schemaEntry), nil
}

func schemaHash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// SchemaFor builds the Request schema for T under name.
func SchemaFor[T any](name string) (*Schema, error) {
	var zero T
	e, err := schemaEntryOf(reflect.TypeOf(zero))
	if err != nil {
		return nil, err
	}
	return &Schema{Name: name, JSON: e.raw, entry: e}, nil
}

// Hash identifies the schema's JSON: "sha256:<hex>" of it. For schemas built
// by SchemaFor and Structured it was computed once for the Go type; for
// others it is computed on each call.
func (s *Schema) Hash() string {
	if s.entry != nil {
		return s.entry.id
	}
	return schemaHash(s.JSON)
}

// Validator validates JSON documents against one compiled schema.
type Validator struct{ s *sjs.Schema }

// maxCachedValidators bounds the compiled-schema cache: the mock server
// compiles whatever schema a client sends.
const maxCachedValidators = 1024

// validatorCache keys compiled schemas by the SHA-256 of their content: a
// lookup neither copies nor keeps the schema text.
var validatorCache = NewBoundedMap[[sha256.Size]byte, *Validator](maxCachedValidators)

// CompileSchema compiles a JSON schema for validation. Compiled schemas are
// kept by their content in a bounded cache; schemas built from Go types
// carry their validator instead (validatorFor), without touching their content.
func CompileSchema(raw json.RawMessage) (*Validator, error) {
	key := sha256.Sum256(raw)
	if v, ok := validatorCache.Get(key); ok {
		return v, nil
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	c := sjs.NewCompiler()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		return nil, err
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	v := &Validator{s: s}
	validatorCache.Put(key, v)
	return v, nil
}

// CompiledSchema returns the validator of raw when it was compiled before
// (CompileSchema's cache), without compiling anything.
func CompiledSchema(raw json.RawMessage) (*Validator, bool) {
	return validatorCache.Get(sha256.Sum256(raw))
}

// validatorFor returns the compiled validator of a request's schema: the one
// of the Go type it was built from, else the one compiled from its content.
func validatorFor(s *Schema) (*Validator, error) {
	if s.entry != nil {
		return s.entry.v, nil
	}
	return CompileSchema(s.JSON)
}

// validateCalls counts documents validated (the test that every answer is
// validated once reads it).
var validateCalls atomic.Int64

// Validate checks a JSON document. The error lists every violation with its
// JSON pointer.
func (v *Validator) Validate(doc []byte) error {
	validateCalls.Add(1)
	inst, err := sjs.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnparseable, err)
	}
	if err := v.s.Validate(inst); err != nil {
		return fmt.Errorf("%w: %s", ErrSchemaInvalid, flattenValidation(err))
	}
	return nil
}

var enPrinter = message.NewPrinter(language.English)

func flattenValidation(err error) string {
	var ve *sjs.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var lines []string
	var walk func(e *sjs.ValidationError)
	walk = func(e *sjs.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			lines = append(lines, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(enPrinter)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(lines, "; ")
}

// ExtractJSON returns the JSON object or array in text: the whole text when
// it is JSON, else the content of a ```json fence, else the span from the
// first '{' or '[' to its matching close. ok is false when none is found.
func ExtractJSON(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if json.Valid([]byte(t)) && (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) {
		return t, true
	}
	if i := strings.Index(t, "```"); i >= 0 {
		rest := t[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			c := strings.TrimSpace(rest[:j])
			if json.Valid([]byte(c)) {
				return c, true
			}
		}
	}
	for i := 0; i < len(t); i++ {
		if t[i] != '{' && t[i] != '[' {
			continue
		}
		if end := matchClose(t, i); end > i {
			c := t[i : end+1]
			if json.Valid([]byte(c)) {
				return c, true
			}
		}
	}
	return "", false
}

// matchClose returns the index of the bracket closing t[start], honouring
// JSON strings, or -1.
func matchClose(t string, start int) int {
	depth, inStr, esc := 0, false, false
	for i := start; i < len(t); i++ {
		c := t[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

type structuredOptions struct {
	name        string
	description string
	noRepair    bool
}

// StructuredOption adjusts one Structured call.
type StructuredOption func(*structuredOptions)

// WithSchemaName sets the schema name (default: T's SchemaName, else its Go type name).
func WithSchemaName(name string) StructuredOption {
	return func(o *structuredOptions) { o.name = name }
}

// WithSchemaDescription sets the schema description sent to the provider.
func WithSchemaDescription(d string) StructuredOption {
	return func(o *structuredOptions) { o.description = d }
}

// WithoutRepair disables the repair attempt.
func WithoutRepair() StructuredOption { return func(o *structuredOptions) { o.noRepair = true } }

// StructuredResult carries the responses of a Structured call: one, or two
// when a repair attempt was made.
type StructuredResult struct {
	Responses []Response
	Repaired  bool
	Raw       string // the text the value was decoded from
}

// Usage sums the usage of every response.
func (r StructuredResult) Usage() Usage {
	var u Usage
	for _, x := range r.Responses {
		u = u.Add(x.Usage)
	}
	return u
}

// Structured asks p for a value of type T: it attaches T's JSON schema to req,
// extracts and validates the JSON in the answer, and decodes it. On
// unparseable or schema-invalid output it makes exactly one repair attempt
// that shows the model its answer and the validation errors; if that fails
// too, it returns a *Error of class unparseable or schema_invalid carrying
// the raw text. An answer cut off at the token limit (ErrTruncated) is never
// parsed; it also gets the one repair attempt. Other provider errors are
// returned as they are.
func Structured[T any](ctx context.Context, p Provider, req Request, opts ...StructuredOption) (T, StructuredResult, error) {
	var zero T
	var o structuredOptions
	for _, f := range opts {
		f(&o)
	}
	if o.name == "" {
		if n, ok := any(zero).(Named); ok {
			o.name = n.SchemaName()
		} else {
			o.name = strings.ToLower(reflect.TypeOf(zero).Name())
		}
	}
	if o.description == "" {
		o.description = typeDescription(reflect.TypeOf(zero))
	}
	e, err := schemaEntryOf(reflect.TypeOf(zero))
	if err != nil {
		return zero, StructuredResult{}, err
	}
	req.Schema = &Schema{Name: o.name, Description: o.description, JSON: e.raw, entry: e}

	var res StructuredResult
	attempts := 2
	if o.noRepair {
		attempts = 1
	}
	// first is the first attempt's failure, kept as the cause of the
	// repair's (Error.First).
	var first, lastErr *Error
	for attempt := 0; attempt < attempts; attempt++ {
		resp, err := p.Complete(ctx, req)
		var perr *Error
		if err != nil {
			// A cut-off answer, or tool calls where none were offered, is
			// repairable output, not a transport failure.
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrUnofferedToolCalls) {
				return zero, res, chainRepair(err, first)
			}
			res.Responses = append(res.Responses, resp)
			if errors.Is(err, ErrTruncated) {
				perr = &Error{Class: ClassUnparseable, Msg: "the answer was cut off at the token limit; answer again, more concisely", Err: ErrTruncated}
			} else {
				perr = &Error{Class: ClassUnparseable, Err: ErrUnofferedToolCalls}
			}
		} else {
			res.Responses = append(res.Responses, resp)
			var val T
			val, perr = decodeChecked[T](e, resp)
			if perr == nil {
				res.Raw = resp.Text
				res.Repaired = attempt > 0
				return val, res, nil
			}
		}
		perr.Raw = resp.Text
		// The model as every adapter names it (kind:model), or none.
		perr.Provider, perr.Model = resp.From.Kind, resp.From.Model
		if first == nil {
			first = perr
		}
		lastErr = perr
		if attempt+1 < attempts {
			msgs := append([]Message(nil), req.Messages...)
			if resp.Text != "" && !errors.Is(perr, ErrTruncated) {
				// The failed answer, for the model to correct. An empty
				// one is not echoed: an assistant message with neither
				// content nor tool calls is refused by strict servers
				// (HTTP 400); the repair prompt says what the model did.
				msgs = append(msgs, Message{Role: RoleAssistant, Content: resp.Text})
			}
			req.Messages = append(msgs, Message{Role: RoleUser, Content: repairPrompt(o.name, perr, resp)})
		}
	}
	if lastErr != first {
		lastErr.First = first
	}
	return zero, res, lastErr
}

// chainRepair makes err, a repair attempt's failure to answer at all (a
// 400, a timeout), keep the first attempt's failure as its cause.
func chainRepair(err error, first *Error) error {
	var pe *Error
	if first == nil || !errors.As(err, &pe) || pe != err {
		if first != nil {
			return &Error{Class: ClassOf(err), Provider: first.Provider, Model: first.Model, RetryAfter: RetryAfterOf(err), Err: err, First: first}
		}
		return err
	}
	c := *pe
	c.First = first
	return &c
}

// Validation is the outcome of validating one answer against one schema
// (CheckOutput): reported on the Call to the seam's hooks and on the
// Response to the Structured call it returns to, which then validates the
// same answer only once.
type Validation struct {
	Schema string // the schema's identity (Schema.Hash)
	Text   string // the answer validated
	Doc    string // the JSON document in it, null members dropped ("" when invalid)
	Err    *Error // why it is not a valid document (unparseable, schema_invalid); nil when it is
}

// check extracts the JSON document of text and validates it against v.
func check(v *Validator, text string) (doc string, perr *Error) {
	doc, ok := ExtractJSON(text)
	if !ok {
		return "", &Error{Class: ClassUnparseable, Msg: "no JSON found in the answer", Err: ErrUnparseable}
	}
	doc = dropNulls(doc)
	if err := v.Validate([]byte(doc)); err != nil {
		class := ClassSchemaInvalid
		if errors.Is(err, ErrUnparseable) {
			class = ClassUnparseable
		}
		return "", &Error{Class: class, Msg: err.Error()}
	}
	return doc, nil
}

// CheckOutput validates resp's answer against req's schema the way
// Structured does (the JSON document extracted from the text, null members
// dropped) and reports the outcome on the response it returns
// (Response.Validation), so that a Structured call further out validates
// the same answer only once. The
// error is the answer's failure (class unparseable or schema_invalid); it
// is nil when the answer is valid, when the request has no schema, when
// the schema does not compile (Structured reports that) and when resp is a
// turn of tool calls (not an answer yet).
func CheckOutput(req Request, resp Response) (Response, error) {
	if req.Schema == nil || len(resp.ToolCalls) > 0 {
		return resp, nil
	}
	v, err := validatorFor(req.Schema)
	if err != nil {
		return resp, nil
	}
	doc, perr := check(v, resp.Text)
	resp.Validation = &Validation{Schema: req.Schema.Hash(), Text: resp.Text, Doc: doc, Err: perr}
	if perr != nil {
		e := *perr
		return resp, &e
	}
	return resp, nil
}

// decodeChecked decodes resp's answer into T, validating it unless
// CheckOutput already did for this schema and text.
func decodeChecked[T any](e *schemaEntry, resp Response) (T, *Error) {
	var val T
	doc, perr := "", (*Error)(nil)
	if c := resp.Validation; c != nil && c.Schema == e.id && c.Text == resp.Text {
		doc = c.Doc
		if c.Err != nil {
			ce := *c.Err
			perr = &ce
		}
	} else {
		doc, perr = check(e.v, resp.Text)
	}
	if perr != nil {
		return val, perr
	}
	if err := json.Unmarshal([]byte(doc), &val); err != nil {
		return val, &Error{Class: ClassSchemaInvalid, Msg: err.Error()}
	}
	return val, nil
}

func repairPrompt(name string, err *Error, resp Response) string {
	what := "Your previous answer was not"
	switch {
	case len(resp.ToolCalls) > 0 && strings.TrimSpace(resp.Text) == "":
		what = fmt.Sprintf("Your previous answer had no text, only calls of tools that were not offered (%s); it was not", CallNames(resp.ToolCalls))
	case strings.TrimSpace(resp.Text) == "" && !errors.Is(err, ErrTruncated):
		what = "Your previous answer was empty, not"
	}
	why := err.Msg
	if why == "" && err.Err != nil {
		why = err.Err.Error()
	}
	return fmt.Sprintf("%s a valid %q JSON document: %s.\n"+
		"Answer again with only the corrected JSON document, matching the schema exactly.", what, name, why)
}

// dropNulls removes object members whose value is null: in OpenAI's strict
// mode an optional field comes back as null, which means "absent".
func dropNulls(doc string) string {
	if !strings.Contains(doc, "null") {
		return doc
	}
	var v any
	if json.Unmarshal([]byte(doc), &v) != nil {
		return doc
	}
	b, err := json.Marshal(stripNull(v))
	if err != nil {
		return doc
	}
	return string(b)
}

func stripNull(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if x == nil {
				delete(t, k)
			} else {
				t[k] = stripNull(x)
			}
		}
	case []any:
		for i := range t {
			t[i] = stripNull(t[i])
		}
	}
	return v
}

// StructuredRetry is Structured for calls a run cannot do without (the
// decomposition, the seal, the judge, the synthesis): when the output stays
// unparseable or schema-invalid after the repair, it asks again from scratch
// with a new seed, up to attempts times in all.
func StructuredRetry[T any](ctx context.Context, p Provider, req Request, attempts int, opts ...StructuredOption) (T, StructuredResult, error) {
	var all StructuredResult
	for i := 0; ; i++ {
		v, res, err := Structured[T](ctx, p, req, opts...)
		all.Responses = append(all.Responses, res.Responses...)
		all.Raw, all.Repaired = res.Raw, all.Repaired || res.Repaired
		c := ClassOf(err)
		if err == nil || i+1 >= attempts || (c != ClassUnparseable && c != ClassSchemaInvalid) || ctx.Err() != nil {
			return v, all, err
		}
		if req.Seed != nil {
			req.Seed = Int64(*req.Seed + 7919)
		}
	}
}

// SchemaInstruction is the system text that carries the output schema to a
// backend that cannot enforce one (the schema goes in the prompt and
// Structured validates the answer): its name, its description when it has
// one, and the schema itself, whose "description" keywords say what each
// field means. With tools offered too, ToolsInstruction follows it.
func SchemaInstruction(s *Schema, withTools bool) string {
	what := ""
	if d := strings.TrimSpace(s.Description); d != "" {
		what = " (" + strings.TrimSuffix(d, ".") + ")"
	}
	instr := fmt.Sprintf("Answer with only one JSON document (no prose, no code fence) that validates against this JSON schema named %q%s. Each field's \"description\" says what its value means:\n%s", s.Name, what, string(s.JSON))
	if withTools {
		instr += "\n" + ToolsInstruction
	}
	return instr
}

// ToolsInstruction follows the schema instruction when the request also
// offers tools: the model may call them first, and answers in the schema
// only when it answers. Without it, "answer with only one JSON document"
// reads as "answer now".
const ToolsInstruction = "You may call the tools offered to you before answering; the instruction above is about your final answer."
