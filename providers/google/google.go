// Package google is the provider for Google's Gemini models, on the Gemini
// API (kind google) and on Vertex AI (kind vertex), built on Google's own
// Gen AI SDK, google.golang.org/genai.
//
// It replaces langchaingo's googleai backend, which sat on the deprecated
// github.com/google/generative-ai-go: that client always streamed and kept
// the first chunk's usage (an answer longer than one chunk was metered at 0
// output tokens), ignored thoughtsTokenCount, lost the prompt tokens of a
// blocked call, and had no field for a function call's thoughtSignature, so
// Gemini 3's second tool turn failed. Here:
//
//   - a call is one generateContent request, or, with options.stream
//     "true", one streamGenerateContent request whose text is joined across
//     chunks and whose usage is the last usageMetadata sent (Gemini sends
//     running totals; the last one is the bill);
//   - usage is normalised to providers.Usage: InputTokens is
//     promptTokenCount plus toolUsePromptTokenCount, OutputTokens is
//     candidatesTokenCount plus thoughtsTokenCount (thinking is billed as
//     output), ReasoningTokens is thoughtsTokenCount and CacheReadTokens is
//     cachedContentTokenCount;
//   - a JSON schema (Request.Schema) is sent as responseJsonSchema with
//     responseMimeType application/json, unless tools are offered too
//     (Gemini 2.x refuses JSON mode beside function calling), when it is put
//     in the system instruction instead; providers.Structured validates the
//     answer either way;
//   - tools are functionDeclarations with parametersJsonSchema; a
//     functionCall part becomes a providers.ToolCall whose Signature is the
//     part's thoughtSignature, sent back verbatim on the replayed call;
//   - a blocked prompt (promptFeedback.blockReason) and a SAFETY-like
//     finish are refused, with the usage the call was billed for kept in
//     the Response returned beside the error.
//
// The SDK's own retries are off (genai retries only when HTTPOptions.
// RetryOptions is set, and automatic stream continuation is turned off), so
// swarm's retry middleware decides; every request goes through this
// package's HTTP transport, which keeps the status, headers and the head of
// an error body for classify.
package google

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/auth/httptransport"
	"google.golang.org/genai"

	"github.com/swarm-dev/swarm/providers"
)

// DefaultBaseURL is the Gemini API's endpoint.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

var kinds = []providers.KindInfo{
	{Kind: "google", Description: "Google Gemini API (google.golang.org/genai; tool calling with thought signatures; JSON schema output; options.stream \"true\" streams)",
		DefaultKeyEnv: "GOOGLE_API_KEY", DefaultBaseURL: DefaultBaseURL, Options: []string{"stream"}, Check: providers.CheckKeyedServer},
	{Kind: "vertex", Description: "Gemini on Google Cloud Vertex AI (google.golang.org/genai; Application Default Credentials; options.project, else GOOGLE_CLOUD_PROJECT; options.location, else GOOGLE_CLOUD_LOCATION; options.stream \"true\" streams)",
		Options: []string{"project", "location", "stream"}, Check: checkVertex},
}

// Register adds this package's kinds to r.
func Register(r *providers.Registry) {
	for _, k := range kinds {
		r.Register(k, New)
	}
}

// vertexProject and vertexLocation read Vertex AI's project and location
// from options, else the variables genai and gcloud use.
func vertexProject(cfg providers.KindConfig, getenv func(string) string) string {
	return cmp.Or(cfg.Options["project"], getenv("GOOGLE_CLOUD_PROJECT"))
}

func vertexLocation(cfg providers.KindConfig, getenv func(string) string) string {
	return cmp.Or(cfg.Options["location"], getenv("GOOGLE_CLOUD_LOCATION"), getenv("GOOGLE_CLOUD_REGION"))
}

