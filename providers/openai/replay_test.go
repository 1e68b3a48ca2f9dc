package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/internal/httprec"
	"github.com/swarm-dev/swarm/providers"
)

// Replay tests: real responses recorded by other projects against the real
// APIs (testdata/ORIGIN names each one's repository, path and commit),
// served again by an httptest server. They check that the adapter reads
// what the recording says — usage with its details, finish reason, tool
// calls, error class, status and Retry-After — not what our own fakes say.

// recording is one recorded HTTP response.
type recording = httprec.Recording

func loadRecording(t *testing.T, name string) recording {
	t.Helper()
	return httprec.Load(t, filepath.Join("testdata", name))
}

// replayServer answers the recordings in order, one per request, and keeps
// each request's body.
type replayServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs [][]byte
}

func (s *replayServer) requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.reqs...)
}

func replay(t *testing.T, names ...string) *replayServer {
	t.Helper()
	var recs []recording
	for _, n := range names {
		recs = append(recs, loadRecording(t, n))
	}
	s := &replayServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		i := len(s.reqs)
		s.reqs = append(s.reqs, b)
		s.mu.Unlock()
		if i >= len(recs) {
			http.Error(w, "no more recordings", http.StatusGone)
			return
		}
		for k, vs := range recs[i].Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(recs[i].Status)
		w.Write(recs[i].Body)
	}))
	t.Cleanup(s.Close)
	return s
}

var weatherTool = providers.Tool{Name: "getCurrentWeather", Description: "Get the current weather in a given location",
	Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)}

