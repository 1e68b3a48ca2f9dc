package mock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// holdingProvider reserves hold bytes of the request's answer budget and,
// on its first call, waits for release before answering.
type holdingProvider struct {
	hold    int64
	held    chan struct{} // closed once the first call holds its bytes
	release chan struct{}
	calls   atomic.Int32
}

func (p *holdingProvider) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	first := p.calls.Add(1) == 1
	if err := budgetFrom(ctx).reserve(p.hold); err != nil {
		return providers.Response{}, budgetError(err)
	}
	if first {
		close(p.held)
		<-p.release
	}
	return providers.Response{Text: "ok", Model: "mock-honest"}, nil
}

// TestServerBoundsAnswerBytesInFlight: while one request holds the
// server's bound on answer bytes in flight, another that needs bytes is
// answered 503 with Retry-After; once the first is answered, the bytes
// are free again. Before issue 22 two requests of 590 MB answers ran side
// by side (6.3 GB).
func TestServerBoundsAnswerBytesInFlight(t *testing.T) {
	t.Parallel()
	const bound = 1 << 20
	p := &holdingProvider{hold: bound, held: make(chan struct{}), release: make(chan struct{})}
	h, err := newServer(ServerOptions{Options: Options{MaxAnswerBytes: bound}, MaxInFlightAnswerBytes: bound}, p)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func() (*http.Response, map[string]any) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"honest","messages":[{"role":"user","content":"hi"}]}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return nil, nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return resp, out
	}
	first := make(chan int)
	go func() {
		resp, _ := post()
		if resp == nil {
			first <- 0
			return
		}
		first <- resp.StatusCode
	}()
	<-p.held
	resp, out := post()
	if resp == nil {
		t.FailNow()
	}
	e, _ := out["error"].(map[string]any)
	if diff := cmp.Diff([]any{http.StatusServiceUnavailable, "1", "server_busy"}, []any{resp.StatusCode, resp.Header.Get("Retry-After"), e["code"]}); diff != "" {
		t.Errorf("second request while the first holds the bound (-want +got):\n%s", diff)
	}
	close(p.release)
	if st := <-first; st != http.StatusOK {
		t.Errorf("first request: status %d", st)
	}
	// The third needs the whole bound: the first's bytes were given back.
	if resp, out := post(); resp == nil || resp.StatusCode != http.StatusOK {
		t.Errorf("third request after the first was answered: %v", out)
	}
}

