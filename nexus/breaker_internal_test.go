package nexus

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
)

// fakeClock is a breakerClock the test moves by hand. After registers a
// timer that Advance fires; every registration is signalled on timers, so
// a test knows a call is waiting without sleeping.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	pending []fakeTimer
	timers  chan time.Duration
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), timers: make(chan time.Duration, 64)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	ch := make(chan time.Time, 1)
	c.pending = append(c.pending, fakeTimer{at: c.now.Add(d), ch: ch})
	c.mu.Unlock()
	c.timers <- d
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	keep := c.pending[:0]
	for _, t := range c.pending {
		if !t.at.After(c.now) {
			t.ch <- c.now
			continue
		}
		keep = append(keep, t)
	}
	c.pending = keep
}

// The state machine, step by step: each case is a sequence of calls
// (acquire, then the outcome reported) and clock moves, and the
// transitions they must cause.
func TestCircuitStateMachine(t *testing.T) {
	t.Parallel()
	set := breakerSettings{rate: 0.5, window: 4, minCalls: 3, cooldown: 30 * time.Second, probes: 2}
	type step struct {
		advance time.Duration // move the clock first
		o       outcome       // the call's outcome (when admitted)
		denied  bool          // the call must not be let through
		hold    bool          // admitted, outcome not reported yet (a probe in flight)
	}
	ok, fail, ign := step{o: outcomeOK}, step{o: outcomeFailed}, step{o: outcomeIgnored}
	tr := func(from, to, reason string) string { return from + ">" + to + ":" + reason }
	tests := []struct {
		name  string
		steps []step
		want  []string
	}{
		{"failures below min_calls never open: the rate is judged only from min_calls calls on",
			[]step{fail, fail}, nil},
		{"the rate reaching failure_rate at min_calls opens",
			[]step{ok, fail, fail}, []string{tr("closed", "open", "failure_rate")}},
		{"a rate below the threshold keeps it closed",
			[]step{ok, ok, fail, ok}, nil},
		{"the window slides: old successes leave it, and 2 failures of the last 4 open it",
			[]step{ok, ok, ok, ok, fail, ok, fail}, []string{tr("closed", "open", "failure_rate")}},
		{"our own cancellations say nothing about the model",
			[]step{ign, ign, ign, fail, ign, ok}, nil},
		{"open refuses calls until the cooldown has passed",
			[]step{fail, fail, fail, {advance: 29 * time.Second, denied: true}},
			[]string{tr("closed", "open", "failure_rate")}},
		{"after the cooldown two probes go through, a third waits, both succeeding close it",
			[]step{fail, fail, fail, {advance: 30 * time.Second, hold: true}, {hold: true}, {denied: true}},
			[]string{tr("closed", "open", "failure_rate"), tr("open", "half_open", "cooldown")}},
		{"probes that succeed close it, and the window starts afresh",
			[]step{fail, fail, fail, {advance: 30 * time.Second, o: outcomeOK}, ok, fail, ok, ok},
			[]string{tr("closed", "open", "failure_rate"), tr("open", "half_open", "cooldown"), tr("half_open", "closed", "probes_succeeded")}},
		{"a failed probe opens it again with a fresh cooldown",
			[]step{fail, fail, fail, {advance: 30 * time.Second, o: outcomeFailed}, {advance: 29 * time.Second, denied: true}, {advance: time.Second, o: outcomeOK}, ok},
			[]string{tr("closed", "open", "failure_rate"), tr("open", "half_open", "cooldown"), tr("half_open", "open", "probe_failed"),
				tr("open", "half_open", "cooldown"), tr("half_open", "closed", "probes_succeeded")}},
		{"a cancelled probe frees its slot for another call",
			[]step{fail, fail, fail, {advance: 30 * time.Second, hold: true}, ign, {hold: true}, {denied: true}},
			[]string{tr("closed", "open", "failure_rate"), tr("open", "half_open", "cooldown")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			c := newCircuit("mock:down", LayerWorkers, set, clock)
			var got []string
			c.onChange = func(x transition) { got = append(got, x.from+">"+x.to+":"+x.reason) }
			for i, s := range tc.steps {
				clock.Advance(s.advance)
				p, admitted, _ := c.acquire(t.Context())
				if admitted == s.denied {
					t.Fatalf("step %d: admitted = %v, want %v", i, admitted, !s.denied)
				}
				if admitted && !s.hold {
					c.record(t.Context(), p, s.o)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("transitions (-want +got):\n%s", diff)
			}
		})
	}
}

// A call that started while the breaker was closed and ends after it
// opened does not count: the breaker decided without it (here its success
// would otherwise be taken for a probe's).
func TestCircuitIgnoresStaleOutcomes(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	c := newCircuit("m", LayerWorkers, breakerSettings{rate: 0.5, window: 2, minCalls: 1, cooldown: time.Second, probes: 1}, clock)
	var got []string
	c.onChange = func(x transition) { got = append(got, x.to) }
	slow, _, _ := c.acquire(t.Context())
	fast, _, _ := c.acquire(t.Context())
	c.record(t.Context(), fast, outcomeFailed) // opens
	clock.Advance(time.Second)
	probe, ok, _ := c.acquire(t.Context()) // half-open, the one probe
	if !ok {
		t.Fatal("the probe was not let through")
	}
	c.record(t.Context(), slow, outcomeOK) // stale: must not close it
	if _, ok, _ := c.acquire(t.Context()); ok {
		t.Error("a second call went through while the one probe is in flight")
	}
	c.record(t.Context(), probe, outcomeFailed)
	if diff := cmp.Diff([]string{"open", "half_open", "open"}, got); diff != "" {
		t.Errorf("transitions (-want +got):\n%s", diff)
	}
}

func TestOutcomeOf(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Unix(1, 0))
	defer cancel2()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want outcome
	}{
		{"success", t.Context(), nil, outcomeOK},
		{"an error the retries could not fix", t.Context(), providers.NewError(providers.ClassTransient, "500", nil), outcomeFailed},
		{"rate limited after the retries", t.Context(), providers.NewError(providers.ClassRateLimited, "429", nil), outcomeFailed},
		{"a provider timeout", t.Context(), providers.NewError(providers.ClassTimeout, "504", context.DeadlineExceeded), outcomeFailed},
		{"the caller's deadline ran out during the call: too slow", expired, context.DeadlineExceeded, outcomeFailed},
		{"our own cancellation (Ctrl-C, cost ceiling, a sibling's failure)", cancelled, context.Canceled, outcomeIgnored},
		{"a cancellation reported through the error only", t.Context(), errors.Join(errors.New("post"), context.Canceled), outcomeIgnored},
		{"an answer that is not JSON: the model is up", t.Context(), providers.NewError(providers.ClassUnparseable, "cut", providers.ErrTruncated), outcomeOK},
		{"a refusal is an answer", t.Context(), providers.NewError(providers.ClassRefused, "no", nil), outcomeOK},
		{"another breaker's refusal says nothing about this model", t.Context(), breakerOpenError(providers.Ref{Kind: "a", Model: "b"}, "workers", nil), outcomeIgnored},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcomeOf(tc.ctx, tc.err); got != tc.want {
				t.Errorf("outcomeOf = %v, want %v", got, tc.want)
			}
		})
	}
}

