package nexus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
}

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
	Records int  // good records read
	Torn    bool // a torn last line was dropped (and cut off the file)
}

// journal is the open journal.jsonl: the records read back at open, queued
// per key for replay, and the file new records are appended to.
type journal struct {
	mu       sync.Mutex
	f        *os.File
	seq      int64
	unsynced int
	queue    map[string][]JournalRecord // key -> journaled answers not yet replayed, in journal order
	err      error                      // the first write error (the run goes on; resume then asks again)
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
	j := &journal{f: f, queue: map[string][]JournalRecord{}}
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
	for _, r := range recs {
		j.queue[r.Key] = append(j.queue[r.Key], r)
		j.seq = max(j.seq, r.Seq)
	}
	load.Records = len(recs)
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

// append writes one record as one line with one write(2), and fsyncs every
// journalSyncEvery records.
func (j *journal) append(key string, caller providers.Caller, ref string, resp providers.Response) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return
	}
	j.seq++
	b, err := json.Marshal(JournalRecord{Seq: j.seq, Key: key, Role: caller.Role, AgentID: caller.AgentID, Ref: ref, Response: journalResponse(resp)})
	if err == nil {
		_, err = j.f.Write(append(b, '\n'))
	}
	if err != nil {
		if j.err == nil {
			j.err = err
		}
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
	if j.f == nil || j.unsynced == 0 {
		return
	}
	if err := j.f.Sync(); err != nil && j.err == nil {
		j.err = err
	}
	j.unsynced = 0
}

func (j *journal) close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return j.err
	}
	j.unsynced++ // always sync at close
	j.syncLocked()
	err := j.f.Close()
	j.f = nil
	if j.err != nil {
		return j.err
	}
	return err
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
