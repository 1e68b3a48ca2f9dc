package openai

import (
	"encoding/json"

	"github.com/swarm-dev/swarm/providers"
)

// StrictSchema rewrites a JSON schema for OpenAI's strict structured output;
// see providers.StrictSchema.
func StrictSchema(raw json.RawMessage) (json.RawMessage, error) {
	return providers.StrictSchema(raw)
}
