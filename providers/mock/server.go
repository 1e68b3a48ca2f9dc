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
func NewServer(o ServerOptions) (http.Handler, error) {
	if o.Persona == "" {
		o.Persona = Honest
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if _, err := New(o.Persona, o.Options); err != nil {
		return nil, err
	}
	s := &server{opts: o, mocks: map[string]*Mock{}}
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
	opts  ServerOptions
	mu    sync.Mutex
	mocks map[string]*Mock
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
}

// chatMessage is a request message. Its content is a string or, as some
// SDKs send it, an array of content parts whose text parts are joined.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
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
	msgs := make([]providers.Message, len(cr.Messages))
	for i, cm := range cr.Messages {
		var err error
		if msgs[i], err = cm.message(); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_content", fmt.Sprintf("messages[%d].content: %v", i, err))
			return
		}
	}
	m, persona := s.mock(cr.Model)
	req := providers.Request{Messages: msgs, Temperature: cr.Temperature, MaxTokens: cmp.Or(cr.MaxCompletionTokens, cr.MaxTokens), Seed: cr.Seed}
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
	resp, err := m.Complete(r.Context(), req)
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
	inTok := tokens(req)
	outTok := max(1, len(resp.Text)/4)
	if resp.Usage.OutputTokens > 0 {
		outTok = resp.Usage.OutputTokens
	}
	id, created, model := fmt.Sprintf("chatcmpl-mock-%d", time.Now().UnixNano()), time.Now().Unix(), "mock-"+persona
	usage := map[string]any{"prompt_tokens": inTok, "completion_tokens": outTok, "total_tokens": inTok + outTok}
	if cr.Stream {
		writeStream(w, id, created, model, resp.Text, finish, usage, cr.StreamOptions != nil && cr.StreamOptions.IncludeUsage)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": id, "object": "chat.completion", "created": created,
		"model": model, "system_fingerprint": "mock",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish,
			"message": map[string]any{"role": "assistant", "content": resp.Text}}},
		"usage": usage,
	})
}

// writeStream answers a "stream": true request as server-sent events the
// way OpenAI does: the content in one delta, then the finish reason, then
// (when asked for) the usage, then [DONE].
func writeStream(w http.ResponseWriter, id string, created int64, model, text, finish string, usage map[string]any, withUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	chunk := func(choices []any, usage any) {
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created,
			"model": model, "system_fingerprint": "mock", "choices": choices, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk([]any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": text}, "finish_reason": nil}}, nil)
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
