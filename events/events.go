package events

import (
	"encoding/json"
	"fmt"
	"time"
)

// Kind says what an Event reports.
type Kind string

// Event kinds.
const (
	PhaseStart      Kind = "phase_start"
	PhaseEnd        Kind = "phase_end"
	Briefing        Kind = "briefing"
	LLMCall         Kind = "llm_call"
	AgentStart      Kind = "agent_start"
	AgentFinish     Kind = "agent_finish"
	Sealed          Kind = "sealed"
	EnvelopeCheck   Kind = "envelope_check"
	Judged          Kind = "judged"
	Hardening       Kind = "hardening"
	Gate            Kind = "gate"
	Review          Kind = "review"
	ScoreCorrection Kind = "score_correction"
	CostWarning     Kind = "cost_warning"
	CostStop        Kind = "cost_stop"
	BreakerTrip     Kind = "breaker_trip"
	Audit           Kind = "audit"
	DepthGuard      Kind = "depth_guard_refusal"
	Failure         Kind = "failure"
	Leakage         Kind = "leakage"
	Replay          Kind = "replay"
	RunEnd          Kind = "run_end"
	ToolCall        Kind = "tool_call"
	// WorkspaceWarning: something odd about the workspace's own files
	// (a .swarmignore line dropped, a .gitignore skipped); Message says what.
	WorkspaceWarning Kind = "workspace_warning"
)

// Issue 12, part A (resume).
const (
	// RunResumed: the run is a resumed one (Phase 0, before any call);
	// Data: ResumedData.
	RunResumed Kind = "run_resumed"
)

// Event kinds of the provider circuit breaker and its routing (issue 12;
// docs/recovery-breaker.md).
const (
	// Breaker is a transition of the breaker of one model in one layer
	// (BreakerData). The sandbox's toxicity breaker keeps BreakerTrip.
	Breaker Kind = "breaker"
	// ModelSwap is a request answered by another model than its role's
	// primary (ModelSwapData): reason breaker_open (routing) or ladder (the
	// recovery ladder's model swap).
	ModelSwap Kind = "model_swap"
)

// Event kinds of the recovery ladder (issue 12, part B2).
const (
	// Recovery is one attempt of one step of a unit's recovery ladder
	// (RecoveryData).
	Recovery Kind = "recovery"
)

// Event kinds of commander deployment in waves (issue 12, waves.go): each
// wave as it launches (the canary is wave 0) and the canary's verdict.
const (
	Wave   Kind = "wave"
	Canary Kind = "canary"
)

// Event kinds of issue 12, part D.
const (
	// FollowUp (Phase 0): the run follows up an earlier one; Data
	// (FollowUpData) says what it passes on.
	FollowUp Kind = "follow_up"
)

// Phase names a pipeline phase, as events.jsonl and Result.Phase write it.
type Phase string

// The phases of a run.
const (
	Phase0  Phase = "0"   // intake
	Phase1  Phase = "1"   // decomposition
	Phase15 Phase = "1.5" // seal
	Phase2  Phase = "2"   // context capsules
	Phase3  Phase = "3"   // commander deployment
	Phase4  Phase = "4"   // execution and monitoring
	Phase5  Phase = "5"   // cross-review
	Phase6  Phase = "6"   // shadow validation and hardening
	Phase7  Phase = "7"   // consensus and synthesis
	Phase8  Phase = "8"   // action report and telemetry
)

// phaseOrder lists the phases as the pipeline runs them.
var phaseOrder = [...]Phase{Phase0, Phase1, Phase15, Phase2, Phase3, Phase4, Phase5, Phase6, Phase7, Phase8}

// Phases lists the phases as the pipeline runs them (a new slice each call).
func Phases() []Phase {
	p := phaseOrder
	return p[:]
}

var phaseNames = map[Phase]string{
	Phase0: "intake", Phase1: "decomposition", Phase15: "seal", Phase2: "capsules", Phase3: "deployment",
	Phase4: "execution", Phase5: "cross-review", Phase6: "shadow validation", Phase7: "consensus", Phase8: "output",
}

