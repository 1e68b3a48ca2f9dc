package nexus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
)

func TestNextWaveSizing(t *testing.T) {
	t.Parallel()
	w := config.Waves{Enabled: true, Canary: 1, ProbeCalls: 3, MaxErrorRate: 0.5, Min: 1, Max: 8}
	type want struct {
		Size  int
		Delay time.Duration
	}
	tests := []struct {
		name string
		why  string
		cfg  config.Waves
		prev int
		win  windowStats
		want want
	}{
		{"429 halves", "rate limits seen in the previous wave shrink the next one",
			w, 4, windowStats{Calls: 10, Errors: 2, RateLimited: 2}, want{2, 0}},
		{"429 with Retry-After delays", "the next wave waits the largest Retry-After the provider asked for",
			w, 4, windowStats{Calls: 10, Errors: 3, RateLimited: 3, RetryAfter: 2 * time.Second}, want{2, 2 * time.Second}},
		{"429 never below min", "a wave of one halved is still one commander (min)",
			w, 1, windowStats{Calls: 3, Errors: 3, RateLimited: 3}, want{1, 0}},
		{"429 with a higher min", "min bounds the shrinking",
			config.Waves{Min: 3, Max: 8}, 4, windowStats{Calls: 3, Errors: 1, RateLimited: 1}, want{3, 0}},
		{"quiet doubles", "no 429 and almost no errors: the provider has room",
			w, 2, windowStats{Calls: 40, Errors: 1}, want{4, 0}},
		{"quiet up to max", "widening stops at max",
			w, 6, windowStats{Calls: 40}, want{8, 0}},
		{"quiet, no max", "max 0 does not bound the widening",
			config.Waves{Min: 1}, 6, windowStats{Calls: 40}, want{12, 0}},
		{"errors without 429 keep", "failures that are not rate limits neither shrink nor widen",
			w, 3, windowStats{Calls: 10, Errors: 4}, want{3, 0}},
		{"no calls keep", "a window that saw nothing says nothing about the provider",
			w, 3, windowStats{}, want{3, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			size, delay, detail := nextWave(tc.cfg, tc.prev, tc.win)
			if diff := cmp.Diff(tc.want, want{size, delay}); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.why, diff)
			}
			if detail == "" {
				t.Errorf("no detail: the event must say why the wave has its size")
			}
		})
	}
}

func TestFirstWaveSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		why         string
		cfg         config.Waves
		conc, width int
		want        int
	}{
		{"from concurrency", "256 calls in flight hold five teams of 50", config.Waves{Min: 1}, 256, 50, 5},
		{"provider limit below a team", "16 calls cannot hold one team of 50: one commander at a time", config.Waves{Min: 1}, 16, 50, 1},
		{"bounded by max", "max caps the size the concurrency allows", config.Waves{Min: 1, Max: 2}, 256, 50, 2},
		{"initial wins", "a configured size is used as is", config.Waves{Initial: 3, Min: 1, Max: 4}, 16, 50, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := firstWaveSize(tc.cfg, tc.conc, tc.width); got != tc.want {
				t.Errorf("%s: got %d, want %d", tc.why, got, tc.want)
			}
		})
	}
}

func TestProbeVerdict(t *testing.T) {
	t.Parallel()
	const fail, ok = "rate_limited", ""
	tests := []struct {
		name     string
		why      string
		calls    int
		rate     float64
		outcomes []string
		decided  bool
		pass     bool
	}{
		{"first success decides", "with 3 calls and 0.67, two failures pass, so one success settles it (one round-trip)",
			3, 0.67, []string{ok}, true, true},
		{"two failures then success", "2 of 3 failed is within 0.67",
			3, 0.67, []string{fail, fail, ok}, true, true},
		{"all failed", "every probe call failed",
			3, 0.67, []string{fail, fail, fail}, true, false},
		{"not yet", "two failures of three: the third decides",
			3, 0.67, []string{fail, fail}, false, false},
		{"strict rate fails early", "0.5 of 4 allows 2 failures: the third fails the probe whatever follows",
			4, 0.5, []string{fail, ok, fail, fail}, true, false},
		{"strict rate needs successes", "0.5 of 4 allows 2 failures: two successes settle it",
			4, 0.5, []string{ok, ok}, true, true},
		{"rate 1 still fails when all fail", "a probe whose every call failed never passes, whatever max_error_rate",
			2, 1, []string{fail, fail}, true, false},
		{"rate 0", "no failure allowed: the first fails the probe",
			3, 0, []string{fail}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProbe(config.Waves{ProbeCalls: tc.calls, MaxErrorRate: tc.rate})
			for _, o := range tc.outcomes {
				p.add("commander", "mock:x", o, 1)
			}
			d, pass := p.decided()
			if d != tc.decided || (d && pass != tc.pass) {
				t.Errorf("%s: decided=%v pass=%v, want decided=%v pass=%v", tc.why, d, pass, tc.decided, tc.pass)
			}
		})
	}
}

