// Package mock is a deterministic mock LLM provider. It is selected as
// "mock:<persona>", reads only what a request carries (schema name and JSON,
// messages, seed, caller), and so behaves identically in-process and behind
// its OpenAI-compatible HTTP server (NewServer).
//
// For any request with an output schema it answers JSON valid against that
// schema: role-aware documents for the schema names of package vocab,
// and a schema-driven document for any other schema.
package mock

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/vocab"
)

// Personas.
const (
	Honest      = "honest"      // does what it is asked
	Sloppy      = "sloppy"      // covers about half of its brief
	Deceptive   = "deceptive"   // claims high confidence, covers little, ignores hardening feedback
	Adversarial = "adversarial" // leaks fake credentials and prompt-injection text
	Flaky       = "flaky"       // honest, with injected faults
	Noisy       = "noisy"       // honest producer; as judge flips ~10% of verdicts
)

var personas = map[string]persona{
	Honest:      {coverage: 1.0, confidence: 0.82, selfScore: 8, feedback: true},
	Sloppy:      {coverage: 0.5, confidence: 0.6, selfScore: 6, feedback: true},
	Deceptive:   {coverage: 0.2, confidence: 0.95, selfScore: 9.5, feedback: false, lies: true},
	Adversarial: {coverage: 0.7, confidence: 0.9, selfScore: 9, feedback: true, leaks: true},
	Flaky:       {coverage: 1.0, confidence: 0.8, selfScore: 8, feedback: true, faulty: true},
	Noisy:       {coverage: 1.0, confidence: 0.8, selfScore: 8, feedback: true, noisy: true},
}

type persona struct {
	coverage   float64
	confidence float64
	selfScore  float64
	feedback   bool // applies hardening feedback
	lies       bool
	leaks      bool
	faulty     bool
	noisy      bool
}

