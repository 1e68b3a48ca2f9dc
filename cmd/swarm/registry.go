package main

import (
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/langchain"
	"github.com/swarm-dev/swarm/providers/mock"
	"github.com/swarm-dev/swarm/providers/openai"
)

// newRegistry registers every provider kind swarm ships.
func newRegistry() *providers.Registry {
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{})
	openai.Register(reg)
	langchain.Register(reg)
	return reg
}
