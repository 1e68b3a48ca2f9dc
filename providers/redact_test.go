package providers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// valuesRedactor is a Redactor of a set of values (each becomes Redacted),
// the way a run's set scrubs its keys; the credential shapes are
// internal/redact's, tested with the registry that wires them in
// (providers/builtin).
func valuesRedactor(values ...string) Redactor {
	return RedactFunc(func(s string) string {
		for _, v := range values {
			s = strings.ReplaceAll(s, v, Redacted)
		}
		return s
	})
}

// A nil Redactor removes nothing: this package holds no secrets of its own.
func TestNilRedactorRemovesNothing(t *testing.T) {
	t.Parallel()
	err := errors.New("Bearer abcdefghijklmnop")
	if got := RedactError(nil, err); got != err {
		t.Errorf("RedactError(nil) = %v, want err itself", got)
	}
	if got := Excerpt(nil, []byte("key sk-proj-AbCdEf0123456789")); got != "key sk-proj-AbCdEf0123456789" {
		t.Errorf("Excerpt(nil) = %q", got)
	}
}

func TestRedactErrorKeepsClassAndCause(t *testing.T) {
	t.Parallel()
	red := valuesRedactor("sekrit-value-98765")
	cause := fmt.Errorf("server said Bearer sekrit-value-98765: %w", context.DeadlineExceeded)
	err := RedactError(red, &Error{Class: ClassTransient, StatusCode: 500, Msg: "echo sekrit-value-98765", Body: "x sekrit-value-98765", Err: cause})
	if strings.Contains(err.Error(), "sekrit") {
		t.Errorf("secret left in %q", err)
	}
	var pe *Error
	if !errors.As(err, &pe) || pe.Class != ClassTransient || pe.StatusCode != 500 || !errors.Is(err, ErrTransient) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("class, status or cause lost: %#v", err)
	}
	plain := RedactError(red, errors.New("dial: sekrit-value-98765"))
	if strings.Contains(plain.Error(), "sekrit") {
		t.Errorf("secret left in %q", plain)
	}
	clean := errors.New("nothing to hide")
	if RedactError(red, clean) != clean {
		t.Error("an error with nothing to scrub was replaced")
	}
}

func TestRegistryScrubsEveryProvidersErrors(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	t.Setenv("SWARM_TEST_REDACT_KEY", "registry-key-abcdef-0001")
	var made []string // the values the registry built a Redactor of
	reg := &Registry{NewRedactor: func(values ...string) Redactor { made = append(made, values...); return valuesRedactor(values...) }}
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
	// The provider's Redactor was made of its key: no set outlives it.
	if diff := cmp.Diff([]string{"registry-key-abcdef-0001"}, made); diff != "" {
		t.Errorf("NewRedactor's values (-want +got):\n%s", diff)
	}
	// A Redactor handed in (a run's set) is used as it is.
	p, err = reg.New(Ref{Kind: "echo", Model: "m"}, KindConfig{APIKeyEnv: "SWARM_TEST_REDACT_KEY", Redactor: valuesRedactor("registry-key-abcdef-0001")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = p.Complete(t.Context(), Request{}); strings.Contains(err.Error(), "registry-key") || len(made) != 1 {
		t.Errorf("err = %v with the run's Redactor (NewRedactor called %d times, want 1)", err, len(made))
	}
}

// Excerpt's shaping; its scrubbing before the cut is tested with the
// credential shapes in providers/builtin.
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
		{"a value straddling the cut leaves no prefix", []byte(strings.Repeat("x", 190) + " key abcdefghijklmnop"), strings.Repeat("x", 190) + " key [REDA..."},
	}
	red := valuesRedactor("abcdefghijklmnop")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Excerpt(red, tc.in)); diff != "" {
				t.Errorf("Excerpt (-want +got):\n%s", diff)
			}
		})
	}
}
