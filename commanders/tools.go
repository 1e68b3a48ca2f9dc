package commanders

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/vocab"
)

// ToolSet is what an agent may call while it works: the tools offered to
// its model and their execution. An answer is the text handed back to the
// model (a refusal or a limit reached is an answer too, never an error).
// Implementations must be safe for concurrent use when shared.
type ToolSet interface {
	// Definitions are the tools offered to the model.
	Definitions() []providers.Tool
	// Call runs one tool call and returns the answer for the model.
	Call(ctx context.Context, call providers.ToolCall) string
	// Turns is how many tool turns the agent may take before it must
	// answer; 0 offers no tools.
	Turns() int
}

// TurnBound is implemented by a ToolSet that bounds the tool calls of one
// model answer: past CallsPerTurn calls, Skip answers each further call
// without running it (and without charging it to any budget), so one
// answer asking for thousands of calls cannot spend what other agents
// need.
type TurnBound interface {
	CallsPerTurn() int
	Skip(ctx context.Context, call providers.ToolCall) string
}

// WithTools returns a provider that lets p use ts: each request is sent
// with the tools offered; while the model answers with tool calls (at most
// ts.Turns() times) the calls are run in order, the model's turn and the
// results are appended to the conversation, and the model is asked again.
// The last request goes without tools, so the model must answer. The
// returned response is the final answer, with the usage and latency of
// every turn summed. A ToolSet that is also a TurnBound bounds the calls
// run per answer. A nil ts returns p.
func WithTools(p providers.Provider, ts ToolSet) providers.Provider {
	if ts == nil {
		return p
	}
	return toolLoop{p: p, ts: ts}
}

// turnLimitNote tells a model its tool turns are spent.
const turnLimitNote = vocab.ToolLimitNote + " (%d tool turns per answer). Answer now, in the required format, with what you have read."

type toolLoop struct {
	p  providers.Provider
	ts ToolSet
}

func (l toolLoop) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	msgs := slices.Clip(req.Messages) // appends never write into the caller's array
	var (
		usage   providers.Usage
		latency time.Duration
	)
	for turn := 0; ; turn++ {
		r := req
		r.Messages = msgs
		r.Tools = nil
		if turn < l.ts.Turns() {
			r.Tools = l.ts.Definitions()
		} else if turn > 0 {
			// The model wanted more tools than it may use: tell it, so it
			// answers rather than asking again (an answer, never a crash).
			r.Messages = append(msgs, providers.Message{Role: providers.RoleUser, Content: fmt.Sprintf(turnLimitNote, l.ts.Turns())})
		}
		resp, err := l.p.Complete(ctx, r)
		usage, latency = usage.Add(resp.Usage), latency+resp.Latency
		if err != nil || len(resp.ToolCalls) == 0 || len(r.Tools) == 0 {
			// An answer (or a failure). Tool calls the model made when
			// none were offered are not run: its text is the answer.
			resp.ToolCalls = nil
			resp.Usage, resp.Latency = usage, latency
			return resp, err
		}
		msgs = append(msgs, providers.AssistantToolCalls(resp))
		bound, _ := l.ts.(TurnBound)
		for i, c := range resp.ToolCalls {
			if err := ctx.Err(); err != nil {
				return providers.Response{Usage: usage, Latency: latency}, err
			}
			// Every call gets an answer (providers require one per call id);
			// the calls past the bound get a refusal and are not run.
			if bound != nil && i >= bound.CallsPerTurn() {
				msgs = append(msgs, providers.ToolResult(c, bound.Skip(ctx, c)))
				continue
			}
			msgs = append(msgs, providers.ToolResult(c, l.ts.Call(ctx, c)))
		}
	}
}
