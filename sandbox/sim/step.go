package sim

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"

	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/sandbox/agents"
	"github.com/swarm-dev/swarm/sandbox/governance"
)

// runEpoch runs one epoch (0-based): its start (levers, collusion flags,
// freezes), its steps, and its row (epochEnd).
func (w *world) runEpoch(ctx context.Context, epoch int) error {
	flagged := w.startEpoch(epoch)
	em := sandbox.NewMetrics(w.s.Payoff)
	for step := 0; step < w.s.Simulation.StepsPerEpoch; step++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		w.runStep(epoch, step, em)
	}
	w.endEpoch(epoch, em, flagged)
	return nil
}

// startEpoch applies the levers' epoch-start effects, counts what the
// collusion detector flags (returned: the groups, cloned, for the epoch's
// row) and the frozen agents, and resets the agents' action counts.
func (w *world) startEpoch(epoch int) (flagged [][]string) {
	w.gs.Epoch = epoch
	w.atEpochStart = true
	for _, l := range w.levers.all {
		w.applyEffects(l.OnEpochStart(w.gs), epoch, 0)
	}
	w.atEpochStart = false
	if d := w.levers.detector; d != nil {
		for _, g := range d.Groups {
			flagged = append(flagged, slices.Clone(g))
			for _, a := range g {
				w.res.Collusion.Flagged[a]++
			}
		}
		if len(flagged) > 0 {
			w.res.Collusion.EpochsFlagged++
		}
	}
	for _, st := range w.pop.agents {
		st.actions = 0
		if w.gs.Frozen(st.a.ID()) {
			st.frozenEpochs++
		}
	}
	return flagged
}

// runStep applies the levers' step effects, schedules the agents and lets
// each one that may propose interact with the counterparty it chooses;
// em collects the epoch's interactions.
func (w *world) runStep(epoch, step int, em *sandbox.Metrics) {
	w.gs.Step = step
	for _, l := range w.levers.all {
		w.applyEffects(l.OnStep(w.gs), epoch, step)
	}
	schedule(w.order, w.pop.agents, w.gs, w.s.Simulation.Scheduling, w.rng)
	for _, i := range w.order {
		if j, ok := w.propose(i); ok {
			w.interact(epoch, step, i, j, em)
		}
	}
	w.eco.stepEnd()
}

// propose decides whether agent i proposes an interaction at this step
// and to whom (j): not when frozen, over its rate limit, stopped by a
// lever, not initiating this step (initiation probability) or without an
// eligible counterparty. A proposal counts against the rate limit.
func (w *world) propose(i int) (j int, ok bool) {
	st := w.pop.agents[i]
	id := w.pop.ids[i]
	if w.gs.Frozen(id) || (w.s.RateLimits.PerAgentPerEpoch > 0 && st.actions >= w.s.RateLimits.PerAgentPerEpoch) {
		return 0, false
	}
	may := true
	for _, l := range w.levers.all {
		may = may && l.MayAct(w.gs, id)
	}
	if !may {
		return 0, false
	}
	if q := w.pop.initiate[i]; q < 1 && w.rng.Float64() >= q {
		return 0, false // this agent does not propose at this step
	}
	w.cands.self = i
	if j, ok = st.a.ChooseCounterparty(w.rng, w.cands); !ok {
		return 0, false
	}
	st.actions++
	return j, true
}

