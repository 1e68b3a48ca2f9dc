package sim

import (
	"fmt"
	"slices"

	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/sandbox/economy"
	"github.com/swarm-dev/swarm/sandbox/governance"
)

// EconomyEpoch is one epoch's economy metrics; a mechanism that is off is
// absent, and so is a number that is undefined this epoch.
type EconomyEpoch struct {
	Auction      *AuctionEpoch      `json:"auction,omitempty"`
	Mission      *MissionEpoch      `json:"mission,omitempty"`
	Market       *MarketEpoch       `json:"market,omitempty"`
	Permeability *PermeabilityEpoch `json:"permeability,omitempty"`
	Identity     *IdentityEpoch     `json:"identity,omitempty"`
	Sybil        *SybilEpoch        `json:"sybil,omitempty"`
}

// AuctionEpoch is the epoch-end auction.
type AuctionEpoch struct {
	Bidders      int       `json:"bidders"`
	Rounds       int       `json:"rounds"`
	Converged    bool      `json:"converged"`
	Prices       []float64 `json:"prices"` // in resources order
	TotalUtility float64   `json:"total_utility"`
	// Gini of the bidders' utilities (absent when they are all 0).
	Gini           *float64 `json:"gini,omitempty"`
	EnvyFree       bool     `json:"envy_free"`
	EnvyViolations int      `json:"envy_violations"`
}

// MissionEpoch is the running mission as evaluated at the epoch's end.
type MissionEpoch struct {
	ID            string   `json:"id"`
	Status        string   `json:"status"`
	Score         float64  `json:"score"`
	Contributions int      `json:"contributions"`
	Participants  int      `json:"participants"`
	Paid          float64  `json:"paid"`                       // payouts credited this epoch
	FreeRider     *float64 `json:"free_rider_index,omitempty"` // once it has contributions
}

// MarketEpoch is the market after the epoch's last tick.
type MarketEpoch struct {
	Price          float64  `json:"price"`
	Volatility     *float64 `json:"volatility,omitempty"` // absent until the window holds 3 prices
	Trades         int      `json:"trades"`
	OrdersRejected int      `json:"orders_rejected"`
	HaltedTicks    int      `json:"halted_ticks"`
	Crashes        int      `json:"crashes"` // that started this epoch
}

// PermeabilityEpoch is the epoch-end boundary: π from threat and trust,
// and the contagion of the epoch's accepted interactions.
type PermeabilityEpoch struct {
	Threat       float64 `json:"threat"`
	Trust        float64 `json:"trust"`
	Permeability float64 `json:"permeability"`
	Optimal      float64 `json:"optimal_permeability"`
	Spillovers   int     `json:"spillovers"`
	Blocked      int     `json:"blocked"`
	Harm         float64 `json:"harm"`
	// Containment is blocked/(blocked + spillovers), absent without contagion.
	Containment *float64 `json:"containment,omitempty"`
}

// IdentityEpoch is the identities at the epoch's end.
type IdentityEpoch struct {
	MeanTrust float64 `json:"mean_trust"`
	Issued    int     `json:"credentials_issued"`
	Revoked   int     `json:"credentials_revoked"`
}

// SybilEpoch is what the Sybil lever flagged at the epoch's start.
type SybilEpoch struct {
	Clusters [][]string `json:"clusters,omitempty"`
	Flagged  int        `json:"flagged"`
	Blocked  int        `json:"blocked"` // agents in clusters above max_cluster_size
}

// EconomyReport sums the economy up over the run.
type EconomyReport struct {
	Auction      *AuctionReport      `json:"auction,omitempty"`
	Missions     *MissionsReport     `json:"missions,omitempty"`
	Market       *MarketReport       `json:"market,omitempty"`
	Permeability *PermeabilityReport `json:"permeability,omitempty"`
	Identity     *IdentityReport     `json:"identity,omitempty"`
	Sybil        *SybilReport        `json:"sybil,omitempty"`
}

