package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// TestErrorBodyShapesKeepTheStatus sends every status class with every body
// shape servers are seen to send. go-openai reads a string "error" as an
// empty APIError (status 0) wrapped in a RequestError, which made a 503
// permanent and never retried; the status on the wire must decide.
func TestErrorBodyShapesKeepTheStatus(t *testing.T) {
	t.Parallel()
	shapes := []struct {
		name    string
		body    string
		excerpt string // what the message must quote from the body
	}{
		{"string error (go-openai reads an empty APIError)", `{"error":"upstream overloaded"}`, `{"error":"upstream overloaded"}`},
		{"HTML page from a proxy", "<html>\r\n<body><h1>502 Bad\tGateway</h1></body>\n</html>", "<html> <body><h1>502 Bad Gateway</h1></body> </html>"},
		{"empty body", "", "(empty body)"},
		{"JSON error object", `{"error":{"message":"boom happened","type":"server_error","code":null}}`, "boom happened"},
		{"vLLM/FastAPI shape", `{"object":"error","message":"model busy","type":"InternalServerError","code":500}`, `"message":"model busy"`},
		{"error is a number", `{"error":42}`, `{"error":42}`},
	}
	statuses := []struct {
		status  int
		class   providers.Class
		hint    string
		retried bool
	}{
		{429, providers.ClassRateLimited, "rate limited", true},
		{408, providers.ClassTimeout, "timed out", true},
		{504, providers.ClassTimeout, "timed out", true},
		{500, providers.ClassTransient, "server error", true},
		{502, providers.ClassTransient, "server error", true},
		{503, providers.ClassTransient, "server error", true},
		{529, providers.ClassTransient, "server error", true},
		{401, providers.ClassPermanent, "check the API key", false},
		{403, providers.ClassPermanent, "check the API key", false},
		{400, providers.ClassPermanent, "rejected", false},
		{404, providers.ClassPermanent, "model name", false},
		{402, providers.ClassQuota, "payment", false},
	}
	for _, sh := range shapes {
		for _, st := range statuses {
			t.Run(fmt.Sprintf("%d/%s", st.status, sh.name), func(t *testing.T) {
				var calls atomic.Int32
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					calls.Add(1)
					w.Header().Set("Retry-After", "3")
					w.WriteHeader(st.status)
					io.WriteString(w, sh.body)
				}))
				defer srv.Close()
				var waits []time.Duration // Sleep is called by the one goroutine running Complete
				p := providers.Retry(providers.RetryConfig{MaxRetries: 2, Initial: time.Millisecond,
					Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }})(newProvider(t, srv.URL))
				_, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
				var pe *providers.Error
				if !errors.As(err, &pe) {
					t.Fatalf("err %v is not a *providers.Error", err)
				}
				if pe.Class != st.class || pe.StatusCode != st.status {
					t.Errorf("class %q status %d, want %q %d (%v)", pe.Class, pe.StatusCode, st.class, st.status, err)
				}
				msg := err.Error()
				for _, want := range []string{fmt.Sprintf("HTTP %d", st.status), sh.excerpt, st.hint} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q lacks %q", msg, want)
					}
				}
				wantCalls := 1
				if st.retried {
					wantCalls = 3
				}
				if got := int(calls.Load()); got != wantCalls {
					t.Errorf("calls = %d, want %d", got, wantCalls)
				}
				if st.class == providers.ClassRateLimited {
					if diff := cmp.Diff([]time.Duration{3 * time.Second, 3 * time.Second}, waits); diff != "" {
						t.Errorf("waits honour Retry-After (-want +got):\n%s", diff)
					}
				}
			})
		}
	}
}

func TestUnauthorizedNamesTheKeyVariable(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	t.Setenv("SWARM_TEST_HINT_KEY", "sk-hint-test-0123456789")
	srv := errServer(t, 401, `{"error":"unauthorized"}`, nil)
	p := mustNew(t, "openai-compatible", "m", providers.KindConfig{BaseURL: srv.URL + "/v1", APIKeyEnv: "SWARM_TEST_HINT_KEY"})
	_, err := p.Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "check the API key in SWARM_TEST_HINT_KEY") {
		t.Errorf("err = %v, want a hint naming SWARM_TEST_HINT_KEY", err)
	}
}

func TestErrorBodyExcerptIsBounded(t *testing.T) {
	t.Parallel()
	body := `{"error":"` + strings.Repeat("x", 100_000) + "\x1b[31m" + `"}`
	srv := errServer(t, 500, body, nil)
	_, err := newProvider(t, srv.URL).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "x"}}})
	var pe *providers.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err %v", err)
	}
	if len(pe.Body) > providers.MaxExcerpt+3 || !strings.HasSuffix(pe.Body, "...") {
		t.Errorf("body excerpt is %d bytes (%.40q...), want at most %d and marked cut", len(pe.Body), pe.Body, providers.MaxExcerpt+3)
	}
	if len(err.Error()) > 600 {
		t.Errorf("message is %d bytes", len(err.Error()))
	}
}
