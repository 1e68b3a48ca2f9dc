package nexus

import (
	"bufio"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/providers"
)

// Event kinds.
const (
	EvPhaseStart      = "phase_start"
	EvPhaseEnd        = "phase_end"
	EvBriefing        = "briefing"
	EvLLMCall         = "llm_call"
	EvAgentStart      = "agent_start"
	EvAgentFinish     = "agent_finish"
	EvSealed          = "sealed"
	EvEnvelopeCheck   = "envelope_check"
	EvJudged          = "judged"
	EvHardening       = "hardening"
	EvGate            = "gate"
	EvReview          = "review"
	EvScoreCorrection = "score_correction"
	EvCostWarning     = "cost_warning"
	EvCostStop        = "cost_stop"
	EvBreakerTrip     = "breaker_trip"
	EvAudit           = "audit"
	EvDepthGuard      = "depth_guard_refusal"
	EvFailure         = "failure"
	EvLeakage         = "leakage"
	EvRunEnd          = "run_end"
)

// Phase names a pipeline phase, as events.jsonl and Result.Phase write it.
type Phase = string

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

// Event is one line of events.jsonl.
type Event struct {
	Seq     int64          `json:"seq"`
	Time    time.Time      `json:"time"`
	Phase   Phase          `json:"phase,omitempty"`
	Kind    string         `json:"kind"`
	Role    string         `json:"role,omitempty"`
	AgentID string         `json:"agent_id,omitempty"`
	Model   string         `json:"model,omitempty"`
	Message string         `json:"message,omitempty"`
	Data    map[string]any `json:"data,omitempty"`
}

type phaseKey struct{}

// withPhase tags ctx with the phase its work belongs to. Phases 4, 5 and 6
// run side by side, so the phase entered last does not say which one an LLM
// call or a review belongs to.
func withPhase(ctx context.Context, phase string) context.Context {
	return context.WithValue(ctx, phaseKey{}, phase)
}

// Observer receives every event as it is emitted (progress views, --json).
// Observers are called one event at a time, in seq order; they must return
// quickly and must not start a run of their own.
type Observer func(Event)

// eventLog streams events: each is written to events.jsonl (each line
// flushed, so an interrupted run leaves a readable log) and handed to the
// observers, then dropped, so a run's memory does not grow with its events.
// Whatever needs aggregates keeps its own (the run's usage accounting, the
// sandbox bridge) or reads events.jsonl (compare). Only with keep (tests and
// audits: Options.KeepEvents) are the events also kept for Result.Events.
type eventLog struct {
	mu        sync.Mutex
	f         *os.File
	w         *bufio.Writer
	seq       int64
	now       func() time.Time
	observers []Observer
	keep      bool
	kept      []Event
}

func newEventLog(path string, now func() time.Time, keep bool, obs ...Observer) (*eventLog, error) {
	f, err := openLog(path, 0o644)
	if err != nil {
		return nil, err
	}
	return &eventLog{f: f, w: bufio.NewWriter(f), now: now, keep: keep, observers: obs}, nil
}

func (l *eventLog) emit(e Event) {
	l.mu.Lock()
	l.seq++
	e.Seq = l.seq
	if e.Time.IsZero() {
		e.Time = l.now()
	}
	e = redactEvent(e)
	if l.w != nil {
		if b, err := json.Marshal(e); err == nil {
			l.w.Write(b)
			l.w.WriteByte('\n')
			l.w.Flush()
		}
	}
	if l.keep {
		l.kept = append(l.kept, e)
	}
	// Deliver under the lock so observers (the --json stream, the progress
	// view) see events in seq order.
	for _, o := range l.observers {
		o(e)
	}
	l.mu.Unlock()
}

// redactEvent scrubs secrets (configured keys, bearer tokens) from an
// event's message and string data before it is written or observed: the
// registry and the recorder scrub provider errors already, this covers any
// other text that reaches an event.
func redactEvent(e Event) Event {
	e.Message = providers.Redact(e.Message)
	var data map[string]any
	for k, v := range e.Data {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if r := providers.Redact(s); r != s {
			if data == nil {
				data = maps.Clone(e.Data)
			}
			data[k] = r
		}
	}
	if data != nil {
		e.Data = data
	}
	return e
}

// events returns the kept events (none unless keep).
func (l *eventLog) events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.kept...)
}

func (l *eventLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	l.w.Flush()
	err := l.f.Close()
	l.f, l.w = nil, nil
	return err
}

// CommittedHash returns the sealed hash that a run recorded in its events
// (the "sealed" event of Phase 1.5, written before any commander started).
// ok is false when the run directory has no such event.
func CommittedHash(runDir string) (hash string, ok bool, err error) {
	sealed, _, ok, err := CommittedHashes(runDir)
	return sealed, ok, err
}

// CommittedHashes returns the sealed hash and the task hash (of the
// decomposition) that the run recorded in its "sealed" event.
func CommittedHashes(runDir string) (sealed, task string, ok bool, err error) {
	f, err := os.Open(filepath.Join(runDir, "events.jsonl"))
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
		if h, _ := e.Data["sealed_hash"].(string); h != "" {
			t, _ := e.Data["task_hash"].(string)
			return h, t, true, nil
		}
	}
	return "", "", false, sc.Err()
}