// AuctionReport sums up the epoch auctions.
type AuctionReport struct {
	Auctions        int `json:"auctions"`
	ConvergedEpochs int `json:"converged_epochs"`
	EnvyFreeEpochs  int `json:"envy_free_epochs"`
	// MeanGini over the epochs whose Gini is defined (absent if none is).
	MeanGini     *float64 `json:"mean_gini,omitempty"`
	TotalUtility float64  `json:"total_utility"`
}

// MissionRecord is one mission that ended (or was still running at the end).
type MissionRecord struct {
	ID            string   `json:"id"`
	ProposedEpoch int      `json:"proposed_epoch"` // 1-based, as epoch rows
	EndedEpoch    int      `json:"ended_epoch,omitempty"`
	Status        string   `json:"status"`
	Score         float64  `json:"score"`
	Contributions int      `json:"contributions"`
	FreeRider     *float64 `json:"free_rider_index,omitempty"`
	Paid          float64  `json:"paid"`
}

// MissionsReport sums up the missions.
type MissionsReport struct {
	Missions  []MissionRecord `json:"missions"`
	Succeeded int             `json:"succeeded"`
	Failed    int             `json:"failed"`
	// MeanFreeRider over the ended missions with contributions.
	MeanFreeRider *float64 `json:"mean_free_rider_index,omitempty"`
	Paid          float64  `json:"paid"`
}

// CrashRecord is one flash crash of the market.
type CrashRecord struct {
	StartTick    int     `json:"start_tick"`
	StartEpoch   int     `json:"start_epoch"`
	PriceDropPct float64 `json:"price_drop_pct"`
	Severity     float64 `json:"severity"`
	Recovered    bool    `json:"recovered"`
	EndTick      int     `json:"end_tick,omitempty"`
	RecoveryTime int     `json:"recovery_time_ticks,omitempty"`
}

// MarketReport sums up the market.
type MarketReport struct {
	Ticks          int           `json:"ticks"`
	Trades         int           `json:"trades"`
	OrdersRejected int           `json:"orders_rejected"`
	FinalPrice     float64       `json:"final_price"`
	Crashes        []CrashRecord `json:"crashes"`
	// SpeedAdvantageGini of per-agent trade participations (absent without trades).
	SpeedAdvantageGini *float64 `json:"speed_advantage_gini,omitempty"`
}

// PermeabilityReport sums up the boundary.
type PermeabilityReport struct {
	Spillovers       int     `json:"spillovers"`
	Blocked          int     `json:"blocked"`
	Harm             float64 `json:"harm"`
	MeanPermeability float64 `json:"mean_permeability"`
	// Containment is blocked/(blocked + spillovers), absent without contagion.
	Containment *float64 `json:"containment,omitempty"`
}

// IdentityReport is the identities at the end.
type IdentityReport struct {
	MeanTrust   float64            `json:"mean_trust"`
	TrustByType map[string]float64 `json:"mean_trust_by_type"`
	Issued      int                `json:"credentials_issued"`
	Revoked     int                `json:"credentials_revoked"`
}

// SybilReport is what the Sybil lever flagged over the run.
type SybilReport struct {
	EpochsFlagged int            `json:"epochs_flagged"`
	Flagged       map[string]int `json:"flagged"` // agent → epochs in a cluster
	BlockedEpochs int            `json:"blocked_agent_epochs"`
}

// Seeds of the economy's generators: economy.NewRand(run seed XOR these).
const (
	marketSeedMix       = 0x4d41524b4554 // "MARKET"
	permeabilitySeedMix = 0x5045524d     // "PERM"
)

