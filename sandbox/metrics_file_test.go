package sandbox

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMetricsFileJSON: the printed object holds every Report key plus
// clamped_inputs, and interactions only when asked for.
func TestMetricsFileJSON(t *testing.T) {
	t.Parallel()
	in := "{\"accepted\":true,\"p\":0.75,\"id\":\"a\"}\n{\"accepted\":false,\"observables\":{\"task_progress\":9}}\n"
	for _, tc := range []struct {
		why            string
		perInteraction bool
		wantLines      int // -1: no "interactions" key
	}{
		{"without --per-interaction there is no interactions key", false, -1},
		{"with it, one entry per line", true, 2},
	} {
		t.Run(tc.why, func(t *testing.T) {
			proxy, err := NewProxy(DefaultProxyConfig())
			if err != nil {
				t.Fatal(err)
			}
			f, err := ReadMetricsFile("in.jsonl", strings.NewReader(in), proxy, DefaultPayoffConfig(), tc.perInteraction)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			rb, _ := json.Marshal(f.Report)
			var want map[string]json.RawMessage
			_ = json.Unmarshal(rb, &want)
			// task_progress 9 is clamped: the count is the proxy's, as
			// reading the line through a fresh proxy gives it.
			ref, _ := NewProxy(DefaultProxyConfig())
			ref.VHat(Observables{TaskProgress: 9})
			ref.P(Observables{TaskProgress: 9})
			if ref.Clamped() == 0 {
				t.Fatal("the reference proxy clamped nothing")
			}
			want["clamped_inputs"], _ = json.Marshal(ref.Clamped())
			if tc.wantLines >= 0 {
				var lines []LineMetrics
				if err := json.Unmarshal(got["interactions"], &lines); err != nil || len(lines) != tc.wantLines {
					t.Errorf("interactions %s (%v), want %d", got["interactions"], err, tc.wantLines)
				}
				want["interactions"] = got["interactions"]
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("keys (-want +got):\n%s", d)
			}
			var keys []string
			dec := json.NewDecoder(strings.NewReader(string(b)))
			depth := 0
			for {
				tok, err := dec.Token()
				if err != nil {
					break
				}
				switch tok {
				case json.Delim('{'), json.Delim('['):
					depth++
					continue
				case json.Delim('}'), json.Delim(']'):
					depth--
					continue
				}
				if k, ok := tok.(string); ok && depth == 1 {
					keys = append(keys, k)
					var skip json.RawMessage
					_ = dec.Decode(&skip)
				}
			}
			if len(keys) != len(want) {
				t.Errorf("%d top-level keys, want %d", len(keys), len(want))
			}
			if !slices.IsSorted(keys) {
				t.Errorf("keys not in order: %v", keys)
			}
		})
	}
}
