package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/sandbox/agents"
	"github.com/swarm-dev/swarm/sandbox/governance"
)

// EpochRow is one epoch's metrics.
type EpochRow struct {
	Epoch        int     `json:"epoch"`
	Interactions int     `json:"interactions"`
	Accepted     int     `json:"accepted"`
	Toxicity     float64 `json:"toxicity"`
	QualityGap   float64 `json:"quality_gap"`
	Welfare      float64 `json:"welfare"`
	NetWelfare   float64 `json:"net_social_welfare"`
	MeanP        float64 `json:"mean_p"`
	Frozen       int     `json:"frozen"`
	// CollusionGroups are the groups the collusion detector flagged at
	// this epoch's start, from the interactions before it (each sorted; no
	// groups: absent).
	CollusionGroups [][]string `json:"collusion_groups,omitempty"`
	// Economy is the economy's metrics this epoch (nil without one).
	Economy *EconomyEpoch `json:"economy,omitempty"`
}

// AgentRow is one agent's totals.
type AgentRow struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Interactions int     `json:"interactions"`
	Accepted     int     `json:"accepted"`
	MeanP        float64 `json:"mean_p"`
	Payoff       float64 `json:"payoff"`
	Reputation   float64 `json:"reputation"`
	FrozenEpochs int     `json:"frozen_epochs"`
}

