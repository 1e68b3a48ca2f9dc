package sandbox

// PayoffConfig parameterises the soft payoffs.
type PayoffConfig struct {
	SPlus  float64 `json:"s_plus" yaml:"s_plus"`   // surplus of a good interaction
	SMinus float64 `json:"s_minus" yaml:"s_minus"` // loss of a bad one
	H      float64 `json:"h" yaml:"h"`             // externality (harm) of a bad one
	Theta  float64 `json:"theta" yaml:"theta"`     // initiator's share of the surplus
	RhoA   float64 `json:"rho_a" yaml:"rho_a"`     // initiator's internalised harm
	RhoB   float64 `json:"rho_b" yaml:"rho_b"`     // counterparty's internalised harm
	WRep   float64 `json:"w_rep" yaml:"w_rep"`     // weight of the reputation change
}

// DefaultPayoffConfig: s⁺ 2, s⁻ 1, h 2, θ 0.5, ρ 0, w_rep 1.
func DefaultPayoffConfig() PayoffConfig {
	return PayoffConfig{SPlus: 2, SMinus: 1, H: 2, Theta: 0.5, WRep: 1}
}

// Interaction is one exchange between an initiator (a) and a counterparty (b).
type Interaction struct {
	ID           string       `json:"id,omitempty"`
	Initiator    string       `json:"initiator,omitempty"`
	Counterparty string       `json:"counterparty,omitempty"`
	Kind         string       `json:"kind,omitempty"`
	Observables  *Observables `json:"observables,omitempty"`
	VHat         float64      `json:"v_hat"`
	P            float64      `json:"p"`
	Accepted     bool         `json:"accepted"`
	Tau          float64      `json:"tau,omitempty"` // transfer a → b
	CA           float64      `json:"c_a,omitempty"` // a's governance cost
	CB           float64      `json:"c_b,omitempty"`
	RA           float64      `json:"r_a,omitempty"` // a's reputation change caused by this interaction
	RB           float64      `json:"r_b,omitempty"`
	GroundTruth  int          `json:"ground_truth,omitempty"` // +1 good, −1 bad, 0 unknown
	Epoch        int          `json:"epoch,omitempty"`
	Step         int          `json:"step,omitempty"`
}

// Payoff is one interaction's soft payoffs.
type Payoff struct {
	S   float64 `json:"s"`    // expected surplus p·s⁺ − (1−p)·s⁻
	E   float64 `json:"e"`    // expected externality (1−p)·h
	PiA float64 `json:"pi_a"` // initiator
	PiB float64 `json:"pi_b"` // counterparty
}

// Payoff computes S, E, π_a and π_b.
func (c PayoffConfig) Payoff(in Interaction) Payoff { return c.payoff(&in) }

func (c *PayoffConfig) payoff(in *Interaction) Payoff {
	p := in.P
	s := p*c.SPlus - (1-p)*c.SMinus
	e := (1 - p) * c.H
	return Payoff{
		S: s, E: e,
		PiA: c.Theta*s - in.Tau - in.CA - c.RhoA*e + c.WRep*in.RA,
		PiB: (1-c.Theta)*s + in.Tau - in.CB - c.RhoB*e + c.WRep*in.RB,
	}
}

// BreakEven is the p at which S = 0: s⁻/(s⁺+s⁻) (0.5 for a zero denominator).
func (c PayoffConfig) BreakEven() float64 {
	if d := c.SPlus + c.SMinus; d != 0 {
		return c.SMinus / d
	}
	return 0.5
}

// SocialBreakEven is the p at which S − E = 0: (s⁻+h)/(s⁺+s⁻+h).
func (c PayoffConfig) SocialBreakEven() float64 {
	if d := c.SPlus + c.SMinus + c.H; d != 0 {
		return (c.SMinus + c.H) / d
	}
	return 0.5
}