// econLoop runs a scenario's economy inside Run. A nil *econLoop (no
// economy: block) does nothing, so the engine calls it unconditionally.
// Run calls it from one goroutine.
type econLoop struct {
	// onEffect sees every payout (Options.OnEffect; may be nil), epoch
	// the epoch whose end is being run.
	onEffect func(Effect)
	epoch    int

	cfg    *Economy
	steps  int
	epochs int
	agents []*agentState // numbered as the governance state's: agents[i] has reputation gs.Rep[i]
	gs     *governance.State
	rep    *EconomyReport

	auction *economy.AuctionConfig

	missions    *economy.Missions
	mission     *economy.Mission // the running one
	missionIx   []economy.Interaction
	participant map[string]bool
	record      *MissionRecord
	sumFR       float64
	nFR         int

	market        *economy.Market
	tick          int
	epochTrades   int
	epochRejected int
	epochHalted   int
	crashes       int

	perm     *economy.Permeability
	permCfg  economy.PermeabilityConfig
	epochIx  []economy.Interaction
	sumPerm  float64
	sumGini  float64
	nGini    int
	registry *economy.Registry
	trusts   []float64 // by agent: identity trust at this epoch's end (identityEpoch)
	issued   int
	revoked  int

	sybil        *economy.SybilLever
	sybilEpoch   *SybilEpoch
	epochRevoked int
}

// newEconLoop returns nil when s has no economy.
func newEconLoop(s Scenario, epochs int) *econLoop {
	if s.Economy == nil {
		return nil
	}
	return &econLoop{cfg: s.Economy, steps: s.Simulation.StepsPerEpoch, epochs: epochs, rep: &EconomyReport{}}
}

// addAgent registers an agent, in creation order.
func (e *econLoop) addAgent(st *agentState) {
	if e == nil {
		return
	}
	e.agents = append(e.agents, st)
}

// start builds the mechanisms once the agents and the governance state
// exist, and returns the levers to add (the Sybil lever).
func (e *econLoop) start(s Scenario, seed int64, gs *governance.State) ([]governance.Lever, error) {
	if e == nil {
		return nil, nil
	}
	e.gs = gs
	c := e.cfg
	if a := c.Auction; a != nil {
		e.auction = &economy.AuctionConfig{MaxRounds: a.MaxRounds, PriceAdjustmentRate: a.PriceAdjustmentRate,
			ConvergenceTolerance: a.ConvergenceTolerance, EnvyTolerance: *a.EnvyTolerance}
		if err := e.auction.Validate(); err != nil {
			return nil, err
		}
		e.rep.Auction = &AuctionReport{}
	}
	if id := c.Identity; id != nil {
		ic := economy.DefaultIdentityConfig()
		ic.CredentialExpiryEpochs = id.CredentialExpiryEpochs
		reg, err := economy.NewRegistry(ic)
		if err != nil {
			return nil, err
		}
		for _, st := range e.agents {
			if _, err := reg.CreateIdentity(st.a.ID(), "", slices.Contains(id.ProofOfPersonhood, st.a.Type()), 0); err != nil {
				return nil, err
			}
		}
		e.registry = reg
		e.rep.Identity = &IdentityReport{TrustByType: map[string]float64{}}
	}
	if m := c.Missions; m != nil {
		mc := economy.MissionConfig{MinParticipants: m.MinParticipants, MaxActiveMissions: 1, RewardDistribution: m.RewardDistribution}
		ms, err := economy.NewMissions(mc)
		if err != nil {
			return nil, err
		}
		e.missions = ms
		e.participant = map[string]bool{}
		for _, st := range e.agents {
			if len(m.Participants) == 0 || slices.Contains(m.Participants, st.a.Type()) {
				e.participant[st.a.ID()] = true
			}
		}
		e.rep.Missions = &MissionsReport{Missions: []MissionRecord{}}
		if err := e.propose(0); err != nil {
			return nil, err
		}
	}
	if k := c.Market; k != nil {
		mc := economy.MarketConfig{MaxOrdersPerTick: k.MaxOrdersPerTick, LatencyNoiseMS: k.LatencyNoiseMS, BatchIntervalTicks: k.BatchIntervalTicks,
			HaltDurationTicks: k.HaltDurationTicks, Detector: economy.DetectorConfig{DropThreshold: k.DropThreshold, Window: k.Window}}
		mk, err := economy.NewMarket(mc, economy.NewRand(uint64(seed)^marketSeedMix))
		if err != nil {
			return nil, err
		}
		e.market = mk
		e.rep.Market = &MarketReport{Crashes: []CrashRecord{}}
	}
	if p := c.Permeability; p != nil {
		e.permCfg = economy.PermeabilityConfig{BasePermeability: *p.BasePermeability, InformationDecay: *p.InformationDecay, ContagionRate: *p.ContagionRate,
			SpilloverAmplification: *p.SpilloverAmplification, Adaptive: *p.Adaptive, ThreatSensitivity: *p.ThreatSensitivity}
		pm, err := economy.NewPermeability(e.permCfg, economy.NewRand(uint64(seed)^permeabilitySeedMix))
		if err != nil {
			return nil, err
		}
		e.perm = pm
		e.rep.Permeability = &PermeabilityReport{}
	}
	var levers []governance.Lever
	if y := c.Sybil; y != nil {
		l, err := economy.NewSybilLever(economy.SybilConfig{Enabled: true, SimilarityThreshold: *y.SimilarityThreshold, PenaltyMultiplier: *y.PenaltyMultiplier,
			RealtimePenalty: y.RealtimePenalty, RealtimeRate: *y.RealtimeRate, MaxClusterSize: y.MaxClusterSize})
		if err != nil {
			return nil, err
		}
		e.sybil = l
		e.rep.Sybil = &SybilReport{Flagged: map[string]int{}}
		levers = append(levers, econSybilLever{e})
	}
	return levers, nil
}