// interact runs agent i's proposal to agent j through its steps: the
// interaction observed, acceptance, the levers, reputations, payoffs, the
// records (agents, history, metrics, hook) and the economy.
//
// Reputations are read once per side and written once, by agent number.
// Nothing writes reputations between the initiator's read (observe) and
// their update (settleReputation): levers answer with effects, applied
// after it.
func (w *world) interact(epoch, step, i, j int, em *sandbox.Metrics) {
	st, cst := w.pop.agents[i], w.pop.agents[j]
	id, cp := w.pop.ids[i], w.pop.ids[j]
	oldA := w.gs.Rep[i]
	in := w.observe(epoch, step, i, j, oldA)
	in.Accepted = w.accept(i, j, in)
	eff := w.leverEffects(in)
	// Reputation moves with the interaction: the accepted work's own
	// effect plus what this interaction's levers give the two parties.
	// Epoch-start levers (decay, collusion penalties) answer to no one
	// interaction.
	penalisedA, penalisedB := eff.RepDelta[id] < 0, eff.RepDelta[cp] < 0
	oldB := w.gs.Rep[j]
	newA, newB := settleReputation(in.Accepted, in.P, oldA, oldB, eff.RepDelta[id], eff.RepDelta[cp])
	delete(eff.RepDelta, id)
	delete(eff.RepDelta, cp)
	w.gs.Rep[i], w.gs.Rep[j] = newA, newB
	in.RA, in.RB = newA-oldA, newB-oldB
	st.detected = st.detected || penalisedA
	cst.detected = cst.detected || penalisedB
	in.CA, in.CB = eff.Costs[id], eff.Costs[cp]
	delete(eff.Costs, id)
	delete(eff.Costs, cp)
	w.applyEffects(eff, epoch, step)
	pay := w.s.Payoff.Payoff(*in)
	payA, payB := settlePayoff(in, pay, w.s.Payoff.WRep)
	st.payoff += payA
	cst.payoff += payB
	st.a.Feedback(pay.PiA, len(eff.Freeze) > 0 || penalisedA)
	w.record(epoch, i, j, in, pay, em)
	w.eco.interaction(in)
}

// observe builds the interaction of agent i's proposal to agent j (the
// run's reused record): i's observables given its reputation oldA, v̂
// and p.
func (w *world) observe(epoch, step, i, j int, oldA float64) *sandbox.Interaction {
	st := w.pop.agents[i]
	obs := st.a.Observe(w.rng, agents.Context{Epoch: epoch, Epochs: w.epochs, Reputation: oldA, Detected: st.detected}, w.proxy)
	w.seq++
	op := w.obsBuf
	if w.o.OnInteraction != nil {
		op = new(sandbox.Observables)
	}
	*op = obs
	w.idBuf = strconv.AppendInt(append(w.idBuf[:0], 'i'), int64(w.seq), 10)
	in := w.in
	*in = sandbox.Interaction{ID: string(w.idBuf), Initiator: w.pop.ids[i], Counterparty: w.pop.ids[j], Kind: st.a.Type(),
		Observables: op, VHat: w.proxy.VHat(obs), Epoch: epoch, Step: step}
	in.P = sandbox.Sigmoid(in.VHat, w.proxy.Config().K, w.proxy.Config().B)
	return in
}

// accept is the acceptance step (simulation.acceptance): agent j's trust
// in i against the trust threshold, or j's own policy on in's p; then
// simulation.acceptance_threshold, a floor on p, rejects what is below it.
func (w *world) accept(i, j int, in *sandbox.Interaction) bool {
	var ok bool
	if w.trust != nil {
		ok = w.trust.trust(i, j) >= w.s.Simulation.trustThreshold()
	} else {
		ok = w.pop.agents[j].a.Accept(w.rng, in.Initiator, in.Kind, in.P)
	}
	if t := w.s.Simulation.AcceptanceThreshold; t > 0 && in.P < t {
		ok = false
	}
	return ok
}

// leverEffects is the levers' answer to the interaction, merged in lever
// order; a lever's veto (Reject) rejects it.
func (w *world) leverEffects(in *sandbox.Interaction) governance.Effects {
	var eff governance.Effects
	for _, l := range w.levers.all {
		eff.Merge(l.OnInteraction(w.gs, in))
	}
	if eff.Reject {
		in.Accepted = false
	}
	return eff
}

// settleReputation is the two parties' reputations after an interaction
// of quality p: an accepted one moves the initiator's by InitiatorRepRate
// and the counterparty's by CounterpartyRepRate per unit of p − 0.5; the
// levers' changes (leverA, leverB: audit penalty, transparency bonus, ...)
// are added; each is clamped to [0, 1].
func settleReputation(accepted bool, p, oldA, oldB, leverA, leverB float64) (newA, newB float64) {
	var dA, dB float64
	if accepted {
		dA = InitiatorRepRate * (p - 0.5)
		dB = CounterpartyRepRate * (p - 0.5)
	}
	dA += leverA
	dB += leverB
	return clamp01(oldA + dA), clamp01(oldB + dB)
}

