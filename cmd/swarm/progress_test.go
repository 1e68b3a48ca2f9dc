package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/nexus"
)

// Read-tool calls in the progress view: refusals are grouped, never one
// line per call (an adversarial run printed hundreds): in a pipe a
// commander's line counts its domain's refusals by kind with an example,
// and the rest are shown per domain when the phase ends or the run does;
// the live view counts calls and refusals by kind.
func TestProgressGroupsToolRefusals(t *testing.T) {
	t.Parallel()
	plan := nexus.Plan{Domains: []string{"testing", "docs"}, Commanders: 2, Workers: 4}
	refused := func(agent, tool, path, kind string) events.Event {
		return events.Event{Kind: events.ToolCall, AgentID: agent, Data: events.ToolCallData{Tool: tool, Path: path, Refusal: kind}}
	}
	var evs []events.Event
	evs = append(evs, events.Event{Kind: events.ToolCall, AgentID: "worker-testing-01", Data: events.ToolCallData{Tool: "read_file", Path: "internal/auth/session.go", OK: true, Bytes: 900}})
	for range 40 {
		evs = append(evs, refused("worker-testing-02", "read_file", "../../etc/passwd", "escape"), refused("worker-testing-02", "read_file", ".env", "denied"))
	}
	evs = append(evs,
		events.Event{Kind: events.ToolCall, AgentID: "worker-testing-02", Data: events.ToolCallData{Tool: "grep", Pattern: "x", Refusal: "limit"}},
		refused("worker-docs-01", "read_file", "../secret", "escape"),
		events.Event{Kind: events.AgentFinish, Role: "commander", AgentID: "commander-testing", Data: events.AgentFinishData{Status: "complete"}},
		refused("worker-docs-01", "list_dir", "..", "escape"),
		events.Event{Kind: events.PhaseStart, Phase: events.Phase5, Message: "cross-review"},
		refused("judge", "read_file", "/etc/shadow", "escape"),
	)
	var pipe bytes.Buffer
	v := newProgressView(&pipe, plan, false)
	for _, e := range evs {
		v.Observe(e)
	}
	v.finish()
	out := pipe.String()
	for _, want := range []string{
		// the commander's line, with its domain's refusals by kind
		"commander testing         complete (0/2 children done, 0 failed; 81 tool calls refused: escape 40 (e.g. worker-testing-02 read_file ../../etc/passwd), denied 40 (e.g. worker-testing-02 read_file .env), limit 1 (e.g. worker-testing-02 grep x))",
		// docs' commander has not finished when phase 5 starts: its count waits for the end
		"2 tool calls refused in docs: escape 2 (e.g. worker-docs-01 read_file ../secret)",
		// an agent outside every domain
		"1 tool call refused: escape 1 (e.g. judge read_file /etc/shadow)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 4 { // the commander, phase 5, docs, the judge
		t.Errorf("%d lines for 84 refusals, want 4:\n%s", n, out)
	}
	if strings.Contains(out, "session.go") {
		t.Errorf("a line for an allowed call:\n%s", out)
	}
	var tty bytes.Buffer
	v = newProgressView(&tty, plan, true)
	for _, e := range evs {
		v.Observe(e)
	}
	v.redraw()
	if !strings.Contains(tty.String(), "tools 85 (84 refused: escape 43, denied 40, limit 1)") {
		t.Errorf("live view lacks the tool counts by kind:\n%q", tty.String())
	}
}

// Waves in the progress view: a line per wave and for the canary's verdict
// in a pipe; the live view shows the wave launched last.
func TestProgressShowsWaves(t *testing.T) {
	t.Parallel()
	plan := nexus.Plan{Domains: []string{"a", "b", "c"}, Commanders: 3, Workers: 3}
	events := []events.Event{
		{Kind: events.Wave, Data: events.WaveData{Wave: 0, Planned: 2, Size: 1, Reason: "canary", Commanders: []string{"commander-a"}}},
		{Kind: events.Canary, Message: "canary passed: 0 of 1 probe calls failed", Data: events.CanaryData{OK: true, Calls: 1}},
		{Kind: events.Wave, Data: events.WaveData{Wave: 1, Planned: 2, Size: 1, Reason: "probe", Commanders: []string{"commander-b"}}},
		{Kind: events.Wave, Data: events.WaveData{Wave: 2, Planned: 2, Size: 1, Reason: "adapt", Commanders: []string{"commander-c"}}},
	}
	var pipe bytes.Buffer
	v := newProgressView(&pipe, plan, false)
	for _, e := range events {
		v.Observe(e)
	}
	for _, want := range []string{"wave 0/2: 1 canary commander (canary)", "canary passed: 0 of 1 probe calls failed", "wave 1/2: 1 commander (probe)", "wave 2/2: 1 commander (adapt)"} {
		if !strings.Contains(pipe.String(), want) {
			t.Errorf("no line %q:\n%s", want, pipe.String())
		}
	}
	var tty bytes.Buffer
	v = newProgressView(&tty, plan, true)
	for _, e := range events {
		v.Observe(e)
	}
	v.redraw()
	if !strings.Contains(tty.String(), "wave 2/2: 1 commander") {
		t.Errorf("live view lacks the current wave:\n%q", tty.String())
	}
}

