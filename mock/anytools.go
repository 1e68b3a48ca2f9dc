package mock

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/swarm-dev/swarm/providers"
)

// Tool calls for tools the mock does not know. The personas' tool plans
// (tools.go) are for the workspace's read tools; a request that offers
// none of those, only tools of its own (get_weather, lookup_order, ...),
// gets calls chosen from the tools it offers: deterministic (a function of
// the request's seed, messages and tools), with arguments generated from
// each tool's parameters schema and validated against it. Under the
// default choice ("auto") the mock calls tools once per user turn: when no
// tool result has come back since the last user message, it calls up to
// maxAnyCalls of the offered tools; after the results it answers (in the
// request's schema, when set).

// maxAnyCalls is how many tools one generic tool turn calls (distinct
// tools, fewer when fewer are offered).
const maxAnyCalls = 2

// offersWorkspaceTools reports whether req offers any of the workspace's
// read tools, the ones the personas plan calls for.
func offersWorkspaceTools(req providers.Request) bool {
	for _, t := range req.Tools {
		switch t.Name {
		case toolListDir, toolReadFile, toolGrep, toolGlob:
			return true
		}
	}
	return false
}

// calledSinceUser reports whether an assistant message with tool calls
// follows the conversation's last user message: the model has used its
// tools for this turn.
func calledSinceUser(req providers.Request) bool {
	called := false
	for _, m := range req.Messages {
		switch {
		case m.Role == providers.RoleUser:
			called = false
		case m.Role == providers.RoleAssistant && len(m.ToolCalls) > 0:
			called = true
		}
	}
	return called
}

// toolTurn is the number of assistant messages with tool calls in req
// (the first part of the ids the mock gives its calls).
func toolTurn(req providers.Request) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == providers.RoleAssistant && len(m.ToolCalls) > 0 {
			n++
		}
	}
	return n
}

// anyToolCalls returns up to n calls to distinct tools of req.Tools (only
// the tool named only, when only is not empty), the first chosen by the
// request and the others following it in the order offered. Each call's
// arguments validate against the tool's parameters; a tool whose schema
// the mock cannot satisfy is an ErrBadSchema error naming it.
func anyToolCalls(req providers.Request, only string, n int, budget *answerBudget) ([]providers.ToolCall, error) {
	var cands []int
	for i, t := range req.Tools {
		if only == "" || t.Name == only {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 || n <= 0 {
		return nil, nil
	}
	key := requestKey(req, "", seedOf(req))
	start := int(binary.BigEndian.Uint64(key[:8]) % uint64(len(cands)))
	turn := toolTurn(req)
	words := salientTerms(allText(req), 12)
	var out []providers.ToolCall
	for k := range min(n, len(cands)) {
		i := cands[(start+k)%len(cands)]
		args, err := toolArguments(req.Tools[i], words, rngFor(key, uint64(k)+0x70), budget)
		if errors.Is(err, errBusy) {
			return nil, budgetError(err)
		}
		if err != nil {
			return nil, providers.NewError(providers.ClassPermanent, fmt.Sprintf("mock: cannot call tools[%d] %q", i, req.Tools[i].Name), err)
		}
		out = append(out, providers.ToolCall{ID: fmt.Sprintf("call_%d_%d", turn, k), Name: req.Tools[i].Name, Arguments: args})
	}
	return out, nil
}

// toolArguments generates arguments for t that validate against its
// parameters schema ({} for a tool without parameters).
func toolArguments(t providers.Tool, words []string, rng *rand.Rand, budget *answerBudget) (string, error) {
	raw := t.Parameters
	if len(raw) == 0 || string(raw) == "null" {
		return "{}", nil
	}
	var nodes int
	if err := checkSchemaShape(raw, &nodes); err != nil {
		return "", fmt.Errorf("parameters: %w", err)
	}
	v, err := providers.CompileSchema(raw)
	if err != nil {
		return "", fmt.Errorf("%w: parameters: %w", ErrBadSchema, err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return "", fmt.Errorf("%w: parameters are not a JSON object: %w", ErrBadSchema, err)
	}
	g := &generator{rng: rng, words: words, root: schema, budget: budget}
	val, err := g.build(schema)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(val)
	if err := v.Validate(b); err != nil {
		return "", fmt.Errorf("%w: the mock cannot generate arguments valid against the parameters: %w", ErrBadSchema, err)
	}
	return string(b), nil
}
