package nexus

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/stats"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
)

// Commander deployment in waves (issue 12; docs/waves.md): a canary wave is
// launched first and its team's first calls (the probe) are judged; a
// failing probe stops the run before the rest is launched; otherwise the
// rest goes in waves sized from the run's concurrency, each launched once
// the previous wave is under way (every commander of it has had its first
// call answered), shrunk by 429s and delayed by Retry-After, widened while
// the providers are quiet. Waves decide only WHEN a commander starts, never
// what any request says.

// ClassNotLaunched is the failure class of a bundle whose commander was
// never launched because the canary failed: no work was attempted, so it
// is neither the provider's failure nor a success.
const ClassNotLaunched providers.Class = "not_launched"

// ErrCanaryFailed is wrapped by the error of a run the canary stopped.
var ErrCanaryFailed = errors.New("canary failed")

// canaryError is a run stopped by its canary: the diagnosis, and the class
// its probe's failures had most.
type canaryError struct {
	diagnosis string
	class     providers.Class
}

func (e *canaryError) Error() string { return "canary failed: " + e.diagnosis }

func (e *canaryError) Unwrap() []error {
	return []error{ErrCanaryFailed, providers.NewError(e.class, e.diagnosis, nil)}
}

// quietErrorRate is the largest error rate a wave may see for the next one
// to widen (with no 429 at all).
const quietErrorRate = 0.05

// windowStats is what the llm_calls of one wave's window (from its launch
// to its trigger) looked like, run-wide: rate limits are a provider's, not
// a team's.
type windowStats struct {
	Calls       int
	Errors      int
	RateLimited int
	RetryAfter  time.Duration // the largest asked for
}

// firstWaveSize is the size of the first wave after the canary: Initial,
// or as many commanders as the run's concurrency holds with each team's
// widest layer in flight (teamWidth calls), bounded by Min and Max.
func firstWaveSize(w config.Waves, concurrency, teamWidth int) int {
	n := w.Initial
	if n == 0 {
		n = concurrency / max(1, teamWidth)
	}
	return boundWave(w, n)
}

func boundWave(w config.Waves, n int) int {
	if w.Max > 0 {
		n = min(n, w.Max)
	}
	return max(n, w.Min, 1)
}

// nextWave sizes the wave after one of size prev from what prev's window
// saw: 429s halve it (down to Min) and delay it by the largest Retry-After;
// a quiet window (calls, no 429, at most quietErrorRate errors) doubles it
// (up to Max); anything else keeps it. detail says why, in words.
func nextWave(w config.Waves, prev int, s windowStats) (size int, delay time.Duration, detail string) {
	switch {
	case s.RateLimited > 0:
		size = boundWave(w, prev/2)
		detail = fmt.Sprintf("shrunk from %d: %d rate-limited calls (429) of %d in the previous wave's window", prev, s.RateLimited, s.Calls)
		if s.RetryAfter > 0 {
			delay = s.RetryAfter
			detail += fmt.Sprintf(", waited the Retry-After of %s", s.RetryAfter)
		}
	case s.Calls > 0 && float64(s.Errors) <= quietErrorRate*float64(s.Calls):
		size = boundWave(w, prev*2)
		detail = fmt.Sprintf("widened from %d: quiet provider (%d calls, %d errors, no 429)", prev, s.Calls, s.Errors)
	default:
		size = boundWave(w, prev)
		detail = fmt.Sprintf("kept at %d: %d errors in %d calls, no 429", prev, s.Errors, s.Calls)
	}
	return size, delay, detail
}

// probe judges the canary team's first ProbeCalls call outcomes. It decides
// as soon as the verdict is certain, whatever the remaining calls give:
// failed once more than floor(MaxErrorRate × ProbeCalls) calls failed,
// passed once enough succeeded that no more can fail; every call of a full
// window failing never passes.
type probe struct {
	n       int
	allowed int // failed calls the window may hold and pass
	calls   int
	errors  int
	classes map[string]int
	failed  map[string]int // "role model" of the failed calls
	latency []float64
}

