package nexus

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/providers"
)

// The bench must not count the provider's own CPU as the orchestrator's. A
// provider that burns a known amount of CPU per call (20 ms of its thread's
// CPU clock, far more than the orchestrator spends per call, even under
// -race) shows up as provider CPU, and the orchestrator's figure stays
// below it.
func TestBenchLeavesTheProvidersOwnCPUOut(t *testing.T) {
	// Serial: the process's CPU figure would include parallel tests' CPU.
	if _, ok := threadCPU(); !ok {
		t.Skip("no thread CPU clock on this platform: the orchestrator's figure is absent there")
	}
	const burn = 20 * time.Millisecond
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{})
	reg.Register(providers.KindInfo{Kind: "burn", Description: "mock that burns CPU"}, func(ref providers.Ref, _ providers.KindConfig) (providers.Provider, error) {
		m, err := mock.New(ref.Model, mock.Options{})
		if err != nil {
			return nil, err
		}
		return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
			// Spin until this thread has run burn more (the goroutine stays
			// on its thread meanwhile, whatever wraps the call).
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0, _ := threadCPU()
			x := 0
			for {
				for i := range 10000 {
					x += i
				}
				if t1, _ := threadCPU(); t1-t0 >= burn {
					break
				}
			}
			_ = x
			return m.Complete(ctx, req)
		}), nil
	})
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Bench(t.Context(), Options{Config: cfg, Registry: reg, Mission: "# Runbook\n- alerts\n- promotion\n- status page\n", Scale: "ss-50",
		Provider: providers.Ref{Kind: "burn", Model: "honest"}, OutDir: filepath.Join(t.TempDir(), "run")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.CPUPerCall == nil || r.ProviderCPUPerCall == nil || r.ProcessCPUPerCall == nil {
		t.Fatalf("CPU figures missing: %+v", r)
	}
	if *r.ProviderCPUPerCall < burn {
		t.Errorf("provider CPU %s per call, want at least the %s it burned", *r.ProviderCPUPerCall, burn)
	}
	if *r.CPUPerCall >= burn {
		t.Errorf("orchestrator CPU %s per call includes the provider's %s", *r.CPUPerCall, burn)
	}
	if got := *r.CPUPerCall + *r.ProviderCPUPerCall; got > *r.ProcessCPUPerCall+time.Microsecond {
		t.Errorf("orchestrator %s + provider %s exceed the process's %s", *r.CPUPerCall, *r.ProviderCPUPerCall, *r.ProcessCPUPerCall)
	}
}