// testRecorder is a recorder writing to a temporary directory; its event
// log calls observe with each event, one at a time. Closed at the test's end.
func testRecorder(t *testing.T, observe func(events.Event)) *recorder {
	t.Helper()
	dir := t.TempDir()
	events, err := newEventLog(filepath.Join(dir, "events.jsonl"), time.Now, false, events.ObserverFunc(observe))
	if err != nil {
		t.Fatal(err)
	}
	transcripts, err := newTranscriptLog(filepath.Join(dir, "transcripts.jsonl"), false)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{events: events, transcripts: transcripts}
	t.Cleanup(func() { _ = rec.close() })
	return rec
}

// testPool is a provider pool over kinds "down" (fails while failing says
// so) and "up" (always answers), with the given fallbacks and a fake clock;
// events lists the kinds of its breaker and model_swap events.
type testPool struct {
	pp      *providerPool
	clock   *fakeClock
	mu      sync.Mutex
	events  []events.Event
	failing bool
	calls   map[string]int
}

func newTestPool(t *testing.T, cb config.CircuitBreaker, fallbacks map[string][]providers.Ref) *testPool {
	t.Helper()
	tp := &testPool{clock: newFakeClock(), failing: true, calls: map[string]int{}}
	rec := testRecorder(t, func(e events.Event) {
		if e.Kind == events.Breaker || e.Kind == events.ModelSwap {
			tp.mu.Lock()
			tp.events = append(tp.events, events.Event{Kind: e.Kind, Role: e.Role, AgentID: e.AgentID, Model: e.Model, Data: e.Data})
			tp.mu.Unlock()
		}
	})
	reg := &providers.Registry{}
	for _, kind := range []string{"down", "up"} {
		reg.Register(providers.KindInfo{Kind: kind, Description: "test"}, func(ref providers.Ref, _ providers.KindConfig) (providers.Provider, error) {
			return providers.ProviderFunc(func(context.Context, providers.Request) (providers.Response, error) {
				tp.mu.Lock()
				defer tp.mu.Unlock()
				tp.calls[ref.String()]++
				if ref.Kind == "down" && tp.failing {
					return providers.Response{}, providers.NewError(providers.ClassPermanent, "injected outage", nil)
				}
				return providers.Response{Text: "answer from " + ref.String()}, nil
			}), nil
		})
	}
	cb.Enabled = true
	cfg := &config.Config{Providers: map[string]providers.KindConfig{}, CircuitBreaker: cb}
	tp.pp = &providerPool{cfg: cfg, reg: reg, limits: &providers.LimitSet{}, rec: rec, meter: newMeter(nil, 0, rec),
		provs: map[string]*providers.Stack{}, fallbacks: fallbacks, clock: tp.clock}
	return tp
}

