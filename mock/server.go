package mock

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/swarm-dev/swarm/providers"
)

// ServerOptions configure the OpenAI-compatible server.
type ServerOptions struct {
	// Persona used when the request's model does not name one.
	Persona string
	Options Options
	// MaxBodyBytes bounds a request body (default DefaultMaxBodyBytes); a
	// larger one is answered 413.
	MaxBodyBytes int64
	// Limits: prompt-cache reporting and rate limits (server_limits.go).
	Limits Limits
	// MaxInFlightAnswerBytes bounds the answer bytes of all the requests
	// being answered at once (default DefaultMaxInFlightAnswerBytes; at
	// least Options.MaxAnswerBytes). Each request reserves its answer's
	// bytes as the answer grows; one that cannot is answered 503 with
	// Retry-After. Each request's own bound is Options.MaxAnswerBytes.
	MaxInFlightAnswerBytes int64
}

// DefaultMaxBodyBytes is the default request body limit of the server.
const DefaultMaxBodyBytes = 4 << 20

// allowedMethod is the method the server accepts on path ("" for a path
// it does not serve).
func allowedMethod(path string) string {
	switch {
	case path == "/v1/chat/completions":
		return http.MethodPost
	case path == "/v1/models", strings.HasPrefix(path, "/v1/models/") && len(path) > len("/v1/models/"):
		return http.MethodGet
	}
	return ""
}

// NewServer returns an OpenAI-compatible handler (POST /v1/chat/completions,
// GET /v1/models, GET /v1/models/{id}) backed by the mock. A request whose
// model names a persona ("honest", "mock-honest" or "mock:honest") uses that
// persona. Every error is an OpenAI-shaped JSON error
// ({"error":{"message","type","param","code"}}), including 404 for an
// unknown path or model and 405 for a wrong method; a request the official
// API would refuse (no messages, an unknown role, a tool message without
// tool_call_id, n out of 1..128, a named tool_choice not among the tools)
// is answered 400 naming the field.
//
// Tool calling follows OpenAI's chat format: the request's tools (type
// function) become Request.Tools, an assistant message's tool_calls and a
// tool message's tool_call_id become Message.ToolCalls and ToolCallID (with
// ToolName taken from the assistant call it answers), and a Response with
// ToolCalls is answered with message.tool_calls, content null and
// finish_reason "tool_calls" (streamed as one delta when stream is set).
// tool_choice "none" withholds the tools; "required" and a named function
// make the answer call tools (the named one only), with calls chosen from
// the offered tools when the persona has none of its own;
// parallel_tool_calls false keeps one call. n > 1 answers n choices, choice
// i asked with seed+i.
func NewServer(o ServerOptions) (http.Handler, error) {
	return newServer(o, nil)
}

// newServer is NewServer answering every request with p when p is not nil
// (tests use it to put a provider other than a persona behind the wire).
func newServer(o ServerOptions, p providers.Provider) (http.Handler, error) {
	if o.Persona == "" {
		o.Persona = Honest
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Options.MaxAnswerBytes <= 0 {
		o.Options.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if o.MaxInFlightAnswerBytes <= 0 {
		o.MaxInFlightAnswerBytes = max(DefaultMaxInFlightAnswerBytes, o.Options.MaxAnswerBytes)
	}
	if o.MaxInFlightAnswerBytes < o.Options.MaxAnswerBytes {
		return nil, fmt.Errorf("the bound on answer bytes in flight (%d) is below the bound on one answer (%d): no answer of the largest size could be served", o.MaxInFlightAnswerBytes, o.Options.MaxAnswerBytes)
	}
	if _, err := New(o.Persona, o.Options); err != nil {
		return nil, err
	}
	s := &server{opts: o, mocks: map[string]*Mock{}, provider: p, limits: newLimiter(o.Limits),
		inFlight: semaphore.NewWeighted(o.MaxInFlightAnswerBytes)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /v1/models/{id}", s.model)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern == "" {
			if m := allowedMethod(r.URL.Path); m != "" {
				w.Header().Set("Allow", m)
				writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, m))
				return
			}
			writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", fmt.Sprintf("unknown URL %s %s (this server serves POST /v1/chat/completions, GET /v1/models and GET /v1/models/{id})", r.Method, r.URL.Path))
			return
		}
		mux.ServeHTTP(w, r)
	}), nil
}

