package providers

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Tool is a function the model may call. Parameters is the JSON schema of
// its arguments (an object schema).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ToolCall is one call the model made. Arguments is the JSON text the model
// wrote for the tool's parameters, as it wrote it: it may be invalid, and
// the tool (not the adapter) answers that with an error the model can read.
// ID is the wire format's call id (made up by the adapter with CallID when the
// format has none); the result message quotes it back.
//
// Signature is opaque data the provider attached to the call and wants back
// verbatim when the call is replayed in a later turn (Gemini's
// thoughtSignature, without which a thinking model's next turn fails); only
// the adapter that set it reads it.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Signature []byte `json:"signature,omitempty"`
}

// CallID is the id of the i-th call of a response: id itself, or, when the
// wire format gave none, the deterministic call_<i>.
func CallID(id string, i int) string {
	if id != "" {
		return id
	}
	return "call_" + strconv.Itoa(i)
}

// AssistantToolCalls is the assistant message that records resp's tool
// calls in the conversation, ahead of their results.
func AssistantToolCalls(resp Response) Message {
	return Message{Role: RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls}
}

// ToolResult is the message answering call with content.
func ToolResult(call ToolCall, content string) Message {
	return Message{Role: RoleTool, Content: content, ToolCallID: call.ID, ToolName: call.Name}
}

// CallNames lists the names of the tools calls call, for messages: "a, b".
func CallNames(calls []ToolCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