// settlePayoff is what in earns each party: its soft payoff when accepted;
// otherwise no surplus, but costs and reputation changes (an audit of a
// rejected proposal) still count, reputation weighted by wRep.
func settlePayoff(in *sandbox.Interaction, pay sandbox.Payoff, wRep float64) (a, b float64) {
	if in.Accepted {
		return pay.PiA, pay.PiB
	}
	return -in.CA + wRep*in.RA, -in.CB + wRep*in.RB
}

// record counts a finished interaction of agent i with agent j: i's
// totals, the trust book, the interaction history (when a lever reads
// it), the p statistics by type, the epoch's and the run's metrics and
// the OnInteraction hook.
func (w *world) record(epoch, i, j int, in *sandbox.Interaction, pay sandbox.Payoff, em *sandbox.Metrics) {
	st := w.pop.agents[i]
	st.n++
	st.sumP += in.P
	if in.Accepted {
		st.acc++
	}
	if w.trust != nil && in.Accepted {
		w.trust.add(i, j, in.P)
	}
	if w.levers.history {
		recordHistory(w.gs, in.Initiator, in.Counterparty, in.Accepted, pay)
	}
	w.gs.Interactions++
	t := st.a.Type()
	if agents.Exploiting(st.a, epoch, w.epochs) {
		t = "deceptive_late"
	}
	w.typeSum[t] += in.P
	w.typeN[t]++
	if len(w.res.PSamples[st.a.Type()]) < 2000 {
		w.res.PSamples[st.a.Type()] = append(w.res.PSamples[st.a.Type()], in.P)
	}
	em.Add(*in)
	w.overall.Add(*in)
	if w.o.OnInteraction != nil {
		w.o.OnInteraction(*in)
	}
}

// recordHistory adds an interaction of id with cp to gs's history: pair
// count, id's counterparts and, when accepted, the pair's payoffs (each
// side's, in the pair key's order).
func recordHistory(gs *governance.State, id, cp string, accepted bool, pay sandbox.Payoff) {
	k := pairKey(id, cp)
	gs.PairCount[k]++
	if gs.Counterparts[id] == nil {
		gs.Counterparts[id] = map[string]int{}
	}
	gs.Counterparts[id][cp]++
	if accepted {
		b := gs.PairBenefit[k]
		if id == k[0] {
			b.Add(pay.PiA, pay.PiB)
		} else {
			b.Add(pay.PiB, pay.PiA)
		}
		gs.PairBenefit[k] = b
	}
}

// endEpoch writes the epoch's row from its metrics em and the groups
// flagged at its start, adds the economy's metrics, and passes it on
// (Result.Epochs, OnEpoch).
func (w *world) endEpoch(epoch int, em *sandbox.Metrics, flagged [][]string) {
	r := em.Report()
	row := EpochRow{Epoch: epoch + 1, Interactions: r.N, Accepted: r.Accepted, Toxicity: r.Toxicity, QualityGap: r.QualityGap,
		Welfare: r.TotalWelfare, NetWelfare: r.NetSocialWelfare, MeanP: r.MeanP, CollusionGroups: flagged}
	for _, id := range w.pop.ids {
		if w.gs.Frozen(id) {
			row.Frozen++
		}
	}
	w.eco.epochEnd(epoch, &row)
	w.res.Epochs = append(w.res.Epochs, row)
	if w.o.OnEpoch != nil {
		w.o.OnEpoch(row)
	}
}

// summarise is the output step: the run's metrics, mean p by type, the
// agents' rows, the economy's report and the success criteria.
func (w *world) summarise() {
	res := w.res
	res.Summary = w.overall.Report()
	res.Interactions = res.Summary.N
	for t, s := range w.typeSum {
		res.MeanPType[t] = s / float64(w.typeN[t])
	}
	res.Agents = agentRows(w.pop.agents, w.gs.Rep)
	w.eco.finish(res)
	res.Criteria, res.Passed = check(w.s.SuccessCriteria, res, w.pop.coalition, w.pop.sybilCoalition)
}

