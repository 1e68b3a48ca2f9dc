package sim

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/sandbox/agents"
	"github.com/swarm-dev/swarm/sandbox/governance"
)

// world is one run's state between Run's steps: what newWorld sets up
// (read-only afterwards) and what the epochs accumulate. Run uses it from
// one goroutine.
type world struct {
	s      Scenario
	o      Options
	epochs int
	rng    *rand.Rand
	proxy  *sandbox.Proxy

	pop    population
	gs     *governance.State
	levers leverSet
	eco    *econLoop // nil without an economy: block
	trust  *trustBook
	cands  *candidates
	order  []int // agent numbers in this step's scheduling order

	res     *Result
	overall *sandbox.Metrics
	typeSum map[string]float64 // p sums by type (deceptive agents exploiting: "deceptive_late")
	typeN   map[string]int

	// One interaction and one observables record, reused: levers get the
	// interaction for the call only, and a fresh record per interaction
	// (it escapes through the lever interface) was most of the loop's
	// allocation. An OnInteraction hook may keep the interactions it is
	// given, so with a hook each one gets observables of its own.
	seq int
	in  *sandbox.Interaction
	// atEpochStart: the levers' epoch-start effects are being applied
	// (Effect.EpochStart).
	atEpochStart bool
	obsBuf       *sandbox.Observables
	idBuf        []byte // "i<seq>", built in place: one allocation per id
}

// newWorld sets a run up, in the order that fixes what the seeded random
// source draws: the population, the governance state, the levers (the
// economy's included), the network. Allocation takes a while for large
// scenarios: it checks ctx too, so Ctrl-C is not ignored until the first
// epoch.
func newWorld(ctx context.Context, s Scenario, o Options, seed int64, epochs int) (*world, error) {
	w := &world{s: s, o: o, epochs: epochs, rng: rand.New(rand.NewPCG(uint64(seed), 0x5eed5eed))}
	var err error
	if w.proxy, err = sandbox.NewProxy(s.Proxy); err != nil {
		return nil, err
	}
	if w.pop, err = newPopulation(ctx, s, w.proxy); err != nil {
		return nil, err
	}
	w.eco = newEconLoop(s, epochs)
	for _, st := range w.pop.agents {
		w.eco.addAgent(st)
	}
	if w.eco != nil {
		w.eco.onEffect = o.OnEffect
	}
	w.gs = newGovernanceState(w.rng, w.pop.agents)
	if o.OnAgent != nil {
		for i, st := range w.pop.agents {
			o.OnAgent(AgentRow{ID: st.a.ID(), Type: st.a.Type(), Reputation: w.gs.Rep[i]})
		}
	}
	if w.levers, err = buildLevers(s, seed, w.gs, w.eco); err != nil {
		return nil, err
	}
	net, err := buildNetwork(ctx, len(w.pop.agents), s.Network, w.rng)
	if err != nil {
		return nil, err
	}
	if s.Simulation.Acceptance == AcceptTrust {
		w.trust = newTrustBook()
	}
	w.cands = newCandidates(w.pop, net, w.gs)
	w.overall = sandbox.NewMetrics(s.Payoff)
	w.res = &Result{ScenarioID: s.ScenarioID, Seed: seed, MeanPType: map[string]float64{}, PSamples: map[string][]float64{}}
	if w.levers.detector != nil {
		w.res.Collusion = &CollusionReport{Flagged: map[string]int{}}
	}
	w.typeSum, w.typeN = map[string]float64{}, map[string]int{}
	w.order = make([]int, len(w.pop.agents))
	for i := range w.order {
		w.order[i] = i
	}
	w.in, w.obsBuf = new(sandbox.Interaction), new(sandbox.Observables)
	return w, nil
}

// population is a run's agents, numbered in creation order (group by
// group), with what the loop and the success criteria need to know of each.
type population struct {
	agents   []*agentState
	ids      []string  // by agent: its id
	initiate []float64 // by agent: probability it proposes at a step
	allies   map[string]bool
	// coalition holds the collusion criteria's coalition, sybilCoalition
	// the economy's Sybil criteria's.
	coalition, sybilCoalition map[string]bool
}

