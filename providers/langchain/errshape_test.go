package langchain

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/providers"
)

// TestEveryAdapterKeepsStatusAndBody sends every adapter the error body
// shapes servers and proxies send (a string "error", an HTML page, an empty
// body, a JSON error object) with each status class, and checks the class,
// that a retry is attempted exactly for the retryable ones, and that the
// message names the HTTP status and quotes the body.
func TestEveryAdapterKeepsStatusAndBody(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	adapters := []struct {
		name string
		new  func(t *testing.T, f *fake) providers.Provider
	}{
		{"anthropic", func(t *testing.T, f *fake) providers.Provider { return newAnthropic(t, f, nil) }},
		{"ollama-native", newOllama},
		{"mistral", newMistral},
		{"bedrock", func(t *testing.T, f *fake) providers.Provider { bedrockEnv(t); return newBedrock(t, f) }},
	}
	shapes := []struct {
		name, body string
		quote      string // a piece of the body the message must carry ("" for an empty body)
	}{
		{"string error", `{"error":"upstream overloaded"}`, "upstream overloaded"},
		{"HTML page", "<html><body><h1>Bad Gateway</h1>\n</body></html>", "Bad Gateway"},
		{"empty body", "", ""},
		{"JSON error object", `{"error":{"message":"boom happened","type":"server_error"}}`, "boom happened"},
	}
	statuses := []struct {
		status  int
		class   providers.Class
		retried bool
	}{
		{429, providers.ClassRateLimited, true},
		{503, providers.ClassTransient, true},
		{504, providers.ClassTimeout, true},
		{401, providers.ClassPermanent, false},
		{400, providers.ClassPermanent, false},
	}
	for _, ad := range adapters {
		for _, sh := range shapes {
			for _, st := range statuses {
				t.Run(fmt.Sprintf("%s/%d/%s", ad.name, st.status, sh.name), func(t *testing.T) {
					f := newFake(t, nil, reply{status: st.status, body: sh.body, hdr: map[string]string{"Content-Type": "text/html"}})
					p := providers.Retry(providers.RetryConfig{MaxRetries: 1, Initial: time.Millisecond,
						Sleep: func(context.Context, time.Duration) error { return nil }})(ad.new(t, f))
					_, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}, MaxTokens: 10})
					c, _, status := errClass(err)
					if c != st.class || status != st.status {
						t.Errorf("class %q status %d, want %q %d (%v)", c, status, st.class, st.status, err)
					}
					if err == nil {
						return
					}
					msg := err.Error()
					if !strings.Contains(msg, fmt.Sprintf("HTTP %d", st.status)) || !strings.Contains(msg, sh.quote) {
						t.Errorf("message %q lacks HTTP %d or %q", msg, st.status, sh.quote)
					}
					if len(msg) > 1000 {
						t.Errorf("message is %d bytes", len(msg))
					}
					want := 1
					if st.retried {
						want = 2
					}
					if f.calls() != want {
						t.Errorf("%d requests, want %d", f.calls(), want)
					}
				})
			}
		}
	}
}

func TestAdapterUnauthorizedHintNamesTheKey(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	f := newFake(t, nil, reply{status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`})
	_, err := newAnthropic(t, f, nil).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "check the API key in SWARM_TEST_ANTHROPIC") {
		t.Errorf("err = %v, want a hint naming SWARM_TEST_ANTHROPIC", err)
	}
}