// checkVertex: Vertex AI needs a project, a location and Application
// Default Credentials (a key file named by GOOGLE_APPLICATION_CREDENTIALS,
// or gcloud's application_default_credentials.json). On Google Cloud the
// metadata server provides credentials, which no offline check can see.
func checkVertex(_ string, cfg providers.KindConfig, getenv func(string) string) providers.Status {
	project, location := vertexProject(cfg, getenv), vertexLocation(cfg, getenv)
	switch {
	case project == "":
		return providers.Status{Text: "needs a project (providers.vertex.options.project or GOOGLE_CLOUD_PROJECT)"}
	case location == "":
		return providers.Status{Text: "needs a location (providers.vertex.options.location or GOOGLE_CLOUD_LOCATION, e.g. us-central1 or global)"}
	}
	where := fmt.Sprintf("project %s, location %s", project, location)
	if f := getenv("GOOGLE_APPLICATION_CREDENTIALS"); f != "" {
		return providers.Status{Usable: true, Text: where + ", credentials from GOOGLE_APPLICATION_CREDENTIALS"}
	}
	if f := gcloudADC(getenv); f != "" {
		if _, err := os.Stat(f); err == nil {
			return providers.Status{Usable: true, Text: where + ", credentials from " + f}
		}
	}
	return providers.Status{Text: where + ": no Application Default Credentials found (set GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login`; on Google Cloud the metadata server's are used)"}
}

// gcloudADC is where `gcloud auth application-default login` writes.
func gcloudADC(getenv func(string) string) string {
	if d := getenv("CLOUDSDK_CONFIG"); d != "" {
		return filepath.Join(d, "application_default_credentials.json")
	}
	if d := getenv("APPDATA"); d != "" {
		return filepath.Join(d, "gcloud", "application_default_credentials.json")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "gcloud", "application_default_credentials.json")
	}
	return ""
}

// detectCredentials finds Application Default Credentials (a variable so
// tests can stand in static ones; it reads files, never the network).
var detectCredentials = func() (*auth.Credentials, error) {
	return credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}})
}

// Provider is one Gemini model.
type Provider struct {
	ref    providers.Ref
	client *genai.Client
	stream bool
	// keyEnv names the API-key variable, for the hint on a 401 or 403
	// ("" on Vertex AI, whose hint names the credentials instead).
	keyEnv string
	// redactor scrubs the bodies quoted in errors (KindConfig.Redactor).
	redactor providers.Redactor
}

