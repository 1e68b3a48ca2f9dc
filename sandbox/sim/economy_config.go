package sim

import (
	"fmt"
	"maps"
	"slices"

	"github.com/swarm-dev/swarm/sandbox/agents"
	"github.com/swarm-dev/swarm/sandbox/economy"
)

// Economy is a scenario's economy: block: the virtual-agent-economy
// mechanisms of package economy, run inside the simulation loop. Each
// mechanism is on when its block is present; an absent economy: block
// leaves the run exactly as it was. docs/sandbox.md ("Economies in the
// loop") describes every key, its default and its bounds.
type Economy struct {
	Auction      *EconAuction      `yaml:"auction"`
	Missions     *EconMissions     `yaml:"missions"`
	Market       *EconMarket       `yaml:"market"`
	Permeability *EconPermeability `yaml:"permeability"`
	Identity     *EconIdentity     `yaml:"identity"`
	Sybil        *EconSybil        `yaml:"sybil"`
}

// EconAuction runs a Dworkin-style auction of scarce resources at every
// epoch end among the agents that may act, each with a budget of
// budget_scale × its trust (identity) or reputation.
type EconAuction struct {
	Resources []EconResource `yaml:"resources"` // 1..MaxEconResources, in order
	// BudgetFrom: trust (needs identity:) or reputation (default: trust when
	// identity: is present, else reputation).
	BudgetFrom  string  `yaml:"budget_from"`
	BudgetScale float64 `yaml:"budget_scale"` // (0, 1e6] (100)
	// Valuations: agent type → resource → utility per unit, ≥ 0 (absent: 1
	// for every resource).
	Valuations map[string]map[string]float64 `yaml:"valuations"`
	// PayoffPerUtility adds utility × this to each agent's payoff, [0, 1e6]
	// (0: the auction only measures).
	PayoffPerUtility     float64  `yaml:"payoff_per_utility"`
	MaxRounds            int      `yaml:"max_rounds"`            // 1..10 000 (50)
	PriceAdjustmentRate  float64  `yaml:"price_adjustment_rate"` // (0, 1] (0.1)
	ConvergenceTolerance float64  `yaml:"convergence_tolerance"` // (0, 1e6] (0.01)
	EnvyTolerance        *float64 `yaml:"envy_tolerance"`        // [0, 1e6] (0.05)
}

// EconResource is one auctioned resource and the quantity offered per epoch.
type EconResource struct {
	Name   string  `yaml:"name"`
	Supply float64 `yaml:"supply"` // (0, 1e9]
}

// EconMissions runs one mission at a time: proposed at an epoch start by
// the first participant, joined by every participant, credited with the
// participants' finalized interactions, evaluated at every epoch end and
// paid out on success into the agents' payoffs.
type EconMissions struct {
	Objectives         []EconObjective `yaml:"objectives"`          // 1..MaxEconObjectives
	Pool               float64         `yaml:"pool"`                // (0, 1e9] (10)
	DurationEpochs     int             `yaml:"duration_epochs"`     // 1..MaxEpochs (5)
	MinParticipants    int             `yaml:"min_participants"`    // 1..MaxAgents (2)
	RewardDistribution string          `yaml:"reward_distribution"` // equal, proportional (default), shapley
	// Participants: the agent types that join (absent: every agent).
	Participants []string `yaml:"participants"`
	// Contribute: accepted (default: an accepted interaction counts for its
	// initiator) or all (every finalized interaction does).
	Contribute string `yaml:"contribute"`
}

// EconObjective is one mission objective: met ⇔ metric ≥ target.
type EconObjective struct {
	ID     string  `yaml:"id"`     // (objective-N)
	Metric string  `yaml:"metric"` // avg_p, min_p, total_count, acceptance_rate, total_welfare
	Target float64 `yaml:"target"` // (0, 1e9]
	Weight float64 `yaml:"weight"` // (0, 1e6] (1)
}