type server struct {
	opts ServerOptions
	// provider, when set, answers instead of the personas (newServer).
	provider providers.Provider
	mu       sync.Mutex
	mocks    map[string]*Mock
	limits   *limiter // server_limits.go
	// inFlight holds the answer bytes of the requests being answered
	// (bounds.go).
	inFlight *semaphore.Weighted
}

// personaOf is the persona a model id names ("honest", "mock-honest" or
// "mock:honest").
func personaOf(model string) (string, bool) {
	name := strings.TrimPrefix(strings.TrimPrefix(model, "mock:"), "mock-")
	_, ok := personas[name]
	return name, ok
}

func (s *server) mock(model string) (*Mock, string) {
	name, ok := personaOf(model)
	if !ok {
		name = s.opts.Persona
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.mocks[name]
	if !ok {
		m, _ = New(name, s.opts.Options)
		s.mocks[name] = m
	}
	return m, name
}

type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream,omitempty"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
	Temperature         *float64 `json:"temperature,omitempty"`
	MaxTokens           int      `json:"max_tokens,omitempty"`
	MaxCompletionTokens int      `json:"max_completion_tokens,omitempty"`
	Seed                *int64   `json:"seed,omitempty"`
	User                string   `json:"user,omitempty"`
	ResponseFormat      *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema,omitempty"`
	} `json:"response_format,omitempty"`
	Tools []chatTool `json:"tools,omitempty"`
	// ToolChoice is "auto" (the default: the persona decides), "none"
	// (the tools are withheld), "required" (the answer calls at least one
	// tool) or {"type":"function","function":{"name":X}} (it calls X).
	ToolChoice json.RawMessage `json:"tool_choice,omitempty"`
	// ParallelToolCalls false keeps at most one call per answer.
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty"`
	// N is the number of choices (1..maxChoices; default 1).
	N *int `json:"n,omitempty"`
}