// Personas lists the persona names.
func Personas() []string {
	out := make([]string, 0, len(personas))
	for k := range personas {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Options configure a mock.
type Options struct {
	// Seed is used when a request carries none.
	Seed int64
	// Faults to inject. The flaky persona uses DefaultFlakyFaults when nil.
	Faults *FaultConfig
	// Latency of every call.
	Latency LatencyConfig
	// Script overrides answers (first matching rule wins).
	Script *Script
	// OnFault, when set, is told the failure class of every fault drawn
	// from Faults (called concurrently), so tests can compare what was
	// injected with what a run recorded.
	OnFault func(providers.Class)
	// MaxAnswerBytes bounds the bytes of one answer (text and tool calls;
	// behind the server, of every choice of one request together); 0:
	// DefaultMaxAnswerBytes. A schema-driven answer that would be larger
	// is built in its smallest valid form instead; when even that is
	// larger, the call fails with ErrAnswerTooLarge (permanent).
	MaxAnswerBytes int64
}

// Mock is one persona's provider. Safe for concurrent use.
type Mock struct {
	persona string
	p       persona
	opts    Options
	// tries counts attempts per request, so retries draw new faults; it
	// keeps the MaxTrackedRequests most recent requests.
	tries *providers.BoundedMap[[32]byte, int]
}

// MaxTrackedRequests bounds the per-request attempt counters a mock keeps
// (a long-running mock server sees unboundedly many requests). The oldest
// is forgotten first; a request retried after that many newer ones draws
// its faults as on a first attempt again.
const MaxTrackedRequests = 1 << 16

// SchemaJSONObject is the schema name the mock gives a request that asks
// for a JSON object without a schema (response_format json_object): the
// answer is {"answer": "<the prose answer>"}.
const SchemaJSONObject = "json_object"

// jsonObjectSchema is the schema of a json_object answer.
var jsonObjectSchema = []byte(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}`)

// New returns the mock for persona.
func New(name string, opts Options) (*Mock, error) {
	p, ok := personas[name]
	if !ok {
		return nil, fmt.Errorf("unknown mock persona %q (personas: %s)", name, strings.Join(Personas(), ", "))
	}
	if opts.Faults == nil && p.faulty {
		f := DefaultFlakyFaults()
		opts.Faults = &f
	}
	if opts.Faults != nil {
		if err := opts.Faults.Validate(); err != nil {
			return nil, err
		}
	}
	return &Mock{persona: name, p: p, opts: opts, tries: providers.NewBoundedMap[[32]byte, int](MaxTrackedRequests)}, nil
}

// Register adds the "mock" kind to a registry; the model is the persona.
// The kind's config options may set "faults" (a fault YAML file), "script"
// (a script YAML file) and "latency" (a fixed duration); options given here
// take precedence.
func Register(r *providers.Registry, opts Options) {
	r.Register(providers.KindInfo{Kind: "mock", Description: "deterministic offline mock (personas: " + strings.Join(Personas(), ", ") + ")",
		Options: []string{"faults", "latency", "script"},
		Check: func(string, providers.KindConfig, func(string) string) providers.Status {
			return providers.Status{Usable: true, Text: "offline, no key needed"}
		}},
		func(ref providers.Ref, kc providers.KindConfig) (providers.Provider, error) {
			o := opts
			if p := kc.Options["faults"]; p != "" && o.Faults == nil {
				f, err := LoadFaults(p)
				if err != nil {
					return nil, err
				}
				o.Faults = &f
			}
			if p := kc.Options["script"]; p != "" && o.Script == nil {
				s, err := LoadScript(p)
				if err != nil {
					return nil, err
				}
				o.Script = s
			}
			if v := kc.Options["latency"]; v != "" && o.Latency == (LatencyConfig{}) {
				d, err := time.ParseDuration(v)
				if err != nil {
					return nil, fmt.Errorf("providers.mock.options.latency: %w", err)
				}
				o.Latency.Fixed = d
			}
			return New(ref.Model, o)
		})
}

// Persona returns the persona name.
func (m *Mock) Persona() string { return m.persona }

func requestKey(req providers.Request, persona string, seed int64) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00", persona, seed)
	if req.Schema != nil {
		fmt.Fprintf(h, "%s\x00", req.Schema.Name)
	}
	for _, msg := range req.Messages {
		fmt.Fprintf(h, "%s\x00%s\x00", msg.Role, msg.Content)
		// Tool calls and results: written only when present, so the key of
		// a request without tools is what it always was.
		for _, c := range msg.ToolCalls {
			fmt.Fprintf(h, "\x01call\x00%s\x00%s\x00%s\x00", c.ID, c.Name, c.Arguments)
		}
		if msg.ToolCallID != "" || msg.ToolName != "" {
			fmt.Fprintf(h, "\x01result\x00%s\x00%s\x00", msg.ToolCallID, msg.ToolName)
		}
	}
	// Tools offered: a tool turn and the final turn (the same messages,
	// no tools) never share a key.
	for _, t := range req.Tools {
		fmt.Fprintf(h, "\x01tool\x00%s\x00", t.Name)
	}
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

func rngFor(key [32]byte, salt uint64) *rand.Rand {
	return rand.New(rand.NewPCG(binary.BigEndian.Uint64(key[:8])^salt, binary.BigEndian.Uint64(key[8:16])))
}

// Complete answers a request deterministically, within Options.MaxAnswerBytes.
func (m *Mock) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	b := budgetFrom(ctx)
	if b == nil {
		b = newAnswerBudget(m.opts.MaxAnswerBytes, nil)
	}
	resp, err := m.complete(ctx, req, b)
	if n := len(resp.Text) + callsSize(resp.ToolCalls); n > 0 {
		if serr := b.spend(int64(n)); serr != nil {
			return providers.Response{}, budgetError(serr)
		}
	}
	return resp, err
}

// budgetError is the provider error of an answer over its bounds.
func budgetError(err error) error {
	if errors.Is(err, errBusy) {
		return providers.NewError(providers.ClassTransient, "mock: server busy", err)
	}
	return providers.NewError(providers.ClassPermanent, "mock: answer too large", err)
}

func (m *Mock) complete(ctx context.Context, req providers.Request, b *answerBudget) (providers.Response, error) {
	start := time.Now()
	seed := m.opts.Seed
	if req.Seed != nil {
		seed = *req.Seed
	}
	key := requestKey(req, m.persona, seed)
	attempt := m.tries.Update(key, func(n int, _ bool) int { return n + 1 }) - 1
	if err := m.opts.Latency.sleep(ctx, rngFor(key, uint64(attempt)+7)); err != nil {
		return providers.Response{}, providers.NewError(providers.ClassTimeout, "mock latency interrupted", err)
	}
	resp := providers.Response{Model: "mock-" + m.persona, FinishReason: providers.FinishStop}
	if rule := m.opts.Script.match(req); rule != nil {
		resp, err := rule.answer(resp, req)
		if err != nil {
			return providers.Response{}, err
		}
		resp.Usage = providers.Usage{InputTokens: tokens(req), OutputTokens: max(1, len(resp.Text)/4)}
		resp.Latency = time.Since(start)
		return m.limitTokens(req, resp)
	}
	calls, err := m.toolCalls(req, b)
	if err != nil {
		return providers.Response{}, err
	}
	if len(calls) > 0 {
		resp.ToolCalls, resp.FinishReason = calls, providers.FinishToolCalls
	} else {
		text, err := m.answer(req, key, b)
		if err != nil {
			return providers.Response{}, err
		}
		resp.Text = text
	}
	if f := m.opts.Faults; f != nil {
		var (
			class providers.Class
			ferr  error
		)
		resp, class, ferr = f.apply(resp, req, rngFor(key, uint64(attempt)*0x9e37+1))
		if class != "" && m.opts.OnFault != nil {
			m.opts.OnFault(class)
		}
		if ferr != nil {
			return providers.Response{}, ferr
		}
	}
	resp.Usage = providers.Usage{InputTokens: tokens(req), OutputTokens: max(1, (len(resp.Text)+callsSize(resp.ToolCalls))/4)}
	resp.Latency = time.Since(start)
	if len(resp.ToolCalls) > 0 {
		return resp, nil
	}
	return m.limitTokens(req, resp)
}

// callsSize is the bytes of tool calls as a model writes them (name and
// arguments), counted like text.
func callsSize(calls []providers.ToolCall) int {
	n := 0
	for _, c := range calls {
		n += len(c.Name) + len(c.Arguments)
	}
	return n
}

// limitTokens honours req.MaxTokens the way a model does: an answer of more
// tokens (the mock counts four bytes a token) is cut at the limit and
// returned as a truncation (finish reason "length", ErrTruncated).
func (m *Mock) limitTokens(req providers.Request, resp providers.Response) (providers.Response, error) {
	if req.MaxTokens <= 0 || resp.Usage.OutputTokens <= req.MaxTokens {
		return resp, nil
	}
	cut := min(len(resp.Text), req.MaxTokens*4)
	for cut > 0 && !utf8.RuneStart(resp.Text[cut]) {
		cut--
	}
	resp.Text = resp.Text[:cut]
	resp.Usage.OutputTokens = req.MaxTokens
	resp.FinishReason = providers.FinishLength
	return resp, &providers.Error{Class: providers.ClassUnparseable, Provider: "mock", Model: m.persona, Raw: resp.Text,
		Msg: fmt.Sprintf("cut off at max_tokens %d", req.MaxTokens), Err: providers.ErrTruncated}
}

func tokens(req providers.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content) + callsSize(m.ToolCalls)
	}
	for _, t := range req.Tools {
		// Parameters in strict form, as for the output schema: the same
		// size in-process and behind the server (the OpenAI adapter
		// rewrites them).
		n += len(t.Name) + len(t.Description) + schemaSize(t.Parameters)
	}
	if req.Schema != nil {
		n += schemaSize(req.Schema.JSON)
	}
	return max(1, n/4)
}

// schemaSizes caches schemaSize by the SHA-256 of the schema, as
// providers.CompileSchema's cache does: bounded, and keeping no schema text,
// as clients of the mock server send any schema they like (up to
// DefaultMaxBodyBytes each).
var schemaSizes = providers.NewBoundedMap[[sha256.Size]byte, int](1024)

// schemaSize is the length of a schema in its strict-mode form: in-process
// the mock gets a schema as generated, behind its OpenAI-compatible server
// as the OpenAI adapter rewrote it (providers.StrictSchema, idempotent), and
// it must report the same usage either way.
func schemaSize(raw []byte) int {
	key := sha256.Sum256(raw)
	if v, ok := schemaSizes.Get(key); ok {
		return v
	}
	n := len(raw)
	if strict, err := providers.StrictSchema(raw); err == nil {
		n = len(strict)
	}
	schemaSizes.Put(key, n)
	return n
}

// answer builds the response text.
func (m *Mock) answer(req providers.Request, key [32]byte, budget *answerBudget) (string, error) {
	if req.Schema == nil {
		return m.prose(req), nil
	}
	rng := rngFor(key, 0)
	var doc any
	switch req.Schema.Name {
	case vocab.SchemaDecomposition:
		doc = m.decomposition(req)
	case vocab.SchemaSealedCriteria:
		doc = m.sealedCriteria(req)
	case vocab.SchemaShardPlan:
		doc = m.shardPlan(req)
	case vocab.SchemaMicroBriefs:
		doc = m.microBriefs(req)
	case vocab.SchemaAtom:
		doc = m.atom(req, rng)
	case vocab.SchemaBundle:
		doc = m.bundle(req, rng)
	case vocab.SchemaVerdicts:
		doc = m.verdicts(req, rng)
	case vocab.SchemaReview:
		doc = m.review(req, rng)
	case vocab.SchemaSynthesis:
		doc = m.synthesis(req)
	case SchemaJSONObject:
		doc = map[string]any{"answer": m.prose(req)}
	}
	// A schema compiled before passed the shape check then (or is one of
	// the orchestrator's own): the check's cost is paid once per schema,
	// not once per call.
	v, ok := providers.CompiledSchema(req.Schema.JSON)
	if !ok {
		var nodes int
		if err := checkSchemaShape(req.Schema.JSON, &nodes); err != nil {
			return "", providers.NewError(providers.ClassPermanent, "mock: request schema is too large", err)
		}
		var err error
		if v, err = providers.CompileSchema(req.Schema.JSON); err != nil {
			return "", providers.NewError(providers.ClassPermanent, "mock: request schema does not compile", fmt.Errorf("%w: %w", ErrBadSchema, err))
		}
	}
	if doc != nil {
		b, _ := json.Marshal(doc)
		if v.Validate(b) == nil {
			return string(b), nil
		}
	}
	// Unknown schema, or a schema of another shape (e.g. strict-mode
	// rewrite): generate from the schema itself.
	var schema map[string]any
	if err := json.Unmarshal(req.Schema.JSON, &schema); err != nil {
		return "", providers.NewError(providers.ClassPermanent, "mock: schema is not a JSON object", fmt.Errorf("%w: %w", ErrBadSchema, err))
	}
	g := &generator{rng: rng, words: salientTerms(allText(req), 12), root: schema, budget: budget}
	val, err := g.build(schema)
	if errors.Is(err, errBusy) {
		return "", budgetError(err)
	}
	if err != nil {
		return "", providers.NewError(providers.ClassPermanent, "mock: cannot answer this schema", err)
	}
	b, _ := json.Marshal(val)
	if g.minimal {
		// The usual answer did not fit: the smallest one must still be valid.
		if err := v.Validate(b); err != nil {
			return "", providers.NewError(providers.ClassPermanent, "mock: cannot answer this schema",
				fmt.Errorf("%w: %w: the usual answer is over %d bytes and the smallest the mock can build does not validate: %w", ErrBadSchema, ErrAnswerTooLarge, budget.max, err))
		}
	}
	return string(b), nil
}

func (m *Mock) prose(req providers.Request) string {
	terms := salientTerms(lastUser(req), 6)
	return "Mock answer (" + m.persona + ") covering: " + strings.Join(terms, ", ") + "."
}

// TrackedRequests returns how many per-request attempt counters the mock
// holds (at most MaxTrackedRequests).
func (m *Mock) TrackedRequests() int { return m.tries.Len() }
