package google

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/auth"

	"github.com/swarm-dev/swarm/providers"
)

// replay is a server that answers each request with the next recorded
// response of testdata (the last one again when they run out) and keeps
// what it was asked.
type replay struct {
	srv     *httptest.Server
	mu      sync.Mutex
	answers [][]byte
	reqs    []seen
}

type seen struct {
	path, query string
	header      http.Header
	body        map[string]any
	raw         string
}

// recorded reads a testdata file (see testdata/ORIGIN).
func recorded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newReplay(t *testing.T, answers ...[]byte) *replay {
	t.Helper()
	r := &replay{answers: answers}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		s := seen{path: req.URL.Path, query: req.URL.RawQuery, header: req.Header.Clone(), raw: string(b)}
		_ = json.Unmarshal(b, &s.body)
		r.mu.Lock()
		r.reqs = append(r.reqs, s)
		raw := r.answers[min(len(r.reqs), len(r.answers))-1]
		r.mu.Unlock()
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), req)
		if err != nil {
			t.Errorf("recording: %v", err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		for k, vs := range resp.Header {
			if k == "Content-Length" || k == "Transfer-Encoding" {
				continue
			}
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		body = reencode(t, body, strings.Contains(req.URL.RawQuery, "alt=sse"))
		if strings.Contains(req.URL.RawQuery, "alt=sse") && resp.StatusCode < 400 {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *replay) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

func (r *replay) last() seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[len(r.reqs)-1]
}

// enumNames are the google.ai.generativelanguage.v1beta enum values the
// langchaingo recordings hold as numbers (they asked for enum-encoding=int;
// genai does not): see testdata/ORIGIN.
var enumNames = map[string]map[float64]string{
	"finishReason": {0: "FINISH_REASON_UNSPECIFIED", 1: "STOP", 2: "MAX_TOKENS", 3: "SAFETY", 4: "RECITATION", 5: "OTHER"},
	"blockReason":  {0: "BLOCK_REASON_UNSPECIFIED", 1: "SAFETY", 2: "OTHER"},
	"category":     {7: "HARM_CATEGORY_HARASSMENT", 8: "HARM_CATEGORY_HATE_SPEECH", 9: "HARM_CATEGORY_SEXUALLY_EXPLICIT", 10: "HARM_CATEGORY_DANGEROUS_CONTENT"},
	"probability":  {0: "HARM_PROBABILITY_UNSPECIFIED", 1: "NEGLIGIBLE", 2: "LOW", 3: "MEDIUM", 4: "HIGH"},
	"modality":     {0: "MODALITY_UNSPECIFIED", 1: "TEXT"},
}

// reencode gives a langchaingo recording the encoding genai asks for: enum
// names instead of numbers, and, for a stream (sse), each element of the
// recorded JSON array as an SSE event. Other recordings pass unchanged.
func reencode(t *testing.T, body []byte, sse bool) []byte {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || (trimmed[0] != '[' && trimmed[0] != '{') {
		return body
	}
	var v any
	if json.Unmarshal(trimmed, &v) != nil {
		return body
	}
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, c := range x {
				if n, ok := c.(float64); ok && enumNames[k] != nil {
					name, ok := enumNames[k][n]
					if !ok {
						t.Errorf("no name for %s %v", k, n)
					}
					x[k] = name
					continue
				}
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	arr, isArr := v.([]any)
	if !isArr || !sse {
		b, _ := json.Marshal(v)
		return b
	}
	var out bytes.Buffer
	for _, e := range arr {
		b, _ := json.Marshal(e)
		out.WriteString("data: ")
		out.Write(b)
		out.WriteString("\r\n\r\n")
	}
	return out.Bytes()
}

// newGemini is the google kind against a replay server.
func newGemini(t *testing.T, r *replay, stream bool) providers.Provider {
	t.Helper()
	t.Setenv("SWARM_TEST_GOOGLE", "gk")
	opts := map[string]string{}
	if stream {
		opts["stream"] = "true"
	}
	p, err := New(providers.Ref{Kind: "google", Model: "gemini-test"}, providers.KindConfig{BaseURL: r.srv.URL, APIKeyEnv: "SWARM_TEST_GOOGLE", Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type staticToken struct{}

func (staticToken) Token(context.Context) (*auth.Token, error) {
	return &auth.Token{Value: "vertex-token", Type: "Bearer", Expiry: time.Now().Add(time.Hour)}, nil
}

// newVertexAt is the vertex kind against a replay server, with static
// credentials standing in for Application Default Credentials.
func newVertexAt(t *testing.T, r *replay, stream bool) providers.Provider {
	t.Helper()
	old := detectCredentials
	detectCredentials = func() (*auth.Credentials, error) {
		return auth.NewCredentials(&auth.CredentialsOptions{TokenProvider: staticToken{}}), nil
	}
	t.Cleanup(func() { detectCredentials = old })
	opts := map[string]string{"project": "proj-1", "location": "europe-west4"}
	if stream {
		opts["stream"] = "true"
	}
	p, err := New(providers.Ref{Kind: "vertex", Model: "gemini-2.5-flash"}, providers.KindConfig{BaseURL: r.srv.URL, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// errOf is the classified error in err (nil for none).
func errOf(err error) *providers.Error {
	var pe *providers.Error
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}

var ask = providers.Request{Messages: []providers.Message{{Role: "user", Content: "go"}}}

// jsonOf decodes s (a test literal) to compare with a decoded request body.
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}
