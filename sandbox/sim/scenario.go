// Package sim is the sandbox's simulation engine: scripted agents on a
// network, epochs × steps, proposals resolved by the counterparty's policy,
// governance levers, per-epoch metrics, scenarios from YAML, replays and
// parameter sweeps. Same seed, same output.
package sim

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/internal/yamlx"
	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/sandbox/agents"
	"github.com/swarm-dev/swarm/sandbox/governance"
)

// Upper bounds of a scenario's sizes (docs/sandbox.md lists them).
const (
	MaxAgents        = 1_000_000 // in all groups together
	MaxEpochs        = 100_000   // simulation.epochs (and --epochs)
	MaxStepsPerEpoch = 100_000   // simulation.steps_per_epoch
	MaxReplays       = 10_000    // swarm sandbox run --replays
	MaxSweepRuns     = 10_000    // a sweep's points × seeds
)

// DefaultMemoryBudget is the memory a simulation may be estimated to need
// before Run refuses it (Options.MemoryBudget, --memory-budget-mb raise it).
const DefaultMemoryBudget = 2 << 30

// ErrTooBig is returned by Run, before anything is allocated, for a
// scenario whose memory estimate exceeds the budget.
var ErrTooBig = errors.New("scenario too big for the memory budget")

// Estimate is what a run of a scenario is expected to hold in memory.
type Estimate struct {
	Agents int64
	Edges  int64 // directed edges stored (0 for a complete network: implicit)
	Pairs  int64 // pairs of agents whose history is kept (history levers, trust acceptance)
	Bytes  int64
}

// Bytes per agent (its state and scripted agent, its id, the governance
// maps, its rows in the engine's tables), per stored directed edge (the
// CSR entry plus the edge list it is built from) and per pair of agents
// whose history is kept (pair counts, counterparts and pair payoffs, or
// the trust book). Measured: docs/sandbox.md, "Scale".
const (
	estBytesPerAgent = 1536
	estBytesPerEdge  = 16
	estBytesPerPair  = 400
	estBytesFixed    = 64 << 20 // metrics histograms, p samples, runtime, GC headroom
)

// EstimateMemory estimates the memory of a run of s over epochs epochs
// (0: the scenario's). It does not allocate.
func EstimateMemory(s Scenario, epochs int) Estimate {
	s.Defaults()
	if epochs <= 0 {
		epochs = s.Simulation.Epochs
	}
	n := 0.0
	for _, g := range s.Agents {
		n += math.Max(0, float64(g.Count))
	}
	var edges float64
	switch s.Network.Topology {
	case "ring":
		edges = 2 * n
	case "star":
		edges = 2 * math.Max(0, n-1)
	case "random":
		p := s.Network.P
		if p <= 0 {
			p = 0.3
		}
		edges = p * n * (n - 1)
	case "small_world":
		edges = 2 * n * math.Max(1, float64(s.Network.K))
	case "scale_free":
		edges = 2 * n * math.Max(1, float64(s.Network.M))
	default: // complete: implicit
	}
	if s.Network.Topology != "complete" {
		edges = math.Max(edges, 2*n) // isolated nodes get one neighbour
	}
	var pairs float64
	if s.Governance.Collusion.Enabled || s.Governance.Sybil.Enabled || s.Simulation.Acceptance == AcceptTrust {
		possible := edges / 2
		if s.Network.Topology == "complete" {
			possible = n * (n - 1) / 2
		}
		pairs = math.Min(possible, float64(epochs)*math.Max(0, float64(s.Simulation.StepsPerEpoch))*n)
	}
	bytes := estBytesFixed + n*estBytesPerAgent + edges*estBytesPerEdge + pairs*estBytesPerPair + float64(epochs)*256
	const huge = float64(1 << 62)
	return Estimate{Agents: int64(n), Edges: int64(math.Min(edges, huge)), Pairs: int64(math.Min(pairs, huge)), Bytes: int64(math.Min(bytes, huge))}
}

