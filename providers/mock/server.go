package mock

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

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
}

// DefaultMaxBodyBytes is the default request body limit of the server.
const DefaultMaxBodyBytes = 4 << 20

// routes are the server's paths and the method each accepts.
var routes = map[string]string{"/v1/chat/completions": http.MethodPost, "/v1/models": http.MethodGet}

// NewServer returns an OpenAI-compatible handler (POST /v1/chat/completions,
// GET /v1/models) backed by the mock. A request whose model names a persona
// ("honest", "mock-honest" or "mock:honest") uses that persona. Every error
// is an OpenAI-shaped JSON error ({"error":{"message","type","code"}}),
// including 404 for an unknown path and 405 for a wrong method.
//
// Tool calling follows OpenAI's chat format: the request's tools (type
// function) become Request.Tools, an assistant message's tool_calls and a
// tool message's tool_call_id become Message.ToolCalls and ToolCallID (with
// ToolName taken from the assistant call it answers), and a Response with
// ToolCalls is answered with message.tool_calls, content null and
// finish_reason "tool_calls" (streamed as one delta when stream is set).
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
	if _, err := New(o.Persona, o.Options); err != nil {
		return nil, err
	}
	s := &server{opts: o, mocks: map[string]*Mock{}, provider: p, limits: newLimiter(o.Limits)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern == "" {
			if m, ok := routes[r.URL.Path]; ok {
				w.Header().Set("Allow", m)
				writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, m))
				return
			}
			writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", fmt.Sprintf("unknown URL %s %s (this server serves POST /v1/chat/completions and GET /v1/models)", r.Method, r.URL.Path))
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
}

