package google

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// geminiAnswer is a generateContent answer written by us, for tests about
// what is sent rather than what is read (those replay recordings).
func geminiAnswer(text string, in, out int) []byte {
	b, _ := json.Marshal(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out}})
	return []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + string(b))
}

type out struct {
	Name  string `json:"name"`
	Score int    `json:"score"`
}

// TestRequestShape (moved from providers/langchain's TestGoogleGemini): the
// Gemini API path and key header, both system messages in one
// systemInstruction, the generation settings, and no SDK-side streaming.
func TestRequestShape(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	r := newReplay(t, recorded(t, "langchaingo-generate-content.http"))
	req := providers.Request{
		Messages:    []providers.Message{{Role: "system", Content: "You are the judge."}, {Role: "system", Content: "Be brief."}, {Role: "user", Content: "Score it."}},
		Temperature: providers.Float(0.2), MaxTokens: 300, Seed: providers.Int64(9),
	}
	if _, err := newGemini(t, r, false).Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	s := r.last()
	if s.path != "/v1beta/models/gemini-test:generateContent" || s.header.Get("X-Goog-Api-Key") != "gk" {
		t.Errorf("path %s key %q", s.path, s.header.Get("X-Goog-Api-Key"))
	}
	want := jsonOf(t, `{
		"contents":[{"role":"user","parts":[{"text":"Score it."}]}],
		"systemInstruction":{"role":"user","parts":[{"text":"You are the judge.\n\nBe brief."}]},
		"generationConfig":{"maxOutputTokens":300,"temperature":0.2,"seed":9}}`)
	got := s.body
	if gc, ok := got["generationConfig"].(map[string]any); ok {
		if f, ok := gc["temperature"].(float64); ok && f > 0.1999 && f < 0.2001 {
			gc["temperature"] = 0.2 // float32 on the wire
		}
	}
	if d := cmp.Diff(want, any(got)); d != "" {
		t.Errorf("request body (-want +got):\n%s", d)
	}
}

// TestVertexRequestShape: the Vertex AI path names the project and
// location, the credentials' bearer token is sent, and no API key.
func TestVertexRequestShape(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	r := newReplay(t, recorded(t, "langchaingo-generate-content.http"))
	t.Setenv("GOOGLE_API_KEY", "must-not-be-sent")
	if _, err := newVertexAt(t, r, false).Complete(t.Context(), ask); err != nil {
		t.Fatal(err)
	}
	s := r.last()
	if s.path != "/v1beta1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent" ||
		s.header.Get("Authorization") != "Bearer vertex-token" || s.header.Get("X-Goog-Api-Key") != "" {
		t.Errorf("path %s auth %q key %q", s.path, s.header.Get("Authorization"), s.header.Get("X-Goog-Api-Key"))
	}
}

// TestSchemaOutput: a schema is Gemini's JSON mode (responseMimeType and
// responseJsonSchema as written); beside tools it goes into the system
// instruction instead (Gemini 2.x refuses JSON mode with function calling).
func TestSchemaOutput(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	schema := &providers.Schema{Name: "out", Description: "A score.", JSON: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"score":{"type":"integer"}},"required":["name","score"],"additionalProperties":false}`)}
	r := newReplay(t, geminiAnswer(`{"name":"a","score":4}`, 20, 9))
	p := newGemini(t, r, false)
	if _, err := p.Complete(t.Context(), providers.Request{Messages: ask.Messages, Schema: schema}); err != nil {
		t.Fatal(err)
	}
	gc, _ := r.last().body["generationConfig"].(map[string]any)
	if d := cmp.Diff(jsonOf(t, string(schema.JSON)), gc["responseJsonSchema"]); d != "" || gc["responseMimeType"] != "application/json" {
		t.Errorf("responseMimeType %v, responseJsonSchema (-want +got):\n%s", gc["responseMimeType"], d)
	}
	if _, err := p.Complete(t.Context(), providers.Request{Messages: ask.Messages, Schema: schema, Tools: readTools}); err != nil {
		t.Fatal(err)
	}
	b := r.last().body
	gc, _ = b["generationConfig"].(map[string]any)
	si, _ := json.Marshal(b["systemInstruction"])
	if gc["responseMimeType"] != nil || gc["responseJsonSchema"] != nil || !strings.Contains(string(si), `\"score\"`) {
		t.Errorf("with tools: generationConfig %v systemInstruction %s", gc, si)
	}
}

