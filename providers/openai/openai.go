// Package openai is the provider for OpenAI and every OpenAI-compatible
// server (Azure OpenAI, Ollama, vLLM, LM Studio, swarm's own mock server),
// built on github.com/sashabaranov/go-openai.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/swarm-dev/swarm/providers"
)

// Kinds served by this package.
var kinds = []providers.KindInfo{
	{Kind: "openai", Description: "OpenAI API", DefaultKeyEnv: "OPENAI_API_KEY", DefaultBaseURL: "https://api.openai.com/v1", Options: []string{"organization", "token_limit_param"}, Check: providers.CheckKeyedServer},
	{Kind: "azure", Description: "Azure OpenAI (base_url https://RESOURCE.openai.azure.com required; model = deployment name; options.api_version, default " + DefaultAzureAPIVersion + ")", DefaultKeyEnv: "AZURE_OPENAI_API_KEY", Options: []string{"api_version", "token_limit_param"}, Check: providers.CheckKeyedServer},
	{Kind: "ollama", Description: "Ollama's OpenAI-compatible API (no key)", DefaultBaseURL: "http://localhost:11434/v1", Options: []string{"organization", "token_limit_param"}},
	{Kind: "vllm", Description: "vLLM OpenAI-compatible server (no key)", DefaultBaseURL: "http://localhost:8000/v1", Options: []string{"organization", "token_limit_param"}},
	{Kind: "lmstudio", Description: "LM Studio local server (no key)", DefaultBaseURL: "http://localhost:1234/v1", Options: []string{"organization", "token_limit_param"}},
	{Kind: "openai-compatible", Description: "any OpenAI-compatible server (base_url required; api_key_env optional)", Options: []string{"organization", "token_limit_param"}},
}

// DefaultAzureAPIVersion is the Azure OpenAI api-version sent when
// options.api_version is unset. It must support response_format json_schema
// (structured outputs), which go-openai's own default (2023-05-15) does not.
const DefaultAzureAPIVersion = "2024-10-21"

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
	// reasoning: the model takes no temperature and no max_tokens.
	reasoning bool
	// completionTokens: send the token limit as max_completion_tokens.
	completionTokens bool
	// keyEnv names the API-key variable, for the hint on a 401 or 403.
	keyEnv string
	// redactor scrubs the bodies quoted in errors (KindConfig.Redactor).
	redactor providers.Redactor
}

// New builds the provider for ref.
func New(ref providers.Ref, cfg providers.KindConfig) (providers.Provider, error) {
	return NewWithTransport(ref, cfg, http.DefaultTransport)
}

// NewWithTransport is New with the HTTP transport requests go through:
// kinds that speak this wire with their own dialect (Mistral, see
// providers/langchain) rewrite requests there.
func NewWithTransport(ref providers.Ref, cfg providers.KindConfig, base http.RoundTripper) (providers.Provider, error) {
	key := cfg.APIKey()
	if key == "" && needsKey[ref.Kind] {
		return nil, fmt.Errorf("%w: set %s to use %s", providers.ErrMissingAPIKey, cfg.APIKeyEnv, ref)
	}
	if cfg.BaseURL == "" {
		return nil, fmt.Errorf("%s: providers.%s.base_url is required", ref, ref.Kind)
	}
	var cc goopenai.ClientConfig
	if ref.Kind == "azure" {
		cc = goopenai.DefaultAzureConfig(key, strings.TrimRight(cfg.BaseURL, "/"))
		cc.APIVersion = DefaultAzureAPIVersion
		if v := cfg.Options["api_version"]; v != "" {
			cc.APIVersion = v
		}
		// The model part of azure:NAME is the deployment name, used verbatim
		// (go-openai's default mapper strips dots from "3.5" names).
		cc.AzureModelMapperFunc = func(model string) string { return model }
	} else {
		cc = goopenai.DefaultConfig(key)
		cc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
		cc.OrgID = cfg.Options["organization"] // OpenAI-Organization header
	}
	cc.HTTPClient = &http.Client{Transport: providers.CaptureTransport{Base: base}}
	p := &Provider{ref: ref, client: goopenai.NewClientWithConfig(cc), reasoning: isReasoningModel(ref.Model), keyEnv: cfg.APIKeyEnv, redactor: cfg.Redactor}
	switch cfg.Options["token_limit_param"] {
	case "":
		// OpenAI itself accepts max_completion_tokens for every chat model
		// and rejects max_tokens for reasoning models; other servers
		// (Ollama, vLLM, LM Studio, older Azure api-versions) know max_tokens.
		p.completionTokens = ref.Kind == "openai" || p.reasoning
	case "max_completion_tokens":
		p.completionTokens = true
	case "max_tokens":
		if p.reasoning {
			return nil, fmt.Errorf("%s: options.token_limit_param max_tokens: reasoning models accept only max_completion_tokens", ref)
		}
	default:
		return nil, fmt.Errorf("%s: options.token_limit_param %q: want max_tokens or max_completion_tokens", ref, cfg.Options["token_limit_param"])
	}
	return p, nil
}

