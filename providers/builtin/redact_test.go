package builtin

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/providers"
)

// A credential found by its shape becomes "[REDACTED:<rule>]" (the rule of
// internal/redact that found it); a value of the set "[REDACTED]". (Moved
// from package providers, which holds no redaction pass of its own now.)
func TestRedact(t *testing.T) {
	t.Parallel()
	red := NewRedactor("custom-key-value-1234", "short", "")
	tests := []struct {
		name, in, want string
	}{
		{"registered secret anywhere", "echo: custom-key-value-1234!", "echo: [REDACTED]!"},
		{"a secret shorter than MinSecretLen is ignored (it would blank out words)", "short answer", "short answer"},
		{"Authorization header echoed", `header Authorization: Bearer abc.DEF_123-xyz`, `header Authorization: Bearer [REDACTED:bearer_token]`},
		{"lower-case bearer", `bearer tok_1234567`, `bearer [REDACTED:bearer_token]`},
		{"OpenAI-style key", `Incorrect API key provided: sk-proj-AbCdEf0123456789`, `Incorrect API key provided: [REDACTED:openai_style_key]`},
		{"Anthropic-style key", `key sk-ant-api03-xxxxxxxxxxxx`, `key [REDACTED:openai_style_key]`},
		{"Google key", `AIzaSyA-1234567890abcdefghijklmnopqrstu`, `[REDACTED:google_api_key]`},
		{"api-key header", `api-key: 0123456789abcdef`, `api-key: [REDACTED:api_key_assignment]`},
		{"JSON api_key field", `{"api_key":"0123456789abcdef"}`, `{"api_key":"[REDACTED:api_key_assignment]"}`},
		{"key query parameter", `GET https://x/v1beta/models/m:generate?alt=json&key=secretvalue`, `GET https://x/v1beta/models/m:generate?alt=json&key=[REDACTED:key_parameter]`},
		{"ordinary prose is untouched", "The key point: rotate tokens; sk- is a prefix. Bearer of news.", "The key point: rotate tokens; sk- is a prefix. Bearer of news."},
		{"words ending in sk- are not keys", "a task-based-decomposition-approach", "a task-based-decomposition-approach"},
		{"api_key_env names a variable, not a key", "check the API key in OPENAI_API_KEY (api_key_env)", "check the API key in OPENAI_API_KEY (api_key_env)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, red.Redact(tc.in)); diff != "" {
				t.Errorf("Redact (-want +got):\n%s", diff)
			}
		})
	}
}

// Excerpt scrubs before it cuts, so a credential straddling the cut leaves
// no prefix.
func TestExcerptScrubsBeforeTheCut(t *testing.T) {
	t.Parallel()
	in := []byte(strings.Repeat("x", 190) + " Bearer abcdefghijklmnop")
	want := strings.Repeat("x", 190) + " Bearer [R..."
	if diff := cmp.Diff(want, providers.Excerpt(NewRedactor(), in)); diff != "" {
		t.Errorf("Excerpt (-want +got):\n%s", diff)
	}
}

// The registry's providers scrub with a Redactor made of their key when
// their config brings none.
func TestRegistryMakesARedactorOfTheKey(t *testing.T) {
	reg := Registry(mock.Options{})
	if reg.NewRedactor == nil {
		t.Fatal("builtin registry has no NewRedactor: providers built without a run's set would not scrub")
	}
}

func BenchmarkRedactPrompt(b *testing.B) {
	red := NewRedactor("bench-key-0123456789")
	prompt := strings.Repeat("The key decision is to rotate session tokens every day and store them hashed. ", 130)
	b.SetBytes(int64(len(prompt)))
	for b.Loop() {
		red.Redact(prompt)
	}
}

func BenchmarkRedactPromptWithBearer(b *testing.B) {
	red := NewRedactor()
	prompt := strings.Repeat("The key decision is to rotate session tokens every day and store them hashed. ", 130) + "Authorization: Bearer abcdefghijkl"
	b.SetBytes(int64(len(prompt)))
	for b.Loop() {
		red.Redact(prompt)
	}
}
