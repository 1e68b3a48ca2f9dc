package nexus

import (
	"context"
	"reflect"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/internal/rundir"
)

type phaseKey struct{}

// withPhase tags ctx with the phase its work belongs to. Phases 4, 5 and 6
// run side by side, so the phase entered last does not say which one an LLM
// call or a review belongs to.
func withPhase(ctx context.Context, phase events.Phase) context.Context {
	return context.WithValue(ctx, phaseKey{}, phase)
}

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
	observers []events.Observer
	keep      bool
	kept      []events.Event
	closeErr  error       // what closing the log returned
	line      lineEncoder // encodes each line (under mu)
	// secrets is the run's secret set, scrubbed from every event (nil:
	// credential shapes only).
	secrets *redact.Secrets
}

func newEventLog(path string, now func() time.Time, keep bool, obs ...events.Observer) (*eventLog, error) {
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

func (l *eventLog) emit(e events.Event) {
	// The fields are scrubbed before the lock is taken (the pass needs no
	// seq or time): events emitted together scrub side by side.
	e = redactEvent(l.secrets, e)
	l.mu.Lock()
	l.seq++
	e.Seq = l.seq
	if e.Time.IsZero() {
		e.Time = l.now()
	}
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
func redactEvent(sec *redact.Secrets, e events.Event) events.Event {
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
		e.Data = c.Interface().(events.Payload)
	}
	return e
}

// events returns the kept events (none unless keep).
func (l *eventLog) events() []events.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]events.Event(nil), l.kept...)
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