func (tp *testPool) setFailing(v bool) {
	tp.mu.Lock()
	tp.failing = v
	tp.mu.Unlock()
}

func (tp *testPool) got() []events.Event {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]events.Event(nil), tp.events...)
}

func (tp *testPool) callsTo(model string) int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.calls[model]
}

var (
	downRef = providers.Ref{Kind: "down", Model: "m"}
	upRef   = providers.Ref{Kind: "up", Model: "f"}
)

func ask(t *testing.T, p providers.Provider, ctx context.Context, role, id string) (providers.Response, error) {
	t.Helper()
	return p.Complete(ctx, providers.Request{Caller: providers.Caller{Role: role, AgentID: id}})
}

func breakerEv(from, to, reason string, rate *float64, calls int) events.Event {
	return events.Event{Kind: events.Breaker, Model: "down:m", Data: events.BreakerData{FailureRate: rate, From: from, Layer: LayerWorkers, Model: "down:m", Reason: reason, To: to, WindowCalls: calls}}
}

// A worker whose model fails every call: once its breaker opens, the
// role's fallback answers (a model_swap each time); the call whose failure
// opened it is sent on to the fallback too; after the cooldown one probe
// goes to the primary, fails, and the breaker opens again.
func TestRoutingSendsAnOpenBreakersCallsToTheFallback(t *testing.T) {
	t.Parallel()
	tp := newTestPool(t, config.CircuitBreaker{FailureRate: 0.5, CallWindow: 4, MinCalls: 2, Cooldown: time.Minute, HalfOpenProbes: 1},
		map[string][]providers.Ref{"worker": {upRef}})
	p, err := tp.pp.forRole("worker", downRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ask(t, p, t.Context(), "worker", "w1"); err == nil {
		t.Fatal("the first call succeeded on a model that fails every call")
	}
	for i, id := range []string{"w2", "w3"} { // w2 opens the breaker and is answered by the fallback; w3 goes there at once
		resp, err := ask(t, p, t.Context(), "worker", id)
		if err != nil || resp.Text != "answer from up:f" {
			t.Fatalf("call %d: %q, %v; want the fallback's answer", i+2, resp.Text, err)
		}
	}
	if n := tp.callsTo("down:m"); n != 2 {
		t.Errorf("the failing model got %d calls, want 2 (none while its breaker is open)", n)
	}
	tp.clock.Advance(time.Minute)
	resp, err := ask(t, p, t.Context(), "worker", "w4") // the probe fails, the fallback answers
	if err != nil || resp.Text != "answer from up:f" {
		t.Fatalf("probe call: %q, %v; want the fallback's answer", resp.Text, err)
	}
	swap := func(id string) events.Event {
		return events.Event{Kind: events.ModelSwap, Role: "worker", AgentID: id, Model: "up:f", Data: events.ModelSwapData{AgentID: id, From: "down:m", Reason: "breaker_open", Role: "worker", To: "up:f"}}
	}
	want := []events.Event{
		breakerEv("closed", "open", "failure_rate", ptr(1.0), 2), swap("w2"), swap("w3"),
		breakerEv("open", "half_open", "cooldown", nil, 0),
		breakerEv("half_open", "open", "probe_failed", ptr(1.0), 1), swap("w4"),
	}
	if diff := cmp.Diff(want, tp.got()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	got := tp.pp.breakerStats()
	for i := range got {
		got[i].OpenMS = 0 // checked below
	}
	wantStats := []runfiles.BreakerStats{{Model: "down:m", Layer: LayerWorkers, Opened: 1, HalfOpened: 1, RoutedToFallback: 3, State: "open"}}
	if diff := cmp.Diff(wantStats, got); diff != "" {
		t.Errorf("telemetry (-want +got):\n%s", diff)
	}
	if ms := tp.pp.breakerStats()[0].OpenMS; ms != time.Minute.Milliseconds() {
		t.Errorf("open_ms = %d, want %d (open since the first opening, per the breaker's clock)", ms, time.Minute.Milliseconds())
	}
}

// A breaker is per model AND layer: the workers' open breaker does not
// stop the same model answering its reviewers.
func TestBreakersArePerLayer(t *testing.T) {
	t.Parallel()
	tp := newTestPool(t, config.CircuitBreaker{FailureRate: 0.5, CallWindow: 2, MinCalls: 1, Cooldown: time.Minute, HalfOpenProbes: 1}, nil)
	w, _ := tp.pp.forRole("worker", downRef)
	r, _ := tp.pp.forRole("reviewer", downRef)
	_, _ = ask(t, w, t.Context(), "worker", "w1") // opens (down:m, workers)
	tp.setFailing(false)
	if _, err := ask(t, r, t.Context(), "reviewer", "r1"); err != nil {
		t.Errorf("reviewer call refused by the workers' breaker: %v", err)
	}
	_, err := ask(t, w, t.Context(), "worker", "w2")
	if !errors.Is(err, ErrBreakerOpen) {
		t.Errorf("worker call with its breaker open: %v, want ErrBreakerOpen", err)
	}
}

// With no fallback, a worker's call fails fast with a transient error that
// names the model and the layer (its commander salvages), while a call of
// a role whose failure ends the run (the nexus) waits for the probe slot:
// the model has recovered by the time the cooldown ends, the probe
// succeeds, the breaker closes and the run goes on.
func TestNoFallbackWorkersFailFastTheNexusWaitsForTheProbe(t *testing.T) {
	t.Parallel()
	tp := newTestPool(t, config.CircuitBreaker{FailureRate: 0.5, CallWindow: 2, MinCalls: 1, Cooldown: 30 * time.Second, HalfOpenProbes: 1}, nil)
	w, _ := tp.pp.forRole("worker", downRef)
	n, _ := tp.pp.forRole("nexus", downRef)
	_, _ = ask(t, w, t.Context(), "worker", "w1")
	_, _ = ask(t, n, t.Context(), "nexus", "nexus") // opens (down:m, nexus)

	_, err := ask(t, w, t.Context(), "worker", "w2")
	if !errors.Is(err, ErrBreakerOpen) || providers.ClassOf(err) != providers.ClassTransient {
		t.Fatalf("worker: %v (class %s), want a transient ErrBreakerOpen", err, providers.ClassOf(err))
	}
	for _, s := range []string{"down:m", "layer workers"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("worker's error %q does not name %q", err, s)
		}
	}

	tp.setFailing(false) // the model recovers
	type result struct {
		resp providers.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := n.Complete(t.Context(), providers.Request{Caller: providers.Caller{Role: "nexus", AgentID: "nexus"}})
		done <- result{resp, err}
	}()
	select {
	case d := <-tp.clock.timers:
		if d != 30*time.Second {
			t.Errorf("the nexus waits %v, want the cooldown's 30s", d)
		}
	case r := <-done:
		t.Fatalf("the nexus call returned without waiting for the probe: %q, %v", r.resp.Text, r.err)
	}
	tp.clock.Advance(30 * time.Second)
	r := <-done
	if r.err != nil || r.resp.Text != "answer from down:m" {
		t.Fatalf("nexus call: %q, %v; want the recovered model's answer", r.resp.Text, r.err)
	}
	var got []string
	for _, e := range tp.got() {
		if d, ok := e.Data.(events.BreakerData); ok && d.Layer == layerNexus {
			got = append(got, d.From+">"+d.To)
		}
	}
	if diff := cmp.Diff([]string{"closed>open", "open>half_open", "half_open>closed"}, got); diff != "" {
		t.Errorf("nexus breaker transitions (-want +got):\n%s", diff)
	}
}

// A waiting call ends with its context, saying what it waited for.
func TestWaitingForAProbeEndsWithTheContext(t *testing.T) {
	t.Parallel()
	tp := newTestPool(t, config.CircuitBreaker{FailureRate: 0.5, CallWindow: 2, MinCalls: 1, Cooldown: time.Hour, HalfOpenProbes: 1}, nil)
	j, _ := tp.pp.forRole("judge", downRef)
	_, _ = ask(t, j, t.Context(), "judge", "judge")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := ask(t, j, ctx, "judge", "judge")
		done <- err
	}()
	select {
	case <-tp.clock.timers: // waiting
	case err := <-done:
		t.Fatalf("the judge's call returned without waiting: %v", err)
	}
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "layer judge") {
		t.Errorf("err = %v, want context.Canceled naming the layer", err)
	}
}

