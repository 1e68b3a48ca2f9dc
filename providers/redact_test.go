package providers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A credential found by its shape becomes "[REDACTED:<rule>]" (the rule of
// internal/redact that found it); a registered value "[REDACTED]".
func TestRedact(t *testing.T) {
	t.Parallel()
	AddSecrets("custom-key-value-1234", "short", "")
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
			if diff := cmp.Diff(tc.want, Redact(tc.in)); diff != "" {
				t.Errorf("Redact (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRedactErrorKeepsClassAndCause(t *testing.T) {
	t.Parallel()
	AddSecrets("sekrit-value-98765")
	cause := fmt.Errorf("server said Bearer sekrit-value-98765: %w", context.DeadlineExceeded)
	err := RedactError(&Error{Class: ClassTransient, StatusCode: 500, Msg: "echo sekrit-value-98765", Body: "x sekrit-value-98765", Err: cause})
	if strings.Contains(err.Error(), "sekrit") {
		t.Errorf("secret left in %q", err)
	}
	var pe *Error
	if !errors.As(err, &pe) || pe.Class != ClassTransient || pe.StatusCode != 500 || !errors.Is(err, ErrTransient) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("class, status or cause lost: %#v", err)
	}
	plain := RedactError(errors.New("dial: sekrit-value-98765"))
	if strings.Contains(plain.Error(), "sekrit") {
		t.Errorf("secret left in %q", plain)
	}
	clean := errors.New("nothing to hide")
	if RedactError(clean) != clean {
		t.Error("an error with nothing to scrub was replaced")
	}
}

func TestRegistryScrubsEveryProvidersErrors(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	t.Setenv("SWARM_TEST_REDACT_KEY", "registry-key-abcdef-0001")
	reg := &Registry{}
	reg.Register(KindInfo{Kind: "echo"}, func(ref Ref, cfg KindConfig) (Provider, error) {
		key := cfg.APIKey()
		return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
			// An adapter that forgets: the server echoed the key.
			return Response{}, &Error{Class: ClassPermanent, StatusCode: 401, Msg: "bad key " + key, Raw: key, Err: errors.New("auth " + key)}
		}), nil
	})
	p, err := reg.New(Ref{Kind: "echo", Model: "m"}, KindConfig{APIKeyEnv: "SWARM_TEST_REDACT_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(t.Context(), Request{})
	var pe *Error
	if !errors.As(err, &pe) || strings.Contains(err.Error(), "registry-key") || strings.Contains(pe.Raw, "registry-key") || pe.Class != ClassPermanent {
		t.Errorf("err = %v (raw %q)", err, pe.Raw)
	}
	// From now on the key is scrubbed from any text of the process.
	if got := Redact("later: registry-key-abcdef-0001"); got != "later: [REDACTED]" {
		t.Errorf("Redact = %q", got)
	}
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "(empty body)"},
		{"control characters and blank runs become one space", []byte("a\x1b[31m\r\n\t b\x00c"), "a [31m b c"},
		{"long bodies are cut on a rune boundary", []byte(strings.Repeat("é", 150)), strings.Repeat("é", 100) + "..."},
		{"a key straddling the cut leaves no prefix", []byte(strings.Repeat("x", 190) + " Bearer abcdefghijklmnop"), strings.Repeat("x", 190) + " Bearer [R..."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Excerpt(tc.in)); diff != "" {
				t.Errorf("Excerpt (-want +got):\n%s", diff)
			}
		})
	}
}

func BenchmarkRedactPrompt(b *testing.B) {
	AddSecrets("bench-key-0123456789")
	prompt := strings.Repeat("The key decision is to rotate session tokens every day and store them hashed. ", 130)
	b.SetBytes(int64(len(prompt)))
	for b.Loop() {
		Redact(prompt)
	}
}

func BenchmarkRedactPromptWithBearer(b *testing.B) {
	prompt := strings.Repeat("The key decision is to rotate session tokens every day and store them hashed. ", 130) + "Authorization: Bearer abcdefghijkl"
	b.SetBytes(int64(len(prompt)))
	for b.Loop() {
		Redact(prompt)
	}
}