// propose starts the next mission at epoch (0-based): the first
// participant coordinates, every other participant joins.
func (e *econLoop) propose(epoch int) error {
	m := e.cfg.Missions
	var members []string
	for _, st := range e.agents {
		if e.participant[st.a.ID()] {
			members = append(members, st.a.ID())
		}
	}
	if len(members) == 0 {
		return fmt.Errorf("economy.missions.participants: no agent participates")
	}
	objs := make([]economy.Objective, len(m.Objectives))
	for i, o := range m.Objectives {
		objs[i] = economy.Objective{ID: o.ID, Metric: o.Metric, Target: o.Target, Weight: o.Weight}
	}
	ms, err := e.missions.Propose(members[0], fmt.Sprintf("epoch %d mission", epoch+1), objs, m.Pool, epoch+m.DurationEpochs, epoch)
	if err != nil {
		return err
	}
	for _, a := range members[1:] {
		if err := e.missions.Join(a, ms.ID); err != nil {
			return err
		}
	}
	e.mission, e.missionIx = ms, nil
	e.record = &MissionRecord{ID: ms.ID, ProposedEpoch: epoch + 1, Status: ms.Status}
	return nil
}

// interaction sees every finalized interaction, after its payoffs.
func (e *econLoop) interaction(in *sandbox.Interaction) {
	if e == nil {
		return
	}
	ix := economy.Interaction{ID: in.ID, P: in.P, Accepted: in.Accepted}
	if e.perm != nil {
		e.epochIx = append(e.epochIx, ix)
	}
	if e.mission != nil && e.mission.Status == economy.MissionActive && e.participant[in.Initiator] &&
		(in.Accepted || e.cfg.Missions.Contribute == "all") {
		if err := e.missions.RecordContribution(in.Initiator, e.mission.ID, in.ID); err == nil {
			e.missionIx = append(e.missionIx, ix)
		}
	}
	if e.market != nil && in.Accepted {
		k := e.cfg.Market
		v := k.PricePerQuality * in.P
		ts := float64(e.tick) * 100
		for _, o := range []economy.Order{
			{Agent: in.Initiator, Type: economy.OrderAsk, Resource: "work", Quantity: 1, Price: v * (1 - k.Spread/2), TimestampMS: ts},
			{Agent: in.Counterparty, Type: economy.OrderBid, Resource: "work", Quantity: 1, Price: v * (1 + k.Spread/2), TimestampMS: ts},
		} {
			if o.Price <= 0 { // p = 0: nothing to sell
				continue
			}
			if e.market.Submit(o) != nil {
				e.epochRejected++
			}
		}
	}
}

