package nexus_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
)

// withWaves sets the waves of scale.
func withWaves(scale string, w config.Waves) runOpt {
	return func(o *nexus.Options) {
		s := o.Config.Scales[scale]
		s.Waves = w
		o.Config.Scales[scale] = s
	}
}

type waveSeen struct {
	Wave   int
	Size   int
	Reason string
}

// wavesOf returns the wave events in order, and for each commander the
// index of its agent_start event and of the wave event that launched it.
func wavesOf(evs []events.Event) (waves []waveSeen, started, launchedBy map[string]int) {
	started, launchedBy = map[string]int{}, map[string]int{}
	for i, e := range evs {
		switch e.Kind {
		case events.Wave:
			d := e.Data.(events.WaveData)
			waves = append(waves, waveSeen{d.Wave, d.Size, d.Reason})
			for _, c := range d.Commanders {
				launchedBy[c] = i
			}
		case events.AgentStart:
			if e.Role == "commander" {
				started[e.AgentID] = i
			}
		}
	}
	return waves, started, launchedBy
}

// A healthy run launches every commander in the configured waves: the
// canary, then (the probe passed) a wave of `initial`, then waves widened
// up to max; each commander starts after its wave's event, and each wave
// after every commander of the previous one made its first call.
func TestWavesHealthyRunLaunchesEveryCommanderInWaves(t *testing.T) {
	t.Parallel()
	w := config.Waves{Enabled: true, Canary: 1, ProbeCalls: 3, MaxErrorRate: 0.67, Initial: 2, Min: 1, Max: 2}
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", withWaves("ss-100", w))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runfiles.StatusComplete {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	waves, started, launchedBy := wavesOf(res.Events)
	want := []waveSeen{{0, 1, "canary"}, {1, 2, "probe"}, {2, 2, "adapt"}}
	if diff := cmp.Diff(want, waves); diff != "" {
		t.Errorf("waves (-want +got):\n%s", diff)
	}
	if len(started) != res.Plan.Commanders || len(launchedBy) != res.Plan.Commanders {
		t.Fatalf("%d commanders started, %d in waves, want %d", len(started), len(launchedBy), res.Plan.Commanders)
	}
	for c, i := range started {
		if i < launchedBy[c] {
			t.Errorf("%s started (event %d) before its wave (event %d)", c, i, launchedBy[c])
		}
	}
	// The canary's verdict comes between the canary and wave 1, and each
	// wave k ≥ 2 comes after a call of every commander of wave k-1.
	canary, waveIdx := -1, map[int]int{}
	for i, e := range res.Events {
		switch e.Kind {
		case events.Canary:
			canary = i
			if d := e.Data.(events.CanaryData); !d.OK || d.Calls < 1 || d.Errors != 0 || d.ChainCalls != 1 {
				t.Errorf("canary = %+v, want ok after its first call (chain 1), no error", d)
			}
		case events.Wave:
			waveIdx[e.Data.(events.WaveData).Wave] = i
		}
	}
	if !(waveIdx[0] < canary && canary < waveIdx[1]) {
		t.Errorf("canary verdict at event %d, want between wave 0 (%d) and wave 1 (%d)", canary, waveIdx[0], waveIdx[1])
	}
	for _, e := range res.Events[waveIdx[1]:waveIdx[2]] {
		if e.Kind == events.LLMCall {
			if d, ok := res.Plan.DomainOf(e.AgentID); ok {
				delete(launchedBy, "commander-"+d)
			}
		}
	}
	for c, i := range launchedBy {
		if i == waveIdx[1] {
			t.Errorf("wave 2 launched before %s of wave 1 made a call", c)
		}
	}
	tw := res.Telemetry.Waves
	if tw == nil {
		t.Fatal("telemetry has no waves")
	}
	if len(tw.Waves) != 3 || !tw.Canary.OK || tw.ChainCalls != 2 {
		t.Errorf("telemetry waves = %+v, want 3 waves, canary ok, chain 2 (the probe's call and wave 1's first calls)", tw)
	}
	for _, rec := range tw.Waves {
		if rec.BundlesOK != rec.Size || rec.BundlesFailed != 0 {
			t.Errorf("wave %d: %d ok, %d failed of %d", rec.Wave, rec.BundlesOK, rec.BundlesFailed, rec.Size)
		}
	}
}

