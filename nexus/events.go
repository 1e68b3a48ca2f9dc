package nexus

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/internal/safeio"
)

// Kind says what an Event reports.
type Kind string

// Event kinds.
const (
	EvPhaseStart      Kind = "phase_start"
	EvPhaseEnd        Kind = "phase_end"
	EvBriefing        Kind = "briefing"
	EvLLMCall         Kind = "llm_call"
	EvAgentStart      Kind = "agent_start"
	EvAgentFinish     Kind = "agent_finish"
	EvSealed          Kind = "sealed"
	EvEnvelopeCheck   Kind = "envelope_check"
	EvJudged          Kind = "judged"
	EvHardening       Kind = "hardening"
	EvGate            Kind = "gate"
	EvReview          Kind = "review"
	EvScoreCorrection Kind = "score_correction"
	EvCostWarning     Kind = "cost_warning"
	EvCostStop        Kind = "cost_stop"
	EvBreakerTrip     Kind = "breaker_trip"
	EvAudit           Kind = "audit"
	EvDepthGuard      Kind = "depth_guard_refusal"
	EvFailure         Kind = "failure"
	EvLeakage         Kind = "leakage"
	EvReplay          Kind = "replay"
	EvRunEnd          Kind = "run_end"
	EvToolCall        Kind = "tool_call"
	// EvWorkspaceWarning: something odd about the workspace's own files
	// (a .swarmignore line dropped, a .gitignore skipped); Message says what.
	EvWorkspaceWarning Kind = "workspace_warning"
)

// Issue 12, part A (resume).
const (
	// EvRunResumed: the run is a resumed one (Phase 0, before any call);
	// Data: ResumedData.
	EvRunResumed Kind = "run_resumed"
)

// Event kinds of the provider circuit breaker and its routing (issue 12;
// docs/recovery-breaker.md).
const (
	// EvBreaker is a transition of the breaker of one model in one layer
	// (BreakerData). The sandbox's toxicity breaker keeps EvBreakerTrip.
	EvBreaker Kind = "breaker"
	// EvModelSwap is a request answered by another model than its role's
	// primary (ModelSwapData): reason breaker_open (routing) or ladder (the
	// recovery ladder's model swap).
	EvModelSwap Kind = "model_swap"
)

// Event kinds of the recovery ladder (issue 12, part B2).
const (
	// EvRecovery is one attempt of one step of a unit's recovery ladder
	// (RecoveryData).
	EvRecovery Kind = "recovery"
)

// Event kinds of commander deployment in waves (issue 12, waves.go): each
// wave as it launches (the canary is wave 0) and the canary's verdict.
const (
	EvWave   Kind = "wave"
	EvCanary Kind = "canary"
)