// TestStructuredRepair (moved from providers/langchain's TestGoogleGemini):
// providers.Structured validates Gemini's answer and repairs it once, and
// the usage of both calls is summed.
func TestStructuredRepair(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	r := newReplay(t, geminiAnswer("```json\n{\"name\":\"first\"}\n```", 10, 4), geminiAnswer(`{"name":"fixed","score":5}`, 20, 6))
	v, res, err := providers.Structured[out](t.Context(), newGemini(t, r, false), providers.Request{Messages: []providers.Message{{Role: "user", Content: "rate it"}}}, providers.WithSchemaName("out"))
	if err != nil {
		t.Fatal(err)
	}
	if v != (out{Name: "fixed", Score: 5}) || r.calls() != 2 || !res.Repaired || res.Usage() != (providers.Usage{InputTokens: 30, OutputTokens: 10}) {
		t.Errorf("value %+v after %d calls (repaired %v) usage %+v", v, r.calls(), res.Repaired, res.Usage())
	}
	if !strings.Contains(r.last().raw, "score") || !strings.Contains(strings.ToLower(r.last().raw), "missing") {
		t.Errorf("repair request does not show the validation error: %s", r.last().raw)
	}
}

var readTools = []providers.Tool{
	{Name: "list_dir", Description: "List a directory.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Directory, relative to the root."}},"required":["path"],"additionalProperties":false}`)},
	{Name: "grep", Description: "Search files.", Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"},"context":{"type":"integer"}},"required":["pattern"]}`)},
	{Name: "now", Description: "The time."},
}

func toolTurn(tools []providers.Tool) providers.Request {
	calls := providers.Response{Text: "Looking.", ToolCalls: []providers.ToolCall{
		{ID: "t1", Name: "list_dir", Arguments: `{"path":"."}`, Signature: []byte("sig-1")},
		{ID: "t2", Name: "grep", Arguments: `{"pattern":"token"}`},
	}}
	return providers.Request{
		Messages: []providers.Message{
			{Role: "system", Content: "You review code."},
			{Role: "user", Content: "Find the bug."},
			providers.AssistantToolCalls(calls),
			providers.ToolResult(calls.ToolCalls[0], `{"ok":true,"entries":[]}`),
			providers.ToolResult(calls.ToolCalls[1], "no matches"),
		},
		Tools: tools,
	}
}

// TestToolRequestShape (moved from providers/langchain's
// TestGoogleToolCalling): tools as functionDeclarations whose
// parametersJsonSchema is the tool's schema as written (genai's proto
// Schema conversion dropped additionalProperties); the assistant's calls
// as functionCall parts with their ids and signatures; both results as
// functionResponse parts of one user content, keyed by name and id.
func TestToolRequestShape(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	r := newReplay(t, recorded(t, "langchaingo-tools.http"))
	if _, err := newGemini(t, r, false).Complete(t.Context(), toolTurn(readTools)); err != nil {
		t.Fatal(err)
	}
	b := r.last().body
	wantTools := jsonOf(t, `[{"functionDeclarations":[
		{"name":"list_dir","description":"List a directory.","parametersJsonSchema":{"type":"object","properties":{"path":{"type":"string","description":"Directory, relative to the root."}},"required":["path"],"additionalProperties":false}},
		{"name":"grep","description":"Search files.","parametersJsonSchema":{"type":"object","properties":{"pattern":{"type":"string"},"context":{"type":"integer"}},"required":["pattern"]}},
		{"name":"now","description":"The time.","parametersJsonSchema":{"type":"object","properties":{}}}]}]`)
	if d := cmp.Diff(wantTools, b["tools"]); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	wantContents := jsonOf(t, `[
		{"role":"user","parts":[{"text":"Find the bug."}]},
		{"role":"model","parts":[{"text":"Looking."},
			{"functionCall":{"id":"t1","name":"list_dir","args":{"path":"."}},"thoughtSignature":"c2lnLTE="},
			{"functionCall":{"id":"t2","name":"grep","args":{"pattern":"token"}}}]},
		{"role":"user","parts":[
			{"functionResponse":{"id":"t1","name":"list_dir","response":{"ok":true,"entries":[]}}},
			{"functionResponse":{"id":"t2","name":"grep","response":{"output":"no matches"}}}]}]`)
	if d := cmp.Diff(wantContents, b["contents"]); d != "" {
		t.Errorf("contents (-want +got):\n%s", d)
	}
}

