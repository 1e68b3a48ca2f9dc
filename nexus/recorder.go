package nexus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/providers"
)

// recorder is where a run's record goes: the phase it is in (and the phase
// an interruption found it in), the events (events.jsonl and the
// observers) and the transcripts (transcripts.jsonl).
type recorder struct {
	// secrets is the run's secret set (configured keys): every record
	// scrubs it (nil in tests that need none: credential shapes only).
	secrets     *redact.Secrets
	events      *eventLog
	transcripts *transcriptLog
	journal     *journal // fsync'd at every phase transition; nil in tests that need none

	mu            sync.Mutex
	cur           events.Phase
	open          []events.Phase // entered and not yet left (4, 5 and 6 overlap)
	interruptedIn events.Phase
	done          <-chan struct{}         // the context of the call under way (Seal, Run)
	stop          context.CancelCauseFunc // stops the call under way (guard)
}

func (r *recorder) emit(e events.Event) { r.events.emit(e) }

// scrub removes the run's secrets and every credential from s (nil
// recorder: credential shapes only).
func (r *recorder) scrub(s string) string {
	if r == nil {
		return redact.String(s)
	}
	return r.secrets.String(s)
}

// phase is the phase entered last.
func (r *recorder) phase() events.Phase {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

// phaseOf is the phase ctx was tagged with (withPhase), else the phase
// entered last.
func (r *recorder) phaseOf(ctx context.Context) events.Phase {
	if p, ok := ctx.Value(phaseKey{}).(events.Phase); ok {
		return p
	}
	return r.phase()
}

// watch makes the recorder note the phase the run is in when done closes
// (an interruption): the first phase change after it (or the run's end)
// records the earliest phase still open then. While 4, 5 and 6 overlap,
// that is the phase whose work was cut off first, whichever was entered
// last.
func (r *recorder) watch(done <-chan struct{}) {
	r.mu.Lock()
	r.done = done
	r.mu.Unlock()
}

func (r *recorder) enter(phase events.Phase, msg string) {
	r.mu.Lock()
	r.noteInterruption()
	r.cur = phase
	r.open = append(r.open, phase)
	r.mu.Unlock()
	r.journal.sync()
	r.emit(events.Event{Phase: phase, Kind: events.PhaseStart, Message: msg})
}

// leave ends phase; data is its phase_end payload (nil for none).
func (r *recorder) leave(phase events.Phase, data events.Payload) {
	r.mu.Lock()
	r.noteInterruption()
	r.open = slices.DeleteFunc(r.open, func(p events.Phase) bool { return p == phase })
	r.mu.Unlock()
	r.journal.sync()
	r.emit(events.Event{Phase: phase, Kind: events.PhaseEnd, Data: data})
}

// noteInterruption records, once done has closed, the earliest phase open
// (else the phase entered last). r.mu is held.
func (r *recorder) noteInterruption() {
	if r.interruptedIn != "" {
		return
	}
	select {
	case <-r.done:
	default:
		return
	}
	r.interruptedIn = r.cur
	for _, p := range r.open {
		if phaseRank(p) < phaseRank(r.interruptedIn) {
			r.interruptedIn = p
		}
	}
}

// phaseRank orders phases as the pipeline runs them.
func phaseRank(p events.Phase) int {
	return slices.Index(events.Phases(), p)
}

// ended returns the phase the run is in and the one it was interrupted in
// ("" when it was not).
func (r *recorder) ended() (phase, interruptedIn events.Phase) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.noteInterruption()
	return r.cur, r.interruptedIn
}

// close closes the journal and the logs and returns the first write to
// any of them that failed.
func (r *recorder) close() error {
	return firstErr(r.journal.close(), r.transcripts.close(), r.events.close())
}

// guard returns ctx made to stop when a write the run cannot go on without
// fails (the journal: a resume could not trust it), and the function that
// releases it.
func (r *recorder) guard(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	r.mu.Lock()
	r.stop = cancel
	r.mu.Unlock()
	return ctx, func() { cancel(nil) }
}

// writeFailed stops the run under way (guard) because a write failed.
func (r *recorder) writeFailed(err error) {
	r.mu.Lock()
	stop := r.stop
	r.mu.Unlock()
	if stop != nil {
		stop(fmt.Errorf("%w: %w", ErrWrite, err))
	}
}

