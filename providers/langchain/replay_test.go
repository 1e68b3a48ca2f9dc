package langchain

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/internal/httprec"
	"github.com/swarm-dev/swarm/providers"
)

// Replay tests: real responses recorded by other projects against the real
// APIs (testdata/ORIGIN names each one's repository, path and commit; the
// testdata README lists what has no public recording), served again through
// the fake server. They check that each kind reads what the recording says:
// usage with its details, finish reason, tool calls, error class and status.

// recorded loads a recorded HTTP response as a reply of the fake server.
func recorded(t *testing.T, name string) reply {
	t.Helper()
	r := httprec.Load(t, filepath.Join("testdata", name))
	hdr := map[string]string{}
	for k := range r.Header {
		hdr[k] = r.Header.Get(k)
	}
	return reply{status: r.Status, hdr: hdr, body: string(r.Body)}
}

var entityTool = providers.Tool{Name: "retrieve_entity_info", Description: "Get the knowledge about the given entity.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}

// buildReplay builds a provider of kind against the fake server.
func buildReplay(t *testing.T, kind string, f *fake) providers.Provider {
	t.Helper()
	switch kind {
	case "anthropic":
		return newAnthropic(t, f, nil)
	case "mistral":
		return newMistral(t, f)
	case "ollama-native":
		return newOllama(t, f)
	case "bedrock":
		bedrockEnv(t)
		return newBedrock(t, f)
	}
	t.Fatalf("no replay for kind %s", kind)
	return nil
}

func TestReplayRecordedAnswers(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	ask := providers.Request{Messages: []providers.Message{{Role: "user", Content: "Hello"}}}
	withTools := ask
	withTools.Tools = []providers.Tool{entityTool, {Name: "get_image", Description: "An image."}}
	withSchema := ask
	withSchema.Schema = &providers.Schema{Name: "answer", JSON: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)}
	tests := []struct {
		name, kind, file string
		req              providers.Request
		want             providers.Response // Latency ignored; Text compared by prefix
	}{
		{name: "Anthropic plain text", kind: "anthropic", file: "anthropic_plain.http", req: ask,
			want: providers.Response{Text: "Hello! As an AI language model, I don't have feelings", Model: "claude-test", FinishReason: "stop", Usage: providers.Usage{InputTokens: 13, OutputTokens: 35}}},
		{name: "Anthropic cache reads and writes are added to the input", kind: "anthropic", file: "anthropic_cache.http", req: ask,
			want: providers.Response{Text: "Python is a beginner-friendly", Model: "claude-test", FinishReason: "stop",
				Usage: providers.Usage{InputTokens: 3 + 1111 + 418, OutputTokens: 33, CacheReadTokens: 1111, CacheWriteTokens: 418}}},
		{name: "Anthropic thinking is not the answer", kind: "anthropic", file: "anthropic_thinking.http", req: ask,
			want: providers.Response{Text: "Here's how to cross the street safely", Model: "claude-test", FinishReason: "stop", Usage: providers.Usage{InputTokens: 43, OutputTokens: 321}}},
		{name: "Anthropic text and four parallel tool calls", kind: "anthropic", file: "anthropic_parallel_tools.http", req: withTools,
			want: providers.Response{Text: "I'll help you find out who is the youngest", Model: "claude-test", FinishReason: "tool_calls", Usage: providers.Usage{InputTokens: 423, OutputTokens: 202},
				ToolCalls: []providers.ToolCall{
					{ID: "toolu_0167cfEnoQaPviGdVXA95zcu", Name: "retrieve_entity_info", Arguments: `{"name":"Alice"}`},
					{ID: "toolu_01EEe2V5HD1Ac4rKiUR4HD2T", Name: "retrieve_entity_info", Arguments: `{"name":"Bob"}`},
					{ID: "toolu_01XFyAjstT3966qvRynZyVPo", Name: "retrieve_entity_info", Arguments: `{"name":"Charlie"}`},
					{ID: "toolu_013mnQZbgtK2oe3Mo3XKJsx3", Name: "retrieve_entity_info", Arguments: `{"name":"Daisy"}`}}}},
		{name: "Mistral content chunks: the text chunk is the answer, usage as recorded (issue 21 point 5)", kind: "mistral", file: "mistral_thinking_chunks.http", req: ask,
			want: providers.Response{Text: "Crossing a river is quite different from crossing a street", Model: "magistral-medium-latest", FinishReason: "stop", Usage: providers.Usage{InputTokens: 664, OutputTokens: 747}}},
		{name: "Mistral content chunks on the tool path", kind: "mistral", file: "mistral_thinking_chunks.http", req: withTools,
			want: providers.Response{Text: "Crossing a river is quite different from crossing a street", Model: "magistral-medium-latest", FinishReason: "stop", Usage: providers.Usage{InputTokens: 664, OutputTokens: 747}}},
		{name: "Mistral cached prompt tokens", kind: "mistral", file: "mistral_prompt_cache.http", req: ask,
			want: providers.Response{Text: "cache probe two.", Model: "mistral-large-latest", FinishReason: "stop", Usage: providers.Usage{InputTokens: 268, OutputTokens: 5, CacheReadTokens: 224}}},
		{name: "Mistral tool call", kind: "mistral", file: "mistral_tool_call.http", req: withTools,
			want: providers.Response{Model: "pixtral-12b-latest", FinishReason: "tool_calls", Usage: providers.Usage{InputTokens: 65, OutputTokens: 16},
				ToolCalls: []providers.ToolCall{{ID: "FI5qQGzDE", Name: "get_image", Arguments: `{}`}}}},
		{name: "Ollama native stream: done_reason and eval counts", kind: "ollama-native", file: "ollama_chat_stream.http", req: ask,
			want: providers.Response{Text: "Okay, this is a surprisingly tricky question!", Model: "llama3.1:8b", FinishReason: "stop", Usage: providers.Usage{InputTokens: 18, OutputTokens: 203}}},
		{name: "Ollama native JSON format", kind: "ollama-native", file: "ollama_chat_format.http", req: withSchema,
			want: providers.Response{Text: `{"answer"`, Model: "llama3.1:8b", FinishReason: "stop", Usage: providers.Usage{InputTokens: 25, OutputTokens: 9}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, nil, recorded(t, tc.file), reply{status: http.StatusGone, body: `{"error":"one request only"}`})
			// Through the retry middleware, as a run calls it.
			p := providers.Retry(providers.RetryConfig{MaxRetries: 3, Sleep: func(context.Context, time.Duration) error { return nil }})(buildReplay(t, tc.kind, f))
			resp, err := p.Complete(t.Context(), tc.req)
			if err != nil {
				t.Fatalf("%v (class %s)", err, providers.ClassOf(err))
			}
			if f.calls() != 1 {
				t.Errorf("%d requests, want 1", f.calls())
			}
			if !strings.HasPrefix(resp.Text, tc.want.Text) || (tc.want.Text == "" && resp.Text != "") {
				t.Errorf("text %.120q, want it to start with %q", resp.Text, tc.want.Text)
			}
			if strings.Contains(resp.Text, "Analogizing crossing a river") {
				t.Errorf("the thinking is in the answer: %.200q", resp.Text)
			}
			resp.Text, resp.Latency = tc.want.Text, 0
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
		name, kind, file string
		class            providers.Class
		status           int
		mentions         string
	}{
		{"Anthropic 400 invalid request is permanent", "anthropic", "anthropic_400.http", providers.ClassPermanent, 400, "does not support effort level"},
		{"Anthropic 404 not found is permanent", "anthropic", "anthropic_404.http", providers.ClassPermanent, 404, "claude-does-not-exist"},
		{"Anthropic 500 api_error is transient", "anthropic", "anthropic_500.http", providers.ClassTransient, 500, "Internal server error"},
		{"Anthropic 529 overloaded is transient", "anthropic", "anthropic_529.http", providers.ClassTransient, 529, "Overloaded"},
		{"Bedrock 403 AccessDenied is permanent", "bedrock", "bedrock_403.http", providers.ClassPermanent, 403, "access denied"},
		{"Bedrock 400 invalid model id is permanent", "bedrock", "bedrock_400.http", providers.ClassPermanent, 400, "model identifier is invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, nil, recorded(t, tc.file))
			p := providers.Retry(providers.RetryConfig{MaxRetries: 2, Sleep: func(context.Context, time.Duration) error { return nil }})(buildReplay(t, tc.kind, f))
			_, err := p.Complete(t.Context(), ask)
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err %v, want a *providers.Error", err)
			}
			// No recording carries a Retry-After, so none is read.
			if pe.Class != tc.class || pe.StatusCode != tc.status || pe.RetryAfter != 0 || !strings.Contains(err.Error(), tc.mentions) {
				t.Errorf("class %q status %d retry-after %s (%v); want %q %d mentioning %q", pe.Class, pe.StatusCode, pe.RetryAfter, err, tc.class, tc.status, tc.mentions)
			}
			if pe.Provider != tc.kind {
				t.Errorf("provider %q, want %q", pe.Provider, tc.kind)
			}
			want := 1
			if providers.Retryable(err) {
				want = 3
			}
			if f.calls() != want {
				t.Errorf("%d requests, want %d", f.calls(), want)
			}
		})
	}
}