func TestReplayRecordedAnswers(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	ask := providers.Request{Messages: []providers.Message{{Role: "user", Content: "Hello"}}}
	withTools := ask
	withTools.Tools = []providers.Tool{weatherTool}
	withSchema := ask
	withSchema.Schema = &providers.Schema{Name: "answer", JSON: json.RawMessage(`{"type":"object","properties":{"final_answer":{"type":"string"}},"required":["final_answer"]}`)}
	tests := []struct {
		name, file, kind, model string
		req                     providers.Request
		want                    providers.Response // Latency ignored; Text compared by prefix
		wantClass               providers.Class
		wantTruncated           bool
	}{
		{name: "plain text (langchaingo)", file: "openai_plain.http", kind: "openai", model: "gpt-3.5-turbo", req: ask,
			want: providers.Response{Text: "Hello! I'm just a computer program", Model: "gpt-3.5-turbo-0125", FinishReason: "stop", Usage: providers.Usage{InputTokens: 13, OutputTokens: 31}}},
		{name: "plain text (pydantic-ai)", file: "openai_valid.http", kind: "openai", model: "gpt-4o", req: ask,
			want: providers.Response{Text: "The capital of France is Paris.", Model: "gpt-4o-2024-08-06", FinishReason: "stop", Usage: providers.Usage{InputTokens: 14, OutputTokens: 7}}},
		{name: "reasoning tokens are a part of the output", file: "openai_reasoning.http", kind: "openai", model: "o3-mini", req: ask,
			want: providers.Response{Text: "When it comes to crossing a river safely", Model: "o3-mini-2025-01-31", FinishReason: "stop", Usage: providers.Usage{InputTokens: 577, OutputTokens: 2320, ReasoningTokens: 1792}}},
		{name: "cached prompt tokens are a part of the input", file: "openai_prompt_cache.http", kind: "openai", model: "gpt-5.6-sol", req: ask,
			want: providers.Response{Text: "OK", Model: "gpt-5.6-sol", FinishReason: "stop", Usage: providers.Usage{InputTokens: 4020, OutputTokens: 4, CacheReadTokens: 4012}}},
		{name: "JSON schema answer", file: "openai_json_schema.http", kind: "openai", model: "gpt-4o", req: withSchema,
			want: providers.Response{Text: `{"final_answer":"4"}`, Model: "gpt-4o-2024-08-06", FinishReason: "stop", Usage: providers.Usage{InputTokens: 53, OutputTokens: 6}}},
		{name: "one tool call, content null", file: "openai_tool_call.http", kind: "openai", model: "gpt-3.5-turbo", req: withTools,
			want: providers.Response{Model: "gpt-3.5-turbo-0125", FinishReason: "tool_calls", Usage: providers.Usage{InputTokens: 81, OutputTokens: 14},
				ToolCalls: []providers.ToolCall{{ID: "call_olc8qHf1RDItRqwuEBNjsu3B", Name: "getCurrentWeather", Arguments: `{"location":"Boston"}`}}}},
		{name: "one tool call without arguments", file: "openai_tool_output.http", kind: "openai", model: "gpt-4o", req: withTools,
			want: providers.Response{Model: "gpt-4o-2024-08-06", FinishReason: "tool_calls", Usage: providers.Usage{InputTokens: 68, OutputTokens: 12},
				ToolCalls: []providers.ToolCall{{ID: "call_iXFttys57ap0o16JSlC8yhYo", Name: "get_user_country", Arguments: `{}`}}}},
		{name: "parallel tool calls with text and reasoning (DeepSeek)", file: "deepseek_parallel_tools.http", kind: "openai-compatible", model: "deepseek-v4-flash", req: withTools,
			want: providers.Response{Text: "Let me get your name and roll the die!", Model: "deepseek-v4-flash", FinishReason: "tool_calls", Usage: providers.Usage{InputTokens: 875, OutputTokens: 79, ReasoningTokens: 26},
				ToolCalls: []providers.ToolCall{{ID: "call_00_6edlnw3Z1MgeMfey687g8451", Name: "get_player_name", Arguments: `{}`}, {ID: "call_01_km02sac7sHxNDPATKLZy7705", Name: "roll_dice", Arguments: `{}`}}}},
		{name: "Ollama's OpenAI endpoint, JSON schema answer", file: "ollama_v1_json_schema.http", kind: "ollama", model: "qwen3:0.6b", req: withSchema,
			want: providers.Response{Text: `{ "city": "Paris", "country": "France" }`, Model: "qwen3:0.6b", FinishReason: "stop", Usage: providers.Usage{InputTokens: 136, OutputTokens: 15}}},
		{name: "truncated at the token limit keeps its usage", file: "together_length.http", kind: "openai-compatible", model: "deepseek-ai/DeepSeek-R1", req: ask,
			want:      providers.Response{Text: "<think>\nHmm, the user just said", Model: "deepseek-ai/DeepSeek-R1", FinishReason: "length", Usage: providers.Usage{InputTokens: 4, OutputTokens: 100}},
			wantClass: providers.ClassUnparseable, wantTruncated: true},
		{name: "tool calls to a request that offered none are no answer (issue 21 point 6)", file: "openai_tool_output.http", kind: "openai", model: "gpt-4o", req: ask,
			want: providers.Response{Model: "gpt-4o-2024-08-06", FinishReason: "tool_calls", Usage: providers.Usage{InputTokens: 68, OutputTokens: 12},
				ToolCalls: []providers.ToolCall{{ID: "call_iXFttys57ap0o16JSlC8yhYo", Name: "get_user_country", Arguments: `{}`}}},
			wantClass: providers.ClassUnparseable},
		{name: "text beside unoffered tool calls is the answer", file: "deepseek_parallel_tools.http", kind: "openai-compatible", model: "deepseek-v4-flash", req: ask,
			want: providers.Response{Text: "Let me get your name and roll the die!", Model: "deepseek-v4-flash", FinishReason: "stop", Usage: providers.Usage{InputTokens: 875, OutputTokens: 79, ReasoningTokens: 26}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := replay(t, tc.file)
			t.Setenv("SWARM_TEST_REPLAY_KEY", "k")
			p := mustNew(t, tc.kind, tc.model, providers.KindConfig{BaseURL: srv.URL + "/v1", APIKeyEnv: "SWARM_TEST_REPLAY_KEY"})
			resp, err := p.Complete(t.Context(), tc.req)
			if c := providers.ClassOf(err); c != tc.wantClass || errors.Is(err, providers.ErrTruncated) != tc.wantTruncated {
				t.Fatalf("class %q truncated %v (%v), want %q %v", c, errors.Is(err, providers.ErrTruncated), err, tc.wantClass, tc.wantTruncated)
			}
			if !strings.HasPrefix(resp.Text, tc.want.Text) || (tc.want.Text == "" && resp.Text != "") {
				t.Errorf("text %.80q, want it to start with %q", resp.Text, tc.want.Text)
			}
			// The answer's rate-limit headers pass through as recorded
			// (ParseRateLimit itself: TestParseRateLimit).
			if d := cmp.Diff(providers.ParseRateLimit(loadRecording(t, tc.file).Header, time.Now()), resp.RateLimit); d != "" {
				t.Errorf("rate limit (-want +got):\n%s", d)
			}
			resp.Text, resp.Latency, resp.RateLimit = tc.want.Text, 0, nil
			if d := cmp.Diff(tc.want, resp, cmp.AllowUnexported(providers.Response{})); d != "" {
				t.Errorf("response (-want +got):\n%s", d)
			}
		})
	}
}

