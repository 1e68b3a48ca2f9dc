package main

import (
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/builtin"
)

// newRegistry registers every provider kind swarm ships.
func newRegistry() *providers.Registry { return builtin.Registry(mock.Options{}) }
