package redact_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/internal/redact/redacttest"
)

// Every credential format is removed, as plain text, as a JSON string and
// as JSON inside JSON (a model's raw answer quoted in a log), and the JSON
// stays JSON.
func TestEveryFormatIsRemoved(t *testing.T) {
	t.Parallel()
	set := redact.NewSecrets(redacttest.Secret)
	for _, p := range redacttest.All() {
		t.Run(p.Name, func(t *testing.T) {
			j, _ := json.Marshal(map[string]string{"content": p.Text})
			jj, _ := json.Marshal(map[string]string{"raw": string(j)})
			for _, form := range []string{p.Text, string(j), string(jj)} {
				got := set.String(form)
				for _, raw := range p.Raw {
					if strings.Contains(got, raw) {
						t.Errorf("%q still holds %q:\n%s", p.Name, raw, got)
					}
				}
				if form != p.Text && !json.Valid([]byte(got)) {
					t.Errorf("redacting JSON broke it:\n%s", got)
				}
				if again := set.String(got); again != got {
					t.Errorf("not idempotent:\n%s\n%s", got, again)
				}
			}
		})
	}
}

// What is not a secret stays as it was: numbers after a token's name,
// digests, prose about keys and tokens, placeholders.
func TestOrdinaryTextStays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ why, text string }{
		{"token counts are numbers", `{"input_tokens": 1234, "max_tokens": 4096, "cache_read_tokens": 88}`},
		{"a sealed hash is hex", "sealed_hash: sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
		{"prose about secrets", "Rotate the API key and the bearer tokens; the password policy needs a minimum length."},
		{"an env reference is not a value", "DB_PASSWORD=$DB_PASSWORD_FROM_VAULT"},
		{"a placeholder stays a placeholder", "DB_PASSWORD=[REDACTED:password_assignment]"},
		{"a temporary directory is a path, not a key body", `"dir": "/tmp/TestFollowUpPassesPriorContextAndNeverTheCriteria2572241475/003/run"`},
		{"a go.sum line", "golang.org/x/text v0.28.0 h1:rhazDwis8INMIwQ4tpjLDzUhx6RlXqZNPEM0huQojng="},
	} {
		t.Run(tc.why, func(t *testing.T) {
			if diff := cmp.Diff(tc.text, redact.String(tc.text)); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
		})
	}
}

// The line after a key body line is the body's last line only when it is
// short base64 right after a line break: a hash on the next line stays.
func TestKeyBodyLastLine(t *testing.T) {
	t.Parallel()
	hash := `"sealed_hash": "sha256:b3c316c575e65fc9a31b030dcacc5d55d197f16c310b1881ab5a3dd3e2b54e9d"`
	got := redact.String("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCWSQN3raQHYWwI6KdeLfhx+yFw+JnhWUd\n" + hash)
	if diff := cmp.Diff("[REDACTED:private_key_body]\n"+hash, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Personal data is removed only when asked (agents' output), never from
// every file (a number in telemetry is not a card).
func TestPersonalDataOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	text := "mail jane.doe@example.com, card 4111 1111 1111 1111"
	if got := redact.String(text); got != text {
		t.Errorf("String removed personal data: %s", got)
	}
	want := "mail [REDACTED:email], card [REDACTED:card_number]"
	if diff := cmp.Diff(want, redact.Text(text, true)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Only the secret is replaced: the name, the operator and the quotes stay.
func TestOnlyTheSecretIsReplaced(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ why, in, want string }{
		{"env assignment", "DB_PASSWORD=hunter2-Correct-Horse # db", "DB_PASSWORD=[REDACTED:password_assignment] # db"},
		{"JSON field", `{"api_key":"0123456789abcdef"}`, `{"api_key":"[REDACTED:api_key_assignment]"}`},
		{"bearer header", "Authorization: Bearer abc.DEF_123-xyz", "Authorization: Bearer [REDACTED:bearer_token]"},
		{"registered value", "echo " + redacttest.Secret + "!", "echo [REDACTED]!"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, redact.NewSecrets(redacttest.Secret).String(tc.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A value added to a set after a text was found clean is still removed
// from it: the new set does not share the old one's memory of clean texts.
func TestWithForgetsCleanTexts(t *testing.T) {
	t.Parallel()
	value := "late-added-Qx7Zp2"
	text := strings.Repeat("lorem ipsum ", 40) + value
	set := redact.NewSecrets("some-other-value-1")
	if got := set.String(text); got != text {
		t.Fatalf("changed before the value was added: %s", got)
	}
	if got := set.With(value).String(text); strings.Contains(got, value) {
		t.Errorf("a value added later stayed: %s", got)
	}
	if got := set.String(text); got != text {
		t.Errorf("With changed the set it was called on: %s", got)
	}
}

// Two runs with different secret sets, side by side, each scrub their own
// values and never the other's: a text clean for one run is remembered as
// clean by that run's set only. (A process-global set could not pass: the
// second run's values would be scrubbed from the first run's texts.)
func TestSetsOfParallelRunsAreApart(t *testing.T) {
	t.Parallel()
	runs := []struct{ name, own, other string }{
		{"run A", "run-a-key-0123456789", "run-b-key-9876543210"},
		{"run B", "run-b-key-9876543210", "run-a-key-0123456789"},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			set := redact.NewSecrets(r.own)
			for i := range 200 {
				// Long enough (minCached) for the memory of clean texts to count.
				text := fmt.Sprintf("%s call %d: own %s, other %s", strings.Repeat("pad ", 70), i, r.own, r.other)
				got := set.String(text)
				if strings.Contains(got, r.own) {
					t.Fatalf("own secret left: %s", got)
				}
				if !strings.Contains(got, r.other) {
					t.Fatalf("the other run's value was scrubbed: its set leaked into this run: %s", got)
				}
			}
		})
	}
}

// BenchmarkString is the pass over a typical agent answer (a bundle's
// prose with file citations), new each time (no memory of clean texts
// helps) and repeated (as a transcript repeats a conversation's messages).
func BenchmarkString(b *testing.B) {
	answer := strings.Repeat("The auth service reads its API key from config/app.yaml:12 and rotates the session token every hour; "+
		"see internal/auth/session.go:88 for the check. The password policy lives in docs/security.md. ", 8)
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(answer)))
		for i := 0; b.Loop(); i++ {
			_ = redact.String(answer + strconv.Itoa(i)) // never seen before
		}
	})
	// A run file: indented JSON whose names say token and key, with
	// numbers and ids for values (telemetry.json, result.json).
	var file strings.Builder
	for i := range 20 {
		fmt.Fprintf(&file, "  \"input_tokens\": %d,\n  \"cache_read_tokens\": %d,\n  \"api_key_env\": \"OPENAI_API_KEY\",\n  \"key\": \"worker-%02d-brief\",\n", 1000+i, 37*i, i)
	}
	b.Run("run file", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(file.Len()))
		for i := 0; b.Loop(); i++ {
			_ = redact.String(file.String() + strconv.Itoa(i))
		}
	})
	b.Run("repeated", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(answer)))
		for b.Loop() {
			_ = redact.String(answer)
		}
	})
}
