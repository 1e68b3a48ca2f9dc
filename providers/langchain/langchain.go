// Package langchain is the provider for Anthropic, Google (Gemini), Mistral,
// Bedrock and native Ollama, built on github.com/tmc/langchaingo.
//
// langchaingo cannot enforce a JSON schema on these backends, so structured
// output works by putting the schema in the prompt; providers.Structured then
// extracts the JSON from the answer, validates it and repairs it once.
package langchain

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/bedrock"
	"github.com/tmc/langchaingo/llms/googleai"
	"github.com/tmc/langchaingo/llms/mistral"
	"github.com/tmc/langchaingo/llms/ollama"

	"github.com/swarm-dev/swarm/providers"
)

var kinds = []providers.KindInfo{
	{Kind: "anthropic", Description: "Anthropic Messages API (langchaingo)", DefaultKeyEnv: "ANTHROPIC_API_KEY"},
	{Kind: "google", Description: "Google Gemini (langchaingo)", DefaultKeyEnv: "GOOGLE_API_KEY"},
	{Kind: "mistral", Description: "Mistral (langchaingo)", DefaultKeyEnv: "MISTRAL_API_KEY"},
	{Kind: "bedrock", Description: "AWS Bedrock (langchaingo; AWS credentials from the environment, options.region)"},
	{Kind: "ollama-native", Description: "Ollama native API (langchaingo; no key)", DefaultBaseURL: "http://localhost:11434"},
}

// Register adds this package's kinds to r.
func Register(r *providers.Registry) {
	for _, k := range kinds {
		r.Register(k, New)
	}
}

// Provider is one model behind a langchaingo backend.
type Provider struct {
	ref providers.Ref
	llm llms.Model
}

// New builds the provider for ref. It does not call the network.
func New(ref providers.Ref, cfg providers.KindConfig) (providers.Provider, error) {
	key := cfg.APIKey()
	needKey := func() error {
		if key == "" {
			return fmt.Errorf("%w: set %s to use %s", providers.ErrMissingAPIKey, cfg.APIKeyEnv, ref)
		}
		return nil
	}
	var llm llms.Model
	var err error
	switch ref.Kind {
	case "anthropic":
		if err := needKey(); err != nil {
			return nil, err
		}
		opts := []anthropic.Option{anthropic.WithToken(key), anthropic.WithModel(ref.Model)}
		if cfg.BaseURL != "" {
			opts = append(opts, anthropic.WithBaseURL(cfg.BaseURL))
		}
		llm, err = anthropic.New(opts...)
	case "google":
		if err := needKey(); err != nil {
			return nil, err
		}
		llm, err = googleai.New(context.Background(), googleai.WithAPIKey(key), googleai.WithDefaultModel(ref.Model))
	case "mistral":
		if err := needKey(); err != nil {
			return nil, err
		}
		opts := []mistral.Option{mistral.WithAPIKey(key), mistral.WithModel(ref.Model)}
		if cfg.BaseURL != "" {
			opts = append(opts, mistral.WithEndpoint(cfg.BaseURL))
		}
		llm, err = mistral.New(opts...)
	case "bedrock":
		llm, err = bedrock.New(bedrock.WithModel(ref.Model))
	case "ollama-native":
		opts := []ollama.Option{ollama.WithModel(ref.Model)}
		if cfg.BaseURL != "" {
			opts = append(opts, ollama.WithServerURL(cfg.BaseURL))
		}
		llm, err = ollama.New(opts...)
	default:
		return nil, fmt.Errorf("%w %q", providers.ErrUnknownKind, ref.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return &Provider{ref: ref, llm: llm}, nil
}

// NewWithModel wraps an existing langchaingo model (tests, custom backends).
func NewWithModel(ref providers.Ref, m llms.Model) *Provider { return &Provider{ref: ref, llm: m} }

// SchemaInstruction is the system text that carries the output schema.
func SchemaInstruction(s *providers.Schema) string {
	return fmt.Sprintf("Answer with only one JSON document (no prose, no code fence) that validates against this JSON schema named %q:\n%s", s.Name, string(s.JSON))
}

// Complete sends one request.
func (p *Provider) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	var msgs []llms.MessageContent
	for _, m := range req.Messages {
		role := llms.ChatMessageTypeHuman
		switch m.Role {
		case providers.RoleSystem:
			role = llms.ChatMessageTypeSystem
		case providers.RoleAssistant:
			role = llms.ChatMessageTypeAI
		}
		msgs = append(msgs, llms.TextParts(role, m.Content))
	}
	if req.Schema != nil {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, SchemaInstruction(req.Schema)))
		msgs = mergeSystem(msgs)
	}
	var opts []llms.CallOption
	if req.Temperature != nil {
		opts = append(opts, llms.WithTemperature(*req.Temperature))
	}
	if req.MaxTokens > 0 {
		opts = append(opts, llms.WithMaxTokens(req.MaxTokens))
	}
	if req.Seed != nil {
		opts = append(opts, llms.WithSeed(int(*req.Seed)))
	}
	if req.Schema != nil && p.ref.Kind == "ollama-native" {
		opts = append(opts, llms.WithJSONMode())
	}
	start := time.Now()
	out, err := p.llm.GenerateContent(ctx, msgs, opts...)
	lat := time.Since(start)
	if err != nil {
		return providers.Response{Latency: lat}, p.classify(ctx, err)
	}
	if out == nil || len(out.Choices) == 0 {
		return providers.Response{Latency: lat}, &providers.Error{Class: providers.ClassUnparseable, Provider: p.ref.Kind, Model: p.ref.Model, Msg: "no choices in the response"}
	}
	var text strings.Builder
	var usage providers.Usage
	stop := ""
	for _, c := range out.Choices {
		text.WriteString(c.Content)
		u := NormaliseUsage(c.GenerationInfo)
		usage.InputTokens = max(usage.InputTokens, u.InputTokens)
		usage.OutputTokens += u.OutputTokens
		if c.StopReason != "" {
			stop = c.StopReason
		}
	}
	resp := providers.Response{Text: text.String(), Usage: usage, Model: p.ref.Model, FinishReason: normaliseStop(stop), Latency: lat}
	switch resp.FinishReason {
	case providers.FinishLength:
		return resp, &providers.Error{Class: providers.ClassUnparseable, Provider: p.ref.Kind, Model: p.ref.Model, Raw: resp.Text, Msg: "cut off at the token limit", Err: providers.ErrTruncated}
	case providers.FinishFilter, providers.FinishRefusal:
		return resp, &providers.Error{Class: providers.ClassRefused, Provider: p.ref.Kind, Model: p.ref.Model, Raw: resp.Text, Msg: "refused or filtered (" + stop + ")"}
	}
	return resp, nil
}

