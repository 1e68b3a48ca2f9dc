package nexus

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/workspace"
)

// usage accounting per role and model.
type usageStats struct {
	Calls           int
	Errors          int
	usage           providers.Usage // summed: the details are parts of the totals
	PromptCacheHits int             // calls that read input tokens from the provider's prompt cache
	CostUSD         float64
	Priced          int // calls that used tokens of a model with a known price
	Unpriced        int // calls that used tokens of a model without a known price
	LatencyMS       []float64
	Classes         map[providers.Class]int
}

// meter is a run's accounting: the usage of every call by role and model,
// the cost against the ceiling (warn at 80%, stop launching at 90%, stop
// the commanders at 100%), the agents that really started and the sandbox
// breaker's trips.
type meter struct {
	price   func(providers.Ref) config.Price // a model's per-token price (Config.PriceOf)
	ceiling float64
	rec     *recorder // where the ceiling's events go

	mu             sync.Mutex
	byRole         map[string]*usageStats
	byModel        map[string]*usageStats
	cost           float64
	unpriced       map[string]int       // per model without a known price: its calls that used tokens
	prices         map[string]*priceUse // per model with a known price that was called
	warned         bool
	stopLaunch     bool
	stopAll        context.CancelFunc
	ceilingStopped bool                       // the ceiling kept an agent from launching or stopped commanders
	launched       map[string]map[string]bool // per role, the agents that really started
	trips          int
	tools          map[string]*runfiles.ToolStats            // per role; nil until a tool is called
	refused        []runfiles.RefusalExample                 // every refused tool call (capped: safety.go)
	refusedKinds   map[string]int                            // refused tool calls per kind, exact
	recovery       map[string]map[string]*runfiles.StepStats // per unit kind and step; nil until a ladder climbs
}

// noteRecovery counts one attempt of a ladder's step. Retry is not
// counted: it is the providers' own, inside every call, and the ladder
// sees only the retries that failed (a unit that recovered on a retry
// never reaches it), so its "succeeded" could not be measured and a
// constant 0 would read as "retries never work". The failed retries are
// the recovery events with step retry.
func (m *meter) noteRecovery(unit, step string, ok bool) {
	if step == commanders.StepRetry {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.recovery == nil {
		m.recovery = map[string]map[string]*runfiles.StepStats{}
	}
	if m.recovery[unit] == nil {
		m.recovery[unit] = map[string]*runfiles.StepStats{}
	}
	s := m.recovery[unit][step]
	if s == nil {
		s = &runfiles.StepStats{}
		m.recovery[unit][step] = s
	}
	s.Used++
	if ok {
		s.Succeeded++
	}
}

// recoveryStats returns the ladder's counts; nil when no step beyond the
// providers' own retry was taken (the ladder did nothing).
func (m *meter) recoveryStats() *runfiles.RecoveryStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.recovery == nil {
		return nil
	}
	out := &runfiles.RecoveryStats{Steps: map[string]runfiles.StepStats{}, Units: map[string]map[string]runfiles.StepStats{}}
	for unit, steps := range m.recovery {
		out.Units[unit] = map[string]runfiles.StepStats{}
		for step, s := range steps {
			out.Units[unit][step] = *s
			t := out.Steps[step]
			t.Used += s.Used
			t.Succeeded += s.Succeeded
			out.Steps[step] = t
		}
	}
	return out
}

// noteTool counts one read-tool call of an agent of role.
func (m *meter) noteTool(role string, out workspace.Outcome) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tools == nil {
		m.tools = map[string]*runfiles.ToolStats{}
	}
	s := m.tools[role]
	if s == nil {
		s = &runfiles.ToolStats{ByTool: map[string]int{}}
		m.tools[role] = s
	}
	s.Calls++
	s.ByTool[out.Tool]++
	s.Bytes += out.Bytes
	if !out.OK {
		s.Refused++
		if s.Refusals == nil {
			s.Refusals = map[string]int{}
		}
		s.Refusals[out.Refusal]++
	}
}