// CheckMemory returns ErrTooBig when a run of s over epochs epochs (0: the
// scenario's) is estimated to need more than budget bytes (0:
// DefaultMemoryBudget).
func CheckMemory(s Scenario, epochs int, budget int64) error {
	if budget <= 0 {
		budget = DefaultMemoryBudget
	}
	s.Defaults()
	if e := EstimateMemory(s, epochs); e.Bytes > budget {
		return fmt.Errorf("%w: %d agents on a %s network (%d stored edges, %d pair histories) would need about %d MB, above the budget of %d MB: use fewer agents, a sparser topology or fewer steps, or raise the budget",
			ErrTooBig, e.Agents, s.Network.Topology, e.Edges, e.Pairs, e.Bytes>>20, budget>>20)
	}
	return nil
}

// estBytesPerEvent is the size of one interaction's line in events.jsonl
// with its reputation changes (measured: 233 bytes a line for 400 000
// interactions of 100 000 honest agents; a million agents' longer ids add
// a few bytes), estBytesPerAgentLine that of an agent's line (73 measured).
const (
	estBytesPerEvent     = 240
	estBytesPerAgentLine = 80
)

// EstimateEventBytes bounds the size of the events.jsonl a run of s over
// epochs epochs (0: the scenario's) writes: a line per agent and at most
// one interaction per agent and step. It is 0 when the scenario turns
// events off.
func EstimateEventBytes(s Scenario, epochs int) (interactions, bytes int64) {
	s.Defaults()
	if s.Outputs.Events != nil && !*s.Outputs.Events {
		return 0, 0
	}
	if epochs <= 0 {
		epochs = s.Simulation.Epochs
	}
	var n int64
	for _, g := range s.Agents {
		n += int64(max(0, g.Count))
	}
	interactions = n * int64(max(0, epochs)) * int64(max(0, s.Simulation.StepsPerEpoch))
	return interactions, interactions*estBytesPerEvent + n*estBytesPerAgentLine
}

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
	// Economy wires the virtual-agent-economy mechanisms into the loop
	// (nil: none; the run is then exactly as without this key).
	Economy *Economy `yaml:"economy"`
}

// AgentGroup is count agents of one type.
type AgentGroup struct {
	Type   string        `yaml:"type"`
	Count  int           `yaml:"count"`
	Params agents.Params `yaml:"params"`
	// Allies makes the group's adversaries coordinate.
	Allies bool `yaml:"allies"`
	// InitiationProbability overrides simulation.initiation_probability
	// for this group.
	InitiationProbability *float64 `yaml:"initiation_probability"`
}

// Simulation sets the run's shape.
type Simulation struct {
	Epochs              int     `yaml:"epochs"`
	StepsPerEpoch       int     `yaml:"steps_per_epoch"`
	Seed                int64   `yaml:"seed"`
	Scheduling          string  `yaml:"scheduling"`           // round_robin (default), random, priority
	AcceptanceThreshold float64 `yaml:"acceptance_threshold"` // global p̄: accept only if p ≥ p̄ (0: off)
	// InitiationProbability is the probability that an agent proposes an
	// interaction at a step (absent: 1, every agent at every step; the
	// reference's honest agent proposes with 0.4).
	InitiationProbability *float64 `yaml:"initiation_probability"`
	// Acceptance is how a counterparty decides: policy (default) or trust.
	Acceptance string `yaml:"acceptance"`
	// TrustThreshold is the trust an initiator needs under acceptance:
	// trust (absent: DefaultTrustThreshold).
	TrustThreshold *float64 `yaml:"trust_threshold"`
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
	// Collusion asserts what the collusion detector found.
	Collusion *CollusionCriteria `yaml:"collusion"`
	// Economy asserts the economy's metrics.
	Economy *EconomyCriteria `yaml:"economy"`
}