// mergeSystem moves system messages to the front as one message (Anthropic
// and Gemini accept a single system prompt).
func mergeSystem(msgs []llms.MessageContent) []llms.MessageContent {
	var sys []string
	var rest []llms.MessageContent
	for _, m := range msgs {
		if m.Role == llms.ChatMessageTypeSystem {
			for _, p := range m.Parts {
				if t, ok := p.(llms.TextContent); ok {
					sys = append(sys, t.Text)
				}
			}
			continue
		}
		rest = append(rest, m)
	}
	if len(sys) == 0 {
		return rest
	}
	return append([]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, strings.Join(sys, "\n\n"))}, rest...)
}

func normaliseStop(s string) string {
	switch strings.ToLower(s) {
	case "max_tokens", "length", "max_tokens_reached", "model_length":
		return providers.FinishLength
	case "safety", "content_filter", "recitation", "blocklist", "prohibited_content":
		return providers.FinishFilter
	case "refusal":
		return providers.FinishRefusal
	case "":
		return providers.FinishStop
	}
	return providers.FinishStop
}

// NormaliseUsage reads token usage from a langchaingo GenerationInfo, whose
// keys differ per backend: Anthropic InputTokens/OutputTokens; Ollama and
// OpenAI-style PromptTokens/CompletionTokens; Gemini and Bedrock
// input_tokens/output_tokens; Mistral a nested "usage" object.
func NormaliseUsage(info map[string]any) providers.Usage {
	var u providers.Usage
	pick := func(keys ...string) int {
		for _, k := range keys {
			if v, ok := toInt(info[k]); ok {
				return v
			}
		}
		return 0
	}
	u.InputTokens = pick("InputTokens", "PromptTokens", "input_tokens", "prompt_tokens", "PromptEvalCount", "inputTokens")
	u.OutputTokens = pick("OutputTokens", "CompletionTokens", "output_tokens", "completion_tokens", "EvalCount", "outputTokens")
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		if nested, ok := info["usage"]; ok {
			switch n := nested.(type) {
			case map[string]any:
				return NormaliseUsage(n)
			default:
				// struct values (e.g. Mistral's UsageInfo): read exported fields by name via fmt
				s := fmt.Sprintf("%+v", n)
				u.InputTokens = fieldInt(s, "PromptTokens")
				u.OutputTokens = fieldInt(s, "CompletionTokens")
			}
		}
	}
	return u
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int32:
		return int(n), true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	case float32:
		return int(n), true
	case string:
		i, err := strconv.Atoi(n)
		return i, err == nil
	}
	return 0, false
}

func fieldInt(s, name string) int {
	m := regexp.MustCompile(name + `:(\d+)`).FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

var statusRe = regexp.MustCompile(`(?i)(?:status(?: code)?[:= ]*|HTTP )(\d{3})`)

// classify maps a backend error to a failure class: langchaingo's error codes
// where it sets them, else an HTTP status found in the message, else the
// context.
func (p *Provider) classify(ctx context.Context, err error) error {
	e := &providers.Error{Provider: p.ref.Kind, Model: p.ref.Model, Err: err}
	mapped := llms.NewErrorMapper(p.ref.Kind).Map(err)
	var le *llms.Error
	code := ""
	if errors.As(mapped, &le) {
		code = string(le.Code)
	}
	status := 0
	if m := statusRe.FindStringSubmatch(err.Error()); m != nil {
		status, _ = strconv.Atoi(m[1])
	}
	e.StatusCode = status
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || code == string(llms.ErrCodeTimeout):
		e.Class = providers.ClassTimeout
	case code == string(llms.ErrCodeQuotaExceeded) || strings.Contains(strings.ToLower(err.Error()), "quota"):
		e.Class = providers.ClassQuota
	case code == string(llms.ErrCodeRateLimit) || status == http.StatusTooManyRequests:
		e.Class = providers.ClassRateLimited
	case code == string(llms.ErrCodeContentFilter):
		e.Class = providers.ClassRefused
	case code == string(llms.ErrCodeProviderUnavailable) || status >= 500:
		e.Class = providers.ClassTransient
	case status > 0:
		e.Class = providers.ClassForStatus(status, "")
	case code == string(llms.ErrCodeAuthentication) || code == string(llms.ErrCodeInvalidRequest):
		e.Class = providers.ClassPermanent
	default:
		e.Class = providers.ClassTransient // connection failures and the like
	}
	return e
}