func newProbe(w config.Waves) *probe {
	n := max(1, w.ProbeCalls)
	allowed := int(math.Floor(w.MaxErrorRate*float64(n) + 1e-9))
	return &probe{n: n, allowed: min(allowed, n-1), classes: map[string]int{}, failed: map[string]int{}}
}

// add records one outcome; class is "" for a success.
func (p *probe) add(role, model, class string, latencyMS float64) {
	p.calls++
	p.latency = append(p.latency, latencyMS)
	if class != "" {
		p.errors++
		p.classes[class]++
		p.failed[role+" model "+model]++
	}
}

// decided says whether the verdict is certain, and what it is.
func (p *probe) decided() (decided, ok bool) {
	switch {
	case p.errors > p.allowed:
		return true, false
	case p.calls-p.errors >= p.n-p.allowed:
		return true, true
	}
	return false, false
}

// final is the verdict when the canary's team ended before the window
// filled: judged on the calls it made (none: on whether its commander
// failed).
func (p *probe) final(commanderFailed bool) bool {
	if d, ok := p.decided(); d {
		return ok
	}
	if p.calls == 0 {
		return !commanderFailed
	}
	return p.errors < p.calls && float64(p.errors) <= float64(p.allowed)/float64(p.n)*float64(p.calls)
}

// data is the probe as a canary event's payload.
func (p *probe) data(ok bool) events.CanaryData {
	d := events.CanaryData{Calls: p.calls, Errors: p.errors, OK: ok}
	if p.calls > 0 {
		d.ErrorRate = float64(p.errors) / float64(p.calls)
		lat := slices.Sorted(slices.Values(p.latency))
		d.LatencyP50MS, d.LatencyMaxMS = stats.NearestRankSorted(lat, 0.5), lat[len(lat)-1]
	}
	if len(p.classes) > 0 {
		d.FailureClasses = maps.Clone(p.classes)
	}
	return d
}

