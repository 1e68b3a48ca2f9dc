// Package builtin registers every provider kind swarm ships: the mock, the
// OpenAI-style kinds, Gemini (google, vertex) and the langchaingo kinds. It
// is the one list of them (the CLI's registry, and tests that need every
// kind).
package builtin

import (
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/google"
	"github.com/swarm-dev/swarm/providers/langchain"
	"github.com/swarm-dev/swarm/providers/openai"
)

// Registry returns a registry of every kind swarm ships; the mock kind is
// built with mockOpts.
func Registry(mockOpts mock.Options) *providers.Registry {
	reg := &providers.Registry{}
	mock.Register(reg, mockOpts)
	openai.Register(reg)
	google.Register(reg)
	langchain.Register(reg)
	return reg
}
