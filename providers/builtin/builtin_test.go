package builtin

import (
	"testing"

	"github.com/swarm-dev/swarm/mock"
)

// Every kind swarm ships is in the registry, the mock among them.
func TestRegistryHasEveryShippedKind(t *testing.T) {
	t.Parallel()
	reg := Registry(mock.Options{})
	for _, kind := range []string{"mock", "openai", "azure", "ollama", "vllm", "lmstudio", "openai-compatible",
		"anthropic", "google", "vertex", "mistral", "bedrock", "ollama-native"} {
		if !reg.Has(kind) {
			t.Errorf("kind %s is not registered", kind)
		}
	}
}
