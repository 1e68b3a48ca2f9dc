// Package providers defines the one interface every LLM backend implements,
// the request and response types, typed errors with a failure class, the
// registry that turns "kind:model" strings into providers, middleware, and the
// generic structured-output helper.
//
// This package imports nothing else from swarm.
package providers

import (
	"context"
	"encoding/json"
	"time"
)

// Provider completes one chat request. Implementations must be safe for
// concurrent use and must honour ctx cancellation.
type Provider interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// ProviderFunc adapts a function to the Provider interface.
type ProviderFunc func(ctx context.Context, req Request) (Response, error)

// Complete calls f.
func (f ProviderFunc) Complete(ctx context.Context, req Request) (Response, error) {
	return f(ctx, req)
}

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	// RoleTool carries one tool result back to the model (ToolCallID says
	// which call it answers).
	RoleTool = "tool"
)

// Message is one chat message.
//
// An assistant message may carry the tool calls the model made (ToolCalls,
// Content then often empty); each is answered by one RoleTool message whose
// ToolCallID is the call's ID and whose ToolName is the tool's name (some
// wire formats, e.g. Gemini's, key results by name). See tools.go.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
}

// Schema asks the provider for output that validates against a JSON schema.
// Name is also the mock provider's dispatch key (see package vocab).
type Schema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	JSON        json.RawMessage `json:"schema"`

	// entry is the Go type's schema this one was built from (SchemaFor,
	// Structured): its Hash and compiled validator, computed once per type.
	entry *schemaEntry
}

// Caller says who is asking, for metering, events and the sandbox bridge.
type Caller struct {
	Role    string `json:"role"`     // nexus, seal_author, judge, commander, squad_lead, worker, reviewer, synthesizer
	AgentID string `json:"agent_id"` // e.g. "commander-architecture", "worker-implementation-07"
}

// Request is one completion request.
type Request struct {
	Messages    []Message `json:"messages"`
	Schema      *Schema   `json:"schema,omitempty"`
	Temperature *float64  `json:"temperature,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	// Seed makes sampling reproducible where the backend supports it. The mock
	// provider is fully determined by (messages, schema, seed, persona).
	Seed   *int64 `json:"seed,omitempty"`
	Caller Caller `json:"caller"`
	// Tools the model may call instead of answering (see tools.go). With
	// none, the model must answer (in Schema, when set).
	Tools []Tool `json:"tools,omitempty"`
}

// Usage is token usage, normalised across backends, as the provider billed
// it. The three detail counts are parts of the two totals, never added to
// them: InputTokens is every input token of the call, including those read
// from the provider's prompt cache (CacheReadTokens) and those written to it
// (CacheWriteTokens); OutputTokens is every output token, including the
// model's reasoning or thinking (ReasoningTokens), which providers bill as
// output. Adapters convert each wire format to this: OpenAI reports cached
// and reasoning tokens inside its totals already; Anthropic reports cache
// reads and writes beside input_tokens (so they are added to it); Gemini
// reports thoughtsTokenCount beside candidatesTokenCount (added to output).
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// Total returns input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens,
		ReasoningTokens: u.ReasoningTokens + o.ReasoningTokens, CacheReadTokens: u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens}
}

// Finish reasons, normalised.
const (
	FinishStop    = "stop"
	FinishLength  = "length"
	FinishRefusal = "refusal"
	FinishFilter  = "content_filter"
	// FinishToolCalls: the model stopped to call tools (Response.ToolCalls).
	FinishToolCalls = "tool_calls"
)

// Response is one completion.
type Response struct {
	Text         string        `json:"text"`
	Usage        Usage         `json:"usage"`
	Model        string        `json:"model"`
	FinishReason string        `json:"finish_reason"`
	Latency      time.Duration `json:"latency"`
	// ToolCalls the model made instead of (or besides) answering; only when
	// the request offered Tools. The caller runs them and asks again with
	// the results appended (an assistant message carrying these calls, then
	// one RoleTool message per call).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Cached is set when the answer came from the on-disk cache (package
	// providers/cache) rather than the provider; Latency is then the
	// original call's.
	Cached bool `json:"-"`
	// RateLimit is what the answer's headers said of the caller's
	// rate-limit budgets (ParseRateLimit); nil when they said nothing.
	RateLimit *RateLimitState `json:"-"`

	// Validation is the outcome of validating Text against the request's
	// schema, when a layer of the call did (CheckOutput); Structured then
	// does not validate the same answer again.
	Validation *Validation `json:"-"`
	// From is the provider that answered, as the registry built it
	// (Registry.New stamps it): Structured names it, as kind:model, in the
	// errors it makes of the answer.
	From Ref `json:"-"`
}

// Float returns a pointer to v, for Request.Temperature.
func Float(v float64) *float64 { return &v }

// Int64 returns a pointer to v, for Request.Seed.
func Int64(v int64) *int64 { return &v }
