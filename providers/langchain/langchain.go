// Package langchain is the provider for Anthropic, Bedrock and native
// Ollama, built on github.com/tmc/langchaingo, and for Mistral over the
// OpenAI wire format through providers/openai (wire.go says why). (Gemini
// is providers/google, on Google's own SDK.)
//
// langchaingo cannot enforce a JSON schema on these backends, so structured
// output works by putting the schema in the prompt; providers.Structured then
// extracts the JSON from the answer, validates it and repairs it once.
//
// Tool calling goes through langchaingo's llms.WithTools, llms.ToolCall and
// llms.ToolCallResponse where the backend's adapter has them (anthropic,
// bedrock with Anthropic models); mistral (every request) and
// ollama-native call tools over the OpenAI wire format through
// providers/openai (wire.go);
// tools.go says which cannot and why.
package langchain

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
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/bedrock"
	"github.com/tmc/langchaingo/llms/ollama"

	"github.com/swarm-dev/swarm/providers"
)

var kinds = []providers.KindInfo{
	{Kind: "anthropic", Description: "Anthropic Messages API (langchaingo; tool calling; options.max_tokens, default 4096)", DefaultKeyEnv: "ANTHROPIC_API_KEY", Options: []string{"max_tokens"}, Check: providers.CheckKeyedServer},
	{Kind: "mistral", Description: "Mistral (its OpenAI-style API at base_url/v1 through go-openai; tool calling; reasoning models' content chunks; base_url default " + DefaultMistralBaseURL + ")", DefaultKeyEnv: "MISTRAL_API_KEY", Check: providers.CheckKeyedServer},
	{Kind: "bedrock", Description: "AWS Bedrock InvokeModel (langchaingo; tool calling for Anthropic models; AWS credentials from the environment or profile; options.region, else AWS_REGION)", Options: []string{"region"}, Check: checkBedrock},
	{Kind: "ollama-native", Description: "Ollama native /api/chat (langchaingo; no key; tool calling over Ollama's OpenAI-compatible base_url/v1)", DefaultBaseURL: "http://localhost:11434"},
}

// checkBedrock: Bedrock needs AWS credentials and a region, from the
// environment or (the region) from options.region.
func checkBedrock(_ string, cfg providers.KindConfig, getenv func(string) string) providers.Status {
	creds := getenv("AWS_ACCESS_KEY_ID") != "" || getenv("AWS_PROFILE") != ""
	region := cfg.Options["region"] != "" || getenv("AWS_REGION") != "" || getenv("AWS_DEFAULT_REGION") != ""
	switch {
	case !creds:
		return providers.Status{Text: "needs AWS credentials (AWS_ACCESS_KEY_ID or AWS_PROFILE)"}
	case !region:
		return providers.Status{Text: "needs a region (providers.bedrock.options.region or AWS_REGION)"}
	default:
		return providers.Status{Usable: true, Text: "AWS credentials found"}
	}
}

