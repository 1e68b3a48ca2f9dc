package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/sandbox"
)

// TestEventLog: the hooks may be called concurrently (the engine's workers
// do); every call is one whole line, and interactions are written only when
// asked.
func TestEventLog(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		why          string
		interactions bool
		want         map[string]int // lines per "type"
	}{
		{"governance and interactions", true, map[string]int{"governance": 50, "interaction": 50}},
		{"outputs: {events: false} keeps governance only", false, map[string]int{"governance": 50}},
	} {
		t.Run(tc.why, func(t *testing.T) {
			dir := t.TempDir()
			l, err := CreateEventLog(dir)
			if err != nil {
				t.Fatal(err)
			}
			var o Options
			l.Hook(&o, tc.interactions)
			if (o.OnInteraction != nil) != tc.interactions {
				t.Fatalf("OnInteraction set = %v, want %v", o.OnInteraction != nil, tc.interactions)
			}
			var wg sync.WaitGroup
			for i := range 50 {
				wg.Go(func() { o.OnEvent(Event{Epoch: i, Kind: "freeze", Message: "m"}) })
				if o.OnInteraction != nil {
					wg.Go(func() { o.OnInteraction(sandbox.Interaction{ID: "x", Epoch: i, P: 0.5}) })
				}
			}
			wg.Wait()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for line := range bytes.Lines(b) {
				switch {
				case strings.HasPrefix(string(line), `{"epoch":`) && strings.HasSuffix(string(line), `"type":"governance"}`+"\n"):
					got["governance"]++
				case strings.HasPrefix(string(line), `{"accepted":false,"counterparty":"","epoch":`) && strings.HasSuffix(string(line), `"type":"interaction","v_hat":0}`+"\n"):
					got["interaction"]++
				default:
					t.Errorf("line %q", line)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("lines per type (-want +got):\n%s", d)
			}
		})
	}
}
