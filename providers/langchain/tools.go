package langchain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/swarm-dev/swarm/providers"
)

// Tool calling through langchaingo v0.1.14 (the newest on the module proxy),
// per kind:
//
//   - anthropic: tools, tool_use and tool_result are supported, but
//     langchaingo reads only the first part of an AI or tool message, so
//     each call and each result goes as its own message and mergeTurns
//     joins consecutive messages of one role on the wire.
//   - bedrock: Anthropic models only (InvokeModel with the Anthropic body:
//     tools[].input_schema, tool_use, tool_result); langchaingo sends no
//     tools for Bedrock's other model families.
//   - mistral: not through langchaingo: its Mistral SDK
//     (gage-technologies/mistral-go v1.1.0, the newest) has no tool_call_id
//     on a message, and Mistral refuses a tool result without one ("Tool
//     call id has to be defined"), nor can it read a reasoning model's
//     content chunks. Every Mistral request goes over Mistral's
//     OpenAI-style API instead (wire.go).
//   - ollama-native: not through langchaingo: its Ollama client sends no
//     tools and reads no tool_calls. Requests with tools or tool history go
//     over Ollama's OpenAI-compatible endpoint instead (wire.go).
//
// Bedrock's other model families fail with ErrToolsUnsupported
// (ClassPermanent) as soon as a request offers tools.

// ErrToolsUnsupported: the kind cannot call tools through langchaingo.
var ErrToolsUnsupported = errors.New("tool calling not supported")

// toolsUnsupported says why p cannot offer tools ("" when it can).
func (p *Provider) toolsUnsupported() string {
	if p.ref.Kind == "bedrock" {
		if f := bedrockFamily(p.ref.Model); f != "anthropic" {
			return fmt.Sprintf("langchaingo calls tools on Bedrock for Anthropic models only, not for %q models", f)
		}
	}
	return ""
}

// bedrockFamily is the model family langchaingo's Bedrock client picks for
// a model id (the same tests in the same order).
func bedrockFamily(model string) string {
	switch {
	case strings.Contains(model, ".nova-") || strings.Contains(model, "amazon.nova-"):
		return "nova"
	case strings.Contains(model, "ai21"):
		return "ai21"
	case strings.Contains(model, "amazon"):
		return "amazon"
	case strings.Contains(model, "anthropic"):
		return "anthropic"
	case strings.Contains(model, "cohere"):
		return "cohere"
	case strings.Contains(model, "meta"):
		return "meta"
	}
	first, _, _ := strings.Cut(model, ".")
	return first
}

// toolDefs turns the request's tools into langchaingo function tools. The
// backends want the parameters schema as a decoded JSON object.
func (p *Provider) toolDefs(tools []providers.Tool) ([]llms.Tool, error) {
	out := make([]llms.Tool, 0, len(tools))
	for i, t := range tools {
		params := map[string]any{}
		if len(bytes.TrimSpace(t.Parameters)) > 0 {
			if err := json.Unmarshal(t.Parameters, &params); err != nil || params == nil {
				return nil, fmt.Errorf("tools[%d] (%s): parameters: want a JSON object schema", i, t.Name)
			}
		}
		if _, ok := params["type"]; !ok {
			params["type"] = "object"
		}
		out = append(out, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return out, nil
}

// toMessages maps the conversation to langchaingo messages. Tool calls
// become llms.ToolCall parts of an AI message and tool results
// llms.ToolCallResponse parts of a tool message; results that follow one
// another (the answers to one assistant turn) share one tool message, which
// Gemini needs (one content with every functionResponse) and Bedrock gets
// anyway. langchaingo's Anthropic adapter reads only a message's first
// part, so there every call and every result is a message of its own (and
// mergeTurns joins them on the wire).
//
// A request without tools (the tool loop's last turn, which must answer)
// gets its earlier tool calls and results as text: Anthropic and Bedrock
// refuse tool_use and tool_result blocks in a request that defines no tools.
func (p *Provider) toMessages(req providers.Request) []llms.MessageContent {
	if len(req.Tools) == 0 {
		return toolsAsText(req.Messages)
	}
	onePart := p.ref.Kind == "anthropic"
	var msgs []llms.MessageContent
	for _, m := range req.Messages {
		switch m.Role {
		case providers.RoleSystem:
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, m.Content))
		case providers.RoleAssistant:
			if len(m.ToolCalls) == 0 {
				if m.Content != "" { // an empty assistant turn is refused (Anthropic: HTTP 400)
					msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeAI, m.Content))
				}
				continue
			}
			var parts []llms.ContentPart
			if m.Content != "" {
				// An empty text block is refused by Anthropic and Gemini.
				parts = append(parts, llms.TextContent{Text: m.Content})
			}
			for _, c := range m.ToolCalls {
				parts = append(parts, llms.ToolCall{ID: c.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: c.Name, Arguments: objectArgs(c.Arguments)}})
			}
			if onePart {
				for _, pt := range parts {
					msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{pt}})
				}
				continue
			}
			msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: parts})
		case providers.RoleTool:
			part := llms.ToolCallResponse{ToolCallID: m.ToolCallID, Name: m.ToolName, Content: m.Content}
			if n := len(msgs); !onePart && n > 0 && msgs[n-1].Role == llms.ChatMessageTypeTool {
				msgs[n-1].Parts = append(msgs[n-1].Parts, part)
				continue
			}
			msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{part}})
		default:
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, m.Content))
		}
	}
	return msgs
}