// New builds the provider for ref. It does not call the network.
func New(ref providers.Ref, cfg providers.KindConfig) (providers.Provider, error) {
	p := &Provider{ref: ref, keyEnv: cfg.APIKeyEnv, redactor: cfg.Redactor}
	switch v := strings.ToLower(strings.TrimSpace(cfg.Options["stream"])); v {
	case "", "false":
	case "true":
		p.stream = true
	default:
		return nil, fmt.Errorf("%s: options.stream %q: want true or false", ref, cfg.Options["stream"])
	}
	// Every request goes through capture (status, headers, error body).
	hc := &http.Client{Transport: providers.CaptureTransport{Base: http.DefaultTransport}}
	if cfg.Timeout > 0 {
		hc.Timeout = cfg.Timeout
	}
	cc := &genai.ClientConfig{HTTPClient: hc}
	if cfg.BaseURL != "" {
		cc.HTTPOptions.BaseURL = strings.TrimRight(cfg.BaseURL, "/") + "/"
	}
	switch ref.Kind {
	case "google":
		key := cfg.APIKey()
		if key == "" {
			return nil, fmt.Errorf("%w: set %s to use %s", providers.ErrMissingAPIKey, cfg.APIKeyEnv, ref)
		}
		cc.Backend, cc.APIKey = genai.BackendGeminiAPI, key
	case "vertex":
		p.keyEnv = ""
		cc.Backend = genai.BackendVertexAI
		cc.Project, cc.Location = vertexProject(cfg, os.Getenv), vertexLocation(cfg, os.Getenv)
		if cc.Project == "" || cc.Location == "" {
			return nil, fmt.Errorf("%s: Vertex AI needs a project and a location: set providers.vertex.options.project and .location (or GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION)", ref)
		}
		// genai adds no credentials to a client it is given: the
		// credentials' transport wraps capture.
		creds, err := detectCredentials()
		if err != nil {
			return nil, fmt.Errorf("%s: Application Default Credentials: %w (set GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login`)", ref, err)
		}
		opts := &httptransport.Options{Credentials: creds, BaseRoundTripper: providers.CaptureTransport{Base: http.DefaultTransport}}
		if qp, err := creds.QuotaProjectID(context.Background()); err == nil && qp != "" {
			opts.Headers = http.Header{"X-Goog-User-Project": []string{qp}}
		}
		ac, err := httptransport.NewClient(opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		ac.Timeout = hc.Timeout
		cc.HTTPClient = ac
	default:
		return nil, fmt.Errorf("%w %q", providers.ErrUnknownKind, ref.Kind)
	}
	client, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	p.client = client
	return p, nil
}

// Complete sends one request.
func (p *Provider) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	contents, system := toContents(req)
	gc := &genai.GenerateContentConfig{AutomaticContinuation: genai.Ptr(false)}
	if req.Temperature != nil {
		gc.Temperature = genai.Ptr(float32(*req.Temperature))
	}
	if req.MaxTokens > 0 {
		gc.MaxOutputTokens = int32(req.MaxTokens)
	}
	if req.Seed != nil {
		gc.Seed = genai.Ptr(int32(*req.Seed))
	}
	if len(req.Tools) > 0 {
		decls, err := toolDecls(req.Tools)
		if err != nil {
			return providers.Response{}, p.permanent("bad tool definition", err)
		}
		gc.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	if req.Schema != nil {
		var schema any
		if err := json.Unmarshal(req.Schema.JSON, &schema); err != nil {
			return providers.Response{}, p.permanent("schema", err)
		}
		if len(req.Tools) == 0 {
			gc.ResponseMIMEType, gc.ResponseJsonSchema = "application/json", schema
		} else {
			system = append(system, providers.SchemaInstruction(req.Schema, true))
		}
	}
	if len(system) > 0 {
		// One system instruction: Gemini keeps only one.
		gc.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: strings.Join(system, "\n\n")}}}
	}
	cctx, h := providers.WithExchange(ctx)
	start := time.Now()
	var acc answer
	var err error
	if p.stream {
		for chunk, cerr := range p.client.Models.GenerateContentStream(cctx, p.ref.Model, contents, gc) {
			if cerr != nil {
				err = cerr
				break
			}
			acc.add(chunk)
		}
	} else {
		var out *genai.GenerateContentResponse
		out, err = p.client.Models.GenerateContent(cctx, p.ref.Model, contents, gc)
		if err == nil {
			acc.add(out)
		}
	}
	lat := time.Since(start)
	resp := acc.response(p.ref.Model, lat)
	if err != nil {
		// A stream cut off after some chunks keeps the usage they reported.
		return resp, p.classify(ctx, err, h)
	}
	return p.finish(req, resp, acc)
}