// Name is the phase's short name ("intake", "seal", "cross-review", ...);
// "" for a phase this package does not define.
func (p Phase) Name() string { return phaseNames[p] }

// Event is one thing that happened in a run: one line of events.jsonl, and
// what every Observer receives.
//
// Data is the kind's typed payload, nil for kinds that carry none
// (phase_start, agent_start, cost_warning, breaker_trip, replay, the
// phase_end of phases 0, 1.5 and 7, a failure of the replays, which has no
// class). Switch on its type:
//
//	switch d := e.Data.(type) {
//	case events.CallData:
//		cost += d.CostUSD
//	case events.GateData:
//		fmt.Println(d.BundleID, d.Action)
//	}
//
// Each kind has one payload type (see the *Data types); a phase_end's
// payload depends on the phase (Phase1End ... Phase8End).
type Event struct {
	Seq     int64     `json:"seq"`
	Time    time.Time `json:"time"`
	Phase   Phase     `json:"phase,omitempty"`
	Kind    Kind      `json:"kind"`
	Role    string    `json:"role,omitempty"`
	AgentID string    `json:"agent_id,omitempty"`
	Model   string    `json:"model,omitempty"`
	Message string    `json:"message,omitempty"`
	Data    Payload   `json:"data,omitempty"`
}

// Payload is an event's typed content: one of this package's *Data and
// PhaseNEnd types (or RawData for a kind this version does not know). Each
// payload type declares the kind of the events that carry it, and a
// phase_end payload the phase it ends (EndOf): the decoding table is built
// from these declarations.
type Payload interface {
	// EventKind is the kind of the events that carry this payload; ""
	// for RawData, whose event's own Kind says.
	EventKind() Kind
}