// newPopulation creates the scenario's agents. Agents are numbered per
// type across groups ("honest-1", ...), so ids are unique; every ally
// shares one ally set (agents.ShareAllies).
func newPopulation(ctx context.Context, s Scenario, proxy *sandbox.Proxy) (population, error) {
	p := population{allies: map[string]bool{}, coalition: map[string]bool{}, sybilCoalition: map[string]bool{}}
	perType := map[string]int{}
	for _, g := range s.Agents {
		for i := 0; i < g.Count; i++ {
			if i%256 == 0 {
				if err := ctx.Err(); err != nil {
					return population{}, err
				}
			}
			perType[g.Type]++
			a, err := agents.New(fmt.Sprintf("%s-%d", g.Type, perType[g.Type]), g.Type, proxy, g.Params)
			if err != nil {
				return population{}, err
			}
			p.agents = append(p.agents, &agentState{a: a})
			p.initiate = append(p.initiate, s.initiationProbability(g))
			if g.Allies {
				p.allies[a.ID()] = true
			}
			if c := s.SuccessCriteria.Collusion; c != nil && c.Selects(g) {
				p.coalition[a.ID()] = true
			}
			if c := s.SuccessCriteria.Economy; c != nil && c.Sybil != nil && c.Sybil.Selects(g) {
				p.sybilCoalition[a.ID()] = true
			}
		}
	}
	p.ids = make([]string, len(p.agents))
	for i, st := range p.agents {
		agents.ShareAllies(st.a, p.allies)
		p.ids[i] = st.a.ID()
	}
	return p, nil
}

// newGovernanceState registers every agent with reputation 0.5 and stake
// 10, numbered as in as: gs.Rep[i] is as[i]'s.
func newGovernanceState(rng *rand.Rand, as []*agentState) *governance.State {
	gs := governance.NewState(rng)
	for _, st := range as {
		gs.AddAgent(st.a.ID(), 0.5)
		gs.Types[st.a.ID()] = st.a.Type()
		gs.Stake[st.a.ID()] = 10
	}
	return gs
}

// leverSet is a run's governance levers and what the loop reads of them.
type leverSet struct {
	all []governance.Lever
	// detector is the collusion detector among them (nil: none).
	detector *governance.Collusion
	// history: a lever reads the interaction history (pair counts,
	// counterparts, pair payoffs), so the loop keeps it; on a large
	// network it is most of the memory.
	history bool
}

// buildLevers builds the scenario's governance levers, then starts the
// economy (eco may be nil) and appends its levers.
func buildLevers(s Scenario, seed int64, gs *governance.State, eco *econLoop) (leverSet, error) {
	ls := leverSet{all: governance.Build(s.Governance, s.Payoff)}
	ecoLevers, err := eco.start(s, seed, gs)
	if err != nil {
		return leverSet{}, err
	}
	ls.all = append(ls.all, ecoLevers...)
	for _, l := range ls.all {
		if c, ok := l.(*governance.Collusion); ok {
			ls.detector = c
		}
		if h, ok := l.(governance.HistoryUser); ok && h.UsesHistory() {
			ls.history = true
		}
	}
	return ls, nil
}

// newCandidates is the counterparty draw over network g: the allies and
// the honest agents listed for a complete network.
func newCandidates(p population, g *graph, gs *governance.State) *candidates {
	n := len(p.agents)
	c := &candidates{g: g, gs: gs, ids: p.ids, ally: make([]bool, n), honest: make([]bool, n)}
	for i, st := range p.agents {
		if p.allies[st.a.ID()] {
			c.ally[i] = true
			c.allies = append(c.allies, int32(i))
		}
		if st.a.Type() == agents.Honest {
			c.honest[i] = true
			c.honsts = append(c.honsts, int32(i))
		}
	}
	return c
}