// toolStats returns a copy of the per-role tool counts (nil when no tool
// was called).
func (m *meter) toolStats() map[string]runfiles.ToolStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tools == nil {
		return nil
	}
	out := make(map[string]runfiles.ToolStats, len(m.tools))
	for role, s := range m.tools {
		c := *s
		c.ByTool = maps.Clone(s.ByTool)
		c.Refusals = maps.Clone(s.Refusals)
		out[role] = c
	}
	return out
}

func newMeter(price func(providers.Ref) config.Price, ceiling float64, rec *recorder) *meter {
	if price == nil {
		price = func(providers.Ref) config.Price { return config.Price{} } // nothing priced
	}
	return &meter{price: price, ceiling: ceiling, rec: rec, byRole: map[string]*usageStats{}, byModel: map[string]*usageStats{},
		launched: map[string]map[string]bool{}, unpriced: map[string]int{}, prices: map[string]*priceUse{}}
}

// account records a call's usage, enforces the cost ceiling and returns the
// call's cost, and whether that cost is unknown: a call that used tokens of
// a model without a known price (its cost, 0, is then no figure: the cost
// so far is a lower bound and the ceiling cannot see it). phase is the
// phase the call belongs to (its context's: see withPhase), which the
// ceiling's events carry.
func (m *meter) account(phase events.Phase, ref providers.Ref, role string, u providers.Usage, lat time.Duration, err error) (cost float64, unpriced bool) {
	p := m.price(ref)
	cost = p.Cost(u)
	used := u.InputTokens+u.OutputTokens > 0
	unpriced = !p.Known && used
	m.mu.Lock()
	if unpriced {
		m.unpriced[ref.String()]++
	}
	if p.Known {
		pu := m.prices[ref.String()]
		if pu == nil {
			pu = &priceUse{Price: p}
			m.prices[ref.String()] = pu
		}
		pu.cacheReadAssumed = pu.cacheReadAssumed || (p.CacheReadAssumed && u.CacheReadTokens > 0)
		pu.cacheWriteAssumed = pu.cacheWriteAssumed || (p.CacheWriteAssumed && u.CacheWriteTokens > 0)
	}
	for _, s := range []*usageStats{usageOf(m.byRole, role), usageOf(m.byModel, ref.String())} {
		s.Calls++
		s.usage = s.usage.Add(u)
		if u.CacheReadTokens > 0 {
			s.PromptCacheHits++
		}
		s.CostUSD += cost
		switch {
		case unpriced:
			s.Unpriced++
		case used:
			s.Priced++
		}
		s.LatencyMS = append(s.LatencyMS, float64(lat.Microseconds())/1000)
		if err != nil {
			s.Errors++
			s.Classes[providers.ClassOf(err)]++
		}
	}
	m.cost += cost
	m.mu.Unlock()
	m.enforceCeiling(phase)
	return cost, unpriced
}

// priceUse is the price a model's calls were charged at, and whether a
// stand-in rate (Price.CacheReadAssumed, CacheWriteAssumed) met tokens it
// priced.
type priceUse struct {
	config.Price
	cacheReadAssumed, cacheWriteAssumed bool
}

func usageOf(m map[string]*usageStats, k string) *usageStats {
	s, ok := m[k]
	if !ok {
		s = &usageStats{Classes: map[providers.Class]int{}}
		m[k] = s
	}
	return s
}

// armStop makes reaching the ceiling call stop (the commanders' context);
// nil disarms it. The ceiling may already have been reached.
func (m *meter) armStop(stop context.CancelFunc) {
	m.mu.Lock()
	m.stopAll = stop
	m.mu.Unlock()
	if stop != nil {
		// Armed between phases (nothing runs beside the caller), so the
		// phase entered last is the one the run is in.
		m.enforceCeiling(m.rec.phase())
	}
}