// finish turns what the model answered into the Response and, when the
// answer cannot be used, the classified error returned beside it.
func (p *Provider) finish(req providers.Request, resp providers.Response, acc answer) (providers.Response, error) {
	if acc.blockReason != "" {
		resp.FinishReason = providers.FinishFilter
		msg := "the prompt was blocked (" + acc.blockReason + ")"
		if acc.blockMessage != "" {
			msg += ": " + acc.blockMessage
		}
		return resp, &providers.Error{Class: providers.ClassRefused, Provider: p.ref.Kind, Model: p.ref.Model, Msg: msg}
	}
	if !acc.candidate {
		return resp, &providers.Error{Class: providers.ClassUnparseable, Provider: p.ref.Kind, Model: p.ref.Model, Msg: "no candidates in the response"}
	}
	resp.FinishReason = normaliseFinish(acc.finish)
	if len(req.Tools) > 0 {
		// Calls only when tools were offered (a model calling unoffered
		// tools gets its text taken as the answer). Gemini says STOP when it
		// stops to call.
		resp.ToolCalls = acc.calls
		if len(resp.ToolCalls) > 0 && resp.FinishReason == providers.FinishStop {
			resp.FinishReason = providers.FinishToolCalls
		}
	}
	switch {
	case resp.FinishReason == providers.FinishLength:
		return resp, &providers.Error{Class: providers.ClassUnparseable, Provider: p.ref.Kind, Model: p.ref.Model, Raw: resp.Text, Msg: "cut off at the token limit", Err: providers.ErrTruncated}
	case resp.FinishReason == providers.FinishFilter:
		msg := "refused or filtered (" + acc.finish + ")"
		if acc.finishMessage != "" {
			msg += ": " + acc.finishMessage
		}
		return resp, &providers.Error{Class: providers.ClassRefused, Provider: p.ref.Kind, Model: p.ref.Model, Raw: resp.Text, Msg: msg}
	case malformedCall[acc.finish]:
		msg := "the model wrote a tool call it could not make (" + acc.finish + ")"
		if acc.finishMessage != "" {
			msg += ": " + acc.finishMessage
		}
		return resp, &providers.Error{Class: providers.ClassUnparseable, Provider: p.ref.Kind, Model: p.ref.Model, Raw: resp.Text, Msg: msg}
	}
	return resp, nil
}

func (p *Provider) permanent(msg string, err error) error {
	return &providers.Error{Class: providers.ClassPermanent, Provider: p.ref.Kind, Model: p.ref.Model, Msg: msg, Err: err}
}

// answer gathers one call's chunks (one, when not streaming).
type answer struct {
	text          strings.Builder
	calls         []providers.ToolCall
	usage         *genai.GenerateContentResponseUsageMetadata
	finish        string
	finishMessage string
	blockReason   string
	blockMessage  string
	modelVersion  string
	candidate     bool
}

// add folds one response (or stream chunk) in: its first candidate's text
// and calls are appended, the last usage, finish reason and model version
// seen win. Thought parts (thinking summaries) are not the answer.
func (a *answer) add(r *genai.GenerateContentResponse) {
	if r == nil {
		return
	}
	if r.UsageMetadata != nil {
		a.usage = r.UsageMetadata
	}
	if r.ModelVersion != "" {
		a.modelVersion = r.ModelVersion
	}
	if f := r.PromptFeedback; f != nil && f.BlockReason != "" && f.BlockReason != genai.BlockedReasonUnspecified {
		a.blockReason, a.blockMessage = string(f.BlockReason), f.BlockReasonMessage
	}
	if len(r.Candidates) == 0 || r.Candidates[0] == nil {
		return
	}
	c := r.Candidates[0]
	a.candidate = true
	if c.FinishReason != "" && c.FinishReason != genai.FinishReasonUnspecified {
		a.finish, a.finishMessage = string(c.FinishReason), c.FinishMessage
	}
	if c.Content == nil {
		return
	}
	for _, part := range c.Content.Parts {
		switch {
		case part == nil || part.Thought:
		case part.FunctionCall != nil:
			args := "{}"
			if part.FunctionCall.Args != nil {
				if b, err := json.Marshal(part.FunctionCall.Args); err == nil {
					args = string(b)
				}
			}
			a.calls = append(a.calls, providers.ToolCall{ID: providers.CallID(part.FunctionCall.ID, len(a.calls)),
				Name: part.FunctionCall.Name, Arguments: args, Signature: part.ThoughtSignature})
		default:
			a.text.WriteString(part.Text)
		}
	}
}

// response is the Response so far (text, usage, model), without finish
// reason or tool calls (finish sets those).
func (a *answer) response(model string, lat time.Duration) providers.Response {
	return providers.Response{Text: a.text.String(), Usage: usage(a.usage), Model: cmp.Or(strings.TrimPrefix(a.modelVersion, "models/"), model), Latency: lat}
}