func TestReplayRecordedErrors(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	ask := providers.Request{Messages: []providers.Message{{Role: "user", Content: "Hello"}}}
	tests := []struct {
		name, file, kind string
		class            providers.Class
		status           int
		retryAfter       time.Duration
		mentions         string // in the error text: what the body said
	}{
		{"400 unsupported value is permanent", "openai_400.http", "openai", providers.ClassPermanent, 400, 0, "does not support 'developer'"},
		{"404 model not found (Groq) is permanent", "groq_404.http", "openai-compatible", providers.ClassPermanent, 404, 0, "does not exist"},
		{"429 rate limit (no Retry-After in the recording)", "openai_429.http", "openai", providers.ClassRateLimited, 429, 0, "Rate limit reached"},
		{"200 text/plain body is unparseable, not transient (issue 21)", "openai_text_plain_200.http", "openai-compatible", providers.ClassUnparseable, 0, 0, "does not parse"},
		{"200 JSON that is not a completion is unparseable", "openai_wrong_json_200.http", "openai-compatible", providers.ClassUnparseable, 0, 0, "no choices"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := replay(t, tc.file, tc.file, tc.file, tc.file)
			t.Setenv("SWARM_TEST_REPLAY_KEY", "k")
			p := mustNew(t, tc.kind, "m", providers.KindConfig{BaseURL: srv.URL + "/v1", APIKeyEnv: "SWARM_TEST_REPLAY_KEY"})
			// Through the retry middleware, as a run calls it: only what a
			// retry can fix is sent again.
			p = providers.Retry(providers.RetryConfig{MaxRetries: 3, Sleep: func(context.Context, time.Duration) error { return nil }})(p)
			_, err := p.Complete(t.Context(), ask)
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err %v, want a *providers.Error", err)
			}
			if pe.Class != tc.class || pe.StatusCode != tc.status || pe.RetryAfter != tc.retryAfter || !strings.Contains(err.Error(), tc.mentions) {
				t.Errorf("class %q status %d retry-after %s (%v); want %q %d %s mentioning %q", pe.Class, pe.StatusCode, pe.RetryAfter, err, tc.class, tc.status, tc.retryAfter, tc.mentions)
			}
			wantRequests := 1
			if providers.Retryable(err) {
				wantRequests = 4
			}
			if n := len(srv.requests()); n != wantRequests {
				t.Errorf("%d requests, want %d", n, wantRequests)
			}
		})
	}
}

// Issue 21 points 6-8 against recorded answers: a tool-call-only answer to
// a request that offered no tools is not ok; the repair request holds no
// assistant message without content and tool calls (a strict server
// answers 400); the prose the repair got keeps the first failure as its
// cause; the model is named kind:model throughout.
func TestReplayRepairAfterUnofferedToolCalls(t *testing.T) {
	t.Parallel()
	srv := replay(t, "openai_tool_output.http", "openai_valid.http")
	r := &providers.Registry{}
	Register(r)
	p, err := r.New(providers.Ref{Kind: "openai-compatible", Model: "x"}, providers.KindConfig{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		City string `json:"city"`
	}
	_, res, err := providers.Structured[answer](t.Context(), p, providers.Request{Messages: []providers.Message{{Role: "user", Content: "Where?"}}})
	want := "unparseable from openai-compatible:x: unparseable: answered tool calls though none were offered; repair: unparseable: no JSON found in the answer: unparseable output"
	if err == nil || err.Error() != want {
		t.Fatalf("err %v, want %q", err, want)
	}
	if len(res.Responses) != 2 || res.Usage() != (providers.Usage{InputTokens: 68 + 14, OutputTokens: 12 + 7}) {
		t.Errorf("responses %d usage %+v, want 2 metered as recorded", len(res.Responses), res.Usage())
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(reqs[1], &body); err != nil {
		t.Fatal(err)
	}
	for i, m := range body.Messages {
		if m["role"] == "assistant" && m["content"] == nil && m["tool_calls"] == nil {
			t.Errorf("repair request message %d is an empty assistant message: %s", i, reqs[1])
		}
	}
	if last := body.Messages[len(body.Messages)-1]; !strings.Contains(last["content"].(string), "get_user_country") {
		t.Errorf("the repair prompt does not say what the model did: %v", last["content"])
	}
}

// An empty assistant message in a conversation is never sent.
func TestEmptyAssistantMessageIsNotSent(t *testing.T) {
	t.Parallel()
	got := chatMessages([]providers.Message{{Role: "user", Content: "a"}, {Role: "assistant"}, {Role: "user", Content: "b"}})
	if len(got) != 2 || got[0].Content != "a" || got[1].Content != "b" {
		t.Errorf("messages %+v, want the two user messages only", got)
	}
}
