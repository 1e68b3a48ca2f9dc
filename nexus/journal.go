package nexus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/providers"
)

// The journal (journal.jsonl in the run directory) is the run's event log
// of LLM answers: one JSON line per answer the run received (a response
// without a transport error, whether or not it then validated against its
// schema), appended before the answer is handed back to the agent that
// asked. Orchestration is deterministic given these answers, so a resumed
// run (Options.Resume) that replays them asks the same questions again and
// gets the same answers without calling anyone: see docs/resume.md.
//
// Durability: each record is one write(2) of one whole line, so a process
// killed (SIGKILL) after the write keeps the record (the page cache
// survives the process); only a crash of the machine can lose records not
// yet on disk. The file is fsync'd at every phase transition, every
// journalSyncEvery records, and when the run closes it. A torn last line
// (the machine crashed mid-write) is dropped when the journal is read back.

// JournalFile is the journal's name in the run directory.
const JournalFile = "journal.jsonl"

// journalSyncEvery is how many records may be written between two fsyncs
// (besides the fsync at every phase transition and at close).
const journalSyncEvery = 64

// ErrJournal marks a journal that cannot be read back (a bad line that is
// not the last one).
var ErrJournal = errors.New("bad journal")

// JournalRecord is one line of journal.jsonl.
type JournalRecord struct {
	Seq int64 `json:"seq"`
	// Key is the request's replay key (replayKey): its identity without
	// the model that answered, plus who asked.
	Key     string `json:"key"`
	Role    string `json:"role"`
	AgentID string `json:"agent_id"`
	// Ref is the model that answered (kind:model).
	Ref      string          `json:"ref"`
	Response JournalResponse `json:"response"`
	// Decision, set on a record that is not an answer, is a decision the
	// run took from timing and must not take again on resume (the
	// canary's verdict): its Key is decisionKeyPrefix + the decision's
	// name, and Response is empty. Never replayed as an answer.
	Decision *JournalDecision `json:"decision,omitempty"`
}

// JournalDecision is a recorded decision (DESIGN.md: decisions taken from
// timing are recorded, so replay follows the same branch).
type JournalDecision struct {
	// Name says which decision: "canary" (the probe's verdict, docs/waves.md).
	Name string `json:"name"`
	// OK is its outcome (the canary passed).
	OK bool `json:"ok"`
	// Attempt is the run's attempt that took it (1, then one more per resume).
	Attempt int `json:"attempt"`
}

// decisionKeyPrefix starts the key of a decision record; an answer's key is
// hex, so the two never meet.
const decisionKeyPrefix = "decision:"

// decisionCanary names the canary's verdict.
const decisionCanary = "canary"

// JournalResponse is an answer as the journal keeps it. Text and tool-call
// arguments are redacted as transcripts.jsonl redacts them (configured
// secrets, credential shapes and the leakage detector's patterns): an
// answer that contained a secret replays redacted.
type JournalResponse struct {
	Text         string               `json:"text"`
	ToolCalls    []providers.ToolCall `json:"tool_calls,omitempty"`
	Usage        providers.Usage      `json:"usage"`
	Model        string               `json:"model"`
	FinishReason string               `json:"finish_reason"`
	LatencyNS    int64                `json:"latency_ns"`
}

func journalResponse(resp providers.Response) JournalResponse {
	redact := func(s string) string { return redactText(providers.Redact(s)) }
	calls, _ := redactArgs(resp.ToolCalls, redact)
	return JournalResponse{Text: redact(resp.Text), ToolCalls: calls, Usage: resp.Usage,
		Model: resp.Model, FinishReason: resp.FinishReason, LatencyNS: int64(resp.Latency)}
}

// response is the journaled answer as a provider response.
func (j JournalResponse) response() providers.Response {
	return providers.Response{Text: j.Text, ToolCalls: j.ToolCalls, Usage: j.Usage, Model: j.Model,
		FinishReason: j.FinishReason, Latency: time.Duration(j.LatencyNS)}
}