// diagnosis says in words why the probe failed: the models whose calls
// failed, how many of the probe's calls failed and their classes.
func (p *probe) diagnosis(notLaunched int, canaryErr string) string {
	var b strings.Builder
	if p.calls == 0 {
		fmt.Fprintf(&b, "the canary failed before any LLM call answered (%s)", canaryErr)
	} else {
		who := slices.Sorted(maps.Keys(p.failed))
		b.WriteString(strings.Join(who, ", "))
		fmt.Fprintf(&b, ": %d of %d probe calls failed (", p.errors, p.calls)
		for i, c := range sortedByCount(p.classes) {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s ×%d", c, p.classes[c])
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "; the remaining %d commanders were not launched", notLaunched)
	return b.String()
}

// sortedByCount orders m's keys by count, largest first, then by name.
func sortedByCount(m map[string]int) []string {
	keys := slices.Sorted(maps.Keys(m))
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	return keys
}

// waveCtl watches a run's llm_call events while commanders deploy in waves:
// the canary team's calls feed the probe; every call feeds the window of
// the wave launched last (neither counts a call replayed from the journal);
// each commander's first call (or its end) marks it under way. It is an Observer (called under the event log's lock, one
// event at a time): it only records and signals.
type waveCtl struct {
	plan Plan

	mu sync.Mutex
	// the probe
	canary      map[string]bool // domains of the canary wave
	probe       *probe
	verdict     chan struct{} // closed once the probe decided
	decided, ok bool
	canaryLeft  int  // canary commanders still running
	canaryFail  bool // a canary commander failed
	canaryErr   string
	canaryClass providers.Class
	chain       int            // the probe's longest chain of dependent calls so far
	agentCalls  map[string]int // canary team: calls seen per agent
	childSeen   bool           // a canary squad lead or worker call was seen
	// the wave launched last
	pending   map[string]bool // its commanders not yet under way
	underWay  chan struct{}   // closed once pending is empty
	win       windowStats
	winActive bool
}

func newWaveCtl(p Plan, w config.Waves, canary []string) *waveCtl {
	c := &waveCtl{plan: p, canary: map[string]bool{}, probe: newProbe(w), verdict: make(chan struct{}),
		canaryLeft: len(canary), agentCalls: map[string]int{}}
	for _, d := range canary {
		c.canary[d] = true
	}
	return c
}

// Observe implements Observer.
func (c *waveCtl) Observe(e events.Event) {
	if e.Kind != events.LLMCall {
		return
	}
	d, _ := e.Data.(events.CallData)
	domain, inTeam := c.plan.DomainOf(e.AgentID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if inTeam && c.pending[domain] {
		c.markUnderWay(domain)
	}
	// The run's own cancellation says nothing of the provider, nor does an
	// answer replayed from the journal (a resumed run): it was the
	// provider's then, not now. Either still marks its commander under way.
	if d.Outcome == "cancelled" || d.Replayed {
		return
	}
	class := d.FailureClass
	if d.Outcome == "ok" {
		class = ""
	}
	if c.winActive {
		c.win.Calls++
		if class != "" {
			c.win.Errors++
		}
		if class == string(providers.ClassRateLimited) {
			c.win.RateLimited++
		}
		c.win.RetryAfter = max(c.win.RetryAfter, time.Duration(d.RetryAfterMS)*time.Millisecond)
	}
	if !inTeam || !c.canary[domain] || c.decided {
		return
	}
	c.chain = max(c.chain, c.depth(e.Role, e.AgentID))
	c.probe.add(e.Role, e.Model, class, d.LatencyMS)
	if dec, ok := c.probe.decided(); dec {
		c.decide(ok)
	}
}

// depth is the place in its team's chain of dependent calls of the call
// agentID just made: the commander's plan is 1, a squad lead's first call
// 2, a worker's first call 2 (flat) or 3 (under a squad lead), each later
// call of the same agent one more; a commander's call after its children's
// (the bundle) follows all of them. c.mu is held.
func (c *waveCtl) depth(role, agentID string) int {
	c.agentCalls[agentID]++
	n := c.agentCalls[agentID]
	switch role {
	case commanders.RoleSquadLead:
		c.childSeen = true
		return 1 + n
	case commanders.RoleWorker:
		c.childSeen = true
		if c.plan.WorkersPerLead > 0 {
			return 2 + n
		}
		return 1 + n
	}
	if n > 1 && c.childSeen {
		return c.chain + 1
	}
	return n
}

// decide records the verdict. c.mu is held.
func (c *waveCtl) decide(ok bool) {
	if c.decided {
		return
	}
	c.decided, c.ok = true, ok
	close(c.verdict)
}

// commanderDone notes that the commander of domain ended: it is no longer
// awaited, and a canary team that ended before
// its probe decided is judged on what it did.
func (c *waveCtl) commanderDone(domain string, failed bool, class providers.Class, errText string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[domain] {
		c.markUnderWay(domain)
	}
	if !c.canary[domain] {
		return
	}
	c.canaryLeft--
	if failed {
		c.canaryFail, c.canaryErr, c.canaryClass = true, errText, class
	}
	if c.canaryLeft == 0 && !c.decided {
		c.decide(c.probe.final(c.canaryFail))
	}
}

// markUnderWay removes domain from the pending wave. c.mu is held.
func (c *waveCtl) markUnderWay(domain string) {
	delete(c.pending, domain)
	if len(c.pending) == 0 && c.underWay != nil {
		close(c.underWay)
		c.underWay = nil
	}
}

// startWave begins a wave of domains' commanders: its window opens and its
// trigger (every commander under way) is armed. It returns the channel
// closed when the trigger fires. Call it before launching them.
func (c *waveCtl) startWave(domains []string) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.win, c.winActive = windowStats{}, true
	c.pending = map[string]bool{}
	ch := make(chan struct{})
	c.underWay = ch
	for _, d := range domains {
		c.pending[d] = true
	}
	if len(domains) == 0 {
		close(ch)
		c.underWay = nil
	}
	return ch
}

// window returns what the wave launched last saw so far.
func (c *waveCtl) window() windowStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.win
}

// result is the probe's verdict as an event payload (after verdict closed).
func (c *waveCtl) result() (events.CanaryData, *probe, string, providers.Class, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cls := c.canaryClass
	if cls == "" {
		cls = providers.ClassPermanent
	}
	return c.probe.data(c.ok), c.probe, c.canaryErr, cls, c.chain
}