// Provider breakers in the progress view: in a pipe a line per transition
// and one per role and pair of models swapped (not one per call routed);
// the live view counts the breakers not closed and the swaps.
func TestProgressShowsBreakersAndSwaps(t *testing.T) {
	t.Parallel()
	plan := nexus.Plan{Domains: []string{"testing"}, Commanders: 1, Workers: 2}
	swap := func(id string) events.Event {
		return events.Event{Kind: events.ModelSwap, Role: "worker", AgentID: id,
			Data: events.ModelSwapData{AgentID: id, From: "openai:gpt-4.1", Reason: "breaker_open", Role: "worker", To: "mock:honest"}}
	}
	events := []events.Event{
		{Kind: events.Breaker, Data: events.BreakerData{From: "closed", Layer: "workers", Model: "openai:gpt-4.1", Reason: "failure_rate", To: "open"}},
		swap("worker-testing-01"), swap("worker-testing-02"),
		{Kind: events.Breaker, Data: events.BreakerData{From: "closed", Layer: "judge", Model: "openai:gpt-4.1", Reason: "failure_rate", To: "open"}},
		{Kind: events.Breaker, Data: events.BreakerData{From: "open", Layer: "judge", Model: "openai:gpt-4.1", Reason: "cooldown", To: "half_open"}},
		{Kind: events.Breaker, Data: events.BreakerData{From: "half_open", Layer: "judge", Model: "openai:gpt-4.1", Reason: "probes_succeeded", To: "closed"}},
	}
	var pipe bytes.Buffer
	v := newProgressView(&pipe, plan, false)
	for _, e := range events {
		v.Observe(e)
	}
	out := pipe.String()
	for _, want := range []string{"breaker openai:gpt-4.1 (workers) closed → open", "swap worker: openai:gpt-4.1 → mock:honest (breaker_open)",
		"breaker openai:gpt-4.1 (judge) half_open → closed"} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "swap "); n != 1 {
		t.Errorf("%d swap lines, want 1 (one per role and pair of models):\n%s", n, out)
	}
	var tty bytes.Buffer
	v = newProgressView(&tty, plan, true)
	for _, e := range events {
		v.Observe(e)
	}
	v.redraw()
	if !strings.Contains(tty.String(), "breakers open 1  swaps 2") {
		t.Errorf("live view lacks the breaker counts (the judge's closed again):\n%q", tty.String())
	}
}

// The resume summary says "1 answer", not "1 answers".
func TestCountNoun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 calls"}, {1, "1 call"}, {2, "2 calls"}} {
		if got := count(tc.n, "call"); got != tc.want {
			t.Errorf("count(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// The adaptive concurrency limit in the progress view: in a pipe a line per
// slow-down (not per step back up); the live view shows each model's
// current limit and ceiling.
func TestProgressShowsConcurrencyLimit(t *testing.T) {
	t.Parallel()
	plan := nexus.Plan{Domains: []string{"testing"}, Commanders: 1, Workers: 2}
	lim := func(from, to int, reason string) events.Event {
		return events.Event{Kind: events.Concurrency, Model: "openai:gpt-4.1",
			Data: events.ConcurrencyData{From: from, To: to, Max: 16, Model: "openai:gpt-4.1", Reason: reason}}
	}
	events := []events.Event{lim(16, 8, "rate_limited"), lim(8, 9, "successes"), lim(9, 8, "low_headroom")}
	var pipe bytes.Buffer
	v := newProgressView(&pipe, plan, false)
	for _, e := range events {
		v.Observe(e)
	}
	out := pipe.String()
	for _, want := range []string{"concurrency limit openai:gpt-4.1 16 → 8 of 16 (rate_limited)", "concurrency limit openai:gpt-4.1 9 → 8 of 16 (low_headroom)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "8 → 9") {
		t.Errorf("a step back up is a line:\n%s", out)
	}
	var tty bytes.Buffer
	v = newProgressView(&tty, plan, true)
	for _, e := range events {
		v.Observe(e)
	}
	v.redraw()
	if !strings.Contains(tty.String(), "limit openai:gpt-4.1 8/16") {
		t.Errorf("live view lacks the current limit:\n%q", tty.String())
	}
}
