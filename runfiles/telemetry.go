package runfiles

import (
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/workspace"
)

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

// BreakerStats is one breaker's record in telemetry.json (breakers): only
// breakers that left the closed state are listed.
type BreakerStats struct {
	Model string `json:"model"`
	Layer string `json:"layer"`
	// Opened, HalfOpened and Closed count the transitions into each state.
	Opened     int `json:"opened"`
	HalfOpened int `json:"half_opened"`
	Closed     int `json:"closed"`
	// RoutedToFallback counts calls of the layer that a fallback answered
	// because this breaker was open.
	RoutedToFallback int `json:"routed_to_fallback"`
	// OpenMS is the time the breaker spent open or half-open (from each
	// opening to the closing that ended it, or to when telemetry was
	// written for a breaker still open).
	OpenMS int64 `json:"open_ms"`
	// State is the breaker's state when telemetry was written.
	State string `json:"state"`
}

// RecoveryStats is telemetry's recovery: the recovery ladder's steps beyond
// retry, each counted in attempts (used) and attempts that recovered their
// unit (succeeded), over all units (Steps) and per unit kind (Units: atom,
// shard, bundle, verdict). A degrade that succeeded is salvage, not a
// success of its unit.
type RecoveryStats struct {
	Steps map[string]StepStats            `json:"steps"`
	Units map[string]map[string]StepStats `json:"units"`
}

// StepStats counts one step's attempts.
type StepStats struct {
	Used      int `json:"used"`
	Succeeded int `json:"succeeded"`
}

// WavesTelemetry is what a run's deployment in waves recorded (telemetry.json
// "waves").
type WavesTelemetry struct {
	Canary events.CanaryData `json:"canary"`
	Waves  []WaveRecord      `json:"waves"`
	// NotLaunched counts the commanders never launched (the canary failed).
	NotLaunched int `json:"not_launched,omitempty"`
	// ChainCalls is the number of dependent calls the last wave waited for
	// before it launched: its share of the critical path.
	ChainCalls int `json:"chain_calls"`
}

// WaveRecord is one wave in telemetry.json: how it launched and how its
// commanders ended.
type WaveRecord struct {
	Wave       int      `json:"wave"`
	Size       int      `json:"size"`
	Reason     string   `json:"reason"`
	Detail     string   `json:"detail,omitempty"`
	DelayMS    int64    `json:"delay_ms,omitempty"`
	Commanders []string `json:"commanders"`
	// The outcome of its commanders' bundles (filled when the run ends).
	BundlesOK     int `json:"bundles_ok"`
	BundlesFailed int `json:"bundles_failed"`
}

// ResumeTelemetry is telemetry.json's "resume" key (absent for a run that
// was not resumed).
type ResumeTelemetry struct {
	Attempt       int   `json:"attempt"`
	ReplayedCalls int64 `json:"replayed_calls"`
	FreshCalls    int64 `json:"fresh_calls"`
}

// RefusalGroup is one kind of refused tool call.
type RefusalGroup struct {
	Kind     string           `json:"kind"`
	Count    int              `json:"count"`
	Examples []RefusalExample `json:"examples"`
}

// RefusalExample is one refused tool call: who asked, with which tool, for
// what, and why it was refused.
type RefusalExample struct {
	Agent   string `json:"agent"`
	Role    string `json:"role"`
	Tool    string `json:"tool"`
	Path    string `json:"path,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	Reason  string `json:"reason"`
	// Kind is the refusal's kind (its group's Kind); not written.
	Kind string `json:"-"`
}

// FollowUp is result.json's and telemetry.json's "follow_up": the run this
// one follows up, the chain of runs up to this one and its velocity.
type FollowUp struct {
	// PreviousDir is the previous run's directory (absolute) and
	// PreviousRunID its run id.
	PreviousDir   string `json:"previous_dir"`
	PreviousRunID string `json:"previous_run_id"`
	// MissionChanged: the previous run's mission.md differs from this
	// run's mission (a revised mission: allowed, and said).
	MissionChanged bool `json:"mission_changed"`
	// Chain is every run of the chain, oldest first; the last is this run.
	Chain []ChainRun `json:"chain"`
	// Truncated: older runs exist beyond MaxChain, or a predecessor could
	// not be read (Warnings says which); the chain starts later.
	Truncated bool `json:"chain_truncated,omitempty"`
	// Velocity is the Shadow Score gained per run across the chain:
	// (first − last) / (runs − 1), positive when scores fall (improving),
	// as hardening_velocity within a run. Absent (with VelocityAbsent)
	// unless every run of the chain completed with a Shadow Score.
	Velocity       *float64 `json:"velocity,omitempty"`
	VelocityAbsent string   `json:"velocity_absent_reason,omitempty"`
	// Prior is the context the agents got from the previous run.
	Prior PriorContext `json:"prior_context"`
	// Warnings say what was missing or odd in the previous runs.
	Warnings []string `json:"warnings,omitempty"`
}

// ChainRun is one run of a follow-up chain.
type ChainRun struct {
	RunID  string `json:"run_id"`
	Dir    string `json:"dir"`
	Status string `json:"status"`
	// ShadowScore is the run's Shadow Score median over its judged
	// bundles (result.json shadow_aggregate.median); null when the run has
	// none (NoScore says why), never 0 in its place.
	ShadowScore *float64 `json:"shadow_score"`
	Level       string   `json:"level,omitempty"`
	Scored      int      `json:"bundles_scored"`
	Planned     int      `json:"bundles_planned"`
	NoScore     string   `json:"no_score_reason,omitempty"`
}

// PriorContext is what the agents of a follow-up run were told about the
// previous run: its score, its failed sealed criteria by category (counts
// only: never a criterion's id, text or judge message) and its findings'
// titles and priorities.
type PriorContext struct {
	RunID       string   `json:"run_id"`
	Status      string   `json:"status"`
	ShadowScore *float64 `json:"shadow_score"`
	Level       string   `json:"level,omitempty"`
	NoScore     string   `json:"no_score_reason,omitempty"`
	Scored      int      `json:"bundles_scored"`
	Planned     int      `json:"bundles_planned"`
	// FailedCategories counts the previous run's failed sealed criteria
	// per category, most failures first (as shown: the block's size bound
	// may drop the last ones).
	FailedCategories []events.CategoryCount `json:"failed_categories"`
	// Findings are the titles picked (at most 8, high priority first, the
	// last ones dropped when the block would pass its size bound);
	// FindingsTotal is how many the previous run had, FindingsWithheld
	// how many were left out because their title names a criterion id.
	Findings         []PriorFinding `json:"findings"`
	FindingsTotal    int            `json:"findings_total"`
	FindingsWithheld int            `json:"findings_withheld,omitempty"`
	// Missing says what the previous run could not give, and why.
	Missing []string `json:"missing,omitempty"`
}

// PriorFinding is one finding of the previous run shown to the agents.
type PriorFinding struct {
	Bundle   string `json:"bundle"`
	Priority string `json:"priority"`
	Title    string `json:"title"`
}