// DefaultAnthropicMaxTokens is the max_tokens sent to Anthropic (which
// requires one) when neither the request nor options.max_tokens sets it.
// Every current Claude model accepts 4096; langchaingo's own default is 2048.
const DefaultAnthropicMaxTokens = 4096

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
	// defaultMaxTokens is sent when a request sets none (0: the backend's).
	defaultMaxTokens int
	// keyEnv names the API-key variable, for the hint on a 401 or 403.
	keyEnv string
	// redactor scrubs the bodies quoted in errors (KindConfig.Redactor).
	redactor providers.Redactor
	// wire is the OpenAI-wire delegate: every request of mistral, and the
	// requests with tools of ollama-native (see wire.go).
	wire providers.Provider
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
	p := &Provider{ref: ref, keyEnv: cfg.APIKeyEnv, redactor: cfg.Redactor}
	if v := cfg.Options["max_tokens"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s: options.max_tokens %q: want a positive integer", ref, v)
		}
		p.defaultMaxTokens = n
	}
	// Every HTTP client we can hand to langchaingo records the status,
	// headers and last body line of each call (see capture).
	hc := &http.Client{Transport: capture{base: http.DefaultTransport}}
	var err error
	switch ref.Kind {
	case "anthropic":
		if err := needKey(); err != nil {
			return nil, err
		}
		if p.defaultMaxTokens == 0 {
			p.defaultMaxTokens = DefaultAnthropicMaxTokens
		}
		// mergeTurns: one message per turn on the wire (see tools.go).
		ahc := &http.Client{Transport: capture{base: mergeTurns{base: http.DefaultTransport}}}
		opts := []anthropic.Option{anthropic.WithToken(key), anthropic.WithModel(ref.Model), anthropic.WithHTTPClient(ahc)}
		if cfg.BaseURL != "" {
			opts = append(opts, anthropic.WithBaseURL(strings.TrimRight(cfg.BaseURL, "/")))
		}
		p.llm, err = anthropic.New(opts...)
	case "mistral":
		if err := needKey(); err != nil {
			return nil, err
		}
		// Every Mistral request goes over the OpenAI wire (wire.go says why).
		p.wire, err = newWire(ref, cfg, cmp.Or(cfg.BaseURL, DefaultMistralBaseURL), cfg.APIKeyEnv)
	case "bedrock":
		var client *bedrockruntime.Client
		client, err = bedrockClient(cfg)
		if err == nil {
			p.llm, err = bedrock.New(bedrock.WithModel(ref.Model), bedrock.WithClient(client))
		}
	case "ollama-native":
		opts := []ollama.Option{ollama.WithModel(ref.Model), ollama.WithHTTPClient(hc)}
		if cfg.BaseURL != "" {
			opts = append(opts, ollama.WithServerURL(strings.TrimRight(cfg.BaseURL, "/")))
		}
		p.llm, err = ollama.New(opts...)
		if err == nil {
			// Ollama needs no key; none is sent (as on the native path).
			p.wire, err = newWire(ref, cfg, cmp.Or(cfg.BaseURL, "http://localhost:11434"), "")
		}
	default:
		return nil, fmt.Errorf("%w %q", providers.ErrUnknownKind, ref.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return p, nil
}

// bedrockClient builds the Bedrock runtime client from the AWS default
// chain (environment, shared config, SSO, instance role), with
// options.region (else AWS_REGION), base_url as an endpoint override, and
// the SDK's own retries off: swarm's retry middleware decides.
func bedrockClient(cfg providers.KindConfig) (*bedrockruntime.Client, error) {
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRetryMaxAttempts(1)}
	if r := cfg.Options["region"]; r != "" {
		opts = append(opts, awsconfig.WithRegion(r))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, awsconfig.WithBaseEndpoint(strings.TrimRight(cfg.BaseURL, "/")))
	}
	ac, err := awsconfig.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		return nil, err
	}
	if ac.Region == "" {
		return nil, errors.New("no AWS region: set providers.bedrock.options.region or AWS_REGION")
	}
	// The SDK's own client (it honours AWS_CA_BUNDLE and the like), seen
	// through the capture transport so errors keep their body.
	return bedrockruntime.NewFromConfig(ac, func(o *bedrockruntime.Options) {
		if o.HTTPClient != nil {
			o.HTTPClient = doCapture{capture{base: doTransport{o.HTTPClient}}}
		}
	}), nil
}

// doTransport turns an SDK HTTP client (anything with Do) into a
// RoundTripper; doCapture turns the capture transport back into one.
type doTransport struct{ c bedrockruntime.HTTPClient }

func (t doTransport) RoundTrip(r *http.Request) (*http.Response, error) { return t.c.Do(r) }

type doCapture struct{ t capture }

func (d doCapture) Do(r *http.Request) (*http.Response, error) { return d.t.RoundTrip(r) }

// NewWithModel wraps an existing langchaingo model (tests, custom backends).
func NewWithModel(ref providers.Ref, m llms.Model) *Provider { return &Provider{ref: ref, llm: m} }

type callKey struct{}

// call is what the capture transport saw of one request.
type call struct {
	mu     sync.Mutex
	status int
	header http.Header
	tail   lastLine
	head   []byte // the first providers.MaxErrBody bytes of an error response's body
}

