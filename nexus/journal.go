package nexus

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
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
	// MAC is the record's HMAC-SHA256 (hex) under the user's journal key,
	// chained to the record before (journal_mac.go); always the last field
	// of the line. Empty in a journal from before journal MACs.
	MAC string `json:"mac,omitempty"`
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

func journalResponse(sec *redact.Secrets, resp providers.Response) JournalResponse {
	redactText := redactText(sec)
	calls, _ := redactArgs(resp.ToolCalls, redactText)
	return JournalResponse{Text: redactText(resp.Text), ToolCalls: calls, Usage: resp.Usage,
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
	// Unsigned is how many records carried no MAC and were accepted
	// unverified (--trust-unsigned-journal).
	Unsigned int
}

// maxJournalLine bounds one line of the journal (one answer, its text and
// tool calls). A journal may hold any number of lines: it is read line by
// line, never whole. A last line over the bound is a torn tail (dropped
// without being held in memory); one before the last is damage.
const maxJournalLine = 32 << 20

// journal is the open journal.jsonl: the records read back at open, queued
// per key for replay, and the file new records are appended to, each
// signed (journal_mac.go) and chained to the one before.
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

	// secrets is the run's secret set, scrubbed from every answer kept.
	secrets *redact.Secrets

	key   *journalKey // signs new records (nil: unsigned, only in tests of the file format)
	runID string
	prev  string      // the MAC of the last record
	line  lineEncoder // encodes each record (under mu)
}

// journalOpen says how a journal is verified and signed: under key, for
// the run runID; trustUnsigned accepts records from before journal MACs
// (ResumeOptions.TrustUnsignedJournal).
type journalOpen struct {
	key           *journalKey
	runID         string
	trustUnsigned bool
}

func (jo journalOpen) verifier() *journalVerifier {
	return &journalVerifier{key: jo.key, runID: jo.runID, trustUnsigned: jo.trustUnsigned}
}

// openJournal opens (creating) the journal at path and reads back the
// records it holds, verifying each one's MAC and its place in the chain
// (ErrJournalTampered, ErrJournalUnsigned, naming file, line and seq). A
// torn last line (no newline, or not valid JSON) is dropped and cut off
// the file, so appends start after the last good record; a bad line before
// it is an error naming the file and line.
func openJournal(path string, jo journalOpen) (*journal, journalLoad, error) {
	var load journalLoad
	f, err := rundir.OpenLogRW(path, 0o600)
	if err != nil {
		return nil, load, err
	}
	j := &journal{queue: map[string][]JournalRecord{}, decided: map[string]JournalDecision{}, key: jo.key, runID: jo.runID}
	v := jo.verifier()
	good, _, torn, err := scanJournal(f, filepath.Base(path), v, func(r JournalRecord) {
		j.seq = max(j.seq, r.Seq)
		if r.Decision != nil {
			if _, seen := j.decided[r.Decision.Name]; !seen {
				j.decided[r.Decision.Name] = *r.Decision
			}
			return
		}
		j.queue[r.Key] = append(j.queue[r.Key], r)
		load.Records++
	})
	if err != nil {
		f.Close()
		return nil, load, err
	}
	if torn {
		if err := f.Truncate(good); err != nil {
			f.Close()
			return nil, load, fmt.Errorf("%s: cut the torn last line: %w", path, err)
		}
		load.Torn = true
	}
	if j.log, err = rundir.NewLog(f); err != nil {
		f.Close()
		return nil, load, err
	}
	j.prev, load.Unsigned = v.prev, v.unsigned
	return j, load, nil
}

