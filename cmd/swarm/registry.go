package main

import (
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/mock"
)

// newRegistry registers every provider kind swarm ships.
func newRegistry() *providers.Registry {
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{})
	return reg
}