// chatTool is one entry of a request's tools.
type chatTool struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// wireToolCall is a tool call as OpenAI's chat format writes it.
type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// tools maps the request's tools to providers.Tool; an error names the field.
// nodes counts the subschemas of the request's schemas (checkSchemaShape).
func (cr chatRequest) tools(nodes *int) ([]providers.Tool, error) {
	var out []providers.Tool
	for i, t := range cr.Tools {
		if t.Type != "function" {
			return nil, fmt.Errorf("tools[%d].type %q: want function", i, t.Type)
		}
		if t.Function == nil || t.Function.Name == "" {
			return nil, fmt.Errorf("tools[%d].function.name is required", i)
		}
		if p := bytes.TrimSpace(t.Function.Parameters); len(p) > 0 && string(p) != "null" {
			if p[0] != '{' {
				return nil, fmt.Errorf("tools[%d].function.parameters must be a JSON schema object", i)
			}
			if err := checkSchemaShape(p, nodes); err != nil {
				return nil, fmt.Errorf("tools[%d].function.parameters: %w", i, err)
			}
			if _, err := providers.CompileSchema(p); err != nil {
				return nil, fmt.Errorf("tools[%d].function.parameters: %w", i, err)
			}
		}
		out = append(out, providers.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return out, nil
}

// chatMessage is a request message. Its content is a string or, as some
// SDKs send it, an array of content parts whose text parts are joined.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// messages maps the request's messages. A tool message must answer a call
// of an earlier assistant message (as OpenAI requires), whose function name
// becomes its ToolName. An error names the field; code is the OpenAI error
// code to answer it with.
func (cr chatRequest) messages() (msgs []providers.Message, code string, err error) {
	msgs = make([]providers.Message, len(cr.Messages))
	names := map[string]string{} // tool call id -> function name
	for i, cm := range cr.Messages {
		if code, err := cm.check(i); err != nil {
			return nil, code, err
		}
		m, err := cm.message()
		if err != nil {
			return nil, "invalid_content", fmt.Errorf("messages[%d].content: %w", i, err)
		}
		for j, tc := range cm.ToolCalls {
			if cm.Role != providers.RoleAssistant {
				return nil, "invalid_tool_calls", fmt.Errorf("messages[%d].tool_calls: only assistant messages carry tool calls", i)
			}
			if tc.ID == "" || tc.Function.Name == "" {
				return nil, "invalid_tool_calls", fmt.Errorf("messages[%d].tool_calls[%d]: id and function.name are required", i, j)
			}
			if tc.Type != "" && tc.Type != "function" {
				return nil, "invalid_tool_calls", fmt.Errorf("messages[%d].tool_calls[%d].type %q: want function", i, j, tc.Type)
			}
			names[tc.ID] = tc.Function.Name
			m.ToolCalls = append(m.ToolCalls, providers.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		if cm.Role == providers.RoleTool {
			name, ok := names[cm.ToolCallID]
			if !ok {
				return nil, "invalid_tool_calls", fmt.Errorf("messages[%d].tool_call_id %q answers no tool call of an earlier assistant message", i, cm.ToolCallID)
			}
			m.ToolCallID, m.ToolName = cm.ToolCallID, name
		}
		msgs[i] = m
	}
	return msgs, "", nil
}

// check refuses message i as the official API does: a role it does not
// know, a tool message without tool_call_id, an assistant message with
// neither content nor tool_calls. code is the OpenAI error code.
func (m chatMessage) check(i int) (code string, err error) {
	switch m.Role {
	case providers.RoleSystem, roleDeveloper, providers.RoleUser, providers.RoleAssistant, providers.RoleTool:
	case "function":
		return "invalid_value", fmt.Errorf("messages[%d].role %q: the deprecated function role is not served; use tool (with tool_call_id)", i, m.Role)
	default:
		return "invalid_value", fmt.Errorf("messages[%d].role %q: want system, developer, user, assistant or tool", i, m.Role)
	}
	c := bytes.TrimSpace(m.Content)
	noContent := len(c) == 0 || string(c) == "null"
	switch {
	case m.Role == providers.RoleTool && m.ToolCallID == "":
		return "missing_required_parameter", fmt.Errorf("messages[%d].tool_call_id is required for a tool message", i)
	case m.Role == providers.RoleAssistant && noContent && len(m.ToolCalls) == 0:
		return "missing_required_parameter", fmt.Errorf("messages[%d].content is required for an assistant message without tool_calls", i)
	}
	return "", nil
}

// roleDeveloper is OpenAI's newer name for the system role; the mock reads
// it as a system message.
const roleDeveloper = "developer"

func (m chatMessage) message() (providers.Message, error) {
	out := providers.Message{Role: m.Role}
	if m.Role == roleDeveloper {
		out.Role = providers.RoleSystem
	}
	c := bytes.TrimSpace(m.Content)
	switch {
	case len(c) == 0 || string(c) == "null":
	case c[0] == '"':
		if err := json.Unmarshal(c, &out.Content); err != nil {
			return out, err
		}
	case c[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(c, &parts); err != nil {
			return out, err
		}
		var texts []string
		for _, p := range parts {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		out.Content = strings.Join(texts, "\n")
	default:
		return out, fmt.Errorf("content must be a string or an array of content parts")
	}
	return out, nil
}

// apiError is an answer in OpenAI's error shape.
type apiError struct {
	status                int
	typ, code, param, msg string
	header                map[string]string // set on the answer (Retry-After)
}

// badRequest is a 400 invalid_request_error about param.
func badRequest(code, param, msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: code, param: param, msg: msg}
}

// writeAPIError writes e as {"error":{"message","type","param","code"}}
// (param null when e names none).
func writeAPIError(w http.ResponseWriter, e *apiError) {
	for k, v := range e.header {
		w.Header().Set(k, v)
	}
	var param any
	if e.param != "" {
		param = e.param
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": e.msg, "type": e.typ, "param": param, "code": e.code}})
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeAPIError(w, &apiError{status: status, typ: typ, code: code, msg: msg})
}

// maxChoices is the largest n the server answers (OpenAI's limit).
const maxChoices = 128

// toolChoice is a request's tool_choice: mode auto, none, required or
// function (name set).
type toolChoice struct {
	mode, name string
}

// parseToolChoice reads tool_choice against the request's tools.
func parseToolChoice(raw json.RawMessage, tools []chatTool) (toolChoice, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return toolChoice{mode: "auto"}, nil
	}
	var tc toolChoice
	if raw[0] == '"' {
		_ = json.Unmarshal(raw, &tc.mode)
		switch tc.mode {
		case "auto", "none":
			return tc, nil
		case "required":
		default:
			return tc, badRequest("invalid_value", "tool_choice", fmt.Sprintf("tool_choice %q: want none, auto, required or {\"type\":\"function\",\"function\":{\"name\":...}}", tc.mode))
		}
	} else {
		var named struct {
			Type     string `json:"type"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &named); err != nil {
			return tc, badRequest("invalid_value", "tool_choice", "tool_choice: "+err.Error())
		}
		if named.Type != "function" {
			return tc, badRequest("invalid_value", "tool_choice.type", fmt.Sprintf("tool_choice.type %q: want function", named.Type))
		}
		if named.Function == nil || named.Function.Name == "" {
			return tc, badRequest("missing_required_parameter", "tool_choice.function.name", "tool_choice.function.name is required")
		}
		tc = toolChoice{mode: "function", name: named.Function.Name}
	}
	if len(tools) == 0 {
		return tc, badRequest("invalid_value", "tool_choice", fmt.Sprintf("tool_choice %s is only allowed when tools are given", raw))
	}
	if tc.mode == "function" && !slices.ContainsFunc(tools, func(t chatTool) bool { return t.Function != nil && t.Function.Name == tc.name }) {
		return tc, badRequest("invalid_value", "tool_choice", fmt.Sprintf("tool_choice names function %q, which is not among the tools", tc.name))
	}
	return tc, nil
}

// chatPlan is a validated request: what to ask the provider and how to
// shape the answer.
type chatPlan struct {
	req providers.Request
	// offered are the request's tools even when tool_choice "none"
	// withholds them from req.
	offered  []providers.Tool
	choice   toolChoice
	parallel bool
	n        int
}

// plan validates cr and maps it to the request the provider is asked; an
// error is the 400 to answer.
func (cr chatRequest) plan() (chatPlan, *apiError) {
	pl := chatPlan{n: 1, parallel: cr.ParallelToolCalls == nil || *cr.ParallelToolCalls}
	if cr.MaxTokens < 0 || cr.MaxCompletionTokens < 0 {
		return pl, badRequest("invalid_max_tokens", "max_tokens", "max_tokens must not be negative")
	}
	if len(cr.Messages) == 0 {
		return pl, badRequest("missing_messages", "messages", "messages must not be empty")
	}
	if cr.N != nil {
		switch n := *cr.N; {
		case n < 1:
			return pl, badRequest("integer_below_min_value", "n", fmt.Sprintf("n %d is less than the minimum of 1", n))
		case n > maxChoices:
			return pl, badRequest("integer_above_max_value", "n", fmt.Sprintf("n %d is greater than the maximum of %d", n, maxChoices))
		}
		pl.n = *cr.N
	}
	msgs, code, err := cr.messages()
	if err != nil {
		return pl, badRequest(code, "messages", err.Error())
	}
	var nodes int
	tools, err := cr.tools(&nodes)
	if err != nil {
		return pl, badRequest("invalid_tools", "tools", err.Error())
	}
	var e *apiError
	if pl.choice, e = parseToolChoice(cr.ToolChoice, cr.Tools); e != nil {
		return pl, e
	}
	pl.offered = tools
	if pl.choice.mode == "none" {
		tools = nil
	}
	pl.req = providers.Request{Messages: msgs, Temperature: cr.Temperature, MaxTokens: cmp.Or(cr.MaxCompletionTokens, cr.MaxTokens), Seed: cr.Seed, Tools: tools}
	if role, agent, ok := strings.Cut(cr.User, "/"); ok {
		pl.req.Caller = providers.Caller{Role: role, AgentID: agent}
	}
	if rf := cr.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
				return pl, badRequest("invalid_response_format", "response_format.json_schema.schema", "response_format.json_schema.schema is required")
			}
			// Before compiling: the compiler's time is not linear in
			// the schema's depth and size.
			if err := checkSchemaShape(rf.JSONSchema.Schema, &nodes); err != nil {
				return pl, badRequest("invalid_schema", "response_format.json_schema.schema", "response_format.json_schema.schema: "+err.Error())
			}
			if _, err := providers.CompileSchema(rf.JSONSchema.Schema); err != nil {
				return pl, badRequest("invalid_schema", "response_format.json_schema.schema", "response_format.json_schema.schema: "+err.Error())
			}
			pl.req.Schema = &providers.Schema{Name: rf.JSONSchema.Name, JSON: rf.JSONSchema.Schema}
		case "json_object":
			pl.req.Schema = &providers.Schema{Name: SchemaJSONObject, JSON: jsonObjectSchema}
		case "text", "":
		default:
			return pl, badRequest("invalid_response_format", "response_format.type", fmt.Sprintf("response_format.type %q: want text, json_object or json_schema", rf.Type))
		}
	}
	return pl, nil
}

// choice is one answer of a chat completion.
type choice struct {
	text      string
	calls     []wireToolCall
	finish    string
	outTokens int
}

func (s *server) chat(w http.ResponseWriter, r *http.Request) {
	var cr chatRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err := dec.Decode(&cr); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large", fmt.Sprintf("request body larger than %d bytes", tooBig.Limit))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "request body: "+err.Error())
		return
	}
	pl, e := cr.plan()
	if e != nil {
		writeAPIError(w, e)
		return
	}
	m, persona := s.mock(cr.Model)
	var p providers.Provider = m
	if s.provider != nil {
		p = s.provider
	}
	// Choice i > 0 is asked with seed+i, so the choices differ where the
	// persona's answer depends on the seed; choice 0 is the answer n=1 gets.
	base := s.opts.Options.Seed
	if pl.req.Seed != nil {
		base = *pl.req.Seed
	}
	release, ok := s.limits.admit(w)
	if !ok {
		return
	}
	defer release()
	// Every choice's answer counts against one bound and holds its bytes
	// from the server's bound until the response is written.
	budget := newAnswerBudget(s.opts.Options.MaxAnswerBytes, s.inFlight)
	defer budget.release()
	ctx := withBudget(r.Context(), budget)
	choices := make([]choice, pl.n)
	for i := range choices {
		req := pl.req
		if i > 0 {
			seed := base + int64(i)
			req.Seed = &seed
		}
		c, e := complete(ctx, p, pl, req, persona)
		if e != nil {
			writeAPIError(w, e)
			return
		}
		choices[i] = c
	}
	inTok, outTok := tokens(pl.req), 0
	for _, c := range choices {
		outTok += c.outTokens
	}
	id, created, model := fmt.Sprintf("chatcmpl-mock-%d", time.Now().UnixNano()), time.Now().Unix(), "mock-"+persona
	usage := map[string]any{"prompt_tokens": inTok, "completion_tokens": outTok, "total_tokens": inTok + outTok}
	s.limits.answered(w, cr, usage, inTok, inTok+outTok)
	if cr.Stream {
		writeStream(w, id, created, model, choices, usage, cr.StreamOptions != nil && cr.StreamOptions.IncludeUsage)
		return
	}
	out := make([]any, len(choices))
	for i, c := range choices {
		msg := map[string]any{"role": "assistant", "content": c.text}
		if len(c.calls) > 0 {
			msg["tool_calls"] = c.calls
			if c.text == "" {
				msg["content"] = nil
			}
		}
		out[i] = map[string]any{"index": i, "finish_reason": c.finish, "message": msg}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": id, "object": "chat.completion", "created": created,
		"model": model, "system_fingerprint": "mock",
		"choices": out,
		"usage":   usage,
	})
}

// complete asks p for one choice and shapes it by the plan's tool choice;
// an error is the answer to send instead.
func complete(ctx context.Context, p providers.Provider, pl chatPlan, req providers.Request, persona string) (choice, *apiError) {
	resp, err := p.Complete(ctx, req)
	finish := "stop"
	if err != nil {
		if e := budgetAPIError(err); e != nil {
			return choice{}, e
		}
		var pe *providers.Error
		switch {
		case !errors.As(err, &pe):
			return choice{}, &apiError{status: http.StatusInternalServerError, typ: "server_error", code: "internal", msg: err.Error()}
		case errors.Is(err, ErrBadSchema):
			return choice{}, badRequest("invalid_schema", "", err.Error())
		}
		switch pe.Class {
		case providers.ClassRateLimited:
			return choice{}, &apiError{status: http.StatusTooManyRequests, typ: "requests", code: "rate_limit_exceeded", msg: pe.Msg, header: map[string]string{
				"Retry-After":    strconv.Itoa(int(max(1, (pe.RetryAfter+time.Second-1)/time.Second))),
				"retry-after-ms": strconv.FormatInt(pe.RetryAfter.Milliseconds(), 10),
			}}
		case providers.ClassTimeout:
			return choice{}, &apiError{status: http.StatusGatewayTimeout, typ: "server_error", code: "timeout", msg: pe.Msg}
		case providers.ClassUnparseable:
			if errors.Is(err, providers.ErrTruncated) {
				resp = providers.Response{Text: pe.Raw, Model: "mock-" + persona, Usage: resp.Usage}
				finish = "length"
				break
			}
			fallthrough
		default:
			return choice{}, &apiError{status: http.StatusInternalServerError, typ: "server_error", code: "server_error", msg: pe.Msg}
		}
	}
	resp, changed, err := pl.shape(req, resp, budgetFrom(ctx))
	if err != nil {
		if e := budgetAPIError(err); e != nil {
			return choice{}, e
		}
		if errors.Is(err, ErrBadSchema) {
			return choice{}, badRequest("invalid_schema", "tools", err.Error())
		}
		return choice{}, &apiError{status: http.StatusInternalServerError, typ: "server_error", code: "internal", msg: err.Error()}
	}
	c := choice{text: resp.Text, finish: finish}
	for i, tc := range resp.ToolCalls {
		wc := wireToolCall{ID: providers.CallID(tc.ID, i), Type: "function"}
		wc.Function.Name, wc.Function.Arguments = tc.Name, tc.Arguments
		c.calls = append(c.calls, wc)
	}
	if len(c.calls) > 0 && (finish == "stop" || changed) {
		c.finish = "tool_calls"
	}
	c.outTokens = max(1, (len(resp.Text)+callsSize(resp.ToolCalls))/4)
	if resp.Usage.OutputTokens > 0 && !changed {
		c.outTokens = resp.Usage.OutputTokens
	}
	return c, nil
}

// shape makes an answer obey the plan's tool_choice and
// parallel_tool_calls: "none" drops tool calls; "required" calls tools the
// request offers when the answer has none; a named function keeps only
// calls to it, calling it when the answer did not; parallel_tool_calls
// false keeps the first call. A shaped answer that calls tools has no
// text. changed reports whether the answer was shaped.
func (pl chatPlan) shape(req providers.Request, resp providers.Response, budget *answerBudget) (_ providers.Response, changed bool, err error) {
	req.Tools = pl.offered
	calls := resp.ToolCalls
	limit := maxAnyCalls
	if !pl.parallel {
		limit = 1
	}
	switch pl.choice.mode {
	case "none":
		changed = len(calls) > 0
		calls = nil
	case "required":
		if len(calls) == 0 {
			changed = true
			if calls, err = anyToolCalls(req, "", limit, budget); err != nil {
				return resp, false, err
			}
		}
	case "function":
		named := slices.DeleteFunc(slices.Clone(calls), func(c providers.ToolCall) bool { return c.Name != pl.choice.name })
		changed = len(named) != len(calls)
		calls = named
		if len(calls) == 0 {
			changed = true
			if calls, err = anyToolCalls(req, pl.choice.name, 1, budget); err != nil {
				return resp, false, err
			}
		}
	}
	if len(calls) > limit && !pl.parallel {
		changed = true
		calls = calls[:1]
	}
	if !changed {
		return resp, false, nil
	}
	resp.ToolCalls = calls
	if len(calls) > 0 {
		resp.Text, resp.FinishReason = "", providers.FinishToolCalls
	}
	return resp, true, nil
}

// budgetAPIError is the answer to a request over the answer bounds: 503
// with Retry-After when the server's bound on bytes in flight is spent
// (the request may succeed later), 400 when the request's own answer is
// too large (it never will); nil for any other error.
func budgetAPIError(err error) *apiError {
	switch {
	case errors.Is(err, errBusy):
		return &apiError{status: http.StatusServiceUnavailable, typ: "server_error", code: "server_busy",
			msg:    "The mock server is answering too many bytes at once (mock serve --max-inflight-bytes); try again shortly",
			header: map[string]string{"Retry-After": "1", "retry-after-ms": "1000"}}
	case errors.Is(err, ErrBadSchema):
		return nil // answered 400 invalid_schema by the caller
	case errors.Is(err, ErrAnswerTooLarge):
		return badRequest("answer_too_large", "", err.Error())
	}
	return nil
}

// writeStream answers a "stream": true request as server-sent events the
// way OpenAI does: for each choice (its index set) the content (or the tool
// calls, each with its index) in one delta, then its finish reason; then
// (when asked for) the usage, then [DONE].
func writeStream(w http.ResponseWriter, id string, created int64, model string, choices []choice, usage map[string]any, withUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	chunk := func(choices []any, usage any) {
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created,
			"model": model, "system_fingerprint": "mock", "choices": choices, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	for i, c := range choices {
		delta := map[string]any{"role": "assistant", "content": c.text}
		if len(c.calls) > 0 {
			if c.text == "" {
				delta["content"] = nil
			}
			var tcs []any
			for j, tc := range c.calls {
				tcs = append(tcs, map[string]any{"index": j, "id": tc.ID, "type": tc.Type, "function": tc.Function})
			}
			delta["tool_calls"] = tcs
		}
		chunk([]any{map[string]any{"index": i, "delta": delta, "finish_reason": nil}}, nil)
		chunk([]any{map[string]any{"index": i, "delta": map[string]any{}, "finish_reason": c.finish}}, nil)
	}
	if withUsage {
		chunk([]any{}, usage)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// modelObject is a persona as OpenAI's model object.
func modelObject(id string) map[string]any {
	return map[string]any{"id": id, "object": "model", "created": 0, "owned_by": "swarm-mock"}
}

func (s *server) models(w http.ResponseWriter, r *http.Request) {
	var data []any
	for _, p := range Personas() {
		data = append(data, modelObject(p))
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

// model answers GET /v1/models/{id}: the model object of a persona (named
// as the chat endpoint accepts it: honest, mock-honest, mock:honest), 404
// model_not_found otherwise.
func (s *server) model(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, ok := personaOf(id); !ok {
		writeAPIError(w, &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found", param: "model",
			msg: fmt.Sprintf("The model %q does not exist (models: %s)", id, strings.Join(Personas(), ", "))})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(modelObject(id))
}