// EconMarket puts the work of every accepted interaction on a
// high-frequency negotiation market (one tick per step): the initiator asks
// value·(1 − spread/2), the counterparty bids value·(1 + spread/2), value =
// price_per_quality·p. Resting orders are cancelled at each epoch end.
type EconMarket struct {
	PricePerQuality    float64 `yaml:"price_per_quality"`    // (0, 1e6] (2: p = 0.5 is the opening price 1)
	Spread             float64 `yaml:"spread"`               // [0, 1] (0.1)
	LatencyNoiseMS     float64 `yaml:"latency_noise_ms"`     // [0, 1e6] (10)
	BatchIntervalTicks int     `yaml:"batch_interval_ticks"` // 1..MaxStepsPerEpoch (5)
	MaxOrdersPerTick   int     `yaml:"max_orders_per_tick"`  // 1..1 000 000 (10)
	HaltDurationTicks  int     `yaml:"halt_duration_ticks"`  // 1..MaxStepsPerEpoch (20)
	DropThreshold      float64 `yaml:"drop_threshold"`       // (0, 1] (0.1)
	Window             int     `yaml:"window"`               // 2..10 000 (10)
}

// EconPermeability runs the permeability model at every epoch end: π from
// the threat and the agents' mean trust, then the contagion of the epoch's
// accepted interactions across the boundary.
type EconPermeability struct {
	BasePermeability       *float64 `yaml:"base_permeability"`       // [0, 1] (0.5)
	Adaptive               *bool    `yaml:"adaptive"`                // (true)
	ThreatSensitivity      *float64 `yaml:"threat_sensitivity"`      // [0, 1e3] (1)
	ContagionRate          *float64 `yaml:"contagion_rate"`          // [0, 1] (0.05)
	SpilloverAmplification *float64 `yaml:"spillover_amplification"` // [0, 1e3] (1.5)
	InformationDecay       *float64 `yaml:"information_decay"`       // [0, 1] (0.1)
	// ThreatFrom: volatility (min(1, volatility_weight × the market's
	// volatility); needs market:) or toxicity (the epoch's). Default:
	// volatility with a market, else toxicity.
	ThreatFrom       string   `yaml:"threat_from"`
	VolatilityWeight *float64 `yaml:"volatility_weight"` // [0, 1e6] (5)
	// TrustFrom: identity (mean identity trust; needs identity:) or
	// reputation (mean reputation). Default: identity when present.
	TrustFrom  string   `yaml:"trust_from"`
	HarmWeight *float64 `yaml:"harm_weight"` // [0, 1e6] (1): weight of harm in the optimal π
}

// EconIdentity gives every agent an identity at the start; at each epoch end
// agents whose reputation is at least credential_min_reputation receive a
// reputation credential.
type EconIdentity struct {
	// ProofOfPersonhood: the agent types whose identities have PoP.
	ProofOfPersonhood       []string `yaml:"proof_of_personhood"`
	CredentialExpiryEpochs  int      `yaml:"credential_expiry_epochs"`  // 1..MaxEpochs (50)
	CredentialMinReputation *float64 `yaml:"credential_min_reputation"` // [0, 1] (0.6)
}

// EconSybil is the reference's Sybil lever, run through the governance path:
// it records every finalized interaction, clusters agents by interaction
// pattern at each epoch start, penalises the clustered ones and stops agents
// in clusters larger than max_cluster_size from acting.
type EconSybil struct {
	SimilarityThreshold *float64 `yaml:"similarity_threshold"` // [0, 1] (0.8)
	PenaltyMultiplier   *float64 `yaml:"penalty_multiplier"`   // [0, 1e3] (1)
	RealtimePenalty     bool     `yaml:"realtime_penalty"`     // (false)
	RealtimeRate        *float64 `yaml:"realtime_rate"`        // [0, 1e3] (0.1)
	MaxClusterSize      int      `yaml:"max_cluster_size"`     // 1..MaxAgents (1)
	// RevokeCredentials revokes a flagged agent's credentials (needs
	// identity:), which lowers its trust.
	RevokeCredentials bool `yaml:"revoke_credentials"`
}

// Bounds of the economy: block's list sizes.
const (
	MaxEconResources  = 16
	MaxEconObjectives = 16
)

