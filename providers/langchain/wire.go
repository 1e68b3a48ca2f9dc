package langchain

import (
	"cmp"
	"context"
	"errors"
	"strings"

	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/openai"
)

// Tool calling for mistral and ollama-native goes over the OpenAI
// chat-completions wire format, which both servers speak: Mistral's own API
// (<base_url>/v1/chat/completions: tools, tool_calls, tool messages with
// tool_call_id, response_format json_schema) and Ollama's OpenAI-compatible
// endpoint (<base_url>/v1/chat/completions). langchaingo v0.1.14 cannot
// call tools on either (see tools.go), so a request that offers tools, or
// carries the tool calls and results of earlier turns, goes through
// providers/openai instead; every other request keeps the langchaingo path.

// DefaultMistralBaseURL is Mistral's API root (the langchaingo SDK's
// endpoint); the OpenAI-style path is under /v1.
const DefaultMistralBaseURL = "https://api.mistral.ai"

// newWire builds the OpenAI-wire delegate of a mistral or ollama-native
// provider: base is the kind's server root (base_url, the same one the
// langchaingo client is given), keyEnv the key variable ("" sends no key).
func newWire(ref providers.Ref, cfg providers.KindConfig, base, keyEnv string) (providers.Provider, error) {
	wcfg := cfg
	wcfg.BaseURL = strings.TrimRight(base, "/") + "/v1"
	wcfg.APIKeyEnv = keyEnv
	// The kind's options are its own (max_tokens is applied per request);
	// none of the OpenAI kinds' options applies.
	wcfg.Options = nil
	return openai.New(providers.Ref{Kind: "openai-compatible", Model: ref.Model}, wcfg)
}

// usesWire reports whether req needs the OpenAI-wire delegate: it offers
// tools, or its conversation holds tool calls or tool results (the tool
// loop's last turn, which offers none but must show the model what the
// tools answered; the OpenAI format carries that history natively).
func (p *Provider) usesWire(req providers.Request) bool {
	if p.wire == nil {
		return false
	}
	if len(req.Tools) > 0 {
		return true
	}
	for _, m := range req.Messages {
		if m.Role == providers.RoleTool || len(m.ToolCalls) > 0 {
			return true
		}
	}
	return false
}

// completeWire sends req through the OpenAI-wire delegate.
func (p *Provider) completeWire(ctx context.Context, req providers.Request) (providers.Response, error) {
	req.MaxTokens = cmp.Or(req.MaxTokens, p.defaultMaxTokens)
	if p.ref.Kind == "mistral" {
		// Mistral refuses fields it does not know (HTTP 422 "Extra inputs
		// are not permitted"): it has no `user`, and its seed is
		// random_seed, which the OpenAI client cannot send.
		req.Seed = nil
		req.Caller = providers.Caller{}
	}
	resp, err := p.wire.Complete(ctx, req)
	resp.Model = cmp.Or(resp.Model, p.ref.Model)
	var pe *providers.Error
	if errors.As(err, &pe) {
		// The kind the user configured, not the delegate's.
		pe.Provider, pe.Model = p.ref.Kind, p.ref.Model
	}
	return resp, err
}