// No wire format gets an assistant message that says nothing (Anthropic
// and Bedrock refuse an empty text block with HTTP 400; issue 21 point 6).
func TestEmptyAssistantMessageIsNotSent(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	conv := providers.Request{Messages: []providers.Message{{Role: "user", Content: "a"}, {Role: "assistant"}, {Role: "user", Content: "b"}}}
	withTools := conv
	withTools.Tools = []providers.Tool{entityTool}
	for _, kind := range []string{"anthropic", "bedrock", "ollama-native", "mistral"} {
		for _, req := range []providers.Request{conv, withTools} {
			var rp reply
			switch kind {
			case "anthropic", "bedrock":
				rp = reply{body: anthropicMsg("end_turn", 5, 1, "ok")}
			case "ollama-native":
				if len(req.Tools) == 0 {
					rp = reply{hdr: map[string]string{"Content-Type": "application/x-ndjson"}, body: ollamaStream("stop", 5, 1, "ok")}
				} else {
					rp = reply{body: mistralResp("ok", "stop", 5, 1)}
				}
			case "mistral":
				rp = reply{body: mistralResp("ok", "stop", 5, 1)}
			}
			f := newFake(t, nil, rp)
			if _, err := buildReplay(t, kind, f).Complete(t.Context(), req); err != nil {
				t.Fatalf("%s (tools %d): %v", kind, len(req.Tools), err)
			}
			msgs, _ := f.last().body["messages"].([]any)
			for i, m := range msgs {
				mm, _ := m.(map[string]any)
				if mm["role"] != "assistant" {
					continue
				}
				if saysNothing(mm["content"]) && mm["tool_calls"] == nil {
					t.Errorf("%s (tools %d): message %d is an empty assistant message: %s", kind, len(req.Tools), i, f.last().raw)
				}
			}
		}
	}
}