// Event is one notable thing (governance actions, freezes).
type Event struct {
	Epoch   int    `json:"epoch"`
	Step    int    `json:"step"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Result is a finished simulation.
type Result struct {
	ScenarioID string             `json:"scenario_id"`
	Seed       int64              `json:"seed"`
	Epochs     []EpochRow         `json:"epochs"`
	Agents     []AgentRow         `json:"agents"`
	Summary    sandbox.Report     `json:"summary"`
	MeanPType  map[string]float64 `json:"mean_p_by_type"`
	// PSamples holds up to 2000 p values per type, for the distribution plot.
	PSamples     map[string][]float64 `json:"-"`
	Interactions int                  `json:"interactions"`
	// Collusion sums up what the collusion detector flagged (nil when it
	// is off).
	Collusion *CollusionReport `json:"collusion,omitempty"`
	// Economy sums up the scenario's economy (nil without one).
	Economy  *EconomyReport    `json:"economy,omitempty"`
	Criteria []CriterionResult `json:"success_criteria"`
	Passed   bool              `json:"passed"`
}

// CollusionReport is what the collusion detector flagged over a run.
type CollusionReport struct {
	// EpochsFlagged counts the epochs in which it flagged any group.
	EpochsFlagged int `json:"epochs_flagged"`
	// Flagged: agent → epochs in which it was in a flagged group.
	Flagged map[string]int `json:"flagged"`
}

// CriterionResult is one success criterion's outcome.
type CriterionResult struct {
	Name  string  `json:"name"`
	Limit float64 `json:"limit"`
	// Actual is the measured value, absent when the run left it undefined
	// (the criterion then fails).
	Actual *float64 `json:"actual,omitempty"`
	Passed bool     `json:"passed"`
}

// Options adjust one run.
type Options struct {
	Seed   *int64
	Epochs int
	// MemoryBudget is the most memory, in bytes, the run may be estimated
	// to need (0: DefaultMemoryBudget); above it Run returns ErrTooBig.
	MemoryBudget int64
	OnEpoch      func(EpochRow)
	OnEvent      func(Event)
	// OnInteraction sees every interaction (events.jsonl); may be nil.
	OnInteraction func(sandbox.Interaction)
}

type agentState struct {
	a            agents.Agent
	n, acc       int
	sumP, payoff float64
	frozenEpochs int
	actions      int
	detected     bool
}

// Run simulates a scenario.
func Run(ctx context.Context, s Scenario, o Options) (*Result, error) {
	s.Defaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	seed := s.Simulation.Seed
	if o.Seed != nil {
		seed = *o.Seed
	}
	epochs := s.Simulation.Epochs
	if o.Epochs > 0 {
		epochs = o.Epochs
	}
	if o.Epochs < 0 || o.Epochs > MaxEpochs {
		return nil, &KeyError{"epochs", fmt.Sprintf("%d is out of range 1..%d", o.Epochs, MaxEpochs)}
	}
	if err := CheckMemory(s, epochs, o.MemoryBudget); err != nil {
		return nil, err
	}
	// Allocation takes a while for large scenarios: it checks ctx too, so
	// Ctrl-C is not ignored until the first epoch.
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed5eed))
	proxy, err := sandbox.NewProxy(s.Proxy)
	if err != nil {
		return nil, err
	}
	var as []*agentState
	allySet := map[string]bool{}        // shared by every ally (agents.ShareAllies)
	var initiate []float64              // by agent: probability it proposes at a step
	eco := newEconLoop(s, epochs)       // nil without an economy: block
	coalition := map[string]bool{}      // the collusion criteria's coalition
	sybilCoalition := map[string]bool{} // the economy's Sybil criteria's coalition
	perType := map[string]int{}         // agents are numbered per type across groups, so ids are unique
	for _, g := range s.Agents {
		for i := 0; i < g.Count; i++ {
			if i%256 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			perType[g.Type]++
			a, err := agents.New(fmt.Sprintf("%s-%d", g.Type, perType[g.Type]), g.Type, proxy, g.Params)
			if err != nil {
				return nil, err
			}
			as = append(as, &agentState{a: a})
			initiate = append(initiate, s.initiationProbability(g))
			eco.addAgent(as[len(as)-1])
			if g.Allies {
				allySet[a.ID()] = true
			}
			if c := s.SuccessCriteria.Collusion; c != nil && c.Selects(g) {
				coalition[a.ID()] = true
			}
			if c := s.SuccessCriteria.Economy; c != nil && c.Sybil != nil && c.Sybil.Selects(g) {
				sybilCoalition[a.ID()] = true
			}
		}
	}
	cands := &candidates{ally: make([]bool, len(as)), honest: make([]bool, len(as))}
	for i, st := range as {
		agents.ShareAllies(st.a, allySet)
		if allySet[st.a.ID()] {
			cands.ally[i] = true
			cands.allies = append(cands.allies, int32(i))
		}
		if st.a.Type() == agents.Honest {
			cands.honest[i] = true
			cands.honsts = append(cands.honsts, int32(i))
		}
	}
	gs := governance.NewState(rng)
	for _, st := range as {
		gs.AddAgent(st.a.ID(), 0.5) // numbered as in as: gs.Rep[i] is as[i]'s
		gs.Types[st.a.ID()] = st.a.Type()
		gs.Stake[st.a.ID()] = 10
	}
	levers := governance.Build(s.Governance, s.Payoff)
	ecoLevers, err := eco.start(s, seed, gs)
	if err != nil {
		return nil, err
	}
	levers = append(levers, ecoLevers...)
	var detector *governance.Collusion
	for _, l := range levers {
		if c, ok := l.(*governance.Collusion); ok {
			detector = c
		}
	}
	net, err := buildNetwork(ctx, len(as), s.Network, rng)
	if err != nil {
		return nil, err
	}
	// The interaction history (pair counts, counterparts, pair payoffs)
	// is kept only when a lever reads it: on a large network it is most
	// of the memory.
	history := false
	for _, l := range levers {
		if h, ok := l.(governance.HistoryUser); ok && h.UsesHistory() {
			history = true
		}
	}
	var trust *trustBook
	if s.Simulation.Acceptance == AcceptTrust {
		trust = newTrustBook()
	}
	overall := sandbox.NewMetrics(s.Payoff)
	res := &Result{ScenarioID: s.ScenarioID, Seed: seed, MeanPType: map[string]float64{}, PSamples: map[string][]float64{}}
	if detector != nil {
		res.Collusion = &CollusionReport{Flagged: map[string]int{}}
	}
	typeSum, typeN := map[string]float64{}, map[string]int{}
	order := make([]int, len(as))
	for i := range order {
		order[i] = i
	}
	emit := func(epoch, step int, kind, msg string) {
		if o.OnEvent != nil {
			o.OnEvent(Event{Epoch: epoch, Step: step, Kind: kind, Message: msg})
		}
	}
	byID := func(a string) *agentState {
		if i, ok := gs.Index[a]; ok {
			return as[i]
		}
		return nil
	}
	apply := func(e governance.Effects, epoch, step int) {
		for a, c := range e.Costs {
			if st := byID(a); st != nil {
				st.payoff -= c
			}
		}
		for a, d := range e.RepDelta {
			i, ok := gs.Index[a]
			if !ok {
				continue // not an agent of this run
			}
			gs.Rep[i] = clamp01(gs.Rep[i] + d)
			if d < 0 {
				as[i].detected = true
			}
		}
		for a, n := range e.Freeze {
			gs.FrozenUntil[a] = max(gs.FrozenUntil[a], epoch+1+n)
			if st := byID(a); st != nil {
				st.detected = true
			}
			emit(epoch, step, "freeze", fmt.Sprintf("%s frozen for %d epochs", a, n))
		}
		for _, a := range e.Unfreeze {
			if gs.FrozenUntil[a] > epoch {
				gs.FrozenUntil[a] = epoch
			}
		}
		for _, ev := range e.Events {
			emit(epoch, step, "governance", ev)
		}
	}
	ids := make([]string, len(as))
	for i, st := range as {
		ids[i] = st.a.ID()
	}
	cands.g, cands.gs, cands.ids = net, gs, ids
	seq := 0
	// One interaction and one observables record, reused: levers get the
	// interaction for the call only, and a fresh record per interaction
	// (it escapes through the lever interface) was most of the loop's
	// allocation. An OnInteraction hook may keep the interactions it is
	// given, so with a hook each one gets observables of its own.
	in := new(sandbox.Interaction)
	obsBuf := new(sandbox.Observables)
	var idBuf []byte // "i<seq>", built in place: one allocation per id
	for epoch := 0; epoch < epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		gs.Epoch = epoch
		em := sandbox.NewMetrics(s.Payoff)
		for _, l := range levers {
			apply(l.OnEpochStart(gs), epoch, 0)
		}
		var flagged [][]string
		if detector != nil {
			for _, g := range detector.Groups {
				flagged = append(flagged, slices.Clone(g))
				for _, a := range g {
					res.Collusion.Flagged[a]++
				}
			}
			if len(flagged) > 0 {
				res.Collusion.EpochsFlagged++
			}
		}
		for _, st := range as {
			st.actions = 0
			if gs.Frozen(st.a.ID()) {
				st.frozenEpochs++
			}
		}
		for step := 0; step < s.Simulation.StepsPerEpoch; step++ {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			gs.Step = step
			for _, l := range levers {
				apply(l.OnStep(gs), epoch, step)
			}
			schedule(order, as, gs, s.Simulation.Scheduling, rng)
			for _, i := range order {
				st := as[i]
				id := st.a.ID()
				if gs.Frozen(id) || (s.RateLimits.PerAgentPerEpoch > 0 && st.actions >= s.RateLimits.PerAgentPerEpoch) {
					continue
				}
				may := true
				for _, l := range levers {
					may = may && l.MayAct(gs, id)
				}
				if !may {
					continue
				}
				if q := initiate[i]; q < 1 && rng.Float64() >= q {
					continue // this agent does not propose at this step
				}
				cands.self = i
				j, ok := st.a.ChooseCounterparty(rng, cands)
				if !ok {
					continue
				}
				cp := ids[j]
				st.actions++
				cst := as[j]
				// Reputations are read once per side and written once, by
				// agent number. Nothing writes reputations between here and
				// their update below (levers answer with effects, applied
				// after it).
				oldA := gs.Rep[i]
				obs := st.a.Observe(rng, agents.Context{Epoch: epoch, Epochs: epochs, Reputation: oldA, Detected: st.detected}, proxy)
				seq++
				op := obsBuf
				if o.OnInteraction != nil {
					op = new(sandbox.Observables)
				}
				*op = obs
				idBuf = strconv.AppendInt(append(idBuf[:0], 'i'), int64(seq), 10)
				*in = sandbox.Interaction{ID: string(idBuf), Initiator: id, Counterparty: cp, Kind: st.a.Type(),
					Observables: op, VHat: proxy.VHat(obs), Epoch: epoch, Step: step}
				in.P = sandbox.Sigmoid(in.VHat, proxy.Config().K, proxy.Config().B)
				if trust != nil {
					in.Accepted = trust.trust(i, j) >= s.Simulation.trustThreshold()
				} else {
					in.Accepted = cst.a.Accept(rng, id, st.a.Type(), in.P)
				}
				if t := s.Simulation.AcceptanceThreshold; t > 0 && in.P < t {
					in.Accepted = false
				}
				var eff governance.Effects
				for _, l := range levers {
					eff.Merge(l.OnInteraction(gs, in))
				}
				if eff.Reject {
					in.Accepted = false
				}
				// Reputation moves with the interaction, and r is the change
				// it causes to each side: the accepted work's own effect
				// plus what this interaction's levers (audit penalty,
				// transparency bonus, ...) give the two parties, clamped to
				// [0, 1] as the reputation itself is. Epoch-start levers
				// (decay, collusion penalties) answer to no one interaction.
				var dA, dB float64
				if in.Accepted {
					dA = InitiatorRepRate * (in.P - 0.5)
					dB = CounterpartyRepRate * (in.P - 0.5)
				}
				penalisedA, penalisedB := eff.RepDelta[id] < 0, eff.RepDelta[cp] < 0
				dA += eff.RepDelta[id]
				dB += eff.RepDelta[cp]
				delete(eff.RepDelta, id)
				delete(eff.RepDelta, cp)
				oldB := gs.Rep[j]
				newA, newB := clamp01(oldA+dA), clamp01(oldB+dB)
				gs.Rep[i], gs.Rep[j] = newA, newB
				in.RA, in.RB = newA-oldA, newB-oldB
				st.detected = st.detected || penalisedA
				cst.detected = cst.detected || penalisedB
				in.CA, in.CB = eff.Costs[id], eff.Costs[cp]
				delete(eff.Costs, id)
				delete(eff.Costs, cp)
				apply(eff, epoch, step)
				pay := s.Payoff.Payoff(*in)
				if in.Accepted {
					st.payoff += pay.PiA
					cst.payoff += pay.PiB
				} else {
					// No surplus, but costs and reputation changes (an
					// audit of a rejected proposal) still count.
					st.payoff += -in.CA + s.Payoff.WRep*in.RA
					cst.payoff += -in.CB + s.Payoff.WRep*in.RB
				}
				st.a.Feedback(pay.PiA, len(eff.Freeze) > 0 || penalisedA)
				st.n++
				st.sumP += in.P
				if in.Accepted {
					st.acc++
				}
				if trust != nil && in.Accepted {
					trust.add(i, j, in.P)
				}
				if history {
					k := pairKey(id, cp)
					gs.PairCount[k]++
					if gs.Counterparts[id] == nil {
						gs.Counterparts[id] = map[string]int{}
					}
					gs.Counterparts[id][cp]++
					if in.Accepted {
						b := gs.PairBenefit[k]
						if id == k[0] {
							b.Add(pay.PiA, pay.PiB)
						} else {
							b.Add(pay.PiB, pay.PiA)
						}
						gs.PairBenefit[k] = b
					}
				}
				gs.Interactions++
				t := st.a.Type()
				if agents.Exploiting(st.a, epoch, epochs) {
					t = "deceptive_late"
				}
				typeSum[t] += in.P
				typeN[t]++
				if len(res.PSamples[st.a.Type()]) < 2000 {
					res.PSamples[st.a.Type()] = append(res.PSamples[st.a.Type()], in.P)
				}
				em.Add(*in)
				overall.Add(*in)
				if o.OnInteraction != nil {
					o.OnInteraction(*in)
				}
				eco.interaction(in)
			}
			eco.stepEnd()
		}
		r := em.Report()
		row := EpochRow{Epoch: epoch + 1, Interactions: r.N, Accepted: r.Accepted, Toxicity: r.Toxicity, QualityGap: r.QualityGap,
			Welfare: r.TotalWelfare, NetWelfare: r.NetSocialWelfare, MeanP: r.MeanP, CollusionGroups: flagged}
		for _, id := range ids {
			if gs.Frozen(id) {
				row.Frozen++
			}
		}
		eco.epochEnd(epoch, &row)
		res.Epochs = append(res.Epochs, row)
		if o.OnEpoch != nil {
			o.OnEpoch(row)
		}
	}
	res.Summary = overall.Report()
	res.Interactions = res.Summary.N
	for t, s := range typeSum {
		res.MeanPType[t] = s / float64(typeN[t])
	}
	res.Agents = make([]AgentRow, 0, len(as))
	for i, st := range as {
		row := AgentRow{ID: st.a.ID(), Type: st.a.Type(), Interactions: st.n, Accepted: st.acc, Payoff: st.payoff,
			Reputation: gs.Rep[i], FrozenEpochs: st.frozenEpochs}
		if st.n > 0 {
			row.MeanP = st.sumP / float64(st.n)
		}
		res.Agents = append(res.Agents, row)
	}
	eco.finish(res)
	res.Criteria, res.Passed = check(s.SuccessCriteria, res, coalition, sybilCoalition)
	return res, nil
}

// Reputation change of an accepted interaction per unit of p − 0.5: the
// initiator's work is judged at InitiatorRepRate; the counterparty, who
// vouched for it by accepting, at CounterpartyRepRate.
const (
	InitiatorRepRate    = 0.05
	CounterpartyRepRate = 0.025
)

func pairKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

func clamp01(x float64) float64 { return max(0, min(1, x)) }

func schedule(order []int, as []*agentState, gs *governance.State, how string, rng *rand.Rand) {
	switch how {
	case "random":
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	case "priority":
		sort.SliceStable(order, func(i, j int) bool {
			return gs.Rep[order[i]] > gs.Rep[order[j]]
		})
	default:
		sort.Ints(order)
	}
}

// check evaluates the success criteria; coalition and sybilCoalition hold
// the members of the collusion and the economy's Sybil criteria's coalitions.
func check(c SuccessCriteria, res *Result, coalition, sybilCoalition map[string]bool) ([]CriterionResult, bool) {
	r := res.Summary
	var out []CriterionResult
	ok := true
	add := func(name string, limit, actual float64, pass bool) {
		out = append(out, CriterionResult{name, limit, &actual, pass})
		ok = ok && pass
	}
	if c.MaxToxicity != nil {
		add("max_toxicity", *c.MaxToxicity, r.Toxicity, r.Toxicity <= *c.MaxToxicity)
	}
	if c.MinWelfare != nil {
		add("min_welfare", *c.MinWelfare, r.TotalWelfare, r.TotalWelfare >= *c.MinWelfare)
	}
	if c.MinQualityGap != nil {
		add("min_quality_gap", *c.MinQualityGap, r.QualityGap, r.QualityGap >= *c.MinQualityGap)
	}
	if c.MaxQualityGap != nil {
		add("max_quality_gap", *c.MaxQualityGap, r.QualityGap, r.QualityGap <= *c.MaxQualityGap)
	}
	if c.MaxUncertainFrac != nil {
		add("max_uncertain_fraction", *c.MaxUncertainFrac, r.UncertainFraction, r.UncertainFraction <= *c.MaxUncertainFrac)
	}
	if cc := c.Collusion; cc != nil {
		// With collusion detection off nothing is ever flagged: a minimum
		// fails, a maximum holds.
		caught, outsiders := coalitionCaught(res.Epochs, func(e EpochRow) [][]string { return e.CollusionGroups }, coalition)
		if n := cc.MinEpochsFlagged; n != nil {
			add("collusion.min_epochs_flagged", float64(*n), float64(caught), caught >= *n)
		}
		if n := cc.MaxOutsidersFlagged; n != nil {
			add("collusion.max_outsiders_flagged", float64(*n), float64(len(outsiders)), len(outsiders) <= *n)
		}
	}
	if ec := c.Economy; ec != nil {
		out, ok = checkEconomy(ec, res, sybilCoalition, out, ok)
	}
	return out, ok
}

// coalitionCaught reads the groups a detector flagged at each epoch
// (groups(row)): caught counts the epochs with a group of coalition members
// only, outsiders holds every flagged agent outside the coalition.
func coalitionCaught(epochs []EpochRow, groups func(EpochRow) [][]string, coalition map[string]bool) (caught int, outsiders map[string]bool) {
	outsiders = map[string]bool{}
	for _, e := range epochs {
		hit := false
		for _, g := range groups(e) {
			pure := true
			for _, a := range g {
				if !coalition[a] {
					pure = false
					outsiders[a] = true
				}
			}
			hit = hit || pure
		}
		if hit {
			caught++
		}
	}
	return caught, outsiders
}