// UnmarshalJSON reads an events.jsonl line: the payload type follows the
// kind (and, for phase_end, the phase); data of a kind this version does not
// know is kept as RawData.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event
	var w struct {
		plain
		Data json.RawMessage `json:"data,omitempty"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Event(w.plain)
	e.Data = nil
	if len(w.Data) == 0 || string(w.Data) == "null" {
		return nil
	}
	p, err := decodePayload(e.Kind, e.Phase, w.Data)
	if err != nil {
		return fmt.Errorf("event %d (%s): data: %w", e.Seq, e.Kind, err)
	}
	e.Data = p
	return nil
}

// payloadKey is what picks an event's payload type: its kind and, for
// phase_end, its phase.
type payloadKey struct {
	kind  Kind
	phase Phase
}

// decoder decodes one payload type from an event's data.
type decoder func(json.RawMessage) (Payload, error)

// payloads is the decoding table: every payload type, keyed by the kind it
// declares (EventKind) and, for a phase_end payload, the phase it ends
// (EndOf). A kind that is not in it keeps its data as RawData.
var payloads = payloadTable(
	entry[BriefingData],
	entry[CallData],
	entry[ResumedData],
	entry[AgentFinishData],
	entry[DepthGuardData],
	entry[FailureData],
	entry[LeakageData],
	entry[AuditData],
	entry[ScoreCorrectionData],
	entry[CostStopData],
	entry[ReviewData],
	entry[SealedData],
	entry[EnvelopeCheckData],
	entry[JudgedData],
	entry[HardeningData],
	entry[GateData],
	entry[RunEndData],
	entry[ToolCallData],
	entry[BreakerData],
	entry[RecoveryData],
	entry[ModelSwapData],
	entry[WaveData],
	entry[CanaryData],
	entry[FollowUpData],
	entry[ConcurrencyData],
	entry[Phase1End],
	entry[Phase2End],
	entry[Phase3End],
	entry[Phase4End],
	entry[Phase5End],
	entry[Phase6End],
	entry[Phase8End],
)

// phaseEnd is a phase_end payload: its type depends on the phase it ends.
type phaseEnd interface {
	Payload
	EndOf() Phase
}

// entry is T's row of the decoding table.
func entry[T Payload]() (payloadKey, decoder) {
	var zero T
	k := payloadKey{kind: zero.EventKind()}
	if pe, ok := any(zero).(phaseEnd); ok {
		k.phase = pe.EndOf()
	}
	return k, decodeAs[T]
}

// payloadTable builds the decoding table; two rows with the same key are a
// programming error.
func payloadTable(rows ...func() (payloadKey, decoder)) map[payloadKey]decoder {
	t := make(map[payloadKey]decoder, len(rows))
	for _, row := range rows {
		k, d := row()
		if _, dup := t[k]; dup {
			panic(fmt.Sprintf("events: two payload types for kind %q phase %q", k.kind, k.phase))
		}
		t[k] = d
	}
	return t
}

// decodePayload decodes raw as the payload type of kind k (and, for
// phase_end, phase ph); data of a kind the table does not hold is kept as
// RawData.
func decodePayload(k Kind, ph Phase, raw json.RawMessage) (Payload, error) {
	key := payloadKey{kind: k}
	if k == PhaseEnd {
		key.phase = ph
	}
	if d, ok := payloads[key]; ok {
		return d(raw)
	}
	return RawData(append([]byte(nil), raw...)), nil
}

func decodeAs[T Payload](raw json.RawMessage) (Payload, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Observer receives every event of a run as it is emitted. Every consumer
// of a run's events is one: the CLI's progress view, its --json stream and
// its log, compare's per-contender call tally, a user's own code.
// Observers are called one event at a time, in seq order; they must return
// quickly, must not start a run of their own and must not keep e.Data's
// slices beyond the call without copying them.
type Observer interface {
	Observe(e Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// Concurrency is a change of a model's adaptive concurrency limit
// (ConcurrencyData): halved on a 429, one less when the answers' rate-limit
// headers show a budget nearly spent, one more after a window of successes.
const Concurrency Kind = "concurrency_limit"

// ConcurrencyData is one change of a model's adaptive concurrency limit.
type ConcurrencyData struct {
	From     int    `json:"from"`
	InFlight int    `json:"in_flight"`
	Max      int    `json:"max"` // the ceiling (the kind's max_concurrency)
	Model    string `json:"model"`
	// Reason is rate_limited (a 429: halved), low_headroom (the headers
	// showed less than 10% of a budget left: -1) or successes (+1).
	Reason string `json:"reason"`
	To     int    `json:"to"`
}

// EventKind is Concurrency.
func (ConcurrencyData) EventKind() Kind { return Concurrency }

// CategoryCount is one category's failed sealed criteria in the previous
// run: Criteria distinct criteria failed in at least one bundle, Failures
// failed verdicts over all judged bundles.
type CategoryCount struct {
	Category string `json:"category"`
	Criteria int    `json:"criteria"`
	Failures int    `json:"failures"`
}

// FollowUpData is the follow_up event's payload (Phase 0): what the run
// passes on from the previous run.
type FollowUpData struct {
	PreviousDir      string          `json:"previous_dir"`
	PreviousRunID    string          `json:"previous_run_id"`
	PreviousStatus   string          `json:"previous_status"`
	PreviousScore    *float64        `json:"previous_shadow_score"`
	ChainRuns        int             `json:"chain_runs"` // this one included
	MissionChanged   bool            `json:"mission_changed"`
	FailedCategories []CategoryCount `json:"failed_categories"`
	Findings         int             `json:"findings"`
	Warnings         []string        `json:"warnings,omitempty"`
}

// EventKind is FollowUp.
func (FollowUpData) EventKind() Kind { return FollowUp }

// ResumedData is a run_resumed event: the attempt, how many answers the
// journal holds for replay, whether a torn last line was dropped from it,
// and what changed since the run started (resumed with --force).
type ResumedData struct {
	Attempt         int      `json:"attempt"`
	JournalRecords  int      `json:"journal_records"`
	TornLineDropped bool     `json:"torn_line_dropped"`
	UnsignedRecords int      `json:"unsigned_records,omitempty"` // replayed unverified (--trust-unsigned-journal)
	EnvelopeStored  bool     `json:"envelope_stored"`            // a sealed envelope was found and verified
	Changed         []string `json:"changed,omitempty"`
}

// EventKind is RunResumed.
func (ResumedData) EventKind() Kind { return RunResumed }