// stepEnd runs one market tick.
func (e *econLoop) stepEnd() {
	if e == nil || e.market == nil {
		return
	}
	t := e.market.ProcessTick()
	e.tick++
	e.epochTrades += t.OrdersExecuted
	if t.Halted {
		e.epochHalted++
	}
}

// epochEnd runs the epoch-end mechanisms and puts their metrics on row.
func (e *econLoop) epochEnd(epoch int, row *EpochRow) {
	if e == nil {
		return
	}
	e.epoch = epoch
	out := &EconomyEpoch{}
	if e.registry != nil { // first: the auction and permeability read its trusts
		out.Identity = e.identityEpoch(epoch)
	}
	if e.auction != nil {
		out.Auction = e.auctionEpoch()
	}
	if e.missions != nil {
		out.Mission = e.missionEpoch(epoch)
	}
	if e.market != nil {
		out.Market = e.marketEpoch()
	}
	if e.perm != nil {
		out.Permeability = e.permeabilityEpoch(row)
	}
	if e.sybil != nil {
		out.Sybil = e.sybilEpoch
		if out.Sybil == nil {
			out.Sybil = &SybilEpoch{}
		}
		e.sybilEpoch = nil
	}
	row.Economy = out
}

// pay adds amount to the payoff of the agent with id (an auction's
// utility, a mission's reward) and passes it on to onEffect.
func (e *econLoop) pay(id string, amount float64) {
	e.agent(id).payoff += amount
	if e.onEffect != nil {
		e.onEffect(Effect{Epoch: e.epoch, Step: e.steps, Agent: id, Payout: amount})
	}
}

// agent is the agent with id. The mechanisms only name agents of the run
// (bidders, mission contributors); another id is a bug, not agent 0.
func (e *econLoop) agent(id string) *agentState {
	i, ok := e.gs.Index[id]
	if !ok {
		panic("economy: unknown agent " + id)
	}
	return e.agents[i]
}

func (e *econLoop) trust(id string, epoch int) float64 {
	ident, _ := e.registry.Identity(id)
	return ident.TrustScore(epoch)
}

func (e *econLoop) identityEpoch(epoch int) *IdentityEpoch {
	out := &IdentityEpoch{Revoked: e.epochRevoked}
	e.epochRevoked = 0
	minRep := *e.cfg.Identity.CredentialMinReputation
	sum := 0.0
	e.trusts = slices.Grow(e.trusts[:0], len(e.agents))
	for i, st := range e.agents {
		id := st.a.ID()
		if r := e.gs.Rep[i]; r >= minRep {
			if _, err := e.registry.IssueReputation(id, r, epoch); err == nil {
				out.Issued++
			}
		}
		t := e.trust(id, epoch)
		e.trusts = append(e.trusts, t)
		sum += t
	}
	out.MeanTrust = sum / float64(len(e.agents))
	e.issued += out.Issued
	return out
}

