package commanders

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// fakeTools answers every call with "<name>(<arguments>)" and records the
// calls in order.
type fakeTools struct {
	turns int
	mu    sync.Mutex
	calls []string
}

func (f *fakeTools) Definitions() []providers.Tool {
	return []providers.Tool{{Name: "read_file", Description: "read", Parameters: []byte(`{"type":"object"}`)}}
}

func (f *fakeTools) Call(_ context.Context, c providers.ToolCall) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c.ID)
	return fmt.Sprintf("%s(%s)", c.Name, c.Arguments)
}

func (f *fakeTools) Turns() int { return f.turns }

// scripted answers the i-th request with answers[i] and keeps every request.
type scripted struct {
	answers []providers.Response
	errs    []error
	reqs    []providers.Request
}

func (s *scripted) Complete(_ context.Context, req providers.Request) (providers.Response, error) {
	i := len(s.reqs)
	s.reqs = append(s.reqs, req)
	var err error
	if i < len(s.errs) {
		err = s.errs[i]
	}
	return s.answers[i], err
}

func toolTurn(ids ...string) providers.Response {
	r := providers.Response{FinishReason: providers.FinishToolCalls, Usage: providers.Usage{InputTokens: 10, OutputTokens: 2}, Latency: 5}
	for _, id := range ids {
		r.ToolCalls = append(r.ToolCalls, providers.ToolCall{ID: id, Name: "read_file", Arguments: `{"path":"` + id + `"}`})
	}
	return r
}

func TestWithToolsRunsTheLoop(t *testing.T) {
	t.Parallel()
	final := providers.Response{Text: `{"ok":true}`, FinishReason: providers.FinishStop, Usage: providers.Usage{InputTokens: 30, OutputTokens: 7}, Latency: 11}
	tests := []struct {
		name      string
		turns     int
		answers   []providers.Response
		wantTools []bool   // whether each request offered tools
		wantCalls []string // tool calls run, in order
		wantUsage providers.Usage
	}{
		{"no tool calls: the first answer is final", 3,
			[]providers.Response{final}, []bool{true}, nil, providers.Usage{InputTokens: 30, OutputTokens: 7}},
		{"parallel calls run in order, then the answer", 3,
			[]providers.Response{toolTurn("a", "b"), toolTurn("c"), final}, []bool{true, true, true}, []string{"a", "b", "c"},
			providers.Usage{InputTokens: 50, OutputTokens: 11}},
		{"after the turn limit the request goes without tools", 1,
			[]providers.Response{toolTurn("a"), final}, []bool{true, false}, []string{"a"},
			providers.Usage{InputTokens: 40, OutputTokens: 9}},
		{"zero turns never offers tools", 0,
			[]providers.Response{final}, []bool{false}, nil, providers.Usage{InputTokens: 30, OutputTokens: 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &scripted{answers: tc.answers}
			ts := &fakeTools{turns: tc.turns}
			req := providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: "go"}}}
			resp, err := WithTools(p, ts).Complete(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			var offered []bool
			for _, r := range p.reqs {
				offered = append(offered, len(r.Tools) > 0)
			}
			if diff := cmp.Diff(tc.wantTools, offered); diff != "" {
				t.Errorf("tools offered per request (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCalls, ts.calls); diff != "" {
				t.Errorf("calls run (-want +got):\n%s", diff)
			}
			if resp.Text != final.Text || resp.Usage != tc.wantUsage || len(resp.ToolCalls) != 0 {
				t.Errorf("final = %q usage %+v calls %d, want %q usage %+v and no calls", resp.Text, resp.Usage, len(resp.ToolCalls), final.Text, tc.wantUsage)
			}
			if len(req.Messages) != 1 {
				t.Errorf("the caller's request grew to %d messages", len(req.Messages))
			}
		})
	}
}

// The conversation a model sees on its second turn: its own tool calls,
// then one result per call, quoting the call's id and tool name.
func TestWithToolsAppendsCallsAndResults(t *testing.T) {
	t.Parallel()
	p := &scripted{answers: []providers.Response{toolTurn("a", "b"), {Text: "done"}}}
	if _, err := WithTools(p, &fakeTools{turns: 2}).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: "go"}}}); err != nil {
		t.Fatal(err)
	}
	want := []providers.Message{
		{Role: providers.RoleUser, Content: "go"},
		{Role: providers.RoleAssistant, ToolCalls: toolTurn("a", "b").ToolCalls},
		{Role: providers.RoleTool, Content: `read_file({"path":"a"})`, ToolCallID: "a", ToolName: "read_file"},
		{Role: providers.RoleTool, Content: `read_file({"path":"b"})`, ToolCallID: "b", ToolName: "read_file"},
	}
	if diff := cmp.Diff(want, p.reqs[1].Messages); diff != "" {
		t.Errorf("second turn's messages (-want +got):\n%s", diff)
	}
}