// enforceCeiling applies the cost ceiling to the cost so far: warn at 80%,
// stop launching at 90%, stop the commanders and synthesise at 100%. Its
// events carry phase: that of the call that crossed a mark.
func (m *meter) enforceCeiling(phase events.Phase) {
	m.mu.Lock()
	total, ceiling := m.cost, m.ceiling
	var warn, stopLaunch, stopAll bool
	if ceiling > 0 {
		if total >= 0.8*ceiling && !m.warned {
			m.warned, warn = true, true
		}
		if total >= 0.9*ceiling && !m.stopLaunch {
			m.stopLaunch, stopLaunch = true, true
		}
		if total >= ceiling && m.stopAll != nil {
			stopAll = true
		}
	}
	cancel := m.stopAll
	if stopAll {
		m.stopAll = nil
	}
	m.mu.Unlock()
	if warn {
		m.rec.emit(events.Event{Phase: phase, Kind: events.CostWarning, Message: fmt.Sprintf("cost $%.4f reached 80%% of the $%.2f ceiling", total, ceiling)})
	}
	if stopLaunch {
		m.rec.emit(events.Event{Phase: phase, Kind: events.CostStop, Message: fmt.Sprintf("cost $%.4f reached 90%% of the ceiling: no new agents are launched", total), Data: events.CostStopData{Level: 0.9}})
	}
	if stopAll && cancel != nil {
		m.mu.Lock()
		m.ceilingStopped = true
		m.mu.Unlock()
		m.rec.emit(events.Event{Phase: phase, Kind: events.CostStop, Message: fmt.Sprintf("cost $%.4f reached the $%.2f ceiling: stopping and synthesising what exists", total, ceiling), Data: events.CostStopData{Level: 1.0}})
		cancel()
	}
}

// mayLaunch says whether a new agent may start; a refusal (the cost
// ceiling's 90% mark) makes the run partial.
func (m *meter) mayLaunch() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopLaunch {
		m.ceilingStopped = true
	}
	return !m.stopLaunch
}

// noteLaunch records that an agent of role really started.
func (m *meter) noteLaunch(role, id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.launched[role] == nil {
		m.launched[role] = map[string]bool{}
	}
	m.launched[role][id] = true
}

// launchedOf is how many agents of roles really started.
func (m *meter) launchedOf(roles ...string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, role := range roles {
		n += len(m.launched[role])
	}
	return n
}

// noteTrip counts a trip of the sandbox's toxicity breaker (the provider
// breakers keep their own record: providerPool.breakerStats).
func (m *meter) noteTrip() {
	m.mu.Lock()
	m.trips++
	m.mu.Unlock()
}

// stoppedByCeiling says whether the cost ceiling cut the run short.
func (m *meter) stoppedByCeiling() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ceilingStopped
}

// fill writes the meter's figures into t.
func (m *meter) fill(t *runfiles.Telemetry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, s := range m.byRole {
		t.ByRole[k] = callStats(s)
		t.Calls += s.Calls
		t.InputTokens += s.usage.InputTokens
		t.OutputTokens += s.usage.OutputTokens
		t.ReasoningTokens += s.usage.ReasoningTokens
		t.CacheReadTokens += s.usage.CacheReadTokens
		t.CacheWriteTokens += s.usage.CacheWriteTokens
		t.PromptCacheHits += s.PromptCacheHits
		for c, n := range s.Classes { // every call is accounted to exactly one role
			t.FailureClasses[string(c)] += n
		}
	}
	for k, s := range m.byModel {
		t.ByModel[k] = callStats(s)
	}
	l := m.launched
	t.AgentsLaunched = runfiles.AgentTally{Nexus: len(l[commanders.RoleNexus]), Commanders: len(l[commanders.RoleCommander]),
		SquadLeads: len(l[commanders.RoleSquadLead]), Workers: len(l[commanders.RoleWorker]), Reviewers: len(l[commanders.RoleReviewer])}
	t.AgentsLaunched.Total = t.AgentsLaunched.Nexus + t.AgentsLaunched.Commanders + t.AgentsLaunched.SquadLeads + t.AgentsLaunched.Workers + t.AgentsLaunched.Reviewers
	t.CostUSD = m.cost
	t.UnpricedModels, t.UnpricedCalls = nil, 0
	for model, n := range m.unpriced {
		t.UnpricedModels = append(t.UnpricedModels, model)
		t.UnpricedCalls += n
	}
	slices.Sort(t.UnpricedModels)
	t.CacheReadShare = cacheReadShare(t.CacheReadTokens, t.InputTokens)
	t.Prices = nil
	for model, pu := range m.prices {
		if t.Prices == nil {
			t.Prices = map[string]runfiles.PriceUsed{}
		}
		t.Prices[model] = newPriceUsed(pu)
	}
	t.BreakerTrips = m.trips
}
