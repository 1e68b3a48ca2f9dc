package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/mock"
)

func newMockCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "mock",
		Short:   "The deterministic mock provider",
		Long:    "The deterministic mock provider: personas " + fmt.Sprint(mock.Personas()) + ".",
		Example: "  swarm mock serve --addr 127.0.0.1:8080 --persona sloppy",
	}
	cmd.AddCommand(newMockServeCmd(app, nil))
	return cmd
}

// MockServeOptions are the flags of `swarm mock serve`.
type MockServeOptions struct {
	Addr    string
	Persona string
	Faults  string
	Script  string
	Seed    int64
	Latency time.Duration
	// MaxBody bounds a request body in bytes (413 above it).
	MaxBody int64
	// ReadTimeout bounds reading one request, headers and body.
	ReadTimeout time.Duration
	// Limits: prompt-cache reporting and rate limits (mock.Limits).
	Limits mock.Limits
	// MaxAnswerBytes bounds the answers to one request (every choice);
	// MaxInFlightBytes the answer bytes of all requests answered at once.
	MaxAnswerBytes   int64
	MaxInFlightBytes int64
}

// newMockServeCmd builds `swarm mock serve`; runF runs the parsed options
// (nil: runMockServe).
func newMockServeCmd(app *App, runF func(context.Context, *MockServeOptions) error) *cobra.Command {
	if runF == nil {
		runF = func(ctx context.Context, o *MockServeOptions) error { return runMockServe(ctx, app, *o) }
	}
	var o MockServeOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the mock as an OpenAI-compatible HTTP API",
		Long: `Serve the mock provider as an OpenAI-compatible API: POST /v1/chat/completions
(honouring response_format json_schema and json_object, max_tokens, seed,
n and usage), GET /v1/models and GET /v1/models/{id}. A request whose model
names a persona (honest, sloppy, ...) uses it; any other model uses
--persona. Point swarm (or any OpenAI SDK) at it with a base URL.

Limits: a request body above --max-body bytes is answered 413; reading a
request (headers and body) must finish within --read-timeout; a schema that
does not compile, is nested more than ` + fmt.Sprint(mock.MaxSchemaDepth) + ` levels deep, brings the request's
schemas (response format and tools together) over ` + fmt.Sprint(mock.MaxSchemaNodes) + ` subschemas, or asks
for more than the mock generates (minItems above ` + fmt.Sprint(mock.MaxGenItems) + `, minLength above
` + fmt.Sprint(mock.MaxGenStringLen) + `, more than ` + fmt.Sprint(mock.MaxGenValues) + ` values in one answer) is answered 400.
The answers to one request (all its choices) are bounded by
--max-answer-bytes: a schema whose usual answer is larger gets its smallest
valid answer (required properties, minItems, minLength), and one whose
smallest answer is larger is answered 400. The answer bytes of all the
requests being answered at once are bounded by --max-inflight-bytes: a
request that would go over it is answered 503 with Retry-After. max_tokens (or max_completion_tokens) cuts the
answer at that many tokens (4 bytes each) with finish_reason "length".
Every error, 404 and 405 included, is an OpenAI-shaped JSON error.

Tool calling follows OpenAI's chat format: a request's tools, assistant
tool_calls and tool messages (tool_call_id) reach the persona; its tool
calls come back as message.tool_calls (content null, finish_reason
"tool_calls"), so a client runs the tools and sends their results.
tool_choice (auto, none, required, a named function) and
parallel_tool_calls are honoured; a client's own tools (not the workspace
tools) are called once per user turn, with arguments generated from their
parameters schemas. An unknown message role is answered 400.`,
		Example: `  swarm mock serve --addr 127.0.0.1:8080
  swarm mock serve --persona flaky --faults examples/mock/faults-20.yaml
  swarm mock serve --max-body 1048576 --read-timeout 10s
  swarm mock serve --max-answer-bytes 1048576 --max-inflight-bytes 16777216
  swarm mock serve --prompt-cache --rpm 120 --max-inflight 4   # cache hits and rate limits as OpenAI reports them
  # then, in another shell, with a config whose providers.openai-compatible.base_url is http://127.0.0.1:8080/v1:
  swarm run examples/missions/api-design.md --provider openai-compatible:honest`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), &o) },
	}
	cmd.Flags().StringVar(&o.Addr, "addr", "127.0.0.1:8080", "listen address")
	cmd.Flags().StringVar(&o.Persona, "persona", mock.Honest, "default persona")
	cmd.Flags().StringVar(&o.Faults, "faults", "", "YAML file of fault rates")
	cmd.Flags().StringVar(&o.Script, "script", "", "YAML file of scripted answers (match on schema, role, text)")
	cmd.Flags().Int64Var(&o.Seed, "seed", 0, "seed for requests that carry none")
	cmd.Flags().DurationVar(&o.Latency, "latency", 0, "fixed latency per call")
	cmd.Flags().Int64Var(&o.MaxBody, "max-body", mock.DefaultMaxBodyBytes, "largest request body in bytes (413 above it)")
	cmd.Flags().DurationVar(&o.ReadTimeout, "read-timeout", 30*time.Second, "time allowed to read one request, headers and body")
	cmd.Flags().Int64Var(&o.MaxAnswerBytes, "max-answer-bytes", mock.DefaultMaxAnswerBytes, "largest answer to one request in bytes, all choices together (its smallest valid form is sent when the usual one is larger; 400 when even that is)")
	cmd.Flags().Int64Var(&o.MaxInFlightBytes, "max-inflight-bytes", mock.DefaultMaxInFlightAnswerBytes, "answer bytes of all requests answered at once (503 with Retry-After above it); at least --max-answer-bytes")
	cmd.Flags().BoolVar(&o.Limits.PromptCache, "prompt-cache", false, "report OpenAI-style automatic prefix caching in usage.prompt_tokens_details.cached_tokens")
	cmd.Flags().IntVar(&o.Limits.RequestsPerMinute, "rpm", 0, "requests per minute: x-ratelimit-*-requests headers, 429 with Retry-After above it (0: none)")
	cmd.Flags().IntVar(&o.Limits.TokensPerMinute, "tpm", 0, "tokens per minute: x-ratelimit-*-tokens headers, 429 once spent (0: none)")
	cmd.Flags().IntVar(&o.Limits.MaxInFlight, "max-inflight", 0, "requests answered at once: 429 with Retry-After above it (0: none)")
	return cmd
}