// EconomyCriteria assert the economy's metrics at the end of a run; each is
// checked only when set, and needs its mechanism. A metric that is
// undefined (no auction had a positive total utility, no mission ended with
// contributions, no contagion happened) fails its criterion.
type EconomyCriteria struct {
	// MaxAuctionGini: the mean over epochs of the auction's utility Gini.
	MaxAuctionGini *float64 `yaml:"max_auction_gini"`
	// MinMissionsSucceeded: missions that met all their objectives.
	MinMissionsSucceeded *int `yaml:"min_missions_succeeded"`
	// MaxFreeRiderIndex: the mean free-rider index of the missions that ended.
	MaxFreeRiderIndex *float64 `yaml:"max_free_rider_index"`
	// MinCrashes, MaxCrashes: flash crashes of the market.
	MinCrashes *int `yaml:"min_crashes"`
	MaxCrashes *int `yaml:"max_crashes"`
	// MinContainment: blocked/(blocked + spilled) over the run.
	MinContainment *float64 `yaml:"min_containment"`
	// MaxSpilloverHarm: the external harm that crossed the boundary.
	MaxSpilloverHarm *float64 `yaml:"max_spillover_harm"`
	// Sybil asserts what the Sybil lever flagged about a coalition, as the
	// collusion criteria do for the collusion detector.
	Sybil *CollusionCriteria `yaml:"sybil"`
}

// Defaults fills the economy's unset values.
func (e *Economy) defaults() {
	if a := e.Auction; a != nil {
		d := economy.DefaultAuctionConfig()
		if a.BudgetFrom == "" {
			a.BudgetFrom = "reputation"
			if e.Identity != nil {
				a.BudgetFrom = "trust"
			}
		}
		setF(&a.BudgetScale, 100)
		setI(&a.MaxRounds, d.MaxRounds)
		setF(&a.PriceAdjustmentRate, d.PriceAdjustmentRate)
		setF(&a.ConvergenceTolerance, d.ConvergenceTolerance)
		setP(&a.EnvyTolerance, d.EnvyTolerance) // 0 is meaningful: only unset takes the default
	}
	if m := e.Missions; m != nil {
		setF(&m.Pool, 10)
		setI(&m.DurationEpochs, 5)
		setI(&m.MinParticipants, 2)
		if m.RewardDistribution == "" {
			m.RewardDistribution = economy.RewardProportional
		}
		if m.Contribute == "" {
			m.Contribute = "accepted"
		}
		for i := range m.Objectives {
			if m.Objectives[i].ID == "" {
				m.Objectives[i].ID = fmt.Sprintf("objective-%d", i+1)
			}
			setF(&m.Objectives[i].Weight, 1)
		}
	}
	if k := e.Market; k != nil {
		d := economy.DefaultMarketConfig()
		setF(&k.PricePerQuality, 2)
		setF(&k.Spread, 0.1)
		setF(&k.LatencyNoiseMS, d.LatencyNoiseMS)
		setI(&k.BatchIntervalTicks, d.BatchIntervalTicks)
		setI(&k.MaxOrdersPerTick, d.MaxOrdersPerTick)
		setI(&k.HaltDurationTicks, d.HaltDurationTicks)
		setF(&k.DropThreshold, d.Detector.DropThreshold)
		setI(&k.Window, d.Detector.Window)
	}
	if p := e.Permeability; p != nil {
		d := economy.DefaultPermeabilityConfig()
		setP(&p.BasePermeability, d.BasePermeability)
		setP(&p.ThreatSensitivity, d.ThreatSensitivity)
		setP(&p.ContagionRate, d.ContagionRate)
		setP(&p.SpilloverAmplification, d.SpilloverAmplification)
		setP(&p.InformationDecay, d.InformationDecay)
		setP(&p.VolatilityWeight, 5)
		setP(&p.HarmWeight, 1)
		if p.Adaptive == nil {
			t := true
			p.Adaptive = &t
		}
		if p.ThreatFrom == "" {
			p.ThreatFrom = "toxicity"
			if e.Market != nil {
				p.ThreatFrom = "volatility"
			}
		}
		if p.TrustFrom == "" {
			p.TrustFrom = "reputation"
			if e.Identity != nil {
				p.TrustFrom = "identity"
			}
		}
	}
	if id := e.Identity; id != nil {
		setI(&id.CredentialExpiryEpochs, economy.DefaultIdentityConfig().CredentialExpiryEpochs)
		setP(&id.CredentialMinReputation, 0.6)
	}
	if y := e.Sybil; y != nil {
		d := economy.DefaultSybilConfig()
		setP(&y.SimilarityThreshold, d.SimilarityThreshold)
		setP(&y.PenaltyMultiplier, d.PenaltyMultiplier)
		setP(&y.RealtimeRate, d.RealtimeRate)
		setI(&y.MaxClusterSize, d.MaxClusterSize)
	}
}