// usage normalises Gemini's usageMetadata (see the package comment).
func usage(u *genai.GenerateContentResponseUsageMetadata) providers.Usage {
	if u == nil {
		return providers.Usage{}
	}
	return providers.Usage{
		InputTokens:     int(u.PromptTokenCount + u.ToolUsePromptTokenCount),
		OutputTokens:    int(u.CandidatesTokenCount + u.ThoughtsTokenCount),
		ReasoningTokens: int(u.ThoughtsTokenCount),
		CacheReadTokens: int(u.CachedContentTokenCount),
	}
}

// malformedCall are the finish reasons of a function call the model got
// wrong: the answer is neither usable text nor a call to run.
var malformedCall = map[string]bool{"MALFORMED_FUNCTION_CALL": true, "UNEXPECTED_TOOL_CALL": true, "TOO_MANY_TOOL_CALLS": true}

// normaliseFinish maps Gemini's finishReason to a providers.Finish* value.
func normaliseFinish(f string) string {
	switch f {
	case "MAX_TOKENS":
		return providers.FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return providers.FinishFilter
	}
	return providers.FinishStop
}

// ---------- errors ----------

// classify maps a genai error to a failure class. The HTTP status the
// transport saw comes first (genai's APIError carries the code written in
// the body, which a proxy's error body may lack), then Gemini's error
// object refines it: a 429 whose QuotaFailure names a per-day quota is a
// spent quota, not a rate limit, and its RetryInfo retryDelay is the wait
// when no Retry-After header says one.
func (p *Provider) classify(ctx context.Context, err error, h *providers.Exchange) error {
	sent, rawStatus, hdr, body := h.Get()
	status := rawStatus
	e := &providers.Error{Provider: p.ref.Kind, Model: p.ref.Model, Err: err}
	var api genai.APIError
	isAPI := errors.As(err, &api)
	var apiPtr *genai.APIError
	if !isAPI && errors.As(err, &apiPtr) && apiPtr != nil {
		api, isAPI = *apiPtr, true
	}
	if status < 400 {
		status = 0
		if isAPI && api.Code >= 400 {
			status = api.Code
		}
	}
	var ue *url.Error
	var ne net.Error
	switch {
	case status > 0:
		e.StatusCode = status
		e.Class = providers.ClassForStatus(status, "")
		details := ""
		if isAPI {
			d, _ := json.Marshal(api.Details)
			details = strings.ToLower(api.Message + " " + string(d))
		} else {
			details = strings.ToLower(string(body))
		}
		if status == http.StatusTooManyRequests && strings.Contains(details, "perday") {
			e.Class = providers.ClassQuota // no retry helps before tomorrow
		}
		if isAPI && strings.TrimSpace(api.Message) != "" {
			// Gemini's message, rather than the JSON around it; genai puts a
			// body it cannot read as an error object here whole.
			body = []byte(api.Message)
			if s := api.Status; s != "" && s == strings.ToUpper(s) && !strings.Contains(s, " ") {
				body = []byte(s + ": " + api.Message)
			}
		}
		e.Body = providers.Excerpt(p.redactor, body)
		e.Msg = providers.StatusHint(status, p.keyEnv)
		if p.ref.Kind == "vertex" && (status == http.StatusUnauthorized || status == http.StatusForbidden) {
			e.Msg = "access denied: check the Application Default Credentials and that they may use this model in this project"
		}
		// genai's error text holds the whole body, quoted in Body already.
		e.Err = nil
		e.RetryAfter = providers.RetryAfterHeader(hdr)
		if e.RetryAfter == 0 && isAPI {
			e.RetryAfter = retryDelay(api.Details)
		}
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		e.Class = providers.ClassTimeout
	case !sent:
		e.Class, e.Msg = providers.ClassPermanent, "request not sent"
	case errors.As(err, &ue) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne):
		e.Class = providers.ClassTransient // connection refused or reset, a body cut off
	case rawStatus >= 200 && rawStatus < 300:
		// A success status whose answer does not parse: the model's (or a
		// proxy's) fault, and retrying the same request is no cure.
		e.Class, e.Msg = providers.ClassUnparseable, "the answer does not parse"
	default:
		e.Class = providers.ClassTransient
	}
	return e
}