func (e *econLoop) auctionEpoch() *AuctionEpoch {
	a := e.cfg.Auction
	supply := make([]economy.Supply, len(a.Resources))
	for i, r := range a.Resources {
		supply[i] = economy.Supply{Resource: r.Name, Quantity: r.Supply}
	}
	var bids []economy.Bid
	for i, st := range e.agents {
		id := st.a.ID()
		if e.gs.Frozen(id) || (e.sybil != nil && !e.sybil.CanAct(id)) {
			continue
		}
		src := e.gs.Rep[i]
		if a.BudgetFrom == "trust" { // identity: is present, identityEpoch ran first
			src = e.trusts[i]
		}
		vals := map[string]float64{}
		for _, r := range a.Resources {
			v, ok := a.Valuations[st.a.Type()][r.Name]
			if !ok {
				v = 1
			}
			vals[r.Name] = v
		}
		bids = append(bids, economy.Bid{Agent: id, Budget: a.BudgetScale * src, Valuations: vals})
	}
	res, err := economy.RunAuction(*e.auction, bids, supply)
	if err != nil { // validated at load: cannot happen
		panic(err)
	}
	out := &AuctionEpoch{Bidders: len(bids), Rounds: res.Rounds, Converged: res.Converged, Prices: res.Prices,
		TotalUtility: res.TotalUtility, EnvyFree: res.EnvyFree, EnvyViolations: len(res.EnvyViolations)}
	if out.Prices == nil {
		out.Prices = []float64{}
	}
	if g, ok := economy.Gini(res.Utilities()); ok {
		out.Gini = &g
		e.sumGini += g
		e.nGini++
	}
	if a.PayoffPerUtility > 0 {
		for _, al := range res.Allocations {
			e.pay(al.Agent, a.PayoffPerUtility*al.Utility)
		}
	}
	r := e.rep.Auction
	r.Auctions++
	r.TotalUtility += res.TotalUtility
	if res.Converged {
		r.ConvergedEpochs++
	}
	if res.EnvyFree {
		r.EnvyFreeEpochs++
	}
	return out
}

func (e *econLoop) missionEpoch(epoch int) *MissionEpoch {
	m := e.mission
	if m == nil {
		return nil
	}
	ev, err := e.missions.Evaluate(m.ID, e.missionIx, epoch+1)
	if err != nil {
		panic(err) // the mission exists
	}
	out := &MissionEpoch{ID: m.ID, Status: ev.Status, Score: ev.Score, Contributions: ev.TotalContributions, Participants: ev.Participants}
	if fr, ok := e.missions.FreeRiderIndex(m.ID); ok {
		out.FreeRider = &fr
	}
	rec := e.record
	rec.Status, rec.Score, rec.Contributions, rec.FreeRider = ev.Status, ev.Score, ev.TotalContributions, out.FreeRider
	r := e.rep.Missions
	switch ev.Status {
	case economy.MissionSucceeded:
		pays, err := e.missions.DistributeRewards(m.ID, e.missionIx)
		if err != nil {
			panic(err) // the rule was validated
		}
		for _, p := range pays {
			e.pay(p.Agent, p.Amount)
			out.Paid += p.Amount
		}
		rec.Paid = out.Paid
		r.Paid += out.Paid
		r.Succeeded++
	case economy.MissionFailed:
		r.Failed++
	default:
		return out
	}
	rec.EndedEpoch = epoch + 1
	if rec.FreeRider != nil {
		e.sumFR += *rec.FreeRider
		e.nFR++
	}
	r.Missions = append(r.Missions, *rec)
	e.mission, e.record = nil, nil
	if epoch+1 < e.epochs {
		if err := e.propose(epoch + 1); err != nil {
			panic(err) // participants were checked when the first was proposed
		}
	}
	return out
}

func (e *econLoop) marketEpoch() *MarketEpoch {
	out := &MarketEpoch{Price: e.market.Price(), Trades: e.epochTrades, HaltedTicks: e.epochHalted}
	if v, ok := e.market.Volatility(); ok {
		out.Volatility = &v
	}
	// Resting orders do not outlive the epoch (while halted the market
	// refuses the cancels too, and they rest until it reopens).
	bids, asks := e.market.Book()
	var owners []string
	for _, o := range append(bids, asks...) {
		if !slices.Contains(owners, o.Agent) {
			owners = append(owners, o.Agent)
		}
	}
	for _, a := range owners {
		if e.market.Submit(economy.Order{Agent: a, Type: economy.OrderCancel, Resource: "work"}) != nil {
			e.epochRejected++
		}
	}
	out.OrdersRejected = e.epochRejected
	cs := e.market.Crashes()
	out.Crashes = len(cs) - e.crashes
	e.crashes = len(cs)
	r := e.rep.Market
	r.Ticks = e.tick
	r.Trades += e.epochTrades
	r.OrdersRejected += e.epochRejected
	r.FinalPrice = out.Price
	e.epochTrades, e.epochRejected, e.epochHalted = 0, 0, 0
	return out
}