func setF(p *float64, v float64) {
	if *p == 0 {
		*p = v
	}
}

func setI(p *int, v int) {
	if *p == 0 {
		*p = v
	}
}

func setP(p **float64, v float64) {
	if *p == nil {
		*p = &v
	}
}

// validate checks the economy: block of s (after defaults); errors are
// *KeyError naming the key.
func (e *Economy) validate(s *Scenario) error {
	if e.Auction == nil && e.Missions == nil && e.Market == nil && e.Permeability == nil && e.Identity == nil && e.Sybil == nil {
		return &KeyError{"economy", "declares no mechanism: add auction, missions, market, permeability, identity or sybil (or remove the block)"}
	}
	present := map[string]bool{}
	for _, g := range s.Agents {
		present[g.Type] = true
	}
	types := func(path string, ts []string) error {
		for i, t := range ts {
			if !slices.Contains(agents.Types, t) {
				return &KeyError{fmt.Sprintf("%s[%d]", path, i), fmt.Sprintf("%q: want an agent type %v", t, agents.Types)}
			}
			if !present[t] {
				return &KeyError{fmt.Sprintf("%s[%d]", path, i), fmt.Sprintf("%q: no agent group of this type", t)}
			}
		}
		return nil
	}
	var first error // only the first is returned, so that it has one position
	check := func(err error) {
		if first == nil {
			first = err
		}
	}
	if a := e.Auction; a != nil {
		const at = "economy.auction."
		if len(a.Resources) == 0 || len(a.Resources) > MaxEconResources {
			check(&KeyError{at + "resources", fmt.Sprintf("%d resources: want 1..%d", len(a.Resources), MaxEconResources)})
		}
		seen := map[string]bool{}
		for i, r := range a.Resources {
			p := fmt.Sprintf("%sresources[%d].", at, i)
			if r.Name == "" {
				check(&KeyError{p + "name", "required"})
			} else if seen[r.Name] {
				check(&KeyError{p + "name", fmt.Sprintf("%q is offered twice", r.Name)})
			}
			seen[r.Name] = true
			check(inRange(p+"supply", r.Supply, 0, 1e9, true))
		}
		switch a.BudgetFrom {
		case "reputation":
		case "trust":
			if e.Identity == nil {
				check(&KeyError{at + "budget_from", "trust needs an economy.identity block"})
			}
		default:
			check(&KeyError{at + "budget_from", fmt.Sprintf("%q: want trust or reputation", a.BudgetFrom)})
		}
		check(inRange(at+"budget_scale", a.BudgetScale, 0, 1e6, true))
		check(inRange(at+"payoff_per_utility", a.PayoffPerUtility, 0, 1e6, false))
		check(intRange(at+"max_rounds", a.MaxRounds, 1, 10_000))
		check(inRange(at+"price_adjustment_rate", a.PriceAdjustmentRate, 0, 1, true))
		check(inRange(at+"convergence_tolerance", a.ConvergenceTolerance, 0, 1e6, true))
		check(inRange(at+"envy_tolerance", *a.EnvyTolerance, 0, 1e6, false))
		for _, t := range slices.Sorted(maps.Keys(a.Valuations)) {
			p := at + "valuations." + t
			if !slices.Contains(agents.Types, t) {
				check(&KeyError{p, fmt.Sprintf("%q: want an agent type %v", t, agents.Types)})
				continue
			}
			for _, r := range slices.Sorted(maps.Keys(a.Valuations[t])) {
				if !seen[r] {
					check(&KeyError{p + "." + r, fmt.Sprintf("%q is not an auctioned resource", r)})
					continue
				}
				check(inRange(p+"."+r, a.Valuations[t][r], 0, 1e6, false))
			}
		}
	}
	if m := e.Missions; m != nil {
		const at = "economy.missions."
		if len(m.Objectives) == 0 || len(m.Objectives) > MaxEconObjectives {
			check(&KeyError{at + "objectives", fmt.Sprintf("%d objectives: want 1..%d (a mission without objectives has no score)", len(m.Objectives), MaxEconObjectives)})
		}
		for i, o := range m.Objectives {
			p := fmt.Sprintf("%sobjectives[%d].", at, i)
			switch o.Metric {
			case economy.MetricAvgP, economy.MetricMinP, economy.MetricTotalCount, economy.MetricAcceptanceRate, economy.MetricTotalWelfare:
			default:
				check(&KeyError{p + "metric", fmt.Sprintf("%q: want avg_p, min_p, total_count, acceptance_rate or total_welfare", o.Metric)})
			}
			check(inRange(p+"target", o.Target, 0, 1e9, true))
			check(inRange(p+"weight", o.Weight, 0, 1e6, true))
		}
		check(inRange(at+"pool", m.Pool, 0, 1e9, true))
		check(intRange(at+"duration_epochs", m.DurationEpochs, 1, MaxEpochs))
		check(intRange(at+"min_participants", m.MinParticipants, 1, MaxAgents))
		switch m.RewardDistribution {
		case economy.RewardEqual, economy.RewardProportional, economy.RewardShapley:
		default:
			check(&KeyError{at + "reward_distribution", fmt.Sprintf("%q: want equal, proportional or shapley", m.RewardDistribution)})
		}
		switch m.Contribute {
		case "accepted", "all":
		default:
			check(&KeyError{at + "contribute", fmt.Sprintf("%q: want accepted or all", m.Contribute)})
		}
		check(types(at+"participants", m.Participants))
	}
	if k := e.Market; k != nil {
		const at = "economy.market."
		check(inRange(at+"price_per_quality", k.PricePerQuality, 0, 1e6, true))
		check(inRange(at+"spread", k.Spread, 0, 1, false))
		check(inRange(at+"latency_noise_ms", k.LatencyNoiseMS, 0, 1e6, false))
		check(intRange(at+"batch_interval_ticks", k.BatchIntervalTicks, 1, MaxStepsPerEpoch))
		check(intRange(at+"max_orders_per_tick", k.MaxOrdersPerTick, 1, 1_000_000))
		check(intRange(at+"halt_duration_ticks", k.HaltDurationTicks, 1, MaxStepsPerEpoch))
		check(inRange(at+"drop_threshold", k.DropThreshold, 0, 1, true))
		check(intRange(at+"window", k.Window, 2, 10_000))
	}
	if p := e.Permeability; p != nil {
		const at = "economy.permeability."
		check(inRange(at+"base_permeability", *p.BasePermeability, 0, 1, false))
		check(inRange(at+"threat_sensitivity", *p.ThreatSensitivity, 0, 1e3, false))
		check(inRange(at+"contagion_rate", *p.ContagionRate, 0, 1, false))
		check(inRange(at+"spillover_amplification", *p.SpilloverAmplification, 0, 1e3, false))
		check(inRange(at+"information_decay", *p.InformationDecay, 0, 1, false))
		check(inRange(at+"volatility_weight", *p.VolatilityWeight, 0, 1e6, false))
		check(inRange(at+"harm_weight", *p.HarmWeight, 0, 1e6, false))
		switch p.ThreatFrom {
		case "toxicity":
		case "volatility":
			if e.Market == nil {
				check(&KeyError{at + "threat_from", "volatility needs an economy.market block"})
			}
		default:
			check(&KeyError{at + "threat_from", fmt.Sprintf("%q: want volatility or toxicity", p.ThreatFrom)})
		}
		switch p.TrustFrom {
		case "reputation":
		case "identity":
			if e.Identity == nil {
				check(&KeyError{at + "trust_from", "identity needs an economy.identity block"})
			}
		default:
			check(&KeyError{at + "trust_from", fmt.Sprintf("%q: want identity or reputation", p.TrustFrom)})
		}
	}
	if id := e.Identity; id != nil {
		const at = "economy.identity."
		check(types(at+"proof_of_personhood", id.ProofOfPersonhood))
		check(intRange(at+"credential_expiry_epochs", id.CredentialExpiryEpochs, 1, MaxEpochs))
		check(inRange(at+"credential_min_reputation", *id.CredentialMinReputation, 0, 1, false))
	}
	if y := e.Sybil; y != nil {
		const at = "economy.sybil."
		check(inRange(at+"similarity_threshold", *y.SimilarityThreshold, 0, 1, false))
		check(inRange(at+"penalty_multiplier", *y.PenaltyMultiplier, 0, 1e3, false))
		check(inRange(at+"realtime_rate", *y.RealtimeRate, 0, 1e3, false))
		check(intRange(at+"max_cluster_size", y.MaxClusterSize, 1, MaxAgents))
		if y.RevokeCredentials && e.Identity == nil {
			check(&KeyError{at + "revoke_credentials", "needs an economy.identity block"})
		}
	}
	return first
}

