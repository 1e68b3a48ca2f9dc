package nexus

import (
	"bytes"
	"context"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/providers"
)

// The provider's work runs on one of the meter's goroutines, not on the
// caller's: the caller's stack is not the one the provider's work grows,
// nor is it held grown through the latency wait (at 20 000 calls in
// flight, that was most of the stacks' memory). stop ends the meter's
// goroutines once the calls are done.
func TestProviderMeterRunsTheProviderOffTheCallersStack(t *testing.T) {
	t.Parallel()
	m := newProviderMeter(0, 2)
	var mu sync.Mutex
	var onCaller []bool
	p := m.wrap(providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		// The provider's own goroutine is the first in its dump.
		var b bytes.Buffer
		_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
		mine := strings.SplitN(b.String(), "\n\n", 2)[0]
		mu.Lock()
		onCaller = append(onCaller, !strings.Contains(mine, "(*providerMeter).serve"))
		mu.Unlock()
		return providers.Response{Text: "ok"}, nil
	}))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if resp, err := p.Complete(t.Context(), providers.Request{}); err != nil || resp.Text != "ok" {
				t.Errorf("call: %q, %v", resp.Text, err)
			}
		})
	}
	wg.Wait()
	if len(onCaller) != 4 {
		t.Fatalf("%d calls reached the provider, want 4", len(onCaller))
	}
	for i, c := range onCaller {
		if c {
			t.Errorf("call %d ran on its caller's goroutine", i)
		}
	}
	stopped := make(chan struct{})
	go func() { m.stop(); close(stopped) }() // waits for every measuring goroutine to end
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not end the measuring goroutines")
	}
}
