package nexus

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swarm-dev/swarm/providers"
)

// BenchMission is the mission `swarm bench pipeline` runs when it is given
// none: a runbook with six aspects.
const BenchMission = `# Write the runbook for database failover incidents
- detection alerts and confirming a real primary failure
- the failover decision and escalation path
- promoting the replica and repointing connection poolers
- replication lag and data loss window
- status page communication templates
- rebuilding the old primary
`

// BenchResult is what `swarm bench pipeline` reports. CPU figures are
// absent (nil) where the platform cannot measure them.
type BenchResult struct {
	Scale            string        `json:"scale"`
	Latency          time.Duration `json:"latency_ns"`
	Wall             time.Duration `json:"wall_ns"`
	Calls            int           `json:"llm_calls"`
	CriticalPath     int           `json:"critical_path_calls"`
	Ratio            float64       `json:"wall_over_critical_path"`
	Concurrency      int           `json:"concurrency"`
	ConcurrencyRule  string        `json:"concurrency_rule"`
	Agents           int           `json:"agents"`
	HardeningCycles  int           `json:"hardening_cycles"`
	QuarantineReview bool          `json:"quarantine_review"`
	// Waves is the number of waves the commanders were deployed in (0:
	// all at once, waves off); CanaryWait the time from the canary's launch
	// to its verdict, when the rest could launch; WaveChainCalls the calls
	// the last wave waited for (in runfiles.CriticalPath).
	Waves          int           `json:"waves,omitempty"`
	CanaryWait     time.Duration `json:"canary_wait_ns,omitempty"`
	WaveChainCalls int           `json:"wave_chain_calls,omitempty"`
	// CPUPerCall is the orchestrator's CPU per call: the process's CPU
	// during the run minus the CPU the provider itself spent (the mock's
	// answer generation), divided by the calls.
	CPUPerCall *time.Duration `json:"orchestrator_cpu_per_call_ns,omitempty"`
	// ProviderCPUPerCall is the in-process provider's own CPU per call.
	ProviderCPUPerCall *time.Duration `json:"provider_cpu_per_call_ns,omitempty"`
	// ProcessCPUPerCall is the whole process's CPU per call (both).
	ProcessCPUPerCall *time.Duration `json:"process_cpu_per_call_ns,omitempty"`
}

// Bench runs a mission and measures the orchestrator: wall time, LLM calls,
// the critical path (the longest chain of dependent calls the run actually
// made, criticalPathCalls) and wall / (critical path × latency).
//
// Every provider of the run is wrapped so that each call's own CPU is
// measured on the OS thread that runs it (the goroutine is locked to its
// thread for the call; the thread's CPU clock is read before and after),
// and the call then waits latency (not measured: a sleeping call costs no
// CPU). The orchestrator's CPU is the process's CPU during the run minus
// the providers' CPU. Go's background garbage collection is shared by all
// allocations and stays on the orchestrator's side, so the figure is an
// upper bound. Where a thread's CPU clock is not available (only Linux has
// one here), the orchestrator's figure is absent rather than include the
// mock.
func Bench(ctx context.Context, o Options, latency time.Duration) (BenchResult, error) {
	m := newProviderMeter(latency, runtime.GOMAXPROCS(0))
	defer m.stop()
	cpu0, cpuOK := processCPU()
	start := time.Now()
	mission, err := Prepare(o, WithProviderWrap(func(_ providers.Ref, p providers.Provider) providers.Provider { return m.wrap(p) }))
	if err != nil {
		return BenchResult{}, err
	}
	res, err := mission.Run(ctx)
	wall := time.Since(start)
	cpu1, _ := processCPU()
	if err != nil {
		return BenchResult{}, err
	}
	b := BenchResult{Scale: res.Plan.Scale, Latency: latency, Wall: wall, Calls: res.Telemetry.Calls, Agents: res.Telemetry.Agents.Total,
		CriticalPath: res.Telemetry.Critical.Calls}
	if scale, err := o.Config.ScaleFor(res.Plan.Scale); err == nil {
		c := effectiveConcurrency(o.Config, res.Plan, scale)
		b.Concurrency, b.ConcurrencyRule = c.N, c.Rule
	}
	if w := res.Telemetry.Waves; w != nil {
		b.Waves, b.WaveChainCalls = len(w.Waves), w.ChainCalls
		b.CanaryWait = time.Duration(w.Canary.WaitMS * float64(time.Millisecond))
	}
	shape := bundleShape(res.Bundles)
	b.HardeningCycles, b.QuarantineReview = shape.HardeningCycles, shape.Quarantine
	if latency > 0 && b.CriticalPath > 0 {
		b.Ratio = float64(wall) / float64(time.Duration(b.CriticalPath)*latency)
	}
	if b.Calls > 0 && cpuOK {
		n := time.Duration(b.Calls)
		proc := (cpu1 - cpu0) / n
		b.ProcessCPUPerCall = &proc
		if m.ok() {
			prov := time.Duration(m.cpu.Load()) / n
			orch := max(0, proc-prov)
			b.ProviderCPUPerCall, b.CPUPerCall = &prov, &orch
		}
	}
	return b, nil
}

