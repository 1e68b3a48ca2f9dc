package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/swarm-dev/swarm/providers"
)

// chatMessages maps the conversation to go-openai's messages: an assistant
// message's tool calls become tool_calls (type function, arguments as the
// model wrote them) and a tool result carries the tool_call_id it answers.
// An empty assistant message (no content, no tool calls) is not sent.
func chatMessages(msgs []providers.Message) []goopenai.ChatCompletionMessage {
	out := make([]goopenai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == providers.RoleAssistant && m.Content == "" && len(m.ToolCalls) == 0 {
			// An assistant turn with neither content nor tool calls goes
			// out as {"role":"assistant"}, which strict servers refuse
			// (HTTP 400); it says nothing, so it is left out.
			continue
		}
		cm := goopenai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
		if m.Role == providers.RoleTool {
			cm.ToolCallID = m.ToolCallID
		}
		for _, tc := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, goopenai.ToolCall{ID: tc.ID, Type: goopenai.ToolTypeFunction,
				Function: goopenai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
		out = append(out, cm)
	}
	return out
}

// noParameters is the schema sent for a tool that declares none: OpenAI
// wants an object schema on every function.
var noParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// chatTools maps tools to go-openai function tools. A tool's parameters are
// sent in strict mode, rewritten by providers.StrictSchema as response
// schemas are, when the schema allows it (see strictable); otherwise they
// are sent as written, without strict. In strict mode an optional parameter
// becomes "T or null", so the model may send null for an argument it leaves
// out: a tool must read null as absent.
func chatTools(tools []providers.Tool) ([]goopenai.Tool, error) {
	out := make([]goopenai.Tool, 0, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("tools[%d]: name is empty", i)
		}
		raw := t.Parameters
		if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
			raw = noParameters
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("tool %s: parameters: %w", t.Name, err)
		}
		if _, ok := v.(map[string]any); !ok {
			return nil, fmt.Errorf("tool %s: parameters must be a JSON schema object", t.Name)
		}
		fd := &goopenai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: raw}
		if v.(map[string]any)["type"] == "object" && strictable(v) {
			s, err := providers.StrictSchema(raw)
			if err != nil {
				return nil, fmt.Errorf("tool %s: %w", t.Name, err)
			}
			fd.Parameters, fd.Strict = s, true
		}
		out = append(out, goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: fd})
	}
	return out, nil
}

// notStrict are the keywords whose meaning strict mode cannot express:
// composition it rejects and objects open to other keys.
var notStrict = map[string]bool{
	"allOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
	"dependentRequired": true, "dependentSchemas": true, "patternProperties": true,
}

// strictable reports whether a parameters schema (whose top level must
// also say type object) keeps its meaning under strict mode: every object lists its properties and admits no others
// (strict mode forces additionalProperties false, which would turn a
// free-form object into one that takes no arguments at all), and no
// keyword of notStrict is used anywhere.
func strictable(v any) bool {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if !strictable(e) {
				return false
			}
		}
	case map[string]any:
		for k := range x {
			if notStrict[k] {
				return false
			}
		}
		_, hasProps := x["properties"].(map[string]any)
		ap, hasAP := x["additionalProperties"]
		if hasAP && ap != false {
			return false
		}
		if typ, _ := x["type"].(string); typ == "object" && !hasProps && !hasAP {
			return false
		}
		for k, c := range x {
			switch k {
			case "enum", "const", "default", "examples", "description", "title":
				continue // values, not schemas
			case "properties", "$defs", "definitions":
				m, _ := c.(map[string]any)
				for _, s := range m {
					if !strictable(s) {
						return false
					}
				}
				continue
			}
			if !strictable(c) {
				return false
			}
		}
	}
	return true
}
