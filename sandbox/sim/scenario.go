// Package sim is the sandbox's simulation engine: scripted agents on a
// network, epochs × steps, proposals resolved by the counterparty's policy,
// governance levers, per-epoch metrics, scenarios from YAML, replays and
// parameter sweeps. Same seed, same output.
package sim

import (
	"bytes"
	"fmt"
	"os"

	"github.com/goccy/go-yaml"

	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/sandbox/agents"
	"github.com/swarm-dev/swarm/sandbox/governance"
)

// Scenario is a scenario YAML file.
type Scenario struct {
	ScenarioID      string               `yaml:"scenario_id"`
	Description     string               `yaml:"description"`
	Agents          []AgentGroup         `yaml:"agents"`
	Simulation      Simulation           `yaml:"simulation"`
	Governance      governance.Config    `yaml:"governance"`
	Payoff          sandbox.PayoffConfig `yaml:"payoff"`
	Proxy           sandbox.ProxyConfig  `yaml:"proxy"`
	Network         Network              `yaml:"network"`
	RateLimits      RateLimits           `yaml:"rate_limits"`
	SuccessCriteria SuccessCriteria      `yaml:"success_criteria"`
	Outputs         Outputs              `yaml:"outputs"`
}

// AgentGroup is count agents of one type.
type AgentGroup struct {
	Type   string        `yaml:"type"`
	Count  int           `yaml:"count"`
	Params agents.Params `yaml:"params"`
	// Allies makes the group's adversaries coordinate.
	Allies bool `yaml:"allies"`
}

// Simulation sets the run's shape.
type Simulation struct {
	Epochs              int     `yaml:"epochs"`
	StepsPerEpoch       int     `yaml:"steps_per_epoch"`
	Seed                int64   `yaml:"seed"`
	Scheduling          string  `yaml:"scheduling"`           // round_robin (default), random, priority
	AcceptanceThreshold float64 `yaml:"acceptance_threshold"` // global p̄: accept only if p ≥ p̄ (0: off)
}

// Network is the interaction topology.
type Network struct {
	Topology string  `yaml:"topology"` // complete (default), ring, star, random, small_world, scale_free
	P        float64 `yaml:"p"`        // random: edge probability; small_world: rewiring probability
	K        int     `yaml:"k"`        // small_world: neighbours per side
	M        int     `yaml:"m"`        // scale_free: edges per new node
}

// RateLimits cap interactions.
type RateLimits struct {
	PerAgentPerEpoch int `yaml:"per_agent_per_epoch"` // 0: unlimited
}

// SuccessCriteria are checked at the end (zero values are not checked,
// except where a pointer is set).
type SuccessCriteria struct {
	MaxToxicity   *float64 `yaml:"max_toxicity"`
	MinWelfare    *float64 `yaml:"min_welfare"`
	MinQualityGap *float64 `yaml:"min_quality_gap"`
	// MaxQualityGap: the quality gap must be at most this; a negative limit
	// asserts adverse selection (accepted work worse than rejected).
	MaxQualityGap    *float64 `yaml:"max_quality_gap"`
	MaxUncertainFrac *float64 `yaml:"max_uncertain_fraction"`
}

// Outputs select what `swarm sandbox run` writes.
type Outputs struct {
	Plots  *bool `yaml:"plots"`
	Events *bool `yaml:"events"`
}

// Defaults fills unset values.
func (s *Scenario) Defaults() {
	if s.Simulation.Epochs == 0 {
		s.Simulation.Epochs = 20
	}
	if s.Simulation.StepsPerEpoch == 0 {
		s.Simulation.StepsPerEpoch = 10
	}
	if s.Simulation.Scheduling == "" {
		s.Simulation.Scheduling = "round_robin"
	}
	if s.Network.Topology == "" {
		s.Network.Topology = "complete"
	}
}

// Validate checks the scenario.
func (s *Scenario) Validate() error {
	if s.ScenarioID == "" {
		return fmt.Errorf("scenario_id is required")
	}
	if len(s.Agents) == 0 {
		return fmt.Errorf("agents: at least one group is required")
	}
	n := 0
	for i, g := range s.Agents {
		if g.Count <= 0 {
			return fmt.Errorf("agents[%d].count must be positive", i)
		}
		known := false
		for _, t := range agents.Types {
			known = known || t == g.Type
		}
		if !known {
			return fmt.Errorf("agents[%d].type %q: want one of %v", i, g.Type, agents.Types)
		}
		if err := g.Params.Validate(); err != nil {
			return fmt.Errorf("agents[%d].%w", i, err)
		}
		if g.Params.AllyPreference != nil && (!g.Allies || (g.Type != agents.Adversarial && g.Type != agents.Adaptive)) {
			return fmt.Errorf("agents[%d].params.ally_preference: only for adversarial or adaptive_adversary groups with allies: true", i)
		}
		n += g.Count
	}
	if n < 2 {
		return fmt.Errorf("agents: at least two agents are needed to interact")
	}
	switch s.Simulation.Scheduling {
	case "round_robin", "random", "priority":
	default:
		return fmt.Errorf("simulation.scheduling %q: want round_robin, random or priority", s.Simulation.Scheduling)
	}
	switch s.Network.Topology {
	case "complete", "ring", "star", "random", "small_world", "scale_free":
	default:
		return fmt.Errorf("network.topology %q: want complete, ring, star, random, small_world or scale_free", s.Network.Topology)
	}
	if t := s.Simulation.AcceptanceThreshold; t < 0 || t > 1 {
		return fmt.Errorf("simulation.acceptance_threshold %v: want 0..1", t)
	}
	if _, err := sandbox.NewProxy(s.Proxy); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	return nil
}

// DefaultScenario has default payoff and proxy, ready for YAML on top.
func DefaultScenario() Scenario {
	return Scenario{Payoff: sandbox.DefaultPayoffConfig(), Proxy: sandbox.DefaultProxyConfig()}
}

// ParseScenario decodes a scenario strictly (unknown keys are errors naming
// file, line and key) over the defaults.
func ParseScenario(name string, data []byte) (Scenario, error) {
	s := DefaultScenario()
	dec := yaml.NewDecoder(bytes.NewReader(data), yaml.Strict(), yaml.DisallowUnknownField())
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("%s:%s", name, yaml.FormatError(err, false, false))
	}
	s.Defaults()
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// LoadScenario reads and parses a scenario file.
func LoadScenario(path string) (Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, err
	}
	return ParseScenario(path, b)
}