func (e *econLoop) permeabilityEpoch(row *EpochRow) *PermeabilityEpoch {
	p := e.cfg.Permeability
	out := &PermeabilityEpoch{}
	switch p.ThreatFrom {
	case "volatility":
		if v, ok := e.market.Volatility(); ok {
			out.Threat = min(1, *p.VolatilityWeight*v)
		}
	default:
		out.Threat = row.Toxicity
	}
	sum := 0.0
	for i := range e.agents {
		if p.TrustFrom == "identity" { // identity: is present, identityEpoch ran first
			sum += e.trusts[i]
		} else {
			sum += e.gs.Rep[i]
		}
	}
	out.Trust = sum / float64(len(e.agents))
	out.Permeability = e.perm.ComputeEffective(out.Threat, out.Trust)
	evs := e.perm.SimulateSpillover(e.epochIx, nil)
	for _, ev := range evs {
		if ev.Blocked {
			out.Blocked++
		} else {
			out.Spillovers++
		}
	}
	out.Harm = economy.SpilloverHarm(evs)
	if n := out.Blocked + out.Spillovers; n > 0 {
		c := float64(out.Blocked) / float64(n)
		out.Containment = &c
	}
	opt, err := economy.OptimalPermeability(e.permCfg, e.epochIx, *p.HarmWeight, 10)
	if err != nil {
		panic(err) // n = 10
	}
	out.Optimal = opt
	e.sumPerm += out.Permeability
	e.epochIx = e.epochIx[:0]
	return out
}

// finish puts the run's economy report on res.
func (e *econLoop) finish(res *Result) {
	if e == nil {
		return
	}
	n := float64(len(res.Epochs))
	if r := e.rep.Auction; r != nil && e.nGini > 0 {
		g := e.sumGini / float64(e.nGini)
		r.MeanGini = &g
	}
	if r := e.rep.Missions; r != nil {
		if e.record != nil && e.record.Contributions+len(res.Epochs) > 0 {
			r.Missions = append(r.Missions, *e.record) // still running at the end
		}
		if e.nFR > 0 {
			fr := e.sumFR / float64(e.nFR)
			r.MeanFreeRider = &fr
		}
	}
	if r := e.rep.Market; r != nil {
		for _, c := range e.market.Crashes() {
			cr := CrashRecord{StartTick: c.StartTick, StartEpoch: (c.StartTick-1)/max(1, e.steps) + 1, PriceDropPct: c.PriceDropPct, Severity: c.Severity, Recovered: c.Recovered}
			if c.Recovered {
				cr.EndTick, cr.RecoveryTime = c.EndTick, c.RecoveryTimeTicks
			}
			r.Crashes = append(r.Crashes, cr)
		}
		if g, ok := e.market.SpeedAdvantageGini(); ok {
			r.SpeedAdvantageGini = &g
		}
	}
	if r := e.rep.Permeability; r != nil {
		r.Spillovers, r.Blocked, r.Harm = e.perm.Counts()
		if c, ok := e.perm.ContainmentRate(); ok {
			r.Containment = &c
		}
		if n > 0 {
			r.MeanPermeability = e.sumPerm / n
		}
	}
	if r := e.rep.Identity; r != nil {
		last := max(0, len(res.Epochs)-1)
		sum, byType, cnt := 0.0, map[string]float64{}, map[string]int{}
		for _, st := range e.agents {
			t := e.trust(st.a.ID(), last)
			sum += t
			byType[st.a.Type()] += t
			cnt[st.a.Type()]++
		}
		r.MeanTrust = sum / float64(len(e.agents))
		for t, s := range byType {
			r.TrustByType[t] = s / float64(cnt[t])
		}
		r.Issued, r.Revoked = e.issued, e.revoked
	}
	res.Economy = e.rep
}

// econSybilLever runs the economy's Sybil lever through the governance
// path: penalties at epoch start as reputation effects, realtime costs on
// the interaction, and MayAct for the scheduler.
type econSybilLever struct{ e *econLoop }

