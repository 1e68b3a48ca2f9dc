package langchain

import (
	"encoding/json"
)

// cacheSystem marks an Anthropic request's system prompt as the prompt's
// cacheable prefix: "system": "text" becomes one text block with
// "cache_control": {"type": "ephemeral"}. swarm's system prompt is the part
// of every request that agents of a role share byte for byte (the shared
// preamble, the role's instructions, the output schema; the agent's own
// brief and data come after, in the user turn), so Anthropic's prompt cache
// serves it to every agent of the role after the first. langchaingo v0.1.14
// sends the system prompt as a plain string and drops a CachedContent
// wrapper on it, hence the rewrite on the wire. ok is false when the body
// has no string system prompt (it is left alone).
func cacheSystem(body []byte) ([]byte, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil, false
	}
	var sys string
	if raw, has := top["system"]; !has || json.Unmarshal(raw, &sys) != nil || sys == "" {
		return nil, false
	}
	blocks, err := json.Marshal([]map[string]any{{"type": "text", "text": sys, "cache_control": map[string]string{"type": "ephemeral"}}})
	if err != nil {
		return nil, false
	}
	top["system"] = blocks
	out, err := json.Marshal(top)
	if err != nil {
		return nil, false
	}
	return out, true
}