// CollusionCriteria assert what the collusion detector flagged over the
// run, about a coalition: the agents of the groups with allies: true
// ("allies") or of one agent type. Each limit is checked only when set;
// at least one must be.
type CollusionCriteria struct {
	Coalition string `yaml:"coalition"`
	// MinEpochsFlagged: in at least this many epochs the detector flagged a
	// group made only of coalition members.
	MinEpochsFlagged *int `yaml:"min_epochs_flagged"`
	// MaxOutsidersFlagged: at most this many agents outside the coalition
	// were ever in a flagged group (0: none ever was).
	MaxOutsidersFlagged *int `yaml:"max_outsiders_flagged"`
}

// Selects reports whether the agents of group g are in the coalition.
func (c CollusionCriteria) Selects(g AgentGroup) bool {
	return c.Coalition == "allies" && g.Allies || c.Coalition == g.Type
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
	if s.Simulation.Acceptance == "" {
		s.Simulation.Acceptance = AcceptPolicy
	}
	if s.Simulation.Scheduling == "" {
		s.Simulation.Scheduling = "round_robin"
	}
	if s.Network.Topology == "" {
		s.Network.Topology = "complete"
	}
	if s.Economy != nil {
		s.Economy.defaults()
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
		if err := intRange(fmt.Sprintf("agents[%d].count", i), g.Count, 1, MaxAgents); err != nil {
			return err
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
		if q := g.InitiationProbability; q != nil && !(*q >= 0 && *q <= 1) {
			return &KeyError{fmt.Sprintf("agents[%d].initiation_probability", i), fmt.Sprintf("%v: want 0..1", *q)}
		}
		if g.Params.AllyPreference != nil && (!g.Allies || (g.Type != agents.Adversarial && g.Type != agents.Adaptive)) {
			return fmt.Errorf("agents[%d].params.ally_preference: only for adversarial or adaptive_adversary groups with allies: true", i)
		}
		n += g.Count
	}
	if n < 2 {
		return fmt.Errorf("agents: at least two agents are needed to interact")
	}
	if n > MaxAgents {
		return &KeyError{"agents", fmt.Sprintf("%d agents in all, more than %d", n, MaxAgents)}
	}
	for _, b := range []struct {
		key    string
		v, max int
	}{{"simulation.epochs", s.Simulation.Epochs, MaxEpochs}, {"simulation.steps_per_epoch", s.Simulation.StepsPerEpoch, MaxStepsPerEpoch},
		{"rate_limits.per_agent_per_epoch", s.RateLimits.PerAgentPerEpoch, MaxStepsPerEpoch}, {"network.k", s.Network.K, n}, {"network.m", s.Network.M, n}} {
		if err := intRange(b.key, b.v, 0, b.max); err != nil {
			return err
		}
	}
	if p := s.Network.P; !(p >= 0 && p <= 1) {
		return &KeyError{"network.p", fmt.Sprintf("%v is out of range 0..1", p)}
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
	for key, q := range map[string]*float64{"simulation.initiation_probability": s.Simulation.InitiationProbability, "simulation.trust_threshold": s.Simulation.TrustThreshold} {
		if q != nil && !(*q >= 0 && *q <= 1) {
			return &KeyError{key, fmt.Sprintf("%v: want 0..1", *q)}
		}
	}
	switch s.Simulation.Acceptance {
	case AcceptPolicy, AcceptTrust:
	default:
		return &KeyError{"simulation.acceptance", fmt.Sprintf("%q: want %s or %s", s.Simulation.Acceptance, AcceptPolicy, AcceptTrust)}
	}
	if s.Simulation.TrustThreshold != nil && s.Simulation.Acceptance != AcceptTrust {
		return &KeyError{"simulation.trust_threshold", "only with acceptance: trust"}
	}
	if d := s.Governance.ReputationDecay; d.Enabled && !(d.Factor > 0 && d.Factor <= 1) {
		return &KeyError{"governance.reputation_decay.factor", fmt.Sprintf("%v: want 0 < factor <= 1 (reputation × factor each epoch; 1: no decay)", d.Factor)}
	}
	if t := s.Simulation.AcceptanceThreshold; t < 0 || t > 1 {
		return fmt.Errorf("simulation.acceptance_threshold %v: want 0..1", t)
	}
	if _, err := sandbox.NewProxy(s.Proxy); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	if c := s.SuccessCriteria.Collusion; c != nil {
		if err := c.validate(s); err != nil {
			return err
		}
	}
	if s.Economy != nil {
		if err := s.Economy.validate(s); err != nil {
			return err
		}
	}
	if c := s.SuccessCriteria.Economy; c != nil {
		if err := c.validate(s); err != nil {
			return err
		}
	}
	return nil
}

// removedKeys are keys whose meaning changed: a scenario that still sets
// one is refused with what changed and how to migrate, never read with the
// new meaning.
var removedKeys = []struct{ key, msg string }{
	{"governance.reputation_decay.rate", "removed: it pulled reputation toward 0.5 by the rate each epoch (rate 0.95 erased 95%). " +
		"Reputation decay now follows the paper and the reference: governance.reputation_decay.factor multiplies every reputation by the factor " +
		"at each epoch's start (factor: 0.95 keeps 95%), so reputation decays toward 0. To migrate, write factor: 1 − rate " +
		"(rate: 0.05 → factor: 0.95) and check criteria that depend on low reputations (circuit breaker, priority scheduling)"},
}

// KeyError is a validation error about one key, by its dotted path.
type KeyError struct {
	Path string // e.g. success_criteria.collusion.coalition
	Msg  string
}

func (e *KeyError) Error() string { return textsafe.Printable(e.Path + ": " + e.Msg) }

// inRange checks lo ≤ v ≤ hi (or lo < v when open) and that v is finite.
func inRange(path string, v, lo, hi float64, open bool) error {
	ok := v <= hi && (v > lo || !open && v == lo) && !math.IsNaN(v)
	if ok {
		return nil
	}
	l := "["
	if open {
		l = "("
	}
	return &KeyError{path, fmt.Sprintf("%v is out of range %s%v, %v]", v, l, lo, hi)}
}

// intRange checks lo ≤ v ≤ hi.
func intRange(path string, v, lo, hi int) error {
	if v < lo || v > hi {
		return &KeyError{path, fmt.Sprintf("%d is out of range %d..%d", v, lo, hi)}
	}
	return nil
}

func (c *CollusionCriteria) validate(s *Scenario) error {
	return c.validateAt(s, "success_criteria.collusion.")
}

// validateAt checks the criteria found at the dotted path at (ending in ".").
func (c *CollusionCriteria) validateAt(s *Scenario, at string) error {
	members := 0
	for _, g := range s.Agents {
		if c.Selects(g) {
			members += g.Count
		}
	}
	switch {
	case c.Coalition == "":
		return &KeyError{at + "coalition", fmt.Sprintf("required: allies or an agent type %v", agents.Types)}
	case c.Coalition != "allies" && !slices.Contains(agents.Types, c.Coalition):
		return &KeyError{at + "coalition", fmt.Sprintf("%q: want allies or an agent type %v", c.Coalition, agents.Types)}
	case members < 2:
		return &KeyError{at + "coalition", fmt.Sprintf("%q selects %d agents; a coalition the detector can flag needs at least 2", c.Coalition, members)}
	case c.MinEpochsFlagged == nil && c.MaxOutsidersFlagged == nil:
		return &KeyError{at[:len(at)-1], "set min_epochs_flagged, max_outsiders_flagged or both"}
	}
	if n := c.MinEpochsFlagged; n != nil && (*n < 1 || *n > s.Simulation.Epochs) {
		return &KeyError{at + "min_epochs_flagged", fmt.Sprintf("%d: want 1..%d (simulation.epochs)", *n, s.Simulation.Epochs)}
	}
	outsiders := 0
	for _, g := range s.Agents {
		outsiders += g.Count
	}
	outsiders -= members
	if n := c.MaxOutsidersFlagged; n != nil && (*n < 0 || *n > outsiders) {
		return &KeyError{at + "max_outsiders_flagged", fmt.Sprintf("%d: want 0..%d (the agents outside the coalition)", *n, outsiders)}
	}
	return nil
}

// DefaultScenario has default payoff and proxy, ready for YAML on top.
func DefaultScenario() Scenario {
	return Scenario{Payoff: sandbox.DefaultPayoffConfig(), Proxy: sandbox.DefaultProxyConfig()}
}

// ParseScenario decodes a scenario strictly (unknown keys are errors naming
// file, line and key) over the defaults. The file is refused before
// decoding when it is larger, deeper or (aliases expanded) bigger than
// yamlx.DefaultLimits allow.
func ParseScenario(name string, data []byte) (Scenario, error) {
	s := DefaultScenario()
	doc, err := yamlx.Check(name, data, yamlx.DefaultLimits)
	if err != nil {
		return s, err
	}
	for _, old := range removedKeys {
		if p, ok := doc.Pos(old.key); ok {
			ke := &KeyError{old.key, old.msg}
			return s, &yamlx.Error{File: name, Line: p.Line, Col: p.Col, Key: ke.Path, Msg: ke.Msg, Err: ke}
		}
	}
	if err := doc.Decode(data, &s); err != nil {
		return s, err
	}
	for _, d := range doc.File.Docs {
		if err := wholeNumbers(d.Body, reflect.TypeFor[Scenario](), ""); err != nil {
			return s, fmt.Errorf("%s:%w", textsafe.Printable(name), err)
		}
	}
	s.Defaults()
	if err := s.Validate(); err != nil {
		var ke *KeyError
		if errors.As(err, &ke) {
			if p, _, ok := doc.PosOrParent(ke.Path); ok {
				return s, &yamlx.Error{File: name, Line: p.Line, Col: p.Col, Key: ke.Path, Msg: ke.Msg, Err: ke}
			}
		}
		return s, fmt.Errorf("%s: %w", textsafe.Printable(name), err)
	}
	return s, nil
}

// wholeNumbers checks that every integer field of t gets a whole number in
// the YAML under n: the YAML library would truncate count: 2.7 to 2.
func wholeNumbers(n ast.Node, t reflect.Type, path string) error {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
			continue
		case *ast.TagNode:
			n = v.Value
			continue
		}
		break
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch n.(type) {
		case *ast.IntegerNode, *ast.NullNode, *ast.AliasNode:
			return nil
		}
		p := n.GetToken().Position
		return fmt.Errorf("%d:%d: %s: %s: want a whole number", p.Line, p.Column, path, n.String())
	case reflect.Struct:
		var pairs []*ast.MappingValueNode
		switch m := n.(type) {
		case *ast.MappingNode:
			pairs = m.Values
		case *ast.MappingValueNode:
			pairs = []*ast.MappingValueNode{m}
		}
		for _, kv := range pairs {
			key := kv.Key.String()
			for i := range t.NumField() {
				f := t.Field(i)
				if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name == key && f.IsExported() {
					if err := wholeNumbers(kv.Value, f.Type, strings.TrimPrefix(path+"."+key, ".")); err != nil {
						return err
					}
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if sq, ok := n.(*ast.SequenceNode); ok {
			for i, e := range sq.Values {
				if err := wholeNumbers(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// LoadScenario reads and parses a scenario file.
func LoadScenario(path string) (Scenario, error) {
	b, err := yamlx.ReadFile(path, yamlx.DefaultLimits)
	if err != nil {
		return Scenario{}, err
	}
	return ParseScenario(path, b)
}