// teamWidth is the widest layer of one commander's team: the calls it has
// in flight at once when its workers run.
func teamWidth(p Plan) int {
	return max(1, p.ChildrenPerCmd*max(1, p.WorkersPerLead))
}

// observe adds o to the event log's observers until the returned function
// removes it.
func (l *eventLog) observe(o events.Observer) (remove func()) {
	l.mu.Lock()
	l.observers = append(slices.Clip(l.observers), o)
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.observers = slices.DeleteFunc(slices.Clone(l.observers), func(x events.Observer) bool { return x == o })
	}
}

// launcher starts the commander of outs[i] (false: it was not launched:
// the run was interrupted or the cost ceiling stopped launches); finished
// is called when it ends.
type launcher func(i int, finished func(*BundleOutcome)) bool

// deployWaves launches outs in waves (see the top of this file) and
// returns how (the waves' telemetry). It returns once every commander
// launched or was refused; startReview is
// called once the canary passed (the cross-review and judging then take
// the bundles as they arrive). A failed canary returns a *canaryError
// after the canary's commanders ended; the rest are failed as not launched.
func (r *deps) deployWaves(ctx context.Context, w config.Waves, outs []*BundleOutcome, conc runConcurrency, launch launcher, startReview func()) (*runfiles.WavesTelemetry, error) {
	n := len(outs)
	nCanary := min(max(1, w.Canary), n)
	ctl := newWaveCtl(r.plan, w, outDomains(outs[:nCanary]))
	defer r.rec.events.observe(ctl)()
	log := &runfiles.WavesTelemetry{}
	emitWave := func(rec runfiles.WaveRecord, planned int) {
		log.Waves = append(log.Waves, rec)
		r.rec.emit(events.Event{Phase: events.Phase4, Kind: events.Wave,
			Message: fmt.Sprintf("wave %d/%d: %d commanders (%s)", rec.Wave, planned, rec.Size, rec.Reason),
			Data:    events.WaveData{Commanders: rec.Commanders, DelayMS: rec.DelayMS, Detail: rec.Detail, Planned: planned, Reason: rec.Reason, Size: rec.Size, Wave: rec.Wave}})
	}
	finished := func(o *BundleOutcome) { ctl.commanderDone(o.Domain, o.Failed, o.FailureClass, o.Error) }
	// refuseFrom marks outs[from:] not launched: the run was cut short
	// (interrupted, or the cost ceiling stopped launches), so launch refuses
	// each.
	refuseFrom := func(from int) {
		for i := from; i < n; i++ {
			launch(i, nil)
		}
	}
	// launchWave launches outs[from:to]; false when a launch was refused:
	// the run was cut short, and every commander not launched yet is
	// refused too.
	launchWave := func(from, to int) bool {
		for i := from; i < to; i++ {
			if !launch(i, finished) {
				refuseFrom(i + 1)
				return false
			}
		}
		return true
	}
	// wait waits for ch; false when the run was cut short, even if ch is
	// ready too: a canary or a wave that ended because of the run's own
	// cancellation says nothing of the provider.
	wait := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return ctx.Err() == nil
	}

	// The canary and its probe.
	first := firstWaveSize(w, conc.N, teamWidth(r.plan))
	emitWave(runfiles.WaveRecord{Wave: 0, Size: nCanary, Reason: "canary", Commanders: outCommanders(outs[:nCanary]),
		Detail: fmt.Sprintf("probe: the first %d call outcomes of its team", max(1, w.ProbeCalls))}, ceilDiv(n-nCanary, first))
	start := time.Now()
	ctl.startWave(nil)
	if !launchWave(0, nCanary) {
		startReview()
		return log, nil
	}
	if d, ok := r.pool.journal.decision(decisionCanary); ok && d.OK {
		// A resumed run whose canary passed in an earlier attempt: the
		// verdict stands (docs/resume.md). Judging it again on the fresh
		// calls alone would judge a sample biased to the calls that were
		// failing when the run was killed, and could stop a run the first
		// attempt let go on.
		data := events.CanaryData{OK: true, PassedInAttempt: d.Attempt}
		log.Canary = data
		r.rec.emit(events.Event{Phase: events.Phase4, Kind: events.Canary, Message: fmt.Sprintf("canary passed in attempt %d (recorded in the journal; not judged again)", d.Attempt), Data: data})
		startReview()
		return log, r.deployRest(ctx, w, ctl, log, outs, nCanary, first, conc, emitWave, launchWave, refuseFrom, wait)
	}
	if !wait(ctl.verdict) {
		refuseFrom(nCanary)
		startReview()
		return log, nil
	}
	data, p, canaryErr, canaryClass, chain := ctl.result()
	data.ChainCalls, data.WaitMS = chain, float64(time.Since(start).Microseconds())/1000
	if !data.OK {
		data.Diagnosis = p.diagnosis(n-nCanary, canaryErr)
		log.Canary, log.NotLaunched = data, n-nCanary
		r.rec.emit(events.Event{Phase: events.Phase4, Kind: events.Canary, Message: "canary failed: " + data.Diagnosis, Data: data})
		for _, o := range outs[nCanary:] {
			o.Failed, o.FailureClass = true, ClassNotLaunched
			o.Error = "not launched (canary failed): " + data.Diagnosis
		}
		cls := canaryClass
		if byCount := sortedByCount(p.classes); len(byCount) > 0 {
			cls = providers.Class(byCount[0])
		}
		return log, &canaryError{diagnosis: data.Diagnosis, class: cls}
	}
	log.Canary, log.ChainCalls = data, chain
	attempt := 1
	if r.resumed != nil {
		attempt = r.resumed.Attempt
	}
	// Recorded (and fsync'd) before the rest is launched: a resume of this
	// run does not judge the canary again.
	r.pool.journal.decide(JournalDecision{Name: decisionCanary, OK: true, Attempt: attempt})
	r.rec.emit(events.Event{Phase: events.Phase4, Kind: events.Canary, Message: fmt.Sprintf("canary passed: %d of %d probe calls failed", data.Errors, data.Calls), Data: data})
	startReview()
	return log, r.deployRest(ctx, w, ctl, log, outs, nCanary, first, conc, emitWave, launchWave, refuseFrom, wait)
}