func runMockServe(ctx context.Context, app *App, o MockServeOptions) error {
	if o.MaxBody <= 0 {
		return usageError(fmt.Errorf("--max-body %d: want a positive number of bytes", o.MaxBody))
	}
	if o.ReadTimeout <= 0 {
		return usageError(fmt.Errorf("--read-timeout %s: want a positive duration", o.ReadTimeout))
	}
	if o.MaxAnswerBytes <= 0 {
		return usageError(fmt.Errorf("--max-answer-bytes %d: want a positive number of bytes", o.MaxAnswerBytes))
	}
	if o.MaxInFlightBytes < o.MaxAnswerBytes {
		return usageError(fmt.Errorf("--max-inflight-bytes %d: want at least --max-answer-bytes (%d), or no answer of the largest size could be served", o.MaxInFlightBytes, o.MaxAnswerBytes))
	}
	if l := o.Limits; l.RequestsPerMinute < 0 || l.TokensPerMinute < 0 || l.MaxInFlight < 0 {
		return usageError(fmt.Errorf("--rpm %d, --tpm %d, --max-inflight %d: want 0 (none) or a positive number", l.RequestsPerMinute, l.TokensPerMinute, l.MaxInFlight))
	}
	opts := mock.Options{Seed: o.Seed, Latency: mock.LatencyConfig{Fixed: o.Latency}, MaxAnswerBytes: o.MaxAnswerBytes}
	if o.Faults != "" {
		f, err := mock.LoadFaults(o.Faults)
		if err != nil {
			return usageError(err)
		}
		opts.Faults = &f
	}
	if o.Script != "" {
		s, err := mock.LoadScript(o.Script)
		if err != nil {
			return usageError(err)
		}
		opts.Script = s
	}
	h, err := mock.NewServer(mock.ServerOptions{Persona: o.Persona, Options: opts, MaxBodyBytes: o.MaxBody, Limits: o.Limits, MaxInFlightAnswerBytes: o.MaxInFlightBytes})
	if err != nil {
		return usageError(err)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return usageError(fmt.Errorf("listen on %s: %w", o.Addr, err))
	}
	srv := mockHTTPServer(logRequests(app.Logger, h), o)
	fmt.Fprintf(app.Out, "mock provider (persona %s) listening on http://%s\nbase URL: http://%s/v1\n", o.Persona, ln.Addr(), ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// mockHTTPServer is the server of `swarm mock serve`: reading a request,
// headers and body, is bounded by o.ReadTimeout (a client that trickles its
// body is cut off), headers by 64 KiB; the body limit is the handler's.
func mockHTTPServer(h http.Handler, o MockServeOptions) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: min(10*time.Second, o.ReadTimeout), ReadTimeout: o.ReadTimeout,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }

// Flush keeps streaming answers flowing through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// logRequests logs each request at info (errors at warn) with method, path,
// status and duration; request bodies are not logged.
func logRequests(l *slog.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		lvl := slog.LevelInfo
		if rec.status >= 400 {
			lvl = slog.LevelWarn
		}
		l.Log(r.Context(), lvl, "request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "duration_ms", float64(time.Since(start).Microseconds())/1000)
	})
}