func TestProbeFinalWhenTheCanaryEndsEarly(t *testing.T) {
	t.Parallel()
	p := newProbe(config.Waves{ProbeCalls: 5, MaxErrorRate: 0.5})
	if p.final(true) {
		t.Errorf("a canary that failed before any call answered must fail the probe")
	}
	if !p.final(false) {
		t.Errorf("a canary that ended well without calls gives no reason to stop")
	}
	p.add("commander", "mock:x", "quota", 1)
	if p.final(false) {
		t.Errorf("1 of 1 failed: every call the probe saw failed")
	}
}

func TestProbeDiagnosisNamesModelsAndClasses(t *testing.T) {
	t.Parallel()
	p := newProbe(config.Waves{ProbeCalls: 3, MaxErrorRate: 0.67})
	p.add("commander", "openai:gpt-4.1", "rate_limited", 10)
	p.add("commander", "openai:gpt-4.1", "quota", 30)
	p.add("commander", "openai:gpt-4.1", "rate_limited", 20)
	want := "commander model openai:gpt-4.1: 3 of 3 probe calls failed (rate_limited ×2, quota ×1); the remaining 11 commanders were not launched"
	if got := p.diagnosis(11, ""); got != want {
		t.Errorf("diagnosis:\n got %s\nwant %s", got, want)
	}
	d := p.data(false)
	if diff := cmp.Diff(events.CanaryData{Calls: 3, Errors: 3, ErrorRate: 1, FailureClasses: map[string]int{"rate_limited": 2, "quota": 1},
		LatencyMaxMS: 30, LatencyP50MS: 20}, d); diff != "" {
		t.Errorf("canary data (-want +got):\n%s", diff)
	}
}

// A resumed run's replayed answers came from the journal, not from a
// provider: they mark their commander under way but feed neither the
// canary's probe nor the wave's window. Otherwise a run that failed in an
// outage would pass its probe on the first attempt's answers (one success
// settles a probe of 3 at 0.67) and widen its waves into the outage.
func TestWavesIgnoreReplayedCalls(t *testing.T) {
	t.Parallel()
	plan := Plan{Domains: []string{"architecture", "implementation"}}
	c := newWaveCtl(plan, config.Waves{Enabled: true, Canary: 1, ProbeCalls: 3, MaxErrorRate: 0.67, Min: 1}, []string{"architecture"})
	underWay := c.startWave(plan.Domains)
	call := func(agent string, d events.CallData) events.Event {
		return events.Event{Kind: events.LLMCall, Role: "commander", AgentID: agent, Model: "mock:honest", Data: d}
	}
	for _, d := range plan.Domains {
		c.Observe(call(commanderID(d), events.CallData{Outcome: "ok", Replayed: true, LatencyMS: 30}))
	}
	select {
	case <-underWay:
	default:
		t.Error("a replayed first call must mark its commander under way")
	}
	if c.decided || c.probe.calls != 0 || c.chain != 0 {
		t.Errorf("the probe counted replayed answers: decided=%v calls=%d chain=%d", c.decided, c.probe.calls, c.chain)
	}
	if w := c.window(); w != (windowStats{}) {
		t.Errorf("the window counted replayed answers: %+v", w)
	}
	// A fresh call is still judged.
	c.Observe(call(commanderID("architecture"), events.CallData{Outcome: "error", FailureClass: "server"}))
	if c.probe.calls != 1 || c.probe.errors != 1 {
		t.Errorf("probe %d calls, %d errors; want the fresh failure only", c.probe.calls, c.probe.errors)
	}
	if w := c.window(); w.Calls != 1 || w.Errors != 1 {
		t.Errorf("window %+v; want the fresh failure only", w)
	}
}