// Waves only decide when a commander starts: a run with waves gives the
// same calls and the same per-bundle scores as one without; without
// waves there is no wave event and no waves telemetry (today's behaviour).
func TestWavesChangeWhenNotWhat(t *testing.T) {
	t.Parallel()
	mission := loadMission(t, "auth-migration.md")
	on := config.Waves{Enabled: true, Canary: 1, ProbeCalls: 3, MaxErrorRate: 0.67, Initial: 1, Min: 1, Max: 1}
	withOn, err := runMission(t, mission, "ss-100", "mock:honest", withWaves("ss-100", on))
	if err != nil {
		t.Fatal(err)
	}
	withOff, err := runMission(t, mission, "ss-100", "mock:honest", withWaves("ss-100", config.Waves{}))
	if err != nil {
		t.Fatal(err)
	}
	if withOff.Telemetry.Waves != nil {
		t.Errorf("waves off: telemetry waves = %+v, want none", withOff.Telemetry.Waves)
	}
	for _, e := range withOff.Events {
		if e.Kind == events.Wave || e.Kind == events.Canary {
			t.Errorf("waves off: %s event", e.Kind)
		}
	}
	if w, _, _ := wavesOf(withOn.Events); len(w) != withOn.Plan.Commanders {
		t.Errorf("waves of one: %d waves, want %d", len(w), withOn.Plan.Commanders)
	}
	if withOn.Telemetry.Calls != withOff.Telemetry.Calls {
		t.Errorf("calls: %d with waves, %d without", withOn.Telemetry.Calls, withOff.Telemetry.Calls)
	}
	if diff := cmp.Diff(withOff.Telemetry.ShadowScores, withOn.Telemetry.ShadowScores); diff != "" {
		t.Errorf("per-bundle scores (-without +with waves):\n%s", diff)
	}
	if withOn.SealedHash != withOff.SealedHash {
		t.Errorf("sealed hash differs")
	}
}

// brokenRegistry is the mock personas plus kind "broken", whose every call
// fails: 429 (Retry-After 1ms) twice, then quota, and so on.
func brokenRegistry(calls *counter) *providers.Registry {
	reg := mockRegistry(mock.Options{})
	reg.Register(providers.KindInfo{Kind: "broken", Description: "fails every call"}, func(providers.Ref, providers.KindConfig) (providers.Provider, error) {
		return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
			if calls.add()%3 == 0 {
				return providers.Response{}, providers.NewError(providers.ClassQuota, "quota exceeded", nil)
			}
			return providers.Response{}, &providers.Error{Class: providers.ClassRateLimited, StatusCode: 429, Msg: "slow down", RetryAfter: time.Millisecond}
		}), nil
	})
	return reg
}

type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) add() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n
}

func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// A commander model whose every call fails stops the run after the canary:
// one commander started, the others failed as not launched, the run failed
// with the diagnosis, and the broken model was asked three times, not for
// five teams.
func TestWavesFailingCanaryStopsTheRun(t *testing.T) {
	t.Parallel()
	var calls counter
	w := config.Waves{Enabled: true, Canary: 1, ProbeCalls: 3, MaxErrorRate: 0.67, Min: 1}
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", withWaves("ss-100", w),
		func(o *nexus.Options) {
			o.Registry = brokenRegistry(&calls)
			o.Config.Providers["broken"] = o.Config.Providers["mock"] // 3 retries
			o.Models = map[string][]providers.Ref{"commander": {{Kind: "broken", Model: "x"}}}
		})
	if !errors.Is(err, nexus.ErrCanaryFailed) {
		t.Fatalf("err = %v, want ErrCanaryFailed", err)
	}
	const diag = "commander model broken:x: 3 of 3 probe calls failed (rate_limited ×2, quota ×1); the remaining 4 commanders were not launched"
	if res.Status != runfiles.StatusFailed || !strings.Contains(res.Error, diag) || res.FailureClass != providers.ClassRateLimited {
		t.Errorf("result: status %s, class %s, error %q; want failed, rate_limited, with %q", res.Status, res.FailureClass, res.Error, diag)
	}
	if res.Phase != events.Phase4 {
		t.Errorf("phase %s, want 4 (no cross-review started)", res.Phase)
	}
	waves, started, _ := wavesOf(res.Events)
	if diff := cmp.Diff([]waveSeen{{0, 1, "canary"}}, waves); diff != "" {
		t.Errorf("waves (-want +got):\n%s", diff)
	}
	if len(started) != 1 {
		t.Errorf("%d commanders started, want only the canary", len(started))
	}
	var canary *events.CanaryData
	for _, e := range res.Events {
		if e.Kind == events.Canary {
			d := e.Data.(events.CanaryData)
			canary = &d
		}
	}
	if canary == nil || canary.OK || canary.Diagnosis != diag || canary.Errors != 3 || canary.Calls != 3 {
		t.Errorf("canary event = %+v, want failed with 3 of 3 and the diagnosis", canary)
	}
	if n := calls.get(); n != 3 {
		t.Errorf("the broken model was called %d times, want 3 (the canary's plan, its retries)", n)
	}
	notLaunched, scored := 0, 0
	for _, o := range res.Bundles {
		if o.FailureClass == nexus.ClassNotLaunched {
			notLaunched++
			if !o.Failed || !strings.HasPrefix(o.Error, "not launched (canary failed)") {
				t.Errorf("%s: failed=%v error %q", o.ID, o.Failed, o.Error)
			}
		}
		if o.ShadowScore != nil {
			scored++
		}
	}
	if notLaunched != 4 || scored != 0 {
		t.Errorf("%d bundles not launched, %d scored; want 4 and 0", notLaunched, scored)
	}
	if tw := res.Telemetry.Waves; tw == nil || tw.NotLaunched != 4 || tw.Canary.OK {
		t.Errorf("telemetry waves = %+v, want the canary failed and 4 not launched", tw)
	}
	if n := res.Telemetry.AgentsLaunched.Workers; n != 0 {
		t.Errorf("%d workers launched, want 0", n)
	}
}