func TestNewServerRefusesInFlightBelowAnswer(t *testing.T) {
	t.Parallel()
	_, err := NewServer(ServerOptions{Options: Options{MaxAnswerBytes: 2 << 20}, MaxInFlightAnswerBytes: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "below the bound on one answer") {
		t.Errorf("NewServer: %v", err)
	}
}

// TestAnswerBudgetChoicesShareTheBound: n choices count together.
func TestAnswerBudgetChoicesShareTheBound(t *testing.T) {
	t.Parallel()
	b := newAnswerBudget(100, nil)
	for i, want := range []error{nil, nil, ErrAnswerTooLarge} {
		if err := b.spend(40); !errors.Is(err, want) {
			t.Errorf("spend %d: %v, want %v", i, err, want)
		}
	}
}

// TestGeneratorChargesWhatItBuilds: the bytes the generator counts are
// never fewer than the JSON it returns (the bound holds on what is sent).
func TestGeneratorChargesWhatItBuilds(t *testing.T) {
	t.Parallel()
	schemas := []string{
		`{"type":"object","properties":{"a":{"type":"string","minLength":300},"b":{"type":"array","minItems":7,"items":{"type":"number"}},"c":{"enum":["<&>",{"x":[1,2]}]},"d":{"type":["boolean","null"]},"e":{"const":"q\"uote\u2028"}}}`,
		`{"type":"array","minItems":20,"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string","pattern":"^[a-z]{5}-\\d{3}$"},"n":{"type":"integer","minimum":-1000000,"maximum":1e15}}}}`,
	}
	for i, s := range schemas {
		for _, minimal := range []bool{false, true} {
			var schema map[string]any
			if err := json.Unmarshal([]byte(s), &schema); err != nil {
				t.Fatal(err)
			}
			g := &generator{rng: rngFor([32]byte{byte(i)}, 0), words: []string{"tok<en>", "é"}, root: schema, minimal: minimal}
			v := g.value(schema, 0)
			if g.err != nil {
				t.Fatal(g.err)
			}
			b, _ := json.Marshal(v)
			if int64(len(b)) > g.bytes {
				t.Errorf("schema %d minimal %v: counted %d bytes, the JSON has %d", i, minimal, g.bytes, len(b))
			}
		}
	}
	for _, s := range []string{"plain", `"\<>&` + "\x01\u2028é\xff"} {
		b, _ := json.Marshal(s)
		if got := jsonStringLen(s); got != int64(len(b)) {
			t.Errorf("jsonStringLen(%q) = %d, encoding/json writes %d", s, got, len(b))
		}
	}
}

// TestCheckSchemaShapeIsBoundedWork: refusing a 74 KB nested schema (17.7 s
// in the compiler before issue 22) or a 1 MB wide one reads only up to the
// bound: allocations do not grow with the schema.
func TestCheckSchemaShapeIsBoundedWork(t *testing.T) {
	// Serial: counts the whole process's allocations.
	for _, tc := range []struct {
		name string
		raw  []byte
	}{
		{"nested 2000", []byte(strings.Repeat(`{"type":"object","properties":{"a":`, 2000) + `{}` + strings.Repeat(`}}`, 2000))},
		{"wide 40000", []byte(`{"properties":{` + strings.Repeat(`"p":{},`, 40000) + `"z":{}}}`)},
	} {
		allocs := testing.AllocsPerRun(3, func() {
			var n int
			if err := checkSchemaShape(tc.raw, &n); !errors.Is(err, ErrBadSchema) {
				t.Fatalf("%s: %v", tc.name, err)
			}
		})
		if allocs > 20_000 {
			t.Errorf("%s (%d bytes): %v allocations to refuse it", tc.name, len(tc.raw), allocs)
		}
	}
}

func nestedSchemaN(n int) []byte {
	return []byte(strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat(`}}`, n))
}

// BenchmarkAnswerNestedSchema is the path of a nested schema through the
// mock (shape check, compile, answer) at depths within the bound, each
// schema new to the compiler's cache: time per level stays about flat
// (before issue 22, nested schemas cost ~n^2.6).
func BenchmarkAnswerNestedSchema(b *testing.B) {
	m, _ := New(Honest, Options{})
	for _, depth := range []int{8, 16, 30} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			base := nestedSchemaN(depth)
			i := 0
			for b.Loop() {
				i++
				// A new description each time: the compiler's cache misses.
				raw := append([]byte(fmt.Sprintf(`{"description":"%d","allOf":[`, i)), base...)
				raw = append(raw, "]}"...)
				req := providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: "x"}},
					Schema: &providers.Schema{Name: "x", JSON: raw}}
				if _, err := m.Complete(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRefuseDeepSchema: a 74 KB nested schema is refused before the
// compiler sees it.
func BenchmarkRefuseDeepSchema(b *testing.B) {
	raw := nestedSchemaN(2000)
	for b.Loop() {
		var n int
		if err := checkSchemaShape(raw, &n); err == nil {
			b.Fatal("accepted")
		}
	}
}

// BenchmarkCompileWideSchema: compile time by number of subschemas up to
// the bound.
func BenchmarkCompileWideSchema(b *testing.B) {
	for _, n := range []int{125, 250, 499} {
		b.Run(fmt.Sprintf("subschemas=%d", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				var sb strings.Builder
				fmt.Fprintf(&sb, `{"description":"%d","type":"object","properties":{`, i)
				for j := range n - 1 {
					if j > 0 {
						sb.WriteByte(',')
					}
					fmt.Fprintf(&sb, `"p%d":{"type":"string"}`, j)
				}
				sb.WriteString(`}}`)
				raw := []byte(sb.String())
				var nodes int
				if err := checkSchemaShape(raw, &nodes); err != nil {
					b.Fatal(err)
				}
				if _, err := providers.CompileSchema(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