// replayKey is the identity of a request for replay: its
// providers.RequestIdentity plus the caller's role and agent id; NOT the
// model it is sent to, so a request routed elsewhere (breaker, ladder,
// waves) still replays. It is a hex SHA-256, so the journal holds no
// prompt text.
func replayKey(req providers.Request) string {
	return providers.KeyOf(struct {
		Role    string `json:"role"`
		AgentID string `json:"agent_id"`
		providers.RequestIdentity
	}{req.Caller.Role, req.Caller.AgentID, providers.IdentityOf(req)})
}

// journalLoad is what reading a journal back found.
type journalLoad struct {
	Records int  // good answer records read (decisions are not counted)
	Torn    bool // a torn last line was dropped (and cut off the file)
}

// journal is the open journal.jsonl: the records read back at open, queued
// per key for replay, and the file new records are appended to.
type journal struct {
	mu       sync.Mutex
	log      *rundir.Log // nil once closed
	seq      int64
	unsynced int
	queue    map[string][]JournalRecord // key -> journaled answers not yet replayed, in journal order
	// decided holds the decisions read back (by name, the latest first
	// taken): a resumed run does not take them again.
	decided map[string]JournalDecision
	err     error // the first write error: nothing is appended after it
	// onFail is told the first write error: the run stops (a resume could
	// not trust a journal that misses answers the run went on with).
	onFail func(error)
}

// openJournal opens (creating) the journal at path and reads back the
// records it holds. A torn last line (no newline, or not valid JSON) is
// dropped and cut off the file, so appends start after the last good
// record; a bad line before it is an error naming the file and line.
func openJournal(path string) (*journal, journalLoad, error) {
	var load journalLoad
	f, err := rundir.OpenLogRW(path, 0o600)
	if err != nil {
		return nil, load, err
	}
	j := &journal{queue: map[string][]JournalRecord{}, decided: map[string]JournalDecision{}}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, load, fmt.Errorf("read %s: %w", path, err)
	}
	recs, good, torn, err := parseJournal(filepath.Base(path), data)
	if err != nil {
		f.Close()
		return nil, load, err
	}
	if torn {
		if err := f.Truncate(int64(good)); err != nil {
			f.Close()
			return nil, load, fmt.Errorf("%s: cut the torn last line: %w", path, err)
		}
		load.Torn = true
	}
	if j.log, err = rundir.NewLog(f); err != nil {
		f.Close()
		return nil, load, err
	}
	for _, r := range recs {
		j.seq = max(j.seq, r.Seq)
		if r.Decision != nil {
			if _, seen := j.decided[r.Decision.Name]; !seen {
				j.decided[r.Decision.Name] = *r.Decision
			}
			continue
		}
		j.queue[r.Key] = append(j.queue[r.Key], r)
		load.Records++
	}
	return j, load, nil
}

// parseJournal reads the records of data; good is the length of the prefix
// holding them (where a torn last line starts), torn says one was dropped.
func parseJournal(name string, data []byte) (recs []JournalRecord, good int, torn bool, err error) {
	line := 0
	for off := 0; off < len(data); {
		line++
		end := bytes.IndexByte(data[off:], '\n')
		last := end < 0 || off+end+1 == len(data)
		var text []byte
		if end < 0 {
			text = data[off:]
		} else {
			text = data[off : off+end]
		}
		var r JournalRecord
		bad := end < 0 // no newline: the write was cut short
		if !bad {
			if uerr := json.Unmarshal(text, &r); uerr != nil {
				bad = true
				if !last {
					return nil, 0, false, fmt.Errorf("%w: %s line %d: %v", ErrJournal, name, line, uerr)
				}
			} else if r.Key == "" {
				if !last {
					return nil, 0, false, fmt.Errorf("%w: %s line %d: a record without a key", ErrJournal, name, line)
				}
				bad = true
			}
		}
		if bad {
			return recs, off, true, nil
		}
		recs = append(recs, r)
		off += end + 1
		good = off
	}
	return recs, good, false, nil
}

// take returns the next journaled answer for key, in journal order, and
// removes it from the queue.
func (j *journal) take(key string) (JournalRecord, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	q := j.queue[key]
	if len(q) == 0 {
		return JournalRecord{}, false
	}
	r := q[0]
	if len(q) == 1 {
		delete(j.queue, key)
	} else {
		j.queue[key] = q[1:]
	}
	return r, true
}