// saysNothing: no content, empty text, or only empty text blocks.
func saysNothing(c any) bool {
	switch v := c.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		for _, b := range v {
			bm, _ := b.(map[string]any)
			if bm["type"] != "text" || bm["text"] != "" {
				return false
			}
		}
		return true
	}
	return false
}

// A 200 answer whose body does not parse is unparseable, not transient,
// and the retry middleware does not send it again (issue 21). The body is
// the one an OpenAI-compatible endpoint answered in pydantic-ai's
// test_text_response cassette (providers/openai/testdata/openai_text_plain_200.http).
func TestBadBodyOf200IsUnparseable(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	for _, kind := range []string{"anthropic", "bedrock", "mistral"} {
		t.Run(kind, func(t *testing.T) {
			f := newFake(t, nil, reply{hdr: map[string]string{"Content-Type": "text/plain"}, body: "method=POST pathname=/bin/chat/completions Content-Type=text/plain"})
			p := providers.Retry(providers.RetryConfig{MaxRetries: 3, Sleep: func(context.Context, time.Duration) error { return nil }})(buildReplay(t, kind, f))
			_, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "Hello"}}})
			if c := providers.ClassOf(err); c != providers.ClassUnparseable || f.calls() != 1 {
				t.Errorf("class %q after %d requests (%v), want unparseable after 1", c, f.calls(), err)
			}
		})
	}
}

// Bedrock's Anthropic answers carry the cache reads and writes in the body
// (langchaingo keeps only input_tokens and output_tokens of it): they are
// read from the body and added to the input. No public InvokeModel
// recording has them (testdata/README.md); the body is Anthropic's
// recorded usage (anthropic_cache.http) in Bedrock's answer.
func TestBedrockCacheTokensFromTheBody(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	bedrockEnv(t)
	body := `{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,` +
		`"usage":{"input_tokens":3,"cache_creation_input_tokens":418,"cache_read_input_tokens":1111,"output_tokens":33}}`
	f := newFake(t, bedrockCheck, reply{body: body})
	resp, err := newBedrock(t, f).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := providers.Usage{InputTokens: 3 + 1111 + 418, OutputTokens: 33, CacheReadTokens: 1111, CacheWriteTokens: 418}
	if d := cmp.Diff(want, resp.Usage); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}
}