func (econSybilLever) Name() string { return "economy_sybil" }

func (y econSybilLever) OnEpochStart(s *governance.State) governance.Effects {
	e := y.e
	var eff governance.Effects
	pens := e.sybil.OnEpochStart()
	out := &SybilEpoch{Clusters: e.sybil.Clusters(), Flagged: len(pens)}
	for _, p := range pens {
		if eff.RepDelta == nil {
			eff.RepDelta = map[string]float64{}
		}
		eff.RepDelta[p.Agent] += p.ReputationDelta
		s.Resources[p.Agent] += p.ResourceDelta
		e.rep.Sybil.Flagged[p.Agent]++
		if !e.sybil.CanAct(p.Agent) {
			out.Blocked++
		}
		if e.cfg.Sybil.RevokeCredentials {
			if id, ok := e.registry.Identity(p.Agent); ok {
				for _, c := range id.Credentials {
					if !c.Revoked {
						e.registry.Revoke(c.ID)
						e.revoked++
						e.epochRevoked++
					}
				}
			}
		}
	}
	for _, c := range out.Clusters {
		eff.Events = append(eff.Events, fmt.Sprintf("sybil cluster %v penalised", c))
	}
	if len(out.Clusters) > 0 {
		e.rep.Sybil.EpochsFlagged++
	}
	e.rep.Sybil.BlockedEpochs += out.Blocked
	e.sybilEpoch = out
	return eff
}

func (econSybilLever) OnStep(*governance.State) governance.Effects { return governance.Effects{} }

func (y econSybilLever) OnInteraction(_ *governance.State, in *sandbox.Interaction) governance.Effects {
	a, b := y.e.sybil.OnInteraction(in.Initiator, in.Counterparty)
	if a == 0 && b == 0 {
		return governance.Effects{}
	}
	return governance.Effects{Costs: map[string]float64{in.Initiator: a, in.Counterparty: b}}
}

func (y econSybilLever) MayAct(_ *governance.State, agent string) bool {
	return y.e.sybil.CanAct(agent)
}

// Lines sums the report up for the terminal, one line per mechanism; an
// undefined number is printed as "undefined".
func (r *EconomyReport) Lines() []string {
	if r == nil {
		return nil
	}
	opt := func(p *float64) string {
		if p == nil {
			return "undefined"
		}
		return fmt.Sprintf("%.3f", *p)
	}
	var out []string
	if a := r.Auction; a != nil {
		out = append(out, fmt.Sprintf("auction: %d auctions, mean Gini %s, envy-free in %d, converged in %d", a.Auctions, opt(a.MeanGini), a.EnvyFreeEpochs, a.ConvergedEpochs))
	}
	if m := r.Missions; m != nil {
		out = append(out, fmt.Sprintf("missions: %d succeeded, %d failed, paid %.2f, mean free-rider index %s", m.Succeeded, m.Failed, m.Paid, opt(m.MeanFreeRider)))
	}
	if k := r.Market; k != nil {
		out = append(out, fmt.Sprintf("market: %d trades, %d flash crashes, final price %.3f, speed-advantage Gini %s", k.Trades, len(k.Crashes), k.FinalPrice, opt(k.SpeedAdvantageGini)))
	}
	if p := r.Permeability; p != nil {
		out = append(out, fmt.Sprintf("permeability: mean π %.3f, %d spillovers, %d blocked, harm %.3f, containment %s", p.MeanPermeability, p.Spillovers, p.Blocked, p.Harm, opt(p.Containment)))
	}
	if id := r.Identity; id != nil {
		out = append(out, fmt.Sprintf("identity: mean trust %.3f, %d credentials issued, %d revoked", id.MeanTrust, id.Issued, id.Revoked))
	}
	if y := r.Sybil; y != nil {
		out = append(out, fmt.Sprintf("sybil: clusters in %d epochs, %d agents flagged, %d agent-epochs blocked", y.EpochsFlagged, len(y.Flagged), y.BlockedEpochs))
	}
	return out
}