// Event kinds of issue 12, part D.
const (
	// EvFollowUp (Phase 0): the run follows up an earlier one; Data
	// (FollowUpData) says what it passes on.
	EvFollowUp Kind = "follow_up"
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
//	case nexus.CallData:
//		cost += d.CostUSD
//	case nexus.GateData:
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
// PhaseNEnd types (or RawData for a kind this version does not know).
type Payload interface{ payload() }

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

func decodePayload(k Kind, ph Phase, raw json.RawMessage) (Payload, error) {
	switch k {
	case EvBriefing:
		return decodeAs[BriefingData](raw)
	case EvLLMCall:
		return decodeAs[CallData](raw)
	case EvRunResumed:
		return decodeAs[ResumedData](raw)
	case EvAgentFinish:
		return decodeAs[AgentFinishData](raw)
	case EvDepthGuard:
		return decodeAs[DepthGuardData](raw)
	case EvFailure:
		return decodeAs[FailureData](raw)
	case EvLeakage:
		return decodeAs[LeakageData](raw)
	case EvAudit:
		return decodeAs[AuditData](raw)
	case EvScoreCorrection:
		return decodeAs[ScoreCorrectionData](raw)
	case EvCostStop:
		return decodeAs[CostStopData](raw)
	case EvReview:
		return decodeAs[ReviewData](raw)
	case EvSealed:
		return decodeAs[SealedData](raw)
	case EvEnvelopeCheck:
		return decodeAs[EnvelopeCheckData](raw)
	case EvJudged:
		return decodeAs[JudgedData](raw)
	case EvHardening:
		return decodeAs[HardeningData](raw)
	case EvGate:
		return decodeAs[GateData](raw)
	case EvRunEnd:
		return decodeAs[RunEndData](raw)
	case EvToolCall:
		return decodeAs[ToolCallData](raw)
	case EvBreaker:
		return decodeAs[BreakerData](raw)
	case EvRecovery:
		return decodeAs[RecoveryData](raw)
	case EvModelSwap:
		return decodeAs[ModelSwapData](raw)
	case EvWave:
		return decodeAs[WaveData](raw)
	case EvCanary:
		return decodeAs[CanaryData](raw)
	case EvFollowUp:
		return decodeAs[FollowUpData](raw)
	case EvConcurrency:
		return decodeAs[ConcurrencyData](raw)
	case EvPhaseEnd:
		switch ph {
		case Phase1:
			return decodeAs[Phase1End](raw)
		case Phase2:
			return decodeAs[Phase2End](raw)
		case Phase3:
			return decodeAs[Phase3End](raw)
		case Phase4:
			return decodeAs[Phase4End](raw)
		case Phase5:
			return decodeAs[Phase5End](raw)
		case Phase6:
			return decodeAs[Phase6End](raw)
		case Phase8:
			return decodeAs[Phase8End](raw)
		}
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

type phaseKey struct{}

// withPhase tags ctx with the phase its work belongs to. Phases 4, 5 and 6
// run side by side, so the phase entered last does not say which one an LLM
// call or a review belongs to.
func withPhase(ctx context.Context, phase Phase) context.Context {
	return context.WithValue(ctx, phaseKey{}, phase)
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

// eventLog streams events: each is written to events.jsonl (each line
// flushed, so an interrupted run leaves a readable log) and handed to the
// observers, then dropped, so a run's memory does not grow with its events.
// Whatever needs aggregates keeps its own (the run's usage accounting, the
// sandbox bridge) or observes the stream (compare). Only with keep (tests
// and audits: Options.KeepEvents) are the events also kept for
// Result.Events.
type eventLog struct {
	mu        sync.Mutex
	log       *rundir.Log // nil once closed
	seq       int64
	now       func() time.Time
	observers []Observer
	keep      bool
	kept      []Event
	closeErr  error       // what closing the log returned
	line      lineEncoder // encodes each line (under mu)
	// secrets is the run's secret set, scrubbed from every event (nil:
	// credential shapes only).
	secrets *redact.Secrets
}

func newEventLog(path string, now func() time.Time, keep bool, obs ...Observer) (*eventLog, error) {
	f, err := rundir.OpenLog(path, 0o644)
	if err != nil {
		return nil, err
	}
	log, err := rundir.NewLog(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &eventLog{log: log, now: now, keep: keep, observers: obs}, nil
}

func (l *eventLog) emit(e Event) {
	l.mu.Lock()
	l.seq++
	e.Seq = l.seq
	if e.Time.IsZero() {
		e.Time = l.now()
	}
	e = redactEvent(l.secrets, e)
	if l.log != nil {
		if b, err := l.line.encode(e); err == nil {
			// The last line of defence: every field, nested ones too. The
			// pass sees the line without its newline; an unchanged line is
			// written from the buffer as it is.
			l.log.WriteLine(append(l.secrets.Bytes(b[:len(b)-1]), '\n'))
		}
	}
	if l.keep {
		l.kept = append(l.kept, e)
	}
	// Deliver under the lock so observers (the --json stream, the progress
	// view) see events in seq order.
	for _, o := range l.observers {
		o.Observe(e)
	}
	l.mu.Unlock()
}

// redactEvent scrubs secrets (configured keys, bearer tokens) from an
// event's message and the string fields of its payload before it is
// written or observed: the registry and the recorder scrub provider errors
// already, this covers any other text that reaches an event.
func redactEvent(sec *redact.Secrets, e Event) Event {
	e.Message = sec.String(e.Message)
	if e.Data == nil {
		return e
	}
	v := reflect.ValueOf(e.Data)
	if v.Kind() != reflect.Struct {
		return e
	}
	var c reflect.Value // a copy, made when a field changes
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() != reflect.String {
			continue
		}
		s := f.String()
		if r := sec.String(s); r != s {
			if !c.IsValid() {
				c = reflect.New(v.Type()).Elem()
				c.Set(v)
			}
			c.Field(i).SetString(r)
		}
	}
	if c.IsValid() {
		e.Data = c.Interface().(Payload)
	}
	return e
}

// events returns the kept events (none unless keep).
func (l *eventLog) events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.kept...)
}

// err is the first write to events.jsonl that failed (nil: none).
func (l *eventLog) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.log == nil {
		return l.closeErr
	}
	return l.log.Err()
}

// sync flushes events.jsonl to disk and returns its first failure.
func (l *eventLog) sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.log == nil {
		return l.closeErr
	}
	return l.log.Sync()
}

func (l *eventLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.log == nil {
		return l.closeErr
	}
	l.closeErr = l.log.Close()
	l.log = nil
	return l.closeErr
}

// CommittedHashes returns the sealed hash and the task hash (of the
// decomposition) that a run recorded in its events (the "sealed" event of
// Phase 1.5, written before any commander started). ok is false when the
// run directory has no such event.
func CommittedHashes(runDir string) (sealed, task string, ok bool, err error) {
	f, _, err := safeio.Open(filepath.Join(runDir, "events.jsonl"), true)
	if err != nil {
		return "", "", false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Kind != EvSealed {
			continue
		}
		if d, _ := e.Data.(SealedData); d.SealedHash != "" {
			return d.SealedHash, d.TaskHash, true, nil
		}
	}
	return "", "", false, sc.Err()
}