// isReasoningModel reports whether model is an OpenAI reasoning model
// (o1, o3, o4, gpt-5 families): these reject max_tokens and any temperature
// other than the default, and go-openai refuses such requests client-side.
func isReasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 { // "openai/o3-mini" on routers
		m = m[i+1:]
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if m == p || strings.HasPrefix(m, p+"-") || strings.HasPrefix(m, p+".") {
			return true
		}
	}
	return false
}

// Complete sends one chat completion.
func (p *Provider) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	cr := goopenai.ChatCompletionRequest{Model: p.ref.Model}
	if p.completionTokens {
		cr.MaxCompletionTokens = req.MaxTokens
	} else {
		//lint:ignore SA1019 servers that predate max_completion_tokens (token_limit_param: max_tokens) read only this field
		cr.MaxTokens = req.MaxTokens
	}
	cr.Messages = chatMessages(req.Messages)
	if len(req.Tools) > 0 {
		tools, err := chatTools(req.Tools)
		if err != nil {
			return providers.Response{}, providers.NewError(providers.ClassPermanent, "tools", err)
		}
		// parallel_tool_calls is left unset: OpenAI's default allows
		// several calls in one answer, and some models and servers reject
		// the parameter itself.
		cr.Tools = tools
	}
	if req.Temperature != nil && !p.reasoning {
		// go-openai omits a zero temperature (omitempty), which would leave
		// the server default of 1; the smallest float32 is sent as 1e-45,
		// which every server treats as greedy decoding.
		cr.Temperature = float32(*req.Temperature)
		if cr.Temperature == 0 {
			cr.Temperature = math.SmallestNonzeroFloat32
		}
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
	hctx, h := providers.WithExchange(ctx)
	start := time.Now()
	out, err := p.client.CreateChatCompletion(hctx, cr)
	lat := time.Since(start)
	if err != nil {
		return providers.Response{Latency: lat}, p.classify(ctx, err, h)
	}
	_, _, hdr, _ := h.Get()
	resp := providers.Response{Model: out.Model, Latency: lat, RateLimit: providers.ParseRateLimit(hdr, time.Now()), Usage: usage(out.Usage)}
	if len(out.Choices) == 0 {
		return resp, &providers.Error{Class: providers.ClassUnparseable, Provider: p.ref.Kind, Model: p.ref.Model, Msg: "no choices in the response"}
	}
	ch := out.Choices[0]
	resp.Text = answerText(ch.Message)
	resp.FinishReason = string(ch.FinishReason)
	for i, tc := range ch.Message.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, providers.ToolCall{ID: providers.CallID(tc.ID, i), Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if len(resp.ToolCalls) > 0 && (ch.FinishReason == goopenai.FinishReasonStop || ch.FinishReason == "" || ch.FinishReason == goopenai.FinishReasonNull) {
		// Some OpenAI-compatible servers (older Ollama, some vLLM parsers)
		// say "stop" although the answer is tool calls.
		resp.FinishReason = providers.FinishToolCalls
	}
	if len(req.Tools) == 0 && len(resp.ToolCalls) > 0 {
		// Calls of tools that were never offered: with text beside them the
		// text is the answer; without, there is no answer at all.
		if strings.TrimSpace(resp.Text) == "" {
			return resp, &providers.Error{Class: providers.ClassUnparseable, Provider: p.ref.Kind, Model: p.ref.Model,
				Msg: "tools called: " + providers.CallNames(resp.ToolCalls), Err: providers.ErrUnofferedToolCalls}
		}
		resp.ToolCalls = nil
		if resp.FinishReason == providers.FinishToolCalls {
			resp.FinishReason = providers.FinishStop
		}
	}
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

// usage converts the wire's usage: cached prompt tokens and reasoning
// tokens are reported inside prompt_tokens and completion_tokens already
// (OpenAI, Mistral), so they are parts of the totals as they stand.
func usage(u goopenai.Usage) providers.Usage {
	out := providers.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if d := u.PromptTokensDetails; d != nil {
		out.CacheReadTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	return out
}

// answerText is the answer in a message: its content when that is a
// string, else the text chunks of its content array (Mistral's reasoning
// models answer [{"type":"thinking",...},{"type":"text","text":...}]);
// thinking chunks are not the answer and are left out.
func answerText(m goopenai.ChatCompletionMessage) string {
	if m.Content != "" || len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, part := range m.MultiContent {
		if part.Type == goopenai.ChatMessagePartTypeText {
			b.WriteString(part.Text)
		}
	}
	return b.String()
}

// classify maps a go-openai error to a failure class. The HTTP status
// comes first: go-openai turns an error body it cannot read as an OpenAI
// error object ({"error":"upstream overloaded"}, an HTML page, an empty
// body) into a RequestError, sometimes wrapping an empty APIError whose
// status is 0, so the status the transport saw is the one trusted. An
// OpenAI error object then refines the class (quota, content filter).
// Whether the request reached the transport matters too: go-openai refuses
// some requests client-side (for example max_tokens or a temperature for a
// reasoning model), and no retry can fix those.
func (p *Provider) classify(ctx context.Context, err error, h *providers.Exchange) error {
	sent, status, hdr, body := h.Get()
	e := &providers.Error{Provider: p.ref.Kind, Model: p.ref.Model, Err: err}
	var api *goopenai.APIError
	var reqErr *goopenai.RequestError
	var ue *url.Error
	answered := status // the status of the answer, before a success is set aside
	if status < 400 {
		status = 0
		switch {
		case errors.As(err, &reqErr) && reqErr.HTTPStatusCode >= 400:
			status = reqErr.HTTPStatusCode
		case errors.As(err, &api) && api.HTTPStatusCode >= 400:
			status = api.HTTPStatusCode
		}
	}
	switch {
	case status > 0:
		e.StatusCode, e.Err = status, nil
		if len(body) == 0 && errors.As(err, &reqErr) {
			body = reqErr.Body
		}
		e.Body = providers.Excerpt(p.redactor, body)
		e.Class = providers.ClassForStatus(status, "")
		e.Msg = providers.StatusHint(status, p.keyEnv)
		// Only an error object that go-openai read whole (its status set)
		// is trusted for its code and message.
		if errors.As(err, &api) && api.HTTPStatusCode == status {
			e.Class = classForAPIError(api)
			if m := strings.TrimSpace(api.Message); m != "" {
				e.Msg += ": " + providers.Excerpt(p.redactor, []byte(m))
			}
		} else if bytes.Contains(body, []byte("insufficient_quota")) {
			e.Class = providers.ClassQuota
		}
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		e.Class = providers.ClassTimeout
	case !sent:
		e.Class, e.Msg = providers.ClassPermanent, "request not sent"
	case errors.As(err, &ue):
		e.Class = providers.ClassTransient // connection refused, reset, DNS
		if ue.Timeout() {
			e.Class = providers.ClassTimeout
		}
	case answered == http.StatusOK && badJSON(err):
		// The server said 200 and sent a body that is not the answer's JSON
		// (or none at all): a retry would get the same, so it is not the
		// server failing but an answer that does not parse.
		e.Class, e.Msg = providers.ClassUnparseable, "the 200 answer's body does not parse"
	default:
		// The request was sent and the answer could not be read (a body
		// cut off, a connection reset): worth another try.
		e.Class = providers.ClassTransient
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			e.Class = providers.ClassTimeout
		}
	}
	e.RetryAfter = providers.RetryAfterHeader(hdr)
	e.RateLimit = providers.ParseRateLimit(hdr, time.Now())
	if e.RetryAfter == 0 && e.Class == providers.ClassRateLimited {
		e.RetryAfter = rateLimitReset(hdr)
	}
	return e
}

// badJSON reports an error of decoding a body that arrived whole: not
// JSON, JSON of the wrong shape, or empty. A body cut off in transit
// (io.ErrUnexpectedEOF) is not one of them.
func badJSON(err error) bool {
	return providers.IsJSONDecodeError(err) || errors.Is(err, io.EOF)
}

// classForAPIError classifies an OpenAI-style error object by its code and
// type first (they are more specific than the status) and its status second.
func classForAPIError(api *goopenai.APIError) providers.Class {
	code := ""
	if api.Code != nil {
		code = fmt.Sprint(api.Code)
	}
	switch {
	case code == "insufficient_quota" || api.Type == "insufficient_quota" ||
		code == "billing_hard_limit_reached" || code == "billing_not_active":
		return providers.ClassQuota
	case code == "content_filter" || code == "content_policy_violation" ||
		(api.InnerError != nil && api.InnerError.Code == "ResponsibleAIPolicyViolation"):
		// Azure's prompt filter (HTTP 400) and OpenAI's policy rejection.
		return providers.ClassRefused
	}
	return providers.ClassForStatus(api.HTTPStatusCode, code)
}

// rateLimitReset reads OpenAI's x-ratelimit-reset-requests / -tokens
// ("1s", "6m0s", "20ms") for whichever budget is used up.
func rateLimitReset(h http.Header) time.Duration {
	var d time.Duration
	for _, kind := range []string{"requests", "tokens"} {
		if h.Get("x-ratelimit-remaining-"+kind) != "0" {
			continue
		}
		if v, err := time.ParseDuration(h.Get("x-ratelimit-reset-" + kind)); err == nil && v > d {
			d = v
		}
	}
	return d
}