// firstErr is the first error that is not nil.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Transcript is one LLM call with its prompt and answer, stored in
// transcripts.jsonl so events.jsonl stays small.
type Transcript struct {
	Seq      int64               `json:"seq"`
	Role     string              `json:"role"`
	AgentID  string              `json:"agent_id"`
	Model    string              `json:"model"`
	Schema   string              `json:"schema,omitempty"`
	Messages []providers.Message `json:"messages"`
	Answer   string              `json:"answer,omitempty"`
	// ToolCalls are the tool calls the answer made (a turn of the agent's
	// tool loop); their results are the tool messages of the next call's
	// Messages, cut on disk at maxTranscriptToolResult bytes (redactTranscript).
	ToolCalls []providers.ToolCall `json:"tool_calls,omitempty"`
	Error     string               `json:"error,omitempty"`
}

// maxTranscriptToolResult caps a tool result as transcripts.jsonl keeps it:
// the model saw all of it, the record keeps its start (a file's content is
// in the workspace, not worth copying into every later turn's transcript).
const maxTranscriptToolResult = 2048

type transcriptLog struct {
	mu       sync.Mutex
	log      *rundir.Log // nil once closed
	closeErr error       // what closing the log returned
	seq      int64
	// prompts keeps every prompt of the run in memory for the leak scan
	// (only when keepPrompts is set: tests and audits).
	keepPrompts bool
	prompts     []Transcript
	line        lineEncoder // encodes each line (under mu)
	// secrets is the run's secret set, scrubbed on disk.
	secrets *redact.Secrets
}

func newTranscriptLog(path string, keep bool) (*transcriptLog, error) {
	f, err := rundir.OpenLog(path, 0o600)
	if err != nil {
		return nil, err
	}
	log, err := rundir.NewLog(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &transcriptLog{log: log, keepPrompts: keep}, nil
}

func (t *transcriptLog) write(tr Transcript) int64 {
	// On disk, secrets are redacted (an agent's answer may hold a
	// credential); in memory (keepPrompts) the calls stay as they were.
	// The pass runs before the lock is taken: calls finishing together
	// scrub their transcripts side by side and queue only to write.
	disk := redactTranscript(t.secrets, tr)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	tr.Seq, disk.Seq = t.seq, t.seq
	if t.log != nil {
		if b, err := t.line.encode(disk); err == nil {
			t.log.WriteLine(b)
		}
	}
	if t.keepPrompts {
		t.prompts = append(t.prompts, tr)
	}
	return tr.Seq
}

// sync flushes transcripts.jsonl to disk and returns its first failure.
func (t *transcriptLog) sync() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.log == nil {
		return t.closeErr
	}
	return t.log.Sync()
}

func (t *transcriptLog) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.log == nil {
		return t.closeErr
	}
	t.closeErr = t.log.Close()
	t.log = nil
	return t.closeErr
}

// recordHook is the record layer of model ref's stack (stack.go): every
// attempt of a call becomes an llm_call event and a transcript line, and
// feeds the run's usage accounting.
//
// Defence in depth for secrets: the registry already scrubs every
// provider's errors, and the recorder scrubs again, with the value of every
// api_key_env the config names, what it returns and what it writes.
func (pp *providerPool) recordHook(ref providers.Ref) providers.Hook {
	sec := pp.rec.secrets
	return providers.HookFuncs{AfterFunc: func(ctx context.Context, c *providers.Call) {
		err := providers.RedactError(sec, c.Err)
		resp := redactAnswer(sec, c.Request.Caller.Role, c.Response)
		lat := c.Latency
		if resp.Latency > 0 {
			// The provider's own measure: the same whether the answer is
			// fresh or (with its original latency) from a cache, and free of
			// whatever wraps the provider.
			lat = resp.Latency
		}
		c.Response, c.Err = pp.record(ctx, c, ref, resp, err, lat, false)
	}}
}

