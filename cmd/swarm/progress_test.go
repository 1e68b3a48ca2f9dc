package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/nexus"
)

// Read-tool calls in the progress view: an escape or a denied file gets a
// line of its own in a pipe; the live view counts calls and refusals.
func TestProgressShowsToolCalls(t *testing.T) {
	plan := nexus.Plan{Domains: []string{"testing"}, Commanders: 1, Workers: 2}
	events := []nexus.Event{
		{Kind: nexus.EvToolCall, AgentID: "worker-testing-01", Data: nexus.ToolCallData{Tool: "read_file", Path: "internal/auth/session.go", OK: true, Bytes: 900}},
		{Kind: nexus.EvToolCall, AgentID: "worker-testing-02", Data: nexus.ToolCallData{Tool: "read_file", Path: "../../etc/passwd", Refusal: "escape"}},
		{Kind: nexus.EvToolCall, AgentID: "worker-testing-02", Data: nexus.ToolCallData{Tool: "grep", Pattern: "x", Refusal: "limit"}},
	}
	var pipe bytes.Buffer
	v := newProgressView(&pipe, plan, false)
	for _, e := range events {
		v.Observe(e)
	}
	out := pipe.String()
	if !strings.Contains(out, "refused worker-testing-02 read_file ../../etc/passwd (escape)") {
		t.Errorf("no line for the escape attempt:\n%s", out)
	}
	if strings.Contains(out, "session.go") || strings.Contains(out, "(limit)") {
		t.Errorf("a line for an allowed call or a limit:\n%s", out)
	}
	var tty bytes.Buffer
	v = newProgressView(&tty, plan, true)
	for _, e := range events {
		v.Observe(e)
	}
	v.redraw()
	if !strings.Contains(tty.String(), "tools 3 (2 refused)") {
		t.Errorf("live view lacks the tool counts:\n%q", tty.String())
	}
}