// scanJournal reads the records of r (the journal, named name in errors)
// one line at a time, checking each with v (nil: not verified) and handing
// it to keep. good is the length of the prefix holding the records (where
// a torn last line starts), torn says one was dropped.
func scanJournal(r io.Reader, name string, v *journalVerifier, keep func(JournalRecord)) (good int64, records int, torn bool, err error) {
	// Large reads: a torn tail of gigabytes is skipped at disk speed. A
	// file known to be smaller (a new run's empty journal) gets a buffer
	// of its size, not a megabyte to clear and collect.
	size := 1 << 20
	if st, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Size() < int64(size) {
			size = max(4096, int(fi.Size())+1)
		}
	}
	br := bufio.NewReaderSize(r, size)
	var buf []byte
	for line := 1; ; line++ {
		text, n, complete, over, rerr := readJournalLine(br, buf[:0], maxJournalLine)
		buf = text
		if rerr != nil {
			return 0, 0, false, fmt.Errorf("read %s: %w", name, rerr)
		}
		if n == 0 {
			return good, records, false, nil
		}
		if !complete { // no newline: the write was cut short
			return good, records, true, nil
		}
		_, perr := br.Peek(1)
		last := perr == io.EOF
		var rec JournalRecord
		var bad error
		switch {
		case over:
			bad = fmt.Errorf("longer than the limit of %d bytes", maxJournalLine)
		default:
			if uerr := json.Unmarshal(text, &rec); uerr != nil {
				bad = uerr
			} else if rec.Key == "" {
				bad = errors.New("a record without a key")
			}
		}
		if bad != nil {
			if last {
				return good, records, true, nil
			}
			return 0, 0, false, fmt.Errorf("%w: %s line %d: %v", ErrJournal, name, line, bad)
		}
		if err := v.check(name, line, rec.Seq, text); err != nil {
			return 0, 0, false, err
		}
		if keep != nil {
			keep(rec)
		}
		records++
		good += n
	}
}

// readJournalLine reads one line of br into buf (without its newline): n
// is the bytes it took (newline included), complete says a newline ended
// it, over that it was longer than limit (then text is not kept and the
// rest of the line is skipped without being held in memory).
func readJournalLine(br *bufio.Reader, buf []byte, limit int) (text []byte, n int64, complete, over bool, err error) {
	for {
		chunk, rerr := br.ReadSlice('\n')
		n += int64(len(chunk))
		if !over {
			if len(buf)+len(chunk) > limit+1 {
				over, buf = true, buf[:0]
			} else {
				if len(buf)+len(chunk) > cap(buf) { // double: a long line costs at most twice its length in allocations
					buf = append(make([]byte, 0, max(2*cap(buf), len(buf)+len(chunk))), buf...)
				}
				buf = append(buf, chunk...)
			}
		}
		switch {
		case rerr == nil:
			if !over {
				buf = buf[:len(buf)-1]
			}
			return buf, n, true, over, nil
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		case rerr == io.EOF:
			return buf, n, false, over, nil
		default:
			return buf, n, false, over, rerr
		}
	}
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
	j.writeLocked(JournalRecord{Key: key, Role: caller.Role, AgentID: caller.AgentID, Ref: ref, Response: journalResponse(j.secrets, resp)})
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
	b, err := j.line.encode(rec) // the record's JSON and a newline
	if err != nil {
		j.failLocked(fmt.Errorf("%s: record %d: %w", runfiles.JournalFile, j.seq, err))
		return
	}
	mac := ""
	if j.key != nil {
		b, mac = j.key.sign(j.runID, j.prev, b[:len(b)-1])
		b = append(b, '\n')
	}
	if !j.log.WriteLine(b) {
		j.failLocked(j.log.Err())
		return
	}
	if mac != "" {
		j.prev = mac
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

// replayHook is the replay layer of a role's stack (stack.go): a request
// the journal holds an answer for is answered from it in Before (recorded
// as a replayed llm_call, with the original answer's tokens, cost and
// latency, under the model that gave it); any other request goes on to
// routing, and its answer is journaled in After, under the model that
// answered (Call.Ref), before it is handed back.
type replayHook struct{ pp *providerPool }

func (h replayHook) Before(_ context.Context, c *providers.Call) (providers.Response, bool, error) {
	c.Key = replayKey(c.Request)
	rec, ok := h.pp.journal.take(c.Key)
	if !ok {
		return providers.Response{}, false, nil
	}
	if from, err := providers.ParseRef(rec.Ref); err == nil {
		c.Ref = from
	}
	return rec.Response.response(), true, nil
}

func (h replayHook) After(ctx context.Context, c *providers.Call) {
	switch {
	case c.AnsweredBy == layerReplay:
		c.Response, c.Err = h.pp.record(ctx, c, c.Ref, c.Response, nil, c.Response.Latency, true)
	case c.Err == nil:
		h.pp.journal.append(c.Key, c.Request.Caller, c.Ref.String(), c.Response)
	}
}