// append writes one answer as one line with one write(2), and fsyncs every
// journalSyncEvery records.
func (j *journal) append(key string, caller providers.Caller, ref string, resp providers.Response) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.writeLocked(JournalRecord{Key: key, Role: caller.Role, AgentID: caller.AgentID, Ref: ref, Response: journalResponse(resp)})
}

// decide records a decision (d.Name) and fsyncs it: a resume reads it
// back (decision) instead of taking it again. Only the first record of a
// name counts when read back; a name already decided is not written again.
func (j *journal) decide(d JournalDecision) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.decided[d.Name]; ok {
		return
	}
	j.decided[d.Name] = d
	j.writeLocked(JournalRecord{Key: decisionKeyPrefix + d.Name, Role: "nexus", AgentID: "nexus", Decision: &d})
	j.syncLocked()
}

// decision returns the decision name a previous attempt recorded.
func (j *journal) decision(name string) (JournalDecision, bool) {
	if j == nil {
		return JournalDecision{}, false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	d, ok := j.decided[name]
	return d, ok
}

// writeLocked writes rec (numbered) as one line with one write(2): the one
// write path of every record. j.mu is held.
func (j *journal) writeLocked(rec JournalRecord) {
	if j.log == nil || j.err != nil {
		return
	}
	j.seq++
	rec.Seq = j.seq
	b, err := json.Marshal(rec)
	if err != nil {
		j.failLocked(fmt.Errorf("%s: record %d: %w", JournalFile, j.seq, err))
		return
	}
	if !j.log.WriteLine(append(b, '\n')) {
		j.failLocked(j.log.Err())
		return
	}
	j.unsynced++
	if j.unsynced >= journalSyncEvery {
		j.syncLocked()
	}
}

// sync flushes the journal to disk (a phase transition).
func (j *journal) sync() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.syncLocked()
}

func (j *journal) syncLocked() {
	if j.log == nil || j.unsynced == 0 {
		return
	}
	if err := j.log.Sync(); err != nil {
		j.failLocked(err)
	}
	j.unsynced = 0
}

// failLocked keeps the first write error and tells onFail. j.mu is held.
func (j *journal) failLocked(err error) {
	if j.err != nil {
		return
	}
	j.err = err
	if j.onFail != nil {
		j.onFail(err)
	}
}

// failed is the first write error (nil: none).
func (j *journal) failed() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

func (j *journal) close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.log == nil {
		return j.err
	}
	j.unsynced++ // always sync at close
	j.syncLocked()
	if err := j.log.Close(); err != nil && j.err == nil {
		j.err = err
	}
	j.log = nil
	return j.err
}

// answeredByKey carries, down a call's context, where the recorder notes
// which model answered (the routing layer may send a request to a
// fallback): the journal records that model.
type answeredByKey struct{}

type answeredBy struct {
	mu  sync.Mutex
	ref string
}

func noteAnsweredBy(ctx context.Context, ref providers.Ref) {
	if a, ok := ctx.Value(answeredByKey{}).(*answeredBy); ok {
		a.mu.Lock()
		a.ref = ref.String()
		a.mu.Unlock()
	}
}

// replaying wraps the provider routing chose for an agent's calls with the
// replay layer: a request the journal holds an answer for is answered from
// it (recorded as a replayed llm_call, with the original answer's tokens,
// cost and latency), whichever model gave it; any other request goes on to
// p and its answer is journaled before it is handed back.
func (pp *providerPool) replaying(ref providers.Ref, p providers.Provider) providers.Provider {
	j := pp.journal
	if j == nil {
		return p
	}
	return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		key := replayKey(req)
		if rec, ok := j.take(key); ok {
			from, err := providers.ParseRef(rec.Ref)
			if err != nil {
				from = ref
			}
			resp := rec.Response.response()
			return pp.record(ctx, from, req, resp, nil, resp.Latency, true)
		}
		by := &answeredBy{ref: ref.String()}
		resp, err := p.Complete(context.WithValue(ctx, answeredByKey{}, by), req)
		if err == nil {
			by.mu.Lock()
			answered := by.ref
			by.mu.Unlock()
			j.append(key, req.Caller, answered, resp)
		}
		return resp, err
	})
}
