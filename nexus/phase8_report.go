package nexus

import (
	"sort"
	"time"

	"github.com/swarm-dev/swarm/internal/stats"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runs"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// writeFinal computes the telemetry and writes sandbox.json, report.md
// with its exports (findings.csv, findings.sarif), telemetry.json and
// result.json (safe to call on a partial or failed run,
// and more than once). A run stopped after sealing writes only the last two.
// A write that fails is kept by r.dir (Err): the run's end reports it
// (ErrWrite) instead of claiming files it does not have.
func (r *runState) writeFinal(res *Result) {
	res.Workspace = r.workspaceInfo()
	res.FollowUp = r.followUpResult(res)
	res.Telemetry = r.telemetry(res)
	res.Resumed, res.Telemetry.Resume = r.resumeInfo()
	defer func() {
		// A file the run could not write (report.md, a bundle, a log line)
		// makes result.json say failed, never complete: the record is not
		// whole, and a resume (which leaves a finished run alone) may
		// write it again.
		if werr := r.writeFailure(false); werr != nil && res.Status != runs.StatusFailed {
			res.OK, res.Status, res.Error, res.FailureClass = false, runs.StatusFailed, werr.Error(), providers.ClassOf(werr)
		}
		_ = r.dir.WriteJSON(runs.TelemetryFile, res.Telemetry)
		_ = r.dir.WriteJSON(runs.ResultFile, res)
	}()
	if res.Status == runs.StatusSealed {
		return
	}
	if r.sb != nil && !r.sbDone {
		r.sbDone = true
		rep := r.sb.finish(res, r.plan.Hardening.Threshold, r.rec.phase())
		res.Sandbox = &rep
		_ = r.dir.WriteJSON(runs.SandboxFile, rep)
	}
	r.writeEvidence(res)
	_ = r.dir.WriteFile(runs.ReportFile, []byte(r.actionReport(res)), 0o644)
	r.writeExports(res)
}

// Telemetry is telemetry.json.
type Telemetry struct {
	RunID string `json:"run_id"`
	// Resume: attempt and replayed/fresh calls of a resumed run (absent
	// for a run that was not resumed).
	Resume *ResumeTelemetry `json:"resume,omitempty"`
	Scale  string           `json:"scale"`
	// Agents is what the plan deploys; AgentsLaunched the agents that
	// really started (fewer when the cost ceiling, a failure or an
	// interruption stopped launches).
	Agents         AgentTally `json:"agents_planned"`
	AgentsLaunched AgentTally `json:"agents_launched"`
	Calls          int        `json:"calls"`
	InputTokens    int        `json:"input_tokens"`
	OutputTokens   int        `json:"output_tokens"`
	CostUSD        float64    `json:"cost_usd"`
	// UnpricedModels are the models without a known price whose calls
	// used tokens (UnpricedCalls of them): CostUSD leaves them out, so it
	// is a lower bound (FormatCost shows it so); absent when every call was
	// priced.
	UnpricedModels []string `json:"unpriced_models,omitempty"`
	UnpricedCalls  int      `json:"unpriced_calls,omitempty"`
	// The parts of InputTokens and OutputTokens the providers reported
	// (providers.Usage): reasoning or thinking output, input read from and
	// written to the provider's prompt cache; absent when none was
	// reported (a provider that does not report them reports none).
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// PromptCacheHits counts the calls that read input from the provider's
	// prompt cache (cache read tokens > 0), and CacheReadShare is the share
	// of InputTokens read from it; both absent when no call did. (Not
	// swarm's own answer cache: see events.CallData.Cached.)
	PromptCacheHits int      `json:"prompt_cache_hits,omitempty"`
	CacheReadShare  *float64 `json:"cache_read_share,omitempty"`
	// Prices are the prices the calls of each priced model were charged
	// at, with where each came from; absent for unpriced models (see
	// UnpricedModels).
	Prices         map[string]PriceUsed `json:"prices,omitempty"`
	WallMS         int64                `json:"wall_ms"`
	ByRole         map[string]CallStats `json:"by_role"`
	ByModel        map[string]CallStats `json:"by_model"`
	BreakerTrips   int                  `json:"breaker_trips"` // the sandbox's toxicity breaker (provider breakers: Breakers)
	FailureClasses map[string]int       `json:"failure_classes"`
	ShadowScores   map[string]float64   `json:"shadow_scores"`
	ShadowMedian   *float64             `json:"shadow_median"` // null when no bundle was judged
	BundlesPlanned int                  `json:"bundles_planned"`
	BundlesScored  int                  `json:"bundles_scored"`
	ShadowValid    bool                 `json:"shadow_valid"`
	Tiers          map[string]int       `json:"tiers"`
	Gates          map[string]int       `json:"gates"`
	BundlesFailed  int                  `json:"bundles_failed"`
	AtomsFailed    int                  `json:"atoms_failed"`
	Salvaged       int                  `json:"bundles_salvaged"`
	Critical       CriticalPath         `json:"critical_path"`
	// Evidence tallies the run's citations by state; nil without a
	// workspace.
	Evidence *workspace.Counts `json:"evidence,omitempty"`
	// Tools counts the read-tool calls per role that made any; absent when
	// no tool was called (always so without a workspace).
	Tools map[string]ToolStats `json:"tools,omitempty"`
	// Refusals groups the refused read-tool calls by kind (escape, denied,
	// scope, limit first, then the others by name), each with its count
	// and up to three examples; absent when no call was refused.
	Refusals []RefusalGroup `json:"refusals,omitempty"`
	// Breakers are the provider circuit breakers (per model and layer) that
	// left the closed state: their transitions, the calls routed to
	// fallbacks and the time spent open; absent when none did.
	Breakers []BreakerStats `json:"breakers,omitempty"`
	// AdaptiveConcurrency is each model's adaptive concurrency limit
	// (providers.AdaptiveLimit, ratelimits.go): its ceiling, lowest and
	// final limit, the 429s seen and the changes; absent when no model of
	// the run has one (the mock kind by default).
	AdaptiveConcurrency []providers.AdaptiveStats `json:"adaptive_concurrency,omitempty"`
	// Recovery counts the recovery ladder's steps; absent when no step
	// beyond the providers' own retry was taken.
	Recovery *RecoveryStats `json:"recovery,omitempty"`
	// Waves is how the commanders were deployed in waves: each wave with
	// its size and outcome, and the canary's verdict; absent when the scale
	// deploys them at once (waves.go).
	Waves *WavesTelemetry `json:"waves,omitempty"`
	// FollowUp is the chain of runs and its velocity; absent unless the
	// run follows up another (Options.FollowUp).
	FollowUp *FollowUp `json:"follow_up,omitempty"`
}

// ToolStats counts one role's read-tool calls.
type ToolStats struct {
	Calls   int            `json:"calls"`
	Refused int            `json:"refused"`
	ByTool  map[string]int `json:"by_tool"`
	// Refusals counts refused calls by kind (escape, denied, scope, limit, ...).
	Refusals map[string]int `json:"refusals,omitempty"`
	Bytes    int            `json:"bytes"` // file content returned to the models
}

// AgentTally counts agents by role.
type AgentTally struct {
	Nexus      int `json:"nexus"`
	Commanders int `json:"commanders"`
	SquadLeads int `json:"squad_leads"`
	Workers    int `json:"workers"`
	Reviewers  int `json:"reviewers"`
	Total      int `json:"total"`
}

// CallStats summarises calls of one role or model.
type CallStats struct {
	Calls        int `json:"calls"`
	Errors       int `json:"errors"`
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// The parts of the totals reported, and the prompt cache's hits: as
	// Telemetry's fields of the same names, over these calls.
	ReasoningTokens  int      `json:"reasoning_tokens,omitempty"`
	CacheReadTokens  int      `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int      `json:"cache_write_tokens,omitempty"`
	PromptCacheHits  int      `json:"prompt_cache_hits,omitempty"`
	CacheReadShare   *float64 `json:"cache_read_share,omitempty"`
	// CostUSD is the cost of the priced calls; nil (absent) when calls
	// used tokens and none of them had a known price: never $0.
	CostUSD        *float64       `json:"cost_usd,omitempty"`
	UnpricedCalls  int            `json:"unpriced_calls,omitempty"` // of them, calls of a model without a known price: CostUSD leaves them out
	LatencyP50MS   float64        `json:"latency_p50_ms"`
	LatencyP95MS   float64        `json:"latency_p95_ms"`
	FailureClasses map[string]int `json:"failure_classes,omitempty"`
}

// CriticalPath is the longest chain of dependent LLM calls the run made
// (see criticalPathCalls).
type CriticalPath struct {
	Calls int `json:"calls"`
}

func (r *runState) telemetry(res *Result) Telemetry {
	p := r.plan
	t := Telemetry{RunID: p.RunID, Scale: p.Scale,
		Agents: AgentTally{Nexus: 1, Commanders: p.Commanders, SquadLeads: p.SquadLeads, Workers: p.Workers, Reviewers: p.Reviewers, Total: p.Agents},
		ByRole: map[string]CallStats{}, ByModel: map[string]CallStats{}, FailureClasses: map[string]int{},
		ShadowScores: map[string]float64{}, Tiers: map[string]int{}, Gates: map[string]int{}, ShadowValid: res.ShadowValid}
	r.meter.fill(&t)
	t.Tools = r.meter.toolStats()
	t.Refusals = r.meter.refusalGroups()
	t.Breakers = r.pool.breakerStats()
	t.AdaptiveConcurrency = r.pool.adaptiveStats()
	t.Recovery = r.meter.recoveryStats()
	t.WallMS = time.Since(r.start).Milliseconds()
	for _, o := range res.Bundles {
		if o.Failed {
			t.BundlesFailed++
		}
		if o.Salvaged {
			t.Salvaged++
		}
		t.AtomsFailed += o.AtomsFailed
		if o.ShadowScore != nil {
			t.ShadowScores[o.ID] = *o.ShadowScore
		}
		if o.Tier != "" {
			t.Tiers[o.Tier]++
		}
		if o.Gate != nil {
			t.Gates[o.Gate.Action]++
		}
	}
	if res.Evidence != nil {
		e := *res.Evidence
		t.Evidence = &e
	}
	t.ShadowMedian, t.BundlesPlanned, t.BundlesScored = res.Aggregate.Median, res.Aggregate.Planned, res.Aggregate.Scored
	t.Critical = CriticalPath{Calls: criticalPathCalls(p, r.pathShape(res))}
	t.Waves = r.waves.telemetry(res.Bundles)
	t.FollowUp = res.FollowUp
	return t
}

// pathShape is what a run's chain of dependent LLM calls depends on
// besides its plan.
type pathShape struct {
	// HardeningCycles is the number of hardening cycles on the path (each
	// a revision and a re-judgement).
	HardeningCycles int
	// JudgeCalls is the number of sequential calls of one judgement
	// (judge_samples × 1 per bundle, or × the criteria per criterion); 0
	// when shadow scoring is off.
	JudgeCalls int
	// Preset: the decomposition and envelope were reused (compare), so
	// Phases 1 and 1.5 made no call.
	Preset bool
	// Quarantine: a quarantine re-review followed the gate.
	Quarantine bool
	// WaveChain is the number of dependent calls the last wave of
	// commanders waited for before it launched (the canary's probe, then
	// one first call per wave before it); 0 without waves.
	WaveChain int
}

// criticalPathCalls is the longest chain of dependent LLM calls of a run:
// decomposition, seal, (the calls the last wave of commanders waited for:
// see waves.go), the commander's plan, (the squad lead's micro
// briefs), worker, bundle; then, beside each other, the cross-review's last
// pair (it needs the last bundle) and the judgement of the last bundle with
// its hardening cycles (revise + re-judge each); then the quarantine
// re-review when there is one (it follows the gate), and the synthesis
// (Phase 7 needs both branches). Everything else runs beside this chain.
func criticalPathCalls(p Plan, s pathShape) int {
	n := 0
	if !s.Preset {
		n += 2 // decomposition, seal
	}
	n += s.WaveChain
	n++ // the commander's plan
	if p.WorkersPerLead > 0 {
		n++ // the squad lead's micro briefs
	}
	n += 2 // worker, bundle
	review := 0
	if p.Commanders >= 2 && p.Reviewers > 0 {
		review = 1
	}
	judge := 0
	if s.JudgeCalls > 0 {
		judge = s.JudgeCalls + s.HardeningCycles*(1+s.JudgeCalls)
	}
	n += max(review, judge)
	if s.Quarantine {
		n++
	}
	return n + 1 // synthesis
}

// judgeCalls is the number of sequential calls one judgement makes.
func (r *runState) judgeCalls() int {
	sc := r.cfg.ShadowScoring
	if !sc.Enabled {
		return 0
	}
	n := max(1, sc.JudgeSamples)
	if sc.JudgeMode == "per_criterion" {
		n *= max(1, r.plan.Criteria)
	}
	return n
}

// pathShape is the shape of a finished run: its judgements, whether it was
// preset, and what its bundles went through (bundleShape).
func (r *runState) pathShape(res *Result) pathShape {
	s := bundleShape(res.Bundles)
	s.JudgeCalls, s.Preset = r.judgeCalls(), r.preset != nil
	if r.waves != nil {
		s.WaveChain = r.waves.ChainCalls
	}
	return s
}

// bundleShape is the part of a run's pathShape its bundles decide: the most
// hardening cycles a bundle went through and whether any was quarantined.
func bundleShape(bundles []*BundleOutcome) pathShape {
	var s pathShape
	for _, o := range bundles {
		if o.Hardening != nil {
			s.HardeningCycles = max(s.HardeningCycles, o.Hardening.Cycles)
		}
		if o.Gate != nil && o.Gate.Action == shadow.ActionQuarantine {
			s.Quarantine = true
		}
	}
	return s
}

// PriceUsed is the price a model's calls were charged at (Telemetry.Prices):
// every rate in USD per million tokens, where the price came from (Origin:
// config, table or kind, see Config.PriceOf), the entry's date and source
// when it gives them, and Assumed: the rates the entry did not give that
// this run's tokens were charged at a stand-in for ("cache_read",
// "cache_write": at the input rate).
type PriceUsed struct {
	InputPerMTok      float64  `json:"input_per_mtok"`
	OutputPerMTok     float64  `json:"output_per_mtok"`
	CacheReadPerMTok  float64  `json:"cache_read_per_mtok"`
	CacheWritePerMTok float64  `json:"cache_write_per_mtok"`
	ReasoningPerMTok  float64  `json:"reasoning_per_mtok"`
	Origin            string   `json:"origin"`
	AsOf              string   `json:"as_of,omitempty"`
	Source            string   `json:"source,omitempty"`
	Assumed           []string `json:"assumed,omitempty"`
}

func newPriceUsed(pu *priceUse) PriceUsed {
	p := pu.Price
	out := PriceUsed{InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok, CacheReadPerMTok: p.CacheReadPerMTok,
		CacheWritePerMTok: p.CacheWritePerMTok, ReasoningPerMTok: p.ReasoningPerMTok, Origin: p.Origin, AsOf: p.AsOf, Source: p.Source}
	if pu.cacheReadAssumed {
		out.Assumed = append(out.Assumed, "cache_read")
	}
	if pu.cacheWriteAssumed {
		out.Assumed = append(out.Assumed, "cache_write")
	}
	return out
}

// cacheReadShare is the share of input tokens read from the prompt cache;
// nil when none was (no hit, or a provider that reports none: 0 would
// claim a measurement).
func cacheReadShare(cacheRead, input int) *float64 {
	if cacheRead <= 0 || input <= 0 {
		return nil
	}
	v := float64(cacheRead) / float64(input)
	return &v
}

func callStats(s *usageStats) CallStats {
	u := s.usage
	c := CallStats{Calls: s.Calls, Errors: s.Errors, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		ReasoningTokens: u.ReasoningTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
		PromptCacheHits: s.PromptCacheHits, CacheReadShare: cacheReadShare(u.CacheReadTokens, u.InputTokens), UnpricedCalls: s.Unpriced}
	if s.Unpriced == 0 || s.Priced > 0 {
		cost := s.CostUSD
		c.CostUSD = &cost
	}
	lat := append([]float64(nil), s.LatencyMS...)
	sort.Float64s(lat)
	c.LatencyP50MS = stats.NearestRankSorted(lat, 0.50)
	c.LatencyP95MS = stats.NearestRankSorted(lat, 0.95)
	if len(s.Classes) > 0 {
		c.FailureClasses = map[string]int{}
		for k, v := range s.Classes {
			c.FailureClasses[string(k)] = v
		}
	}
	return c
}