// providerMeter measures the CPU providers spend inside their Complete and
// adds a fixed latency after each call.
//
// The providers' calls run on a fixed set of measuring goroutines (slots:
// GOMAXPROCS, no more can run at once anyway), each locked to its OS
// thread while it runs a call, whose CPU clock is read before and after
// the call (a goroutine locked for good had to be handed a processor on
// its own thread for every call: two thread switches per call). A
// call's own goroutine hands its request over and waits, the latency wait
// included, with the shallow stack of the provider layers above: the
// provider's work (the mock's prompt reading and answer building) grows the
// measuring goroutines' stacks, once, not the stack of every call in
// flight, as a real provider's work happens in its server, not in the
// caller. (A thread held per call in flight had grown the process to
// thousands of threads at large scales; holding each call's goroutine
// through the provider's work had grown every waiting call's stack.)
type providerMeter struct {
	latency time.Duration
	jobs    chan meterJob
	slots   chan struct{} // one per call being measured
	cpu     atomic.Int64  // ns
	failed  atomic.Bool   // a thread CPU reading failed
	done    sync.WaitGroup
}

// meterJob is one call handed to a measuring goroutine; its outcome comes
// back on reply.
type meterJob struct {
	ctx   context.Context
	p     providers.Provider
	req   providers.Request
	reply chan<- meterReply
}

type meterReply struct {
	resp providers.Response
	err  error
}

// newProviderMeter starts slots measuring goroutines; stop ends them.
func newProviderMeter(latency time.Duration, slots int) *providerMeter {
	slots = max(1, slots)
	m := &providerMeter{latency: latency, jobs: make(chan meterJob), slots: make(chan struct{}, slots)}
	for range slots {
		m.done.Add(1)
		go m.serve()
	}
	return m
}

// serve runs calls, each locked to the thread it runs on, until stop.
func (m *providerMeter) serve() {
	defer m.done.Done()
	for j := range m.jobs {
		m.slots <- struct{}{}
		runtime.LockOSThread()
		t0, ok0 := threadCPU()
		resp, err := j.p.Complete(j.ctx, j.req)
		t1, ok1 := threadCPU()
		runtime.UnlockOSThread()
		<-m.slots
		if !ok0 || !ok1 {
			m.failed.Store(true)
		} else {
			m.cpu.Add(int64(t1 - t0))
		}
		j.reply <- meterReply{resp, err}
	}
}

// stop ends the measuring goroutines once no call is under way.
func (m *providerMeter) stop() {
	close(m.jobs)
	m.done.Wait()
}

func (m *providerMeter) ok() bool { return !m.failed.Load() }

func (m *providerMeter) wrap(p providers.Provider) providers.Provider {
	return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		start := time.Now()
		resp, err := m.measure(ctx, p, req)
		if err == nil && m.latency > 0 {
			t := time.NewTimer(m.latency)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return providers.Response{}, providers.NewError(providers.ClassTimeout, "bench latency interrupted", ctx.Err())
			}
		}
		if err == nil {
			resp.Latency = time.Since(start)
		}
		return resp, err
	})
}

// measure runs one call on a measuring goroutine, once one is free, and
// waits for its outcome.
func (m *providerMeter) measure(ctx context.Context, p providers.Provider, req providers.Request) (providers.Response, error) {
	reply := make(chan meterReply, 1)
	select {
	case m.jobs <- meterJob{ctx: ctx, p: p, req: req, reply: reply}:
	case <-ctx.Done():
		return providers.Response{}, providers.NewError(providers.ClassTimeout, "bench: interrupted waiting to measure a call", ctx.Err())
	}
	r := <-reply
	return r.resp, r.err
}
