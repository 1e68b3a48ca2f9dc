// Package builtin registers every provider kind swarm ships: the mock, the
// OpenAI-style kinds, Gemini (google, vertex) and the langchaingo kinds. It
// is the one list of them (the CLI's registry, and tests that need every
// kind).
package builtin

import (
	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/google"
	"github.com/swarm-dev/swarm/providers/langchain"
	"github.com/swarm-dev/swarm/providers/openai"
)

// Registry returns a registry of every kind swarm ships; the mock kind is
// built with mockOpts. A provider built without a Redactor of its own
// (KindConfig.Redactor: a run hands in its set) scrubs its errors with
// internal/redact's pass over its key and every credential shape
// (NewRedactor).
func Registry(mockOpts mock.Options) *providers.Registry {
	reg := &providers.Registry{NewRedactor: NewRedactor}
	mock.Register(reg, mockOpts)
	openai.Register(reg)
	google.Register(reg)
	langchain.Register(reg)
	return reg
}

// NewRedactor is internal/redact's pass over values (a provider's key, a
// run's keys) and every credential shape, as a providers.Redactor.
func NewRedactor(values ...string) providers.Redactor { return redact.NewSecrets(values...) }
