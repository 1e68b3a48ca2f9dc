package nexus

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// TestProviderMeterMeasuresAFewCallsAtOnce: each measured call holds an
// OS thread; with thousands of calls in flight that made thousands of
// threads. Calls beyond the meter's slots wait for one, every call still
// gets its answer, and a call whose context ends while it waits fails
// with a timeout instead of waiting on.
func TestProviderMeterMeasuresAFewCallsAtOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		why   string
		slots int
		calls int
	}{
		{"one slot", "the tightest bound: calls are measured one at a time", 1, 20},
		{"two slots", "GOMAXPROCS on the 2-core machines the figures come from", 2, 50},
		{"zero slots", "a nonsensical count still lets calls through, one at a time", 0, 5},
	}
	for _, tt := range tests {
		m := newProviderMeter(0, tt.slots)
		var in, peak atomic.Int64
		p := m.wrap(providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
			n := in.Add(1)
			for {
				old := peak.Load()
				if n <= old || peak.CompareAndSwap(old, n) {
					break
				}
			}
			time.Sleep(time.Millisecond)
			in.Add(-1)
			return providers.Response{Text: req.Caller.AgentID}, nil
		}))
		var wg sync.WaitGroup
		answers := make([]string, tt.calls)
		for i := range tt.calls {
			wg.Go(func() {
				resp, err := p.Complete(t.Context(), providers.Request{Caller: providers.Caller{AgentID: string(rune('a' + i%26))}})
				if err != nil {
					t.Error(err)
				}
				answers[i] = resp.Text
			})
		}
		wg.Wait()
		if got, want := peak.Load(), int64(max(1, tt.slots)); got > want {
			t.Errorf("%s (%s): %d calls measured at once, want at most %d", tt.name, tt.why, got, want)
		}
		want := make([]string, tt.calls)
		for i := range want {
			want[i] = string(rune('a' + i%26))
		}
		if diff := cmp.Diff(want, answers); diff != "" {
			t.Errorf("%s (%s): answers (-want +got):\n%s", tt.name, tt.why, diff)
		}
	}

	// A call waiting for a slot gives up when its context ends.
	m := newProviderMeter(0, 1)
	release := make(chan struct{})
	p := m.wrap(providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		<-release
		return providers.Response{}, nil
	}))
	go p.Complete(t.Context(), providers.Request{}) // holds the only slot
	for len(m.slots) == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := p.Complete(ctx, providers.Request{})
	close(release)
	if !errors.Is(err, context.Canceled) || providers.ClassOf(err) != providers.ClassTimeout {
		t.Errorf("waiting call after its context ended: %v (class %s), want a timeout wrapping context.Canceled", err, providers.ClassOf(err))
	}
}
