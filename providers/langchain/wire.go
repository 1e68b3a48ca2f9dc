package langchain

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/openai"
)

// Mistral goes over the OpenAI chat-completions wire format for every
// request, and ollama-native for requests with tools: Mistral's own API
// (<base_url>/v1/chat/completions: tools, tool_calls, tool messages with
// tool_call_id, response_format json_schema) and Ollama's OpenAI-compatible
// endpoint (<base_url>/v1/chat/completions) both speak it. langchaingo
// v0.1.14 cannot call tools on either (see tools.go), and its Mistral SDK
// (gage-technologies/mistral-go v1.1.0, the newest) reads a message's
// content as a string only: the answers of Mistral's reasoning models,
// whose content is an array of chunks ({"type":"thinking",...},
// {"type":"text",...}), fail to decode in it, lose their usage, and it
// ignores the request's context. So every Mistral request goes through
// providers/openai, whose client reads content arrays (the text chunks are
// the answer, thinking is left out); an ollama-native request without
// tools or tool history keeps the langchaingo path.

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
	rt := http.DefaultTransport
	if ref.Kind == "mistral" {
		rt = mistralDialect{base: rt}
	}
	return openai.NewWithTransport(providers.Ref{Kind: "openai-compatible", Model: ref.Model}, wcfg, rt)
}

// mistralDialect rewrites an OpenAI chat request into Mistral's dialect:
// Mistral refuses fields it does not know (HTTP 422 "Extra inputs are not
// permitted"), so `user` is dropped, and its seed is called random_seed.
type mistralDialect struct{ base http.RoundTripper }

func (t mistralDialect) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.Body == nil {
		return t.base.RoundTrip(r)
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) == nil {
		delete(top, "user")
		if seed, ok := top["seed"]; ok {
			delete(top, "seed")
			top["random_seed"] = seed
		}
		if nb, err := json.Marshal(top); err == nil {
			b = nb
		}
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	r.ContentLength = int64(len(b))
	return t.base.RoundTrip(r)
}

// usesWire reports whether req needs the OpenAI-wire delegate: it offers
// tools, or its conversation holds tool calls or tool results (the tool
// loop's last turn, which offers none but must show the model what the
// tools answered; the OpenAI format carries that history natively).
func (p *Provider) usesWire(req providers.Request) bool {
	if p.wire == nil {
		return false
	}
	if p.ref.Kind == "mistral" {
		return true
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
	resp, err := p.wire.Complete(ctx, req)
	resp.Model = cmp.Or(resp.Model, p.ref.Model)
	var pe *providers.Error
	if errors.As(err, &pe) {
		// The kind the user configured, not the delegate's.
		pe.Provider, pe.Model = p.ref.Kind, p.ref.Model
	}
	return resp, err
}