func (c *call) snapshot() (int, http.Header, string) {
	if c == nil {
		return 0, nil, ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status, c.header, c.tail.String()
}

// statusCode is the status of the call's last response, without copying
// its body's last line as snapshot does.
func (c *call) statusCode() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

func (c *call) errBody() []byte {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.head
}

// capture records the status, headers and last body line of responses
// for the call in the request's context. langchaingo drops all three: the
// Retry-After header, the status of an Ollama error, and Ollama's final
// NDJSON line with done_reason.
type capture struct {
	base http.RoundTripper
}

func (t capture) RoundTrip(r *http.Request) (*http.Response, error) {
	c, _ := r.Context().Value(callKey{}).(*call)
	resp, err := t.base.RoundTrip(r)
	if resp == nil || c == nil {
		return resp, err
	}
	c.mu.Lock()
	c.status, c.header = resp.StatusCode, resp.Header.Clone()
	c.tail, c.head = lastLine{}, nil
	c.mu.Unlock()
	resp.Body = &tailReader{rc: resp.Body, c: c}
	return resp, err
}

type tailReader struct {
	rc io.ReadCloser
	c  *call
}

func (t *tailReader) Read(b []byte) (int, error) {
	n, err := t.rc.Read(b)
	if n > 0 {
		t.c.mu.Lock()
		t.c.tail.Write(b[:n])
		if t.c.status >= 400 {
			t.c.head = providers.AppendHead(t.c.head, b[:n])
		}
		t.c.mu.Unlock()
	}
	return n, err
}

func (t *tailReader) Close() error { return t.rc.Close() }

// lastLine keeps the last non-blank line written to it (bounded).
type lastLine struct{ last, cur []byte }

const maxLine = 1 << 20

func (l *lastLine) Write(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(l.cur)+len(b) <= maxLine {
				l.cur = append(l.cur, b...)
			}
			return
		}
		if len(l.cur)+i <= maxLine {
			l.cur = append(l.cur, b[:i]...)
		}
		if len(bytes.TrimSpace(l.cur)) > 0 {
			l.last = append(l.last[:0], l.cur...)
		}
		l.cur = l.cur[:0]
		b = b[i+1:]
	}
}

func (l *lastLine) String() string {
	if len(bytes.TrimSpace(l.cur)) > 0 {
		return string(l.cur)
	}
	return string(l.last)
}