// agentRows is one row per agent, rep[i] being as[i]'s reputation.
func agentRows(as []*agentState, rep []float64) []AgentRow {
	rows := make([]AgentRow, 0, len(as))
	for i, st := range as {
		row := AgentRow{ID: st.a.ID(), Type: st.a.Type(), Interactions: st.n, Accepted: st.acc, Payoff: st.payoff,
			Reputation: rep[i], FrozenEpochs: st.frozenEpochs}
		if st.n > 0 {
			row.MeanP = st.sumP / float64(st.n)
		}
		rows = append(rows, row)
	}
	return rows
}

// applyEffects applies a lever's effects outside an interaction's own
// parties (or all of them, at an epoch's or step's start): costs charged,
// reputation changes (a cut marks the agent detected), freezes (an event
// each), unfreezes and the levers' events. Ids that are not this run's
// agents are skipped.
func (w *world) applyEffects(e governance.Effects, epoch, step int) {
	gs := w.gs
	// A run that reports its effects (events.jsonl, the observers) reports
	// them in the agents' id order, so the same seed writes the same file;
	// one that does not keeps the maps' order (no sort on the hot path).
	ordered := w.o.OnEffect != nil || w.o.OnEvent != nil
	for a, c := range byKey(e.Costs, ordered) {
		if st := w.byID(a); st != nil {
			st.payoff -= c
			if w.o.OnEffect != nil {
				w.o.OnEffect(Effect{Epoch: epoch, Step: step, EpochStart: w.atEpochStart, Agent: a, Cost: c})
			}
		}
	}
	for a, d := range byKey(e.RepDelta, ordered) {
		i, ok := gs.Index[a]
		if !ok {
			continue // not an agent of this run
		}
		old := gs.Rep[i]
		gs.Rep[i] = clamp01(old + d)
		if d < 0 {
			w.pop.agents[i].detected = true
		}
		if w.o.OnEffect != nil {
			w.o.OnEffect(Effect{Epoch: epoch, Step: step, EpochStart: w.atEpochStart, Agent: a, RepDelta: gs.Rep[i] - old})
		}
	}
	for a, n := range byKey(e.Freeze, ordered) {
		gs.FrozenUntil[a] = max(gs.FrozenUntil[a], epoch+1+n)
		if st := w.byID(a); st != nil {
			st.detected = true
		}
		if w.o.OnEffect != nil {
			w.o.OnEffect(Effect{Epoch: epoch, Step: step, EpochStart: w.atEpochStart, Agent: a, FreezeEpochs: n})
		}
		w.emit(epoch, step, "freeze", fmt.Sprintf("%s frozen for %d epochs", a, n))
	}
	for _, a := range e.Unfreeze {
		if gs.FrozenUntil[a] > epoch {
			gs.FrozenUntil[a] = epoch
		}
		if w.o.OnEffect != nil {
			w.o.OnEffect(Effect{Epoch: epoch, Step: step, EpochStart: w.atEpochStart, Agent: a, Unfreeze: true})
		}
	}
	for _, ev := range e.Events {
		w.emit(epoch, step, "governance", ev)
	}
}

// byKey ranges over m in its keys' order when ordered (and it has more
// than one key), else in the map's own order.
func byKey[V any](m map[string]V, ordered bool) iter.Seq2[string, V] {
	if !ordered || len(m) < 2 {
		return maps.All(m)
	}
	return func(yield func(string, V) bool) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}

// byID is the agent with id a, nil when a is not an agent of this run.
func (w *world) byID(a string) *agentState {
	if i, ok := w.gs.Index[a]; ok {
		return w.pop.agents[i]
	}
	return nil
}

// emit passes an event to the OnEvent hook, if any.
func (w *world) emit(epoch, step int, kind, msg string) {
	if w.o.OnEvent != nil {
		w.o.OnEvent(Event{Epoch: epoch, Step: step, Kind: kind, Message: msg})
	}
}
