// Package openai is the provider for OpenAI and every OpenAI-compatible
// server (Azure OpenAI, Ollama, vLLM, LM Studio, swarm's own mock server),
// built on github.com/sashabaranov/go-openai.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/swarm-dev/swarm/providers"
)

// Kinds served by this package.
var kinds = []providers.KindInfo{
	{Kind: "openai", Description: "OpenAI API", DefaultKeyEnv: "OPENAI_API_KEY", DefaultBaseURL: "https://api.openai.com/v1"},
	{Kind: "azure", Description: "Azure OpenAI (base_url required; options.api_version)", DefaultKeyEnv: "AZURE_OPENAI_API_KEY"},
	{Kind: "ollama", Description: "Ollama's OpenAI-compatible API (no key)", DefaultBaseURL: "http://localhost:11434/v1"},
	{Kind: "vllm", Description: "vLLM OpenAI-compatible server (no key)", DefaultBaseURL: "http://localhost:8000/v1"},
	{Kind: "lmstudio", Description: "LM Studio local server (no key)", DefaultBaseURL: "http://localhost:1234/v1"},
	{Kind: "openai-compatible", Description: "any OpenAI-compatible server (base_url required; api_key_env optional)"},
}

// needsKey lists kinds that cannot work without an API key.
var needsKey = map[string]bool{"openai": true, "azure": true}

// Register adds this package's kinds to r.
func Register(r *providers.Registry) {
	for _, k := range kinds {
		r.Register(k, New)
	}
}

// Provider is one model behind an OpenAI-compatible API.
type Provider struct {
	ref    providers.Ref
	client *goopenai.Client
}

// New builds the provider for ref.
func New(ref providers.Ref, cfg providers.KindConfig) (providers.Provider, error) {
	key := cfg.APIKey()
	if key == "" && needsKey[ref.Kind] {
		return nil, fmt.Errorf("%w: set %s to use %s", providers.ErrMissingAPIKey, cfg.APIKeyEnv, ref)
	}
	if cfg.BaseURL == "" {
		return nil, fmt.Errorf("%s: providers.%s.base_url is required", ref, ref.Kind)
	}
	var cc goopenai.ClientConfig
	if ref.Kind == "azure" {
		cc = goopenai.DefaultAzureConfig(key, cfg.BaseURL)
		if v := cfg.Options["api_version"]; v != "" {
			cc.APIVersion = v
		}
	} else {
		cc = goopenai.DefaultConfig(key)
		cc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	cc.HTTPClient = &http.Client{Transport: headerCapture{base: http.DefaultTransport}}
	return &Provider{ref: ref, client: goopenai.NewClientWithConfig(cc)}, nil
}

type holderKey struct{}

// holder receives the response headers of one call (go-openai does not
// expose them, and Retry-After lives there).
type holder struct {
	mu sync.Mutex
	h  http.Header
}

type headerCapture struct{ base http.RoundTripper }

func (t headerCapture) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if resp != nil {
		if h, ok := r.Context().Value(holderKey{}).(*holder); ok {
			h.mu.Lock()
			h.h = resp.Header.Clone()
			h.mu.Unlock()
		}
	}
	return resp, err
}

// Complete sends one chat completion.
func (p *Provider) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	cr := goopenai.ChatCompletionRequest{Model: p.ref.Model, MaxTokens: req.MaxTokens}
	for _, m := range req.Messages {
		cr.Messages = append(cr.Messages, goopenai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
	}
	if req.Temperature != nil {
		cr.Temperature = float32(*req.Temperature)
	}
	if req.Seed != nil {
		s := int(*req.Seed)
		cr.Seed = &s
	}
	if req.Caller.Role != "" {
		cr.User = req.Caller.Role + "/" + req.Caller.AgentID
	}
	if req.Schema != nil {
		strict, err := StrictSchema(req.Schema.JSON)
		if err != nil {
			return providers.Response{}, providers.NewError(providers.ClassPermanent, "schema", err)
		}
		cr.ResponseFormat = &goopenai.ChatCompletionResponseFormat{
			Type:       goopenai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &goopenai.ChatCompletionResponseFormatJSONSchema{Name: req.Schema.Name, Description: req.Schema.Description, Schema: json.RawMessage(strict), Strict: true},
		}
	}
	h := &holder{}
	start := time.Now()
	out, err := p.client.CreateChatCompletion(context.WithValue(ctx, holderKey{}, h), cr)
	lat := time.Since(start)
	if err != nil {
		h.mu.Lock()
		hdr := h.h
		h.mu.Unlock()
		return providers.Response{Latency: lat}, p.classify(ctx, err, hdr)
	}
	resp := providers.Response{Model: out.Model, Latency: lat,
		Usage: providers.Usage{InputTokens: out.Usage.PromptTokens, OutputTokens: out.Usage.CompletionTokens}}
	if len(out.Choices) == 0 {
		return resp, &providers.Error{Class: providers.ClassUnparseable, Provider: p.ref.Kind, Model: p.ref.Model, Msg: "no choices in the response"}
	}
	ch := out.Choices[0]
	resp.Text = ch.Message.Content
	resp.FinishReason = string(ch.FinishReason)
	switch {
	case ch.Message.Refusal != "":
		resp.FinishReason = providers.FinishRefusal
		return resp, &providers.Error{Class: providers.ClassRefused, Provider: p.ref.Kind, Model: p.ref.Model, Raw: ch.Message.Refusal, Msg: "the model refused: " + ch.Message.Refusal}
	case ch.FinishReason == goopenai.FinishReasonContentFilter:
		return resp, &providers.Error{Class: providers.ClassRefused, Provider: p.ref.Kind, Model: p.ref.Model, Raw: resp.Text, Msg: "blocked by the content filter"}
	case ch.FinishReason == goopenai.FinishReasonLength:
		return resp, &providers.Error{Class: providers.ClassUnparseable, Provider: p.ref.Kind, Model: p.ref.Model, Raw: resp.Text, Msg: "cut off at the token limit", Err: providers.ErrTruncated}
	}
	return resp, nil
}

func (p *Provider) classify(ctx context.Context, err error, hdr http.Header) error {
	e := &providers.Error{Provider: p.ref.Kind, Model: p.ref.Model, Err: err}
	var api *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case errors.As(err, &api):
		code := fmt.Sprint(api.Code)
		if api.Code == nil {
			code = api.Type
		}
		e.StatusCode, e.Class, e.Msg = api.HTTPStatusCode, providers.ClassForStatus(api.HTTPStatusCode, code), api.Message
		if api.Type == "insufficient_quota" {
			e.Class = providers.ClassQuota
		}
		e.Err = nil
	case errors.As(err, &reqErr):
		e.StatusCode, e.Class = reqErr.HTTPStatusCode, providers.ClassForStatus(reqErr.HTTPStatusCode, "")
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		e.Class = providers.ClassTimeout
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			e.Class = providers.ClassTimeout
		} else {
			e.Class = providers.ClassTransient // connection refused, reset, DNS
		}
	}
	e.RetryAfter = retryAfter(hdr)
	return e
}

// retryAfter reads retry-after-ms, or Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}