// Switched off, the pool is the model's stack alone: no breaker, no
// routing, every call reaches the model.
func TestBreakerDisabled(t *testing.T) {
	t.Parallel()
	tp := newTestPool(t, config.CircuitBreaker{FailureRate: 0.5, CallWindow: 2, MinCalls: 1, Cooldown: time.Hour, HalfOpenProbes: 1},
		map[string][]providers.Ref{"worker": {upRef}})
	tp.pp.cfg.CircuitBreaker.Enabled = false
	w, _ := tp.pp.forRole("worker", downRef)
	for range 3 {
		_, _ = ask(t, w, t.Context(), "worker", "w")
	}
	if n := tp.callsTo("down:m"); n != 3 {
		t.Errorf("%d calls reached the model, want 3", n)
	}
	if got := tp.got(); len(got) != 0 || tp.pp.breakerStats() != nil {
		t.Errorf("events %v, stats %v; want none", got, tp.pp.breakerStats())
	}
}

// Calls waiting for a probe give up once one failed while they waited: the
// model was found still down, and waiting on would queue each behind the
// others for a further cooldown per half_open_probes of them (a judge whose
// model is down took about 19 cooldowns, ten minutes at the default 30s, to
// end an ss-50 run; with this, 8 to 10).
func TestWaitersGiveUpWhenTheProbeFails(t *testing.T) {
	t.Parallel()
	tp := newTestPool(t, config.CircuitBreaker{FailureRate: 0.5, CallWindow: 2, MinCalls: 1, Cooldown: 30 * time.Second, HalfOpenProbes: 1}, nil)
	j, _ := tp.pp.forRole("judge", downRef)
	_, _ = ask(t, j, t.Context(), "judge", "judge") // opens (down:m, judge)
	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := ask(t, j, t.Context(), "judge", "judge")
			done <- err
		}()
	}
	for range 2 {
		select {
		case <-tp.clock.timers: // waiting for the cooldown
		case err := <-done:
			t.Fatalf("a judge call returned without waiting: %v", err)
		}
	}
	tp.clock.Advance(30 * time.Second) // one becomes the probe and fails; the other must not wait another cooldown
	probe, refused := 0, 0
	for range 2 {
		select {
		case err := <-done:
			switch {
			case errors.Is(err, ErrBreakerOpen):
				refused++
			case err != nil && strings.Contains(err.Error(), "injected outage"):
				probe++
			default:
				t.Errorf("err = %v, want the probe's failure or ErrBreakerOpen", err)
			}
		case d := <-tp.clock.timers:
			t.Fatalf("a judge call waits another %v after the probe failed", d)
		}
	}
	if probe != 1 || refused != 1 {
		t.Errorf("%d probe failures, %d ErrBreakerOpen; want one of each", probe, refused)
	}
	if n := tp.callsTo("down:m"); n != 2 {
		t.Errorf("the model got %d calls, want 2 (the one that opened the breaker, the probe)", n)
	}
}

