package events

import (
	"encoding/json"

	"github.com/swarm-dev/swarm/config"
)

// The payloads of events (Event.Data), one type per kind. Their fields are
// declared in the order of their JSON names, the order events.jsonl has
// always written the keys in (TestPayloadFieldOrder keeps it so).

// BriefingData is the plan a run starts with (briefing, Phase 0).
type BriefingData struct {
	Agents         int           `json:"agents"`
	Commanders     int           `json:"commanders"`
	CostCeilingUSD float64       `json:"cost_ceiling_usd"`
	Criteria       int           `json:"criteria"`
	Domains        []string      `json:"domains"`
	Models         config.Roster `json:"models"`
	Personality    string        `json:"personality"`
	Reviewers      int           `json:"reviewers"`
	RunID          string        `json:"run_id"`
	Scale          string        `json:"scale"`
	Seed           int64         `json:"seed"`
	SquadLeads     int           `json:"squad_leads"`
	Workers        int           `json:"workers"`
	Workspace      string        `json:"workspace,omitempty"` // the directory the agents read
}

// CallData is one LLM call (llm_call); its prompt and answer are line
// Transcript of transcripts.jsonl.
type CallData struct {
	// CacheReadTokens and CacheWriteTokens are the parts of InputTokens
	// read from and written to the provider's prompt cache (absent: none
	// reported).
	CacheReadTokens  int  `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int  `json:"cache_write_tokens,omitempty"`
	Cached           bool `json:"cached,omitempty"` // answered from swarm's answer cache
	// CostUSD is the call's cost, each kind of token at its rate
	// (Price.Cost); nil (absent) when the call used tokens of a model
	// without a known price (Unpriced), never 0 for it.
	CostUSD      *float64 `json:"cost_usd,omitempty"`
	FailureClass string   `json:"failure_class,omitempty"` // outcome error or invalid_output
	InputTokens  int      `json:"input_tokens"`
	LatencyMS    float64  `json:"latency_ms"`
	// Outcome is "ok", "error", "invalid_output" (answered, but not valid
	// for its schema) or "cancelled" (the run's own cancellation).
	Outcome      string `json:"outcome"`
	OutputTokens int    `json:"output_tokens"`
	// ReasoningTokens is the part of OutputTokens the model spent
	// reasoning or thinking (absent: none reported).
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// Replayed: the answer came from the run's journal (a resumed run),
	// not from the model; tokens, cost and latency are the original's.
	Replayed bool `json:"replayed,omitempty"`
	// RetryAfterMS is the wait the provider asked for (Retry-After) with a
	// failure, if any: the waves read it (waves.go).
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
	Schema       string `json:"schema,omitempty"` // the output schema's name
	// ToolCalls is how many tool calls the answer made (a turn of the
	// agent's tool loop); 0 for a final answer.
	ToolCalls  int   `json:"tool_calls,omitempty"`
	Transcript int64 `json:"transcript"` // the transcript line's seq
	// Unpriced: the call used tokens of a model without a known price
	// (Config.PriceOf); it has no CostUSD and is not summed.
	Unpriced bool `json:"unpriced,omitempty"`
}

// ToolCallData is one read-tool call of an agent (tool_call): what it asked
// for, whether it got it, and why not. The event's Role, AgentID and Model
// say who asked.
type ToolCallData struct {
	Bytes   int    `json:"bytes"` // file content returned to the model
	OK      bool   `json:"ok"`
	Path    string `json:"path,omitempty"`    // list_dir, read_file: the path asked for
	Pattern string `json:"pattern,omitempty"` // grep, glob: the pattern
	Reason  string `json:"reason,omitempty"`  // why it was refused
	Refusal string `json:"refusal,omitempty"` // the refusal's kind (escape, denied, scope, limit, ...)
	Tool    string `json:"tool"`
}

// AgentFinishData is how an agent ended (agent_finish).
type AgentFinishData struct {
	FailureClass string `json:"failure_class,omitempty"`
	Status       string `json:"status"`
}

// DepthGuardData is a depth-guard refusal (depth_guard_refusal): the agent
// planned Asked children, Allowed were run.
type DepthGuardData struct {
	Allowed int `json:"allowed"`
	Asked   int `json:"asked"`
}

// FailureData is a failure's class and what it hit (failure).
type FailureData struct {
	BundleID     string `json:"bundle_id,omitempty"`
	Domain       string `json:"domain,omitempty"`
	FailureClass string `json:"failure_class"`
}

// LeakageData is the leakage found in an agent's output (leakage).
type LeakageData struct {
	Hits        int    `json:"hits"`
	MaxSeverity string `json:"max_severity"`
}

// AuditData is a sandbox audit: a bundle re-judged with a fresh seed (audit).
type AuditData struct {
	Agreement float64 `json:"agreement"` // share of verdicts that agree
	Audited   float64 `json:"audited"`   // the audit's shadow score
	BundleID  string  `json:"bundle_id"`
	Original  float64 `json:"original"` // the run's shadow score
}

// ScoreCorrectionData is a consensus correction of reviewers' scores
// (score_correction); BundleID is empty for a reviewer-wide correction.
type ScoreCorrectionData struct {
	BundleID string  `json:"bundle_id"`
	Delta    float64 `json:"delta"`
	Kind     string  `json:"kind"` // inflation, deflation, rubber_stamp, herding
}

// CostStopData is the share of the cost ceiling reached (cost_stop): 0.9
// stops launching agents, 1 stops the run.
type CostStopData struct {
	Level float64 `json:"level"`
}

// ReviewData is one reviewer's score card of one bundle (review).
type ReviewData struct {
	BundleID   string  `json:"bundle_id"`
	Conflicts  int     `json:"conflicts"`
	Quarantine bool    `json:"quarantine"` // a re-review of a quarantined bundle
	Total      float64 `json:"total"`
}

// SealedData is the commitment made before any commander starts (sealed).
type SealedData struct {
	CriteriaCount int    `json:"criteria_count"`
	SealedHash    string `json:"sealed_hash"`
	TaskHash      string `json:"task_hash"`
}

// EnvelopeCheckData is the envelope's verification before judging
// (envelope_check): Reason when it failed, SealedHash when it held.
type EnvelopeCheckData struct {
	OK         bool   `json:"ok"`
	Reason     string `json:"reason,omitempty"`
	SealedHash string `json:"sealed_hash,omitempty"`
}

// JudgedData is a bundle's first judgement against the sealed criteria
// (judged).
type JudgedData struct {
	BundleID     string  `json:"bundle_id"`
	Disagreement float64 `json:"disagreement"`
	Failed       int     `json:"failed"`
	Level        string  `json:"level"`
	Passed       int     `json:"passed"`
	ShadowScore  float64 `json:"shadow_score"`
}

// HardeningData is a bundle's hardening (hardening).
type HardeningData struct {
	BundleID string  `json:"bundle_id"`
	Cycles   int     `json:"cycles"`
	Final    float64 `json:"final"`
	Initial  float64 `json:"initial"`
	Velocity float64 `json:"velocity"`
}

// GateData is a Shadow Gate decision (gate). ShadowScore and Report are
// absent for a bundle gated without a score (its leaks alone decided).
type GateData struct {
	Action      string   `json:"action"`
	BundleID    string   `json:"bundle_id"`
	Reason      string   `json:"reason"`
	Report      string   `json:"report,omitempty"`
	ShadowScore *float64 `json:"shadow_score,omitempty"`
}

// RunEndData is how a run ended (run_end), as Result says it.
type RunEndData struct {
	BundlesPlanned int    `json:"bundles_planned"`
	BundlesScored  int    `json:"bundles_scored"`
	Dir            string `json:"dir"`
	FailureClass   string `json:"failure_class,omitempty"`
	OK             bool   `json:"ok"`
	Phase          Phase  `json:"phase"`
	Status         string `json:"status"`
}

// Phase1End ends the decomposition (phase_end of Phase 1).
type Phase1End struct {
	Aspects int `json:"aspects"`
	Domains int `json:"domains"`
}

// Phase2End ends the capsules (phase_end of Phase 2).
type Phase2End struct {
	Capsules int `json:"capsules"`
}

// Phase3End ends the deployment (phase_end of Phase 3): the commanders and
// how many run at once, and why.
type Phase3End struct {
	Commanders        int    `json:"commanders"`
	Concurrency       int    `json:"concurrency"`
	ConcurrencyDetail string `json:"concurrency_detail"`
	ConcurrencyRule   string `json:"concurrency_rule"`
}

// Phase4End ends the execution (phase_end of Phase 4): bundles delivered.
type Phase4End struct {
	Bundles int `json:"bundles"`
}

// Phase5End ends the cross-review (phase_end of Phase 5).
type Phase5End struct {
	Reviews int `json:"reviews"`
}

// Phase6End ends shadow validation (phase_end of Phase 6).
type Phase6End struct {
	Valid bool `json:"valid"`
}

// Phase8End ends the run's output (phase_end of Phase 8).
type Phase8End struct {
	Status string `json:"status"`
}

// BreakerData is one transition of the circuit breaker of a model in a
// layer (breaker). FailureRate and WindowCalls are the measurement that
// decided it: the sliding window's for closed → open, the probes' for a
// half-open breaker's verdict; both are absent for open → half_open (the
// cooldown decided, no calls did).
type BreakerData struct {
	FailureRate *float64 `json:"failure_rate,omitempty"`
	From        string   `json:"from"`
	Layer       string   `json:"layer"` // workers, squad_leads, commanders, reviewers, judge, nexus
	Model       string   `json:"model"`
	// Reason is failure_rate (closed → open), cooldown (open → half_open),
	// probe_failed (half_open → open) or probes_succeeded (half_open →
	// closed).
	Reason      string `json:"reason"`
	To          string `json:"to"`
	WindowCalls int    `json:"window_calls,omitempty"`
}

// ModelSwapData is a request of an agent answered by another model than
// its role's primary (model_swap): From is the model the request was meant
// for, To the one that answers. Reason is breaker_open (the breaker of From
// in the role's layer is open: routing) or ladder (the recovery ladder's
// model swap).
type ModelSwapData struct {
	AgentID string `json:"agent_id"`
	From    string `json:"from"`
	Reason  string `json:"reason"`
	Role    string `json:"role"`
	To      string `json:"to"`
}

// RawData is the data of an event kind this version does not know, kept as
// it was read.
type RawData json.RawMessage

// MarshalJSON writes the data as it was read.
func (d RawData) MarshalJSON() ([]byte, error) {
	if len(d) == 0 {
		return []byte("null"), nil
	}
	return d, nil
}

// EventKind is Briefing.
func (BriefingData) EventKind() Kind { return Briefing }

// EventKind is LLMCall.
func (CallData) EventKind() Kind { return LLMCall }

// EventKind is ToolCall.
func (ToolCallData) EventKind() Kind { return ToolCall }

// EventKind is AgentFinish.
func (AgentFinishData) EventKind() Kind { return AgentFinish }

// EventKind is DepthGuard.
func (DepthGuardData) EventKind() Kind { return DepthGuard }

// EventKind is Failure.
func (FailureData) EventKind() Kind { return Failure }

// EventKind is Leakage.
func (LeakageData) EventKind() Kind { return Leakage }

// EventKind is Audit.
func (AuditData) EventKind() Kind { return Audit }

// EventKind is ScoreCorrection.
func (ScoreCorrectionData) EventKind() Kind { return ScoreCorrection }

// EventKind is CostStop.
func (CostStopData) EventKind() Kind { return CostStop }

// EventKind is Review.
func (ReviewData) EventKind() Kind { return Review }

// EventKind is Sealed.
func (SealedData) EventKind() Kind { return Sealed }

// EventKind is EnvelopeCheck.
func (EnvelopeCheckData) EventKind() Kind { return EnvelopeCheck }

// EventKind is Judged.
func (JudgedData) EventKind() Kind { return Judged }

// EventKind is Hardening.
func (HardeningData) EventKind() Kind { return Hardening }

// EventKind is Gate.
func (GateData) EventKind() Kind { return Gate }

// EventKind is RunEnd.
func (RunEndData) EventKind() Kind { return RunEnd }

// EventKind is PhaseEnd.
func (Phase1End) EventKind() Kind { return PhaseEnd }

// EndOf is the phase this payload ends: Phase1.
func (Phase1End) EndOf() Phase { return Phase1 }

// EventKind is PhaseEnd.
func (Phase2End) EventKind() Kind { return PhaseEnd }

// EndOf is the phase this payload ends: Phase2.
func (Phase2End) EndOf() Phase { return Phase2 }

// EventKind is PhaseEnd.
func (Phase3End) EventKind() Kind { return PhaseEnd }

// EndOf is the phase this payload ends: Phase3.
func (Phase3End) EndOf() Phase { return Phase3 }

// EventKind is PhaseEnd.
func (Phase4End) EventKind() Kind { return PhaseEnd }

// EndOf is the phase this payload ends: Phase4.
func (Phase4End) EndOf() Phase { return Phase4 }

// EventKind is PhaseEnd.
func (Phase5End) EventKind() Kind { return PhaseEnd }

// EndOf is the phase this payload ends: Phase5.
func (Phase5End) EndOf() Phase { return Phase5 }

// EventKind is PhaseEnd.
func (Phase6End) EventKind() Kind { return PhaseEnd }

// EndOf is the phase this payload ends: Phase6.
func (Phase6End) EndOf() Phase { return Phase6 }

// EventKind is PhaseEnd.
func (Phase8End) EventKind() Kind { return PhaseEnd }

// EndOf is the phase this payload ends: Phase8.
func (Phase8End) EndOf() Phase { return Phase8 }

// EventKind is "": the kind of RawData is its event's own Kind.
func (RawData) EventKind() Kind { return "" }

// EventKind is Breaker.
func (BreakerData) EventKind() Kind { return Breaker }

// EventKind is ModelSwap.
func (ModelSwapData) EventKind() Kind { return ModelSwap }

// RecoveryData is one attempt of one step of a unit's recovery ladder
// (recovery): the unit (atom, shard, bundle, verdict) and its id (a brief
// id, a shard id, a bundle id), the step (retry, simplify, model_swap,
// scope_reduction, degrade), the attempt within the step (from 1), whether
// it recovered the unit, and what it did.
type RecoveryData struct {
	Unit    string `json:"unit"`
	UnitID  string `json:"unit_id"`
	Step    string `json:"step"`
	Attempt int    `json:"attempt"`
	OK      bool   `json:"ok"`
	Detail  string `json:"detail,omitempty"`
}

// Model swap reasons (ModelSwapData.Reason).
const (
	SwapLadder      = "ladder"
	SwapBreakerOpen = "breaker_open"
)

// EventKind is Recovery.
func (RecoveryData) EventKind() Kind { return Recovery }

// EventKind is Wave.
func (WaveData) EventKind() Kind { return Wave }

// EventKind is Canary.
func (CanaryData) EventKind() Kind { return Canary }

// WaveData is one wave of commanders as it launches (wave): the canary is
// wave 0. Reason is "canary" (wave 0), "probe" (the first wave after the
// canary's probe passed, sized from the run's concurrency) or "adapt" (a
// later wave, sized from what the previous wave saw: Detail says what).
type WaveData struct {
	Commanders []string `json:"commanders"` // their agent ids
	// DelayMS is how long the wave waited after its trigger: the largest
	// Retry-After the previous wave saw.
	DelayMS int64  `json:"delay_ms,omitempty"`
	Detail  string `json:"detail,omitempty"`
	// Planned is the number of waves after the canary (so the number of
	// the last wave) if the remaining commanders go in waves of this size:
	// an estimate, adaptation may change it.
	Planned int    `json:"planned_waves"`
	Reason  string `json:"reason"`
	Size    int    `json:"size"`
	Wave    int    `json:"wave"`
}

// CanaryData is the canary's verdict (canary): the probe's calls (the
// first llm_call outcomes of the canary's team), their errors and latency,
// and on failure a diagnosis naming the models and failure classes.
type CanaryData struct {
	Calls int `json:"calls"`
	// ChainCalls is the number of dependent calls the rest of the
	// commanders waited for (the probe's share of the critical path).
	ChainCalls     int            `json:"chain_calls"`
	Diagnosis      string         `json:"diagnosis,omitempty"`
	ErrorRate      float64        `json:"error_rate"`
	Errors         int            `json:"errors"`
	FailureClasses map[string]int `json:"failure_classes,omitempty"`
	LatencyMaxMS   float64        `json:"latency_max_ms"`
	LatencyP50MS   float64        `json:"latency_p50_ms"`
	OK             bool           `json:"ok"`
	// PassedInAttempt, on a resumed run, is the earlier attempt whose probe
	// passed: the verdict recorded in the journal stands and the probe is
	// not run again (the other fields are then zero).
	PassedInAttempt int `json:"passed_in_attempt,omitempty"`
	// WaitMS is the time from the canary's launch to the verdict.
	WaitMS float64 `json:"wait_ms"`
}
