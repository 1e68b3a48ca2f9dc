package nexus

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/openai"
	"github.com/swarm-dev/swarm/runfiles"
)

// virtualClock is a breakerClock whose waits end at once: After moves its
// time on by d and fires. It counts the waits and the time they would
// have taken, so a test measures the cooldowns a run idled without
// spending them.
type virtualClock struct {
	mu     sync.Mutex
	now    time.Time
	waits  int
	waited time.Duration
}

func (c *virtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *virtualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.waits++
	c.waited += d
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// Issue 22 (point 16c): a judge whose endpoint is dead (every call answered
// 503) idled an ss-50 run for eight 30 s cooldowns (240 s) before it ended
// incomplete: each judge call that came after the last probe failed waited
// a cooldown of its own for a probe of its own. Once a probe found every
// model the call could go to still down, the calls after it give up at
// once (until the cooldown ends: then the next call is the probe), so the
// run idles one cooldown. Measured in the breaker's own (virtual) time and
// in calls to the dead endpoint, not on the wall clock.
func TestDeadJudgeEndpointIdlesOneCooldownNotEight(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, `{"error":{"message":"upstream unavailable","type":"server_error"}}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(dead.Close)
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	kc := cfg.Providers["openai-compatible"]
	kc.BaseURL, kc.Retries = dead.URL+"/v1", 0 // the breaker's story, not the retries'
	cfg.Providers["openai-compatible"] = kc
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{})
	openai.Register(reg)
	mission, err := os.ReadFile(filepath.Join("..", "examples", "missions", "api-design.md"))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Config: cfg, Registry: reg, Mission: string(mission), MissionName: "test", Scale: "ss-50",
		Provider: providers.Ref{Kind: "mock", Model: "honest"}, OutDir: filepath.Join(t.TempDir(), "run"),
		Models: map[string][]providers.Ref{"judge": {{Kind: "openai-compatible", Model: "dead"}}}}
	m, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	clock := &virtualClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	m.clock = clock
	res, err := m.Run(t.Context())
	if res == nil {
		t.Fatalf("run: %v", err)
	}
	if res.Status != runfiles.StatusIncomplete || res.Telemetry.BundlesScored != 0 {
		t.Errorf("status %s with %d bundles scored, want incomplete with none (no judge answered)", res.Status, res.Telemetry.BundlesScored)
	}
	// The cooldowns the run sat out, one after another: the judge's
	// breaker's half-open spells (waits that overlap share one).
	spells := 0
	for _, b := range res.Telemetry.Breakers {
		if b.Layer == layerJudge {
			spells += b.HalfOpened
		}
	}
	if spells != 1 {
		t.Errorf("the judge's breaker went half-open %d times (a cooldown waited each, %d waits, %s of the breaker's time); want once: the calls after the failed probe give up", spells, clock.waits, clock.waited)
	}
	// The calls that opened the breaker (min_calls), the probes of that one
	// half-open spell and the calls already under way when it opened;
	// before, another probe per cooldown.
	if n, most := hits.Load(), int64(cfg.CircuitBreaker.MinCalls+2*cfg.CircuitBreaker.HalfOpenProbes); n > most {
		t.Errorf("the dead endpoint got %d calls, want at most %d (min_calls, then one half-open spell's probes and the calls in flight)", n, most)
	}
}