// toolsAsText maps the conversation with tool calls written into the
// assistant's text and the results that follow one another as one user
// message.
func toolsAsText(in []providers.Message) []llms.MessageContent {
	var msgs []llms.MessageContent
	lastTool := false
	for _, m := range in {
		role, text := llms.ChatMessageTypeHuman, m.Content
		switch m.Role {
		case providers.RoleSystem:
			role = llms.ChatMessageTypeSystem
		case providers.RoleAssistant:
			role = llms.ChatMessageTypeAI
			var b strings.Builder
			b.WriteString(m.Content)
			for _, c := range m.ToolCalls {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				fmt.Fprintf(&b, "[tool call %s (id %s): %s]", c.Name, c.ID, c.Arguments)
			}
			text = b.String()
			if text == "" {
				// An assistant turn that says nothing: an empty text block
				// is refused (Anthropic, Bedrock: HTTP 400).
				lastTool = false
				continue
			}
		case providers.RoleTool:
			text = fmt.Sprintf("[tool result of %s (id %s)]\n%s", m.ToolName, m.ToolCallID, m.Content)
			if lastTool {
				prev := msgs[len(msgs)-1].Parts[0].(llms.TextContent)
				msgs[len(msgs)-1] = llms.TextParts(role, prev.Text+"\n\n"+text)
				continue
			}
		}
		lastTool = m.Role == providers.RoleTool
		msgs = append(msgs, llms.TextParts(role, text))
	}
	return msgs
}

// objectArgs is a call's arguments as the backends that send them as an
// object (Anthropic's tool_use input, Gemini's functionCall args) can take
// them: the text itself when it is a JSON object, else "{}" (langchaingo
// fails the whole request on anything else). The model's calls in this
// package's responses are always objects, so this only bites a
// conversation written elsewhere.
func objectArgs(s string) string {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil || m == nil {
		return "{}"
	}
	return s
}

// toolCalls collects the calls of a response's choices in order; a call
// without an id (Gemini) gets call_<index> within the response.
func toolCalls(choices []*llms.ContentChoice) []providers.ToolCall {
	var out []providers.ToolCall
	for _, ch := range choices {
		for _, c := range ch.ToolCalls {
			if c.FunctionCall == nil {
				continue
			}
			out = append(out, providers.ToolCall{ID: providers.CallID(c.ID, len(out)), Name: c.FunctionCall.Name, Arguments: c.FunctionCall.Arguments})
		}
	}
	return out
}

// mergeTurns joins consecutive messages of one role in an Anthropic
// Messages API request into one message holding their content blocks in
// order: the tool_use blocks of one assistant turn in one assistant message,
// and all their tool_result blocks in the next user message, as the API
// wants. Requests with nothing to join pass unchanged.
type mergeTurns struct{ base http.RoundTripper }

func (t mergeTurns) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/messages") || r.Body == nil {
		return t.base.RoundTrip(r)
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	if merged, ok := joinTurns(b); ok {
		b = merged
	}
	if marked, ok := cacheSystem(b); ok {
		b = marked
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	r.ContentLength = int64(len(b))
	return t.base.RoundTrip(r)
}

// joinTurns rewrites an Anthropic request body whose messages have
// consecutive turns of one role; ok is false when there are none (or the
// body is not what it expects).
func joinTurns(body []byte) ([]byte, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil, false
	}
	type turn struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	var msgs []turn
	if json.Unmarshal(top["messages"], &msgs) != nil {
		return nil, false
	}
	blocks := func(c json.RawMessage) ([]json.RawMessage, bool) {
		var bs []json.RawMessage
		if json.Unmarshal(c, &bs) == nil {
			return bs, true
		}
		var s string
		if json.Unmarshal(c, &s) != nil {
			return nil, false
		}
		tb, _ := json.Marshal(map[string]string{"type": "text", "text": s})
		return []json.RawMessage{tb}, true
	}
	var out []turn
	joined := false
	for _, m := range msgs {
		n := len(out)
		if n == 0 || out[n-1].Role != m.Role {
			out = append(out, m)
			continue
		}
		prev, ok1 := blocks(out[n-1].Content)
		cur, ok2 := blocks(m.Content)
		if !ok1 || !ok2 {
			return nil, false
		}
		c, err := json.Marshal(append(prev, cur...))
		if err != nil {
			return nil, false
		}
		out[n-1].Content = c
		joined = true
	}
	if !joined {
		return nil, false
	}
	mb, err := json.Marshal(out)
	if err != nil {
		return nil, false
	}
	top["messages"] = mb
	nb, err := json.Marshal(top)
	if err != nil {
		return nil, false
	}
	return nb, true
}