func (s *server) mock(model string) (*Mock, string) {
	name := strings.TrimPrefix(strings.TrimPrefix(model, "mock:"), "mock-")
	if _, ok := personas[name]; !ok {
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
	// ToolChoice "none" withholds the tools from the mock; any other
	// choice ("auto", "required", a named function) leaves the decision
	// to the persona. parallel_tool_calls is accepted and ignored: a
	// persona may call several tools in one answer.
	ToolChoice json.RawMessage `json:"tool_choice,omitempty"`
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
func (cr chatRequest) tools() ([]providers.Tool, error) {
	if c := bytes.TrimSpace(cr.ToolChoice); string(c) == `"none"` {
		return nil, nil
	}
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

func (m chatMessage) message() (providers.Message, error) {
	out := providers.Message{Role: m.Role}
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

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code}})
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
	if cr.MaxTokens < 0 || cr.MaxCompletionTokens < 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_max_tokens", "max_tokens must not be negative")
		return
	}
	if len(cr.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "missing_messages", "messages must not be empty")
		return
	}
	msgs, code, err := cr.messages()
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", code, err.Error())
		return
	}
	tools, err := cr.tools()
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_tools", err.Error())
		return
	}
	m, persona := s.mock(cr.Model)
	var p providers.Provider = m
	if s.provider != nil {
		p = s.provider
	}
	req := providers.Request{Messages: msgs, Temperature: cr.Temperature, MaxTokens: cmp.Or(cr.MaxCompletionTokens, cr.MaxTokens), Seed: cr.Seed, Tools: tools}
	if role, agent, ok := strings.Cut(cr.User, "/"); ok {
		req.Caller = providers.Caller{Role: role, AgentID: agent}
	}
	if rf := cr.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
				writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_response_format", "response_format.json_schema.schema is required")
				return
			}
			if _, err := providers.CompileSchema(rf.JSONSchema.Schema); err != nil {
				writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_schema", "response_format.json_schema.schema: "+err.Error())
				return
			}
			req.Schema = &providers.Schema{Name: rf.JSONSchema.Name, JSON: rf.JSONSchema.Schema}
		case "json_object":
			req.Schema = &providers.Schema{Name: SchemaJSONObject, JSON: jsonObjectSchema}
		case "text", "":
		default:
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_response_format", fmt.Sprintf("response_format.type %q: want text, json_object or json_schema", rf.Type))
			return
		}
	}
	release, ok := s.limits.admit(w)
	if !ok {
		return
	}
	defer release()
	resp, err := p.Complete(r.Context(), req)
	finish := "stop"
	if err != nil {
		var pe *providers.Error
		if !errors.As(err, &pe) {
			writeError(w, http.StatusInternalServerError, "server_error", "internal", err.Error())
			return
		}
		if errors.Is(err, ErrBadSchema) {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_schema", err.Error())
			return
		}
		switch pe.Class {
		case providers.ClassRateLimited:
			w.Header().Set("Retry-After", strconv.Itoa(int(max(1, (pe.RetryAfter+time.Second-1)/time.Second))))
			w.Header().Set("retry-after-ms", strconv.FormatInt(pe.RetryAfter.Milliseconds(), 10))
			writeError(w, http.StatusTooManyRequests, "requests", "rate_limit_exceeded", pe.Msg)
			return
		case providers.ClassTimeout:
			writeError(w, http.StatusGatewayTimeout, "server_error", "timeout", pe.Msg)
			return
		case providers.ClassUnparseable:
			if errors.Is(err, providers.ErrTruncated) {
				resp = providers.Response{Text: pe.Raw, Model: "mock-" + persona, Usage: resp.Usage}
				finish = "length"
				break
			}
			fallthrough
		default:
			writeError(w, http.StatusInternalServerError, "server_error", "server_error", pe.Msg)
			return
		}
	}
	var calls []wireToolCall
	for i, tc := range resp.ToolCalls {
		c := wireToolCall{ID: providers.CallID(tc.ID, i), Type: "function"}
		c.Function.Name, c.Function.Arguments = tc.Name, tc.Arguments
		calls = append(calls, c)
	}
	if len(calls) > 0 && finish == "stop" {
		finish = "tool_calls"
	}
	inTok := tokens(req)
	outTok := max(1, (len(resp.Text)+callsSize(resp.ToolCalls))/4)
	if resp.Usage.OutputTokens > 0 {
		outTok = resp.Usage.OutputTokens
	}
	id, created, model := fmt.Sprintf("chatcmpl-mock-%d", time.Now().UnixNano()), time.Now().Unix(), "mock-"+persona
	usage := map[string]any{"prompt_tokens": inTok, "completion_tokens": outTok, "total_tokens": inTok + outTok}
	s.limits.answered(w, cr, usage, inTok, inTok+outTok)
	if cr.Stream {
		writeStream(w, id, created, model, resp.Text, calls, finish, usage, cr.StreamOptions != nil && cr.StreamOptions.IncludeUsage)
		return
	}
	msg := map[string]any{"role": "assistant", "content": resp.Text}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
		if resp.Text == "" {
			msg["content"] = nil
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": id, "object": "chat.completion", "created": created,
		"model": model, "system_fingerprint": "mock",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   usage,
	})
}

// writeStream answers a "stream": true request as server-sent events the
// way OpenAI does: the content (or the tool calls, each with its index) in
// one delta, then the finish reason, then (when asked for) the usage, then
// [DONE].
func writeStream(w http.ResponseWriter, id string, created int64, model, text string, calls []wireToolCall, finish string, usage map[string]any, withUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	chunk := func(choices []any, usage any) {
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created,
			"model": model, "system_fingerprint": "mock", "choices": choices, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	delta := map[string]any{"role": "assistant", "content": text}
	if len(calls) > 0 {
		if text == "" {
			delta["content"] = nil
		}
		var tcs []any
		for i, c := range calls {
			tcs = append(tcs, map[string]any{"index": i, "id": c.ID, "type": c.Type, "function": c.Function})
		}
		delta["tool_calls"] = tcs
	}
	chunk([]any{map[string]any{"index": 0, "delta": delta, "finish_reason": nil}}, nil)
	chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, nil)
	if withUsage {
		chunk([]any{}, usage)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *server) models(w http.ResponseWriter, r *http.Request) {
	var data []any
	for _, p := range Personas() {
		data = append(data, map[string]any{"id": p, "object": "model", "created": 0, "owned_by": "swarm-mock"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}