// Issue 22 (point 16c): once a probe found the model still down, a judge
// call that comes after it gives up at once instead of waiting a cooldown
// of its own for a probe of its own (a dead judge endpoint idled a run for
// eight cooldowns, one per later judge call); when the cooldown has ended,
// the next call is the probe again, so a model that recovers is used.
func TestCallsAfterAFailedProbeGiveUpUntilTheCooldownEnds(t *testing.T) {
	t.Parallel()
	tp := newTestPool(t, config.CircuitBreaker{FailureRate: 0.5, CallWindow: 2, MinCalls: 1, Cooldown: 30 * time.Second, HalfOpenProbes: 1}, nil)
	j, _ := tp.pp.forRole("judge", downRef)
	_, _ = ask(t, j, t.Context(), "judge", "judge") // opens (down:m, judge) on the failure rate
	tp.clock.Advance(30 * time.Second)
	if _, err := ask(t, j, t.Context(), "judge", "judge"); err == nil || errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("the call after the cooldown: %v; want it to be the probe, and fail on the model", err)
	}
	for i := range 3 { // the probe failed: the model is known down
		done := make(chan error, 1)
		go func() {
			_, err := ask(t, j, t.Context(), "judge", "judge")
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrBreakerOpen) {
				t.Errorf("judge call %d after the failed probe: %v, want ErrBreakerOpen at once", i+1, err)
			}
		case d := <-tp.clock.timers:
			t.Fatalf("judge call %d after the failed probe waits %v for another probe", i+1, d)
		}
	}
	if n := tp.callsTo("down:m"); n != 2 {
		t.Errorf("the model got %d calls, want 2 (the one that opened the breaker, the probe)", n)
	}
	tp.setFailing(false)
	tp.clock.Advance(30 * time.Second) // the cooldown after the failed probe ended: the next call probes, and the model is back
	if resp, err := ask(t, j, t.Context(), "judge", "judge"); err != nil || resp.Text != "answer from down:m" {
		t.Errorf("the call after the second cooldown: %q, %v; want the recovered model's answer", resp.Text, err)
	}
}