// Complete sends one request.
func (p *Provider) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	if p.usesWire(req) {
		return p.completeWire(ctx, req)
	}
	if len(req.Tools) > 0 {
		if why := p.toolsUnsupported(); why != "" {
			return providers.Response{}, &providers.Error{Class: providers.ClassPermanent, Provider: p.ref.Kind, Model: p.ref.Model,
				Msg: fmt.Sprintf("kind %s does not support tool calling: %s", p.ref.Kind, why), Err: ErrToolsUnsupported}
		}
	}
	msgs := p.toMessages(req)
	if req.Schema != nil {
		// The schema stays in the prompt when tools are offered too (these
		// backends have no schema mode that coexists with tools); one more
		// line tells the model the instruction is about its final answer,
		// so it may call tools first.
		instr := providers.SchemaInstruction(req.Schema, len(req.Tools) > 0)
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, instr))
	}
	// One system prompt, first: Anthropic glues several together without a
	// separator and Gemini keeps only the last.
	msgs = mergeSystem(msgs)
	var opts []llms.CallOption
	if req.Temperature != nil {
		opts = append(opts, llms.WithTemperature(*req.Temperature))
	}
	if mt := cmp.Or(req.MaxTokens, p.defaultMaxTokens); mt > 0 {
		opts = append(opts, llms.WithMaxTokens(mt))
	}
	if req.Seed != nil {
		opts = append(opts, llms.WithSeed(int(*req.Seed)))
	}
	if req.Schema != nil && p.ref.Kind == "ollama-native" {
		// JSON mode would forbid tool calls, but ollama-native sends a
		// request with tools through the OpenAI wire, so the two never meet.
		opts = append(opts, llms.WithJSONMode())
	}
	if len(req.Tools) > 0 {
		defs, err := p.toolDefs(req.Tools)
		if err != nil {
			return providers.Response{}, &providers.Error{Class: providers.ClassPermanent, Provider: p.ref.Kind, Model: p.ref.Model, Msg: "bad tool definition", Err: err}
		}
		opts = append(opts, llms.WithTools(defs))
	}
	c := &call{}
	cctx := context.WithValue(ctx, callKey{}, c)
	start := time.Now()
	out, err := p.llm.GenerateContent(cctx, msgs, opts...)
	lat := time.Since(start)
	if status := c.statusCode(); err == nil && status >= 400 {
		// An error status whose body the SDK read as an empty answer
		// (Ollama with an empty error body).
		err = fmt.Errorf("HTTP status %d with an answer the SDK took for a success", status)
	}
	if err != nil {
		return providers.Response{Latency: lat}, p.classify(ctx, err, c)
	}
	if out == nil || len(out.Choices) == 0 {
		return providers.Response{Latency: lat}, &providers.Error{Class: providers.ClassUnparseable, Provider: p.ref.Kind, Model: p.ref.Model, Msg: "no choices in the response"}
	}
	var text strings.Builder
	var usage providers.Usage
	stop := ""
	for _, ch := range out.Choices {
		text.WriteString(ch.Content)
		// Every backend copies the whole response's usage into each choice
		// (Anthropic: one choice per content block), so take it once.
		u := NormaliseUsage(ch.GenerationInfo)
		usage.InputTokens = max(usage.InputTokens, u.InputTokens)
		usage.OutputTokens = max(usage.OutputTokens, u.OutputTokens)
		usage.CacheReadTokens = max(usage.CacheReadTokens, u.CacheReadTokens)
		usage.CacheWriteTokens = max(usage.CacheWriteTokens, u.CacheWriteTokens)
		if ch.StopReason != "" && (stop == "" || normaliseStop(stop) == providers.FinishStop) {
			stop = ch.StopReason
		}
	}
	if p.ref.Kind == "bedrock" && usage.CacheReadTokens == 0 && usage.CacheWriteTokens == 0 {
		// langchaingo's Bedrock client keeps only input_tokens and
		// output_tokens of an Anthropic answer; its cache reads and
		// writes are read from the body the capture transport saw.
		_, _, last := c.snapshot()
		var body struct {
			Usage struct {
				CacheRead  int `json:"cache_read_input_tokens"`
				CacheWrite int `json:"cache_creation_input_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal([]byte(last), &body) == nil {
			usage.CacheReadTokens, usage.CacheWriteTokens = body.Usage.CacheRead, body.Usage.CacheWrite
			usage.InputTokens += body.Usage.CacheRead + body.Usage.CacheWrite
		}
	}
	if p.ref.Kind == "ollama-native" && stop == "" {
		// langchaingo drops Ollama's done_reason; the final NDJSON line has it.
		_, _, last := c.snapshot()
		var fin struct {
			DoneReason string `json:"done_reason"`
		}
		if json.Unmarshal([]byte(last), &fin) == nil {
			stop = fin.DoneReason
		}
	}
	_, hdr, _ := c.snapshot()
	resp := providers.Response{Text: text.String(), Usage: usage, Model: p.ref.Model, FinishReason: normaliseStop(stop), Latency: lat,
		RateLimit: providers.ParseRateLimit(hdr, time.Now())}
	if len(req.Tools) > 0 {
		// Calls only when tools were offered (a model calling unoffered
		// tools gets its text taken as the answer). The model stopped for
		// them when it stopped normally with calls: Anthropic and Bedrock
		// say "tool_use", Gemini says STOP.
		resp.ToolCalls = toolCalls(out.Choices)
		if len(resp.ToolCalls) > 0 && resp.FinishReason == providers.FinishStop {
			resp.FinishReason = providers.FinishToolCalls
		}
	}
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

// normaliseStop maps a backend's stop reason to a providers.Finish*
// value: Anthropic and Bedrock "max_tokens", Mistral and OpenAI-style
// "length", Ollama's done_reason "length", Gemini's genai enum names
// ("FinishReasonMaxTokens", "FinishReasonSafety") and their REST forms
// ("MAX_TOKENS", "SAFETY").
func normaliseStop(s string) string {
	k := strings.ToLower(strings.TrimPrefix(s, "FinishReason"))
	k = strings.ReplaceAll(k, "_", "")
	switch k {
	case "maxtokens", "length", "maxtokensreached", "modellength":
		return providers.FinishLength
	case "safety", "contentfilter", "recitation", "blocklist", "prohibitedcontent", "spii", "imagesafety":
		return providers.FinishFilter
	case "refusal":
		return providers.FinishRefusal
	}
	return providers.FinishStop
}

// NormaliseUsage reads token usage from a langchaingo GenerationInfo, whose
// keys differ per backend: Anthropic InputTokens/OutputTokens (and its
// cache reads and writes, CacheReadInputTokens/CacheCreationInputTokens,
// added to the input); Ollama and OpenAI-style PromptTokens/CompletionTokens;
// Gemini and Bedrock input_tokens/output_tokens; a nested "usage" object.
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
	// Anthropic counts the tokens read from and written to its prompt
	// cache beside input_tokens, not in it: they are added, and kept as
	// the details of the input (providers.Usage).
	u.CacheReadTokens = pick("CacheReadInputTokens", "cache_read_input_tokens")
	u.CacheWriteTokens = pick("CacheCreationInputTokens", "cache_creation_input_tokens")
	u.InputTokens += u.CacheReadTokens + u.CacheWriteTokens
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		if nested, ok := info["usage"]; ok {
			m, ok := nested.(map[string]any)
			if !ok {
				// A struct (Mistral's UsageInfo, json tags prompt_tokens /
				// completion_tokens): read it through its JSON form.
				if b, err := json.Marshal(nested); err == nil {
					_ = json.Unmarshal(b, &m)
				}
			}
			if m != nil {
				return NormaliseUsage(m)
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

// statusRe finds an HTTP status in error texts: Anthropic's "unexpected
// status code: 529", Mistral's "(HTTP Error 429)", "HTTP status: 503".
var statusRe = regexp.MustCompile(`(?i)(?:status(?: code)?[:= ]*|HTTP (?:Error |status: )?)(\d{3})\b`)

// classify maps a backend error to a failure class. It prefers what the
// wire said (the HTTP status and headers the capture transport saw, or
// the status carried by the AWS SDK's errors), then typed SDK
// errors, then langchaingo's string-based error codes.
func (p *Provider) classify(ctx context.Context, err error, c *call) error {
	e := &providers.Error{Provider: p.ref.Kind, Model: p.ref.Model, Err: err}
	status, hdr, tail := c.snapshot()
	answered := status // the status of the answer, before a success is set aside
	if status < 400 {
		status = 0
	}
	msg := strings.ToLower(err.Error())
	var aerr smithy.APIError
	var rerr *awshttp.ResponseError
	awsCode := ""
	if errors.As(err, &rerr) {
		status = rerr.HTTPStatusCode()
		if rerr.Response != nil {
			hdr = rerr.Response.Header
		}
	}
	if errors.As(err, &aerr) {
		awsCode = aerr.ErrorCode()
	}
	if status == 0 {
		if m := statusRe.FindStringSubmatch(err.Error()); m != nil {
			status, _ = strconv.Atoi(m[1])
		}
	}
	e.StatusCode = status
	e.RetryAfter = providers.RetryAfterHeader(hdr)
	e.RateLimit = providers.ParseRateLimit(hdr, time.Now())
	code := ""
	var le *llms.Error
	if errors.As(llms.NewErrorMapper(p.ref.Kind).Map(err), &le) {
		code = string(le.Code)
	}
	var ne net.Error
	switch {
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) ||
		awsCode == "ModelTimeoutException" || status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		e.Class = providers.ClassTimeout
	case strings.Contains(msg, "completed due to max_tokens"):
		// Bedrock's Anthropic adapter turns stop_reason max_tokens into an error.
		e.Class, e.Err = providers.ClassUnparseable, fmt.Errorf("%w: %w", providers.ErrTruncated, err)
	case isQuota(msg, awsCode, status):
		e.Class = providers.ClassQuota
	case status == http.StatusTooManyRequests || awsCode == "ThrottlingException":
		e.Class = providers.ClassRateLimited
	case awsCode == "ServiceUnavailableException" || awsCode == "InternalServerException" || awsCode == "ModelNotReadyException":
		e.Class = providers.ClassTransient
	case status > 0:
		// 529 (Anthropic overloaded) and every 5xx are transient; other 4xx permanent.
		e.Class = providers.ClassForStatus(status, "")
		if status == http.StatusBadRequest && (code == string(llms.ErrCodeContentFilter)) {
			e.Class = providers.ClassRefused
		}
	case errors.Is(err, anthropic.ErrEmptyResponse) || errors.Is(err, ollama.ErrEmptyResponse):
		e.Class = providers.ClassUnparseable
		if strings.Contains(tail, `"stop_reason":"refusal"`) {
			e.Class = providers.ClassRefused
		}
	case code == string(llms.ErrCodeRateLimit):
		e.Class = providers.ClassRateLimited
	case code == string(llms.ErrCodeContentFilter):
		e.Class = providers.ClassRefused
	case code == string(llms.ErrCodeAuthentication) || code == string(llms.ErrCodeInvalidRequest) ||
		code == string(llms.ErrCodeResourceNotFound) || code == string(llms.ErrCodeTokenLimit) || code == string(llms.ErrCodeNotImplemented):
		e.Class = providers.ClassPermanent // e.g. Ollama's "model not found" (status lost in its stream)
	case answered == http.StatusOK && badJSON(err):
		// The server said 200 and sent a body that is not the answer's
		// JSON: a retry would get the same, so the answer is unparseable,
		// not the server failing.
		e.Class, e.Msg = providers.ClassUnparseable, "the 200 answer's body does not parse"
	default:
		e.Class = providers.ClassTransient // connection refused, reset, a cut-off body, "server busy"
	}
	if status > 0 {
		// Say what the status means and quote the body (bounded): what the
		// capture transport read, else what the SDK kept of it.
		body := c.errBody()
		switch {
		case len(body) > 0:
		case aerr != nil:
			body = []byte(aerr.ErrorCode() + ": " + aerr.ErrorMessage())
		default:
			body = []byte(err.Error())
		}
		e.Body = providers.Excerpt(p.redactor, body)
		e.Msg = providers.StatusHint(status, p.keyEnv)
		if p.ref.Kind == "bedrock" && (status == http.StatusUnauthorized || status == http.StatusForbidden) {
			e.Msg = "access denied: check the AWS credentials and that they may use this model"
		}
		// The SDK's error text may hold a whole response body.
		e.Err = providers.WithMessage(e.Err, providers.Excerpt(p.redactor, []byte(e.Err.Error())))
	}
	return e
}

// badJSON reports an error of decoding a body that arrived whole: not JSON
// or JSON of the wrong shape. The SDKs under langchaingo do not all wrap
// the decoder's error, so their texts are recognised too.
func badJSON(err error) bool {
	if providers.IsJSONDecodeError(err) {
		return true
	}
	m := err.Error()
	return strings.Contains(m, "invalid character") || strings.Contains(m, "cannot unmarshal")
}

// isQuota reports a spent budget (no retry helps) as opposed to a rate limit.
func isQuota(msg, awsCode string, status int) bool {
	switch {
	case awsCode == "ServiceQuotaExceededException" || status == http.StatusPaymentRequired:
		return true
	case strings.Contains(msg, "insufficient_quota") || strings.Contains(msg, "credit balance"):
		return true
	case status == http.StatusTooManyRequests:
		// A 429 is a rate limit unless it names a per-day quota (Gemini's
		// quotaId, when Gemini was served here; providers/google reads it
		// now): "billing" in a 429's text does not make it a spent budget.
		return strings.Contains(msg, "perday")
	}
	return strings.Contains(msg, "billing") || strings.Contains(msg, "quota exceeded")
}
