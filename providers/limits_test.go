package providers

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// inFlight is a provider that records the most calls it saw at once.
type inFlight struct {
	now, peak atomic.Int32
}

func (f *inFlight) Complete(ctx context.Context, _ Request) (Response, error) {
	n := f.now.Add(1)
	defer f.now.Add(-1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(5 * time.Millisecond) // long enough for every seat to fill, even on a loaded machine
	return Response{Text: "ok"}, nil
}

func TestKindLimitsAreSharedByEveryModelOfTheKind(t *testing.T) {
	t.Parallel()
	kc := KindConfig{MaxConcurrency: 2}
	tests := []struct {
		name   string
		limits func() *KindLimits // per model
		want   int32              // peak calls in flight over both models
	}{
		{"one set per kind: both models together stay under the kind's cap", func() func() *KindLimits {
			shared := NewKindLimits(kc)
			return func() *KindLimits { return shared }
		}(), 2},
		{"a set per model (the old behaviour) lets the kind run twice its cap", func() *KindLimits { return nil }, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var backend inFlight
			a := Standard(&backend, kc, 0, tc.limits())
			b := Standard(&backend, kc, 0, tc.limits())
			var wg sync.WaitGroup
			for i := range 40 {
				p := a
				if i%2 == 1 {
					p = b
				}
				wg.Go(func() {
					if _, err := p.Complete(t.Context(), Request{}); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if got := backend.peak.Load(); got != tc.want {
				t.Errorf("peak in flight = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestLimitSetHandsOutOneLimitsPerKind(t *testing.T) {
	t.Parallel()
	var s LimitSet
	kc := KindConfig{MaxConcurrency: 1, RequestsPerMin: 60}
	if s.For("openai", kc) != s.For("openai", KindConfig{}) {
		t.Error("two models of one kind got different limits")
	}
	if s.For("openai", kc) == s.For("anthropic", kc) {
		t.Error("two kinds share limits")
	}
	if l := s.For("mock", KindConfig{}); l.sem != nil || l.lim != nil {
		t.Error("a kind without limits got a cap or a rate limit")
	}
}