// record makes one call (req answered by ref with resp or err, in lat) an
// llm_call event and a transcript line, and feeds the run's usage
// accounting. A fresh call (recorded) and a replayed one (the journal's
// answer, replayed) are recorded alike; replayed says which. It returns
// the answer as checked against the call's schema (the outcome is also
// reported on c.Validation) and the call's error. The event's phase is the
// call's (c.Phase).
func (pp *providerPool) record(ctx context.Context, c *providers.Call, ref providers.Ref, resp providers.Response, err error, lat time.Duration, replayed bool) (providers.Response, error) {
	req := c.Request
	if replayed {
		pp.replayedCalls.Add(1)
	} else {
		pp.freshCalls.Add(1)
	}
	// Kept as the call was (in memory, for audits); transcripts.jsonl gets
	// redactTranscript's copy.
	tr := Transcript{Role: req.Caller.Role, AgentID: req.Caller.AgentID, Model: ref.String(), Messages: req.Messages, Answer: resp.Text,
		ToolCalls: resp.ToolCalls}
	if req.Schema != nil {
		tr.Schema = req.Schema.Name
	}
	if err != nil {
		tr.Error = err.Error()
	}
	seq := pp.rec.transcripts.write(tr)
	cerr := err
	// net/http reports a cancelled request with the context's cause
	// ("interrupt signal received"), not context.Canceled, so ask the
	// context too.
	cancelled := err != nil && (errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled))
	switch {
	case cancelled:
		cerr = nil // our own cancellation (Ctrl-C, cost ceiling) is not a provider failure
	case cerr == nil:
		// Validated once, here: the Structured call this answer returns
		// to reuses the outcome.
		resp, cerr = providers.CheckOutput(req, resp)
		c.Validation = resp.Validation
	}
	phase := events.Phase(c.Phase) // the call's event and any ceiling event it causes say the same phase
	cost, unpriced := pp.meter.account(phase, ref, req.Caller.Role, resp.Usage, lat, cerr)
	u := resp.Usage
	data := events.CallData{
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		ReasoningTokens: u.ReasoningTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
		LatencyMS: float64(lat.Microseconds()) / 1000, Unpriced: unpriced, Transcript: seq,
		Outcome: "ok", Cached: resp.Cached, Schema: tr.Schema, ToolCalls: len(resp.ToolCalls), Replayed: replayed,
	}
	if !unpriced {
		data.CostUSD = &cost
	}
	switch {
	case cancelled:
		data.Outcome = "cancelled"
	case err != nil:
		data.Outcome = "error"
		data.FailureClass = string(providers.ClassOf(err))
		data.RetryAfterMS = providers.RetryAfterOf(err).Milliseconds()
	case cerr != nil:
		data.Outcome = "invalid_output"
		data.FailureClass = string(providers.ClassOf(cerr))
	}
	pp.rec.emit(events.Event{Phase: phase, Kind: events.LLMCall, Role: req.Caller.Role, AgentID: req.Caller.AgentID, Model: ref.String(), Data: data})
	return resp, err
}

// redactArgs returns calls with redact applied to their arguments (a model
// may grep for a credential it saw), copying only when something changed,
// and whether it did.
func redactArgs(calls []providers.ToolCall, redact func(string) string) ([]providers.ToolCall, bool) {
	var out []providers.ToolCall
	for i, c := range calls {
		if a := redact(c.Arguments); a != c.Arguments {
			if out == nil {
				out = slices.Clone(calls)
			}
			out[i].Arguments = a
		}
	}
	if out == nil {
		return calls, false
	}
	return out, true
}

// redactToolCalls returns calls with sec's secrets removed from their
// arguments (calls itself when there were none).
func redactToolCalls(sec *redact.Secrets, calls []providers.ToolCall) []providers.ToolCall {
	out, _ := redactArgs(calls, sec.String)
	return out
}

// redactMessages returns msgs with sec's secrets scrubbed, copying only when
// something changed.
func redactMessages(sec *redact.Secrets, msgs []providers.Message) []providers.Message {
	var out []providers.Message
	for i, m := range msgs {
		c := sec.String(m.Content)
		calls, changed := redactArgs(m.ToolCalls, sec.String)
		if c != m.Content || changed {
			if out == nil {
				out = slices.Clone(msgs)
			}
			out[i].Content, out[i].ToolCalls = c, calls
		}
	}
	if out == nil {
		return msgs
	}
	return out
}