// outDomains and outCommanders name the domains and commanders of outs.
func outDomains(outs []*BundleOutcome) []string {
	var ds []string
	for _, o := range outs {
		ds = append(ds, o.Domain)
	}
	return ds
}

func outCommanders(outs []*BundleOutcome) []string {
	var cs []string
	for _, o := range outs {
		cs = append(cs, o.Commander)
	}
	return cs
}

// deployRest launches the commanders after the canary (outs[nCanary:]) in
// waves, the first of size first.
func (r *deps) deployRest(ctx context.Context, w config.Waves, ctl *waveCtl, log *runfiles.WavesTelemetry, outs []*BundleOutcome, nCanary, first int, conc runConcurrency,
	emitWave func(runfiles.WaveRecord, int), launchWave func(from, to int) bool, refuseFrom func(from int), wait func(<-chan struct{}) bool) error {
	n := len(outs)
	// The rest, in waves.
	size, reason, detail, delay := first, "probe", fmt.Sprintf("sized from the run's concurrency %d and a team's widest layer of %d calls", conc.N, teamWidth(r.plan)), time.Duration(0)
	if w.Initial > 0 {
		detail = fmt.Sprintf("initial size %d", w.Initial)
	}
	for next, k := nCanary, 1; next < n; k++ {
		if delay > 0 && providers.Sleep(ctx, delay) != nil {
			refuseFrom(next)
			return nil
		}
		to := min(n, next+size)
		underWay := ctl.startWave(outDomains(outs[next:to]))
		emitWave(runfiles.WaveRecord{Wave: k, Size: to - next, Reason: reason, Detail: detail, DelayMS: delay.Milliseconds(), Commanders: outCommanders(outs[next:to])},
			k+ceilDiv(n-to, size))
		if !launchWave(next, to) {
			return nil
		}
		next = to
		if next >= n {
			break
		}
		if !wait(underWay) {
			refuseFrom(next)
			return nil
		}
		log.ChainCalls++ // the next wave waited for this one's first calls
		size, delay, detail = nextWave(w, size, ctl.window())
		reason = "adapt"
	}
	return nil
}

func ceilDiv(a, b int) int {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / max(1, b)
}