// A model that used every tool turn is told so on the last request, which
// offers no tools; a model that never called a tool gets no such note.
func TestWithToolsTellsTheModelTheLimit(t *testing.T) {
	t.Parallel()
	p := &scripted{answers: []providers.Response{toolTurn("a"), {Text: "done"}}}
	if _, err := WithTools(p, &fakeTools{turns: 1}).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: "go"}}}); err != nil {
		t.Fatal(err)
	}
	last := p.reqs[1].Messages[len(p.reqs[1].Messages)-1]
	if last.Role != providers.RoleUser || !strings.HasPrefix(last.Content, "Limit reached: no more tool calls (1 tool turns") {
		t.Errorf("last message of the final request = %+v, want the limit note", last)
	}
	p = &scripted{answers: []providers.Response{{Text: "done"}}}
	if _, err := WithTools(p, &fakeTools{turns: 0}).Complete(t.Context(), providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: "go"}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(p.reqs[0].Messages); n != 1 {
		t.Errorf("no tools at all: %d messages sent, want the caller's one", n)
	}
}

// A failing turn ends the loop with the error and the usage spent so far;
// tool calls made when none were offered are not run.
func TestWithToolsFailureAndUnofferedCalls(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	p := &scripted{answers: []providers.Response{toolTurn("a"), {Usage: providers.Usage{InputTokens: 1}}}, errs: []error{nil, boom}}
	resp, err := WithTools(p, &fakeTools{turns: 3}).Complete(t.Context(), providers.Request{})
	if !errors.Is(err, boom) || resp.Usage.InputTokens != 11 {
		t.Errorf("got err %v usage %+v, want boom after 11 input tokens", err, resp.Usage)
	}
	ts := &fakeTools{turns: 0}
	p = &scripted{answers: []providers.Response{toolTurn("x")}}
	resp, err = WithTools(p, ts).Complete(t.Context(), providers.Request{})
	if err != nil || len(ts.calls) != 0 || len(resp.ToolCalls) != 0 {
		t.Errorf("unoffered calls: err %v, ran %v, returned %v; want none run or returned", err, ts.calls, resp.ToolCalls)
	}
}

func TestWithToolsStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ts := &fakeTools{turns: 2}
	_, err := WithTools(&scripted{answers: []providers.Response{toolTurn("a")}}, ts).Complete(ctx, providers.Request{})
	if !errors.Is(err, context.Canceled) || len(ts.calls) != 0 {
		t.Errorf("got %v after %d calls, want context.Canceled before any call", err, len(ts.calls))
	}
}

func TestWithToolsNilToolSetIsTheProvider(t *testing.T) {
	t.Parallel()
	p := &scripted{}
	if got := WithTools(p, nil); got != providers.Provider(p) {
		t.Errorf("WithTools(p, nil) = %T, want p itself", got)
	}
}

// boundTools is fakeTools bounding the calls of one answer (TurnBound).
type boundTools struct {
	fakeTools
	perTurn int
	skipped []string
}

func (b *boundTools) CallsPerTurn() int { return b.perTurn }

func (b *boundTools) Skip(_ context.Context, c providers.ToolCall) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.skipped = append(b.skipped, c.ID)
	return "skipped " + c.ID
}

// TestWithToolsBoundsCallsPerTurn: one answer asking for 20 000 parallel
// tool calls gets the first CallsPerTurn run and every other one answered
// (each call id needs a result) by Skip, not run; on main all 20 000 ran,
// spending the run's tool budget for every other agent.
func TestWithToolsBoundsCallsPerTurn(t *testing.T) {
	t.Parallel()
	ids := make([]string, 20000)
	for i := range ids {
		ids[i] = fmt.Sprintf("c%05d", i)
	}
	final := providers.Response{Text: `{"ok":true}`, FinishReason: providers.FinishStop}
	p := &scripted{answers: []providers.Response{toolTurn(ids...), toolTurn("again"), final}}
	ts := &boundTools{fakeTools: fakeTools{turns: 3}, perTurn: 4}
	if _, err := WithTools(p, ts).Complete(t.Context(), providers.Request{}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"c00000", "c00001", "c00002", "c00003", "again"}, ts.calls); d != "" {
		t.Errorf("calls run (-want +got):\n%s", d)
	}
	if len(ts.skipped) != 20000-4 || ts.skipped[0] != "c00004" {
		t.Errorf("%d calls skipped (first %v), want 19996 from c00004", len(ts.skipped), ts.skipped[:1])
	}
	// The second request carries one result per call of the first answer.
	results := 0
	for _, m := range p.reqs[1].Messages {
		if m.Role == providers.RoleTool {
			results++
		}
	}
	if results != 20000 {
		t.Errorf("%d tool results sent back, want 20000 (one per call id)", results)
	}
}