// TestToolHistoryWithoutTools: the tool loop's last turn offers no tools
// and must answer; its history's calls and results go as text.
func TestToolHistoryWithoutTools(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	r := newReplay(t, geminiAnswer("done", 5, 1))
	if _, err := newGemini(t, r, false).Complete(t.Context(), toolTurn(nil)); err != nil {
		t.Fatal(err)
	}
	b := r.last().body
	if _, ok := b["tools"]; ok {
		t.Errorf("tools sent though none were offered")
	}
	want := jsonOf(t, `[
		{"role":"user","parts":[{"text":"Find the bug."}]},
		{"role":"model","parts":[{"text":"Looking."},{"text":"[tool call list_dir (id t1): {\"path\":\".\"}]"},{"text":"[tool call grep (id t2): {\"pattern\":\"token\"}]"}]},
		{"role":"user","parts":[{"text":"[tool result of list_dir (id t1)]\n{\"ok\":true,\"entries\":[]}"},{"text":"[tool result of grep (id t2)]\nno matches"}]}]`)
	if d := cmp.Diff(want, b["contents"]); d != "" {
		t.Errorf("contents (-want +got):\n%s", d)
	}
}

// TestBadTools: a tool without a name or whose parameters are not an
// object schema fails before any request, permanently.
func TestBadTools(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	for _, tl := range []providers.Tool{{Name: ""}, {Name: "x", Parameters: json.RawMessage(`[1]`)}} {
		r := newReplay(t, geminiAnswer("x", 1, 1))
		_, err := newGemini(t, r, false).Complete(t.Context(), providers.Request{Messages: ask.Messages, Tools: []providers.Tool{tl}})
		if providers.ClassOf(err) != providers.ClassPermanent || r.calls() != 0 {
			t.Errorf("%+v: err %v after %d requests, want permanent before any", tl, err, r.calls())
		}
	}
}

// TestKinds: both kinds register; google needs its key; options are
// checked; vertex needs project and location.
func TestKinds(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	reg := &providers.Registry{}
	Register(reg)
	for _, k := range []string{"google", "vertex"} {
		if !reg.Has(k) {
			t.Errorf("%s not registered", k)
		}
	}
	if _, err := New(providers.Ref{Kind: "google", Model: "m"}, providers.KindConfig{APIKeyEnv: "SWARM_TEST_UNSET_KEY"}); !errors.Is(err, providers.ErrMissingAPIKey) {
		t.Errorf("google without key: %v", err)
	}
	t.Setenv("SWARM_TEST_GOOGLE", "gk")
	if _, err := New(providers.Ref{Kind: "google", Model: "m"}, providers.KindConfig{APIKeyEnv: "SWARM_TEST_GOOGLE", Options: map[string]string{"stream": "yes"}}); err == nil || !strings.Contains(err.Error(), "options.stream") {
		t.Errorf("stream: yes: %v", err)
	}
	t.Setenv("GOOGLE_CLOUD_PROJECT", "")
	t.Setenv("GOOGLE_CLOUD_LOCATION", "")
	t.Setenv("GOOGLE_CLOUD_REGION", "")
	if _, err := New(providers.Ref{Kind: "vertex", Model: "m"}, providers.KindConfig{}); err == nil || !strings.Contains(err.Error(), "project and a location") {
		t.Errorf("vertex without project: %v", err)
	}
}

// TestStatus: what `swarm providers list` says of each kind.
func TestStatus(t *testing.T) {
	t.Parallel()
	reg := &providers.Registry{}
	Register(reg)
	home := t.TempDir()
	tests := []struct {
		name string
		kind string
		cfg  providers.KindConfig
		env  map[string]string
		want providers.Status
	}{
		{"google without key", "google", providers.KindConfig{}, nil, providers.Status{Text: "missing GOOGLE_API_KEY"}},
		{"google with key", "google", providers.KindConfig{}, map[string]string{"GOOGLE_API_KEY": "k"}, providers.Status{Usable: true, Text: "GOOGLE_API_KEY is set"}},
		{"vertex without project", "vertex", providers.KindConfig{}, nil, providers.Status{Text: "needs a project (providers.vertex.options.project or GOOGLE_CLOUD_PROJECT)"}},
		{"vertex without location", "vertex", providers.KindConfig{}, map[string]string{"GOOGLE_CLOUD_PROJECT": "p"},
			providers.Status{Text: "needs a location (providers.vertex.options.location or GOOGLE_CLOUD_LOCATION, e.g. us-central1 or global)"}},
		{"vertex without credentials", "vertex", providers.KindConfig{Options: map[string]string{"project": "p", "location": "global"}}, map[string]string{"HOME": home},
			providers.Status{Text: "project p, location global: no Application Default Credentials found (set GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login`; on Google Cloud the metadata server's are used)"}},
		{"vertex with a key file", "vertex", providers.KindConfig{}, map[string]string{"GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "us-central1", "GOOGLE_APPLICATION_CREDENTIALS": "/k.json"},
			providers.Status{Usable: true, Text: "project p, location us-central1, credentials from GOOGLE_APPLICATION_CREDENTIALS"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := reg.Status(tc.kind, tc.cfg, func(k string) string { return tc.env[k] })
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