// validate checks the economy criteria against the scenario's economy.
func (c *EconomyCriteria) validate(s *Scenario) error {
	const at = "success_criteria.economy."
	e := s.Economy
	if e == nil {
		e = &Economy{}
	}
	need := func(key string, set bool, present bool, block string) error {
		if set && !present {
			return &KeyError{at + key, "needs an economy." + block + " block"}
		}
		return nil
	}
	for _, err := range []error{
		need("max_auction_gini", c.MaxAuctionGini != nil, e.Auction != nil, "auction"),
		need("min_missions_succeeded", c.MinMissionsSucceeded != nil, e.Missions != nil, "missions"),
		need("max_free_rider_index", c.MaxFreeRiderIndex != nil, e.Missions != nil, "missions"),
		need("min_crashes", c.MinCrashes != nil, e.Market != nil, "market"),
		need("max_crashes", c.MaxCrashes != nil, e.Market != nil, "market"),
		need("min_containment", c.MinContainment != nil, e.Permeability != nil, "permeability"),
		need("max_spillover_harm", c.MaxSpilloverHarm != nil, e.Permeability != nil, "permeability"),
		need("sybil", c.Sybil != nil, e.Sybil != nil, "sybil"),
	} {
		if err != nil {
			return err
		}
	}
	for _, f := range []struct {
		key     string
		v       *float64
		lo, hi  float64
		openLow bool
	}{{"max_auction_gini", c.MaxAuctionGini, 0, 1, false}, {"max_free_rider_index", c.MaxFreeRiderIndex, 0, 1, false},
		{"min_containment", c.MinContainment, 0, 1, false}, {"max_spillover_harm", c.MaxSpilloverHarm, 0, 1e12, false}} {
		if f.v != nil {
			if err := inRange(at+f.key, *f.v, f.lo, f.hi, f.openLow); err != nil {
				return err
			}
		}
	}
	for _, f := range []struct {
		key    string
		v      *int
		lo, hi int
	}{{"min_missions_succeeded", c.MinMissionsSucceeded, 1, MaxEpochs}, {"min_crashes", c.MinCrashes, 1, MaxEpochs * MaxStepsPerEpoch},
		{"max_crashes", c.MaxCrashes, 0, MaxEpochs * MaxStepsPerEpoch}} {
		if f.v != nil {
			if err := intRange(at+f.key, *f.v, f.lo, f.hi); err != nil {
				return err
			}
		}
	}
	if c.Sybil != nil {
		if err := c.Sybil.validateAt(s, at+"sybil."); err != nil {
			return err
		}
	}
	return nil
}