// 429s with Retry-After in wave 1 shrink wave 2 and delay it; a quiet
// wave 2 lets wave 3 widen (capped by what remains).
func TestWavesShrinkAfterRateLimits(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	firstSeen := map[string]bool{}
	order := 0
	reg := hookRegistry("hooked", "429 on the first call of the 2nd and 3rd commanders", func(ctx context.Context, req providers.Request, next providers.Provider) (providers.Response, error) {
		if req.Caller.Role == "commander" {
			mu.Lock()
			first := !firstSeen[req.Caller.AgentID]
			if first {
				firstSeen[req.Caller.AgentID] = true
				order++
			}
			n := order
			mu.Unlock()
			if first && (n == 2 || n == 3) {
				return providers.Response{}, &providers.Error{Class: providers.ClassRateLimited, StatusCode: 429, Msg: "slow down", RetryAfter: time.Millisecond}
			}
		}
		return next.Complete(ctx, req)
	})
	w := config.Waves{Enabled: true, Canary: 1, ProbeCalls: 3, MaxErrorRate: 0.67, Initial: 2, Min: 1, Max: 4}
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "hooked:honest", withWaves("ss-100", w),
		func(o *nexus.Options) {
			o.Registry = reg
			o.Config.Providers["hooked"] = o.Config.Providers["mock"]
		})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runfiles.StatusComplete {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	var got []events.WaveData
	for _, e := range res.Events {
		if e.Kind == events.Wave {
			got = append(got, e.Data.(events.WaveData))
		}
	}
	type wave struct {
		Wave, Size int
		Reason     string
		DelayMS    int64
	}
	var seen []wave
	for _, d := range got {
		seen = append(seen, wave{d.Wave, d.Size, d.Reason, d.DelayMS})
	}
	want := []wave{{0, 1, "canary", 0}, {1, 2, "probe", 0}, {2, 1, "adapt", 1}, {3, 1, "adapt", 0}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Fatalf("waves (-want +got):\n%s", diff)
	}
	if !strings.Contains(got[2].Detail, "2 rate-limited calls") || !strings.Contains(got[3].Detail, "widened") {
		t.Errorf("details: %q / %q", got[2].Detail, got[3].Detail)
	}
}

// A run whose cost ceiling is spent before the canary launches is cut
// short, not judged by its canary: no canary verdict (nothing was probed,
// so "passed, 0 of 0" would be a number nobody measured), no wave after
// the canary's, and every commander cancelled, none "not launched (canary
// failed)". A refused launch cuts the run short; when the ceiling also
// cancelled the run, the canary's end and the cancellation are both ready
// when the deployment looks, so the run is repeated: a choice between them
// left to chance would pass some runs only.
func TestWavesCanaryCutShortByTheCeilingIsNoVerdict(t *testing.T) {
	t.Parallel()
	w := config.Waves{Enabled: true, Canary: 1, ProbeCalls: 3, MaxErrorRate: 0.67, Initial: 2, Min: 1, Max: 2}
	for range 8 {
		res, err := runMission(t, loadMission(t, "api-design.md"), "ss-100", "mock:honest", withWaves("ss-100", w), func(o *nexus.Options) {
			k := o.Config.Providers["mock"]
			k.InputPerMTok, k.OutputPerMTok = 1000, 4000 // the ceiling is spent before the commanders launch
			o.Config.Providers["mock"] = k
		})
		if err != nil {
			t.Fatal(err)
		}
		waves, started, _ := wavesOf(res.Events)
		if diff := cmp.Diff([]waveSeen{{0, 1, "canary"}}, waves); diff != "" || len(started) != 0 {
			t.Fatalf("waves (-want +got):\n%s\n%d commanders started, want 0", diff, len(started))
		}
		for _, e := range res.Events {
			if e.Kind == events.Canary {
				t.Fatalf("canary event %q: the canary never ran", e.Message)
			}
		}
		if tw := res.Telemetry.Waves; tw == nil || tw.Canary.OK || tw.Canary.Calls != 0 {
			t.Fatalf("telemetry waves = %+v, want no canary verdict", tw)
		}
		for _, b := range res.Bundles {
			if !b.Failed || b.FailureClass != nexus.ClassCancelled {
				t.Fatalf("%s: failed %v class %q, want a cancelled failure (%s)", b.ID, b.Failed, b.FailureClass, b.Error)
			}
		}
	}
}