// retryDelay reads the retryDelay of a google.rpc.RetryInfo detail
// ("26s", "45.837906927s").
func retryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if !strings.HasSuffix(fmt.Sprint(d["@type"]), "google.rpc.RetryInfo") {
			continue
		}
		if v, err := time.ParseDuration(fmt.Sprint(d["retryDelay"])); err == nil && v > 0 {
			return v
		}
	}
	return 0
}

// ---------- requests ----------

// noParameters is the schema sent for a tool that declares none.
var noParameters = map[string]any{"type": "object", "properties": map[string]any{}}

// toolDecls maps tools to function declarations, their parameters as
// JSON schema (parametersJsonSchema), as written.
func toolDecls(tools []providers.Tool) ([]*genai.FunctionDeclaration, error) {
	out := make([]*genai.FunctionDeclaration, 0, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("tools[%d]: name is empty", i)
		}
		var params any = noParameters
		if raw := bytes.TrimSpace(t.Parameters); len(raw) > 0 && string(raw) != "null" {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil || m == nil {
				return nil, fmt.Errorf("tool %s: parameters must be a JSON schema object", t.Name)
			}
			if _, ok := m["type"]; !ok {
				m["type"] = "object"
			}
			params = m
		}
		out = append(out, &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: params})
	}
	return out, nil
}

// toContents maps the conversation to Gemini contents and the system
// texts (sent as one systemInstruction). An assistant message's tool calls
// become functionCall parts carrying their id and thoughtSignature; the
// results that follow become functionResponse parts of one user content,
// keyed by the tool's name (and the call's id). A request without tools
// (the tool loop's last turn, which must answer) gets earlier calls and
// results as text: Gemini wants declared functions for functionCall parts.
// Consecutive contents of one role are joined.
func toContents(req providers.Request) ([]*genai.Content, []string) {
	var system []string
	var out []*genai.Content
	add := func(role string, parts ...*genai.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, &genai.Content{Role: role, Parts: parts})
	}
	asText := len(req.Tools) == 0
	for _, m := range req.Messages {
		switch m.Role {
		case providers.RoleSystem:
			system = append(system, m.Content)
		case providers.RoleAssistant:
			var parts []*genai.Part
			if m.Content != "" {
				parts = append(parts, &genai.Part{Text: m.Content})
			}
			for _, c := range m.ToolCalls {
				if asText {
					parts = append(parts, &genai.Part{Text: fmt.Sprintf("[tool call %s (id %s): %s]", c.Name, c.ID, c.Arguments)})
					continue
				}
				parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: c.ID, Name: c.Name, Args: objectArgs(c.Arguments)}, ThoughtSignature: c.Signature})
			}
			add(genai.RoleModel, parts...)
		case providers.RoleTool:
			if asText {
				add(genai.RoleUser, &genai.Part{Text: fmt.Sprintf("[tool result of %s (id %s)]\n%s", m.ToolName, m.ToolCallID, m.Content)})
				continue
			}
			add(genai.RoleUser, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: m.ToolCallID, Name: m.ToolName, Response: resultObject(m.Content)}})
		default:
			add(genai.RoleUser, &genai.Part{Text: m.Content})
		}
	}
	return out, system
}

// objectArgs is a call's arguments as an object: the model's calls are
// always objects; a conversation written elsewhere may hold anything else,
// sent as {}.
func objectArgs(s string) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil || m == nil {
		return map[string]any{}
	}
	return m
}

// resultObject is a tool's result as functionResponse.response: the result
// itself when it is a JSON object, else {"output": text} (Gemini's
// documented key).
func resultObject(s string) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) == nil && m != nil {
		return m
	}
	return map[string]any{"output": s}
}
