package nexus

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/workspace"
)

// A tool turn in transcripts.jsonl: tool results are kept cut (the model
// saw them whole), secrets are removed from results and from the calls'
// arguments (of the request's messages and of the answer), and the
// caller's messages are never modified.
func TestTranscriptToolMessages(t *testing.T) {
	t.Parallel()
	const key = "AKIAIOSFODNN7EXAMPLE"
	big := strings.Repeat("x", 5000)
	calls := []providers.ToolCall{{ID: "c1", Name: "grep", Arguments: `{"pattern":"` + key + `"}`}}
	msgs := []providers.Message{
		{Role: providers.RoleUser, Content: "review the code"},
		{Role: providers.RoleAssistant, ToolCalls: calls},
		{Role: providers.RoleTool, ToolCallID: "c1", ToolName: "grep", Content: "aws_access_key_id = " + key + " " + big},
	}
	b, got := onDisk(t, Transcript{Role: "worker", Messages: redactMessages(nil, msgs), ToolCalls: redactToolCalls(nil, calls)})
	if bytes.Contains(b, []byte(key)) {
		t.Errorf("a secret reached transcripts.jsonl: %s", b)
	}
	if n := len(got.Messages[2].Content); n > maxTranscriptToolResult+64 || !strings.Contains(got.Messages[2].Content, "bytes cut]") {
		t.Errorf("tool result kept at %d bytes, want it cut near %d with a note", n, maxTranscriptToolResult)
	}
	if len(got.ToolCalls) != 1 || got.ToolCalls[0].ID != "c1" || got.Messages[2].ToolCallID != "c1" {
		t.Errorf("tool call ids lost: %+v", got)
	}
	if !strings.Contains(msgs[1].ToolCalls[0].Arguments, key) || len(msgs[2].Content) < 5000 {
		t.Error("the caller's messages were modified")
	}
	// Without anything to cut or redact the slice is returned as it is.
	clean := []providers.Message{{Role: providers.RoleTool, Content: `{"ok":true}`}, {Role: providers.RoleAssistant, ToolCalls: []providers.ToolCall{{ID: "a", Arguments: "{}"}}}}
	if got := redactMessages(nil, clean); &got[0] != &clean[0] {
		t.Error("clean messages were copied")
	}
}

// The per-role tool counts of telemetry: calls, refusals by kind, bytes.
func TestMeterToolStats(t *testing.T) {
	t.Parallel()
	m := newMeter(nil, 0, nil)
	if m.toolStats() != nil {
		t.Fatal("tool stats present before any tool call: absent, not zero, is the rule")
	}
	m.noteTool("worker", workspaceOutcome("read_file", true, "", 120))
	m.noteTool("worker", workspaceOutcome("read_file", false, "escape", 0))
	m.noteTool("worker", workspaceOutcome("grep", false, "limit", 0))
	m.noteTool("commander", workspaceOutcome("list_dir", true, "", 0))
	got := m.toolStats()
	w := got["worker"]
	if w.Calls != 3 || w.Refused != 2 || w.Bytes != 120 || w.ByTool["read_file"] != 2 || w.Refusals["escape"] != 1 || w.Refusals["limit"] != 1 {
		t.Errorf("worker stats %+v", w)
	}
	if c := got["commander"]; c.Calls != 1 || c.Refused != 0 || c.Refusals != nil {
		t.Errorf("commander stats %+v", c)
	}
	got["worker"].ByTool["grep"] = 99
	if m.toolStats()["worker"].ByTool["grep"] != 1 {
		t.Error("toolStats returned the meter's own map")
	}
}

func workspaceOutcome(tool string, ok bool, refusal string, bytes int) workspace.Outcome {
	return workspace.Outcome{Tool: tool, OK: ok, Refusal: refusal, Bytes: bytes}
}

// onDisk writes tr as the recorder does (recorded's redaction already
// applied by the caller) and returns transcripts.jsonl and its record.
func onDisk(t *testing.T, tr Transcript) ([]byte, Transcript) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "transcripts.jsonl")
	log, err := newTranscriptLog(path, false)
	if err != nil {
		t.Fatal(err)
	}
	log.write(tr)
	if err := log.close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got Transcript
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	return b, got
}

// A secret across the cut of a tool result is redacted whole, not cut
// first and then missed by the patterns: no start of it is kept. Both
// redactors count: a provider key (providers.Redact) and an AWS key (the
// leak detector).
func TestTranscriptToolResultCutAfterRedaction(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"sk-abcdefghijklmnopqrstuv", "AKIAIOSFODNN7EXAMPLE"} {
		content := strings.Repeat("x", maxTranscriptToolResult-9) + " " + key + " " + strings.Repeat("y", 100)
		msgs := []providers.Message{{Role: providers.RoleTool, ToolCallID: "c1", Content: content}}
		b, got := onDisk(t, Transcript{Role: "worker", Messages: redactMessages(nil, msgs)})
		if bytes.Contains(b, []byte(key[:8])) || !strings.Contains(got.Messages[0].Content, "bytes cut]") {
			c := got.Messages[0].Content
			t.Errorf("tool result kept as %q, want it cut with no part of %s", c[max(0, len(c)-60):], key)
		}
	}
}
