package economy

import (
	"fmt"
	"io"
	"strconv"
)

// CrashInput is the file of `swarm sandbox econ crash`.
type CrashInput struct {
	Config *DetectorConfig `yaml:"config"` // nil: DefaultDetectorConfig
	Prices []PriceInput    `yaml:"prices"` // in tick order
}

// PriceInput is one price of a CrashInput.
type PriceInput struct {
	Tick  *int     `yaml:"tick"`
	Price *float64 `yaml:"price"`
}

// CrashFileReport is the result of a crash file.
type CrashFileReport struct {
	Crashes    []CrashReport `json:"crashes"`
	Volatility *float64      `json:"volatility,omitempty"` // after the last price; absent: undefined
}

// ReadCrashFile reads a crash file (name names it in errors) and evaluates
// it.
func ReadCrashFile(name string, r io.Reader) (*CrashFileReport, error) {
	cfg := DefaultDetectorConfig()
	return evaluateFile(name, r, &CrashInput{Config: &cfg}, (*CrashInput).Evaluate)
}

// Evaluate checks the input and runs the flash-crash detector over it.
func (f *CrashInput) Evaluate() (*CrashFileReport, error) {
	cfg := DefaultDetectorConfig()
	if f.Config != nil {
		cfg = *f.Config
	}
	d, err := NewDetector(cfg)
	if err != nil {
		return nil, configErr(err, "drop_threshold", "window")
	}
	if cfg.Window > MaxDetectorWindow {
		return nil, overMax("config.window", cfg.Window, MaxDetectorWindow)
	}
	if len(f.Prices) == 0 {
		return nil, fieldErr("prices", "give at least one {tick, price}")
	}
	for i, p := range f.Prices {
		path := fmt.Sprintf("prices[%d]", i)
		switch {
		case p.Tick == nil:
			return nil, fieldErr(path+".tick", "missing")
		case p.Price == nil:
			return nil, fieldErr(path+".price", "missing")
		case *p.Price < 0:
			return nil, fieldErr(path+".price", "%v is negative", *p.Price)
		case i > 0 && *p.Tick <= *f.Prices[i-1].Tick:
			return nil, fieldErr(path+".tick", "%d does not follow tick %d", *p.Tick, *f.Prices[i-1].Tick)
		}
		d.Update(*p.Tick, *p.Price, nil)
	}
	return &CrashFileReport{Crashes: crashReports(d.Crashes(), false), Volatility: optional(d.Volatility())}, nil
}

// PermeabilityInput is the file of `swarm sandbox econ permeability`.
type PermeabilityInput struct {
	Config    *PermeabilityConfig `yaml:"config"` // nil: DefaultPermeabilityConfig
	Effective []struct {
		Threat *float64 `yaml:"threat"` // nil: 0
		Trust  *float64 `yaml:"trust"`  // nil: 0.5
	} `yaml:"effective"`
	Contagion []struct {
		P            *float64 `yaml:"p"`
		Permeability *float64 `yaml:"permeability"`
	} `yaml:"contagion"`
	Optimal []struct {
		Interactions []InteractionInput `yaml:"interactions"`
		HarmWeight   *float64           `yaml:"harm_weight"` // nil: 1
	} `yaml:"optimal"`
}

// PermeabilityReport is the result of a permeability file: one number per
// input entry, in input order.
type PermeabilityReport struct {
	Effective []float64 `json:"effective"`
	Contagion []float64 `json:"contagion"`
	Optimal   []float64 `json:"optimal"`
}

// ReadPermeabilityFile reads a permeability file (name names it in errors)
// and evaluates it.
func ReadPermeabilityFile(name string, r io.Reader) (*PermeabilityReport, error) {
	cfg := DefaultPermeabilityConfig()
	return evaluateFile(name, r, &PermeabilityInput{Config: &cfg}, (*PermeabilityInput).Evaluate)
}

// Evaluate checks the input and computes every entry.
func (f *PermeabilityInput) Evaluate() (*PermeabilityReport, error) {
	cfg := DefaultPermeabilityConfig()
	if f.Config != nil {
		cfg = *f.Config
	}
	if err := cfg.Validate(); err != nil {
		return nil, configErr(err, "base_permeability", "information_decay", "contagion_rate", "spillover_amplification", "threat_sensitivity")
	}
	if len(f.Effective)+len(f.Contagion)+len(f.Optimal) == 0 {
		return nil, fieldErr("effective", "nothing to compute: give effective, contagion or optimal")
	}
	out := &PermeabilityReport{Effective: []float64{}, Contagion: []float64{}, Optimal: []float64{}}
	for i, e := range f.Effective {
		p := fmt.Sprintf("effective[%d]", i)
		threat, trust := 0.0, 0.5 // the reference's defaults
		if e.Threat != nil {
			threat = *e.Threat
		}
		if e.Trust != nil {
			trust = *e.Trust
		}
		if err := in01(p+".threat", threat); err != nil {
			return nil, err
		}
		if err := in01(p+".trust", trust); err != nil {
			return nil, err
		}
		out.Effective = append(out.Effective, EffectivePermeability(cfg, threat, trust))
	}
	for i, c := range f.Contagion {
		p := fmt.Sprintf("contagion[%d]", i)
		switch {
		case c.P == nil:
			return nil, fieldErr(p+".p", "missing")
		case c.Permeability == nil:
			return nil, fieldErr(p+".permeability", "missing")
		}
		if err := in01(p+".p", *c.P); err != nil {
			return nil, err
		}
		if err := in01(p+".permeability", *c.Permeability); err != nil {
			return nil, err
		}
		out.Contagion = append(out.Contagion, ContagionProbability(cfg, *c.P, *c.Permeability))
	}
	for i, o := range f.Optimal {
		p := fmt.Sprintf("optimal[%d]", i)
		w := 1.0
		if o.HarmWeight != nil {
			w = *o.HarmWeight
		}
		if w < 0 {
			return nil, fieldErr(p+".harm_weight", "%v is negative", w)
		}
		var ixs []Interaction
		for j, in := range o.Interactions {
			x, err := in.check(fmt.Sprintf("%s.interactions[%d]", p, j), false)
			if err != nil {
				return nil, err
			}
			ixs = append(ixs, x)
		}
		v, err := OptimalPermeability(cfg, ixs, w, 10)
		if err != nil {
			return nil, err
		}
		out.Optimal = append(out.Optimal, v)
	}
	return out, nil
}

// IdentityInput is the file of `swarm sandbox econ identity`.
type IdentityInput struct {
	Config *struct {
		CredentialExpiryEpochs *int `yaml:"credential_expiry_epochs"`
	} `yaml:"config"`
	Identities []struct {
		ID                string `yaml:"id"`
		ProofOfPersonhood bool   `yaml:"proof_of_personhood"`
		Credentials       []struct {
			IssuedEpoch *int `yaml:"issued_epoch"`
			Revoked     bool `yaml:"revoked"`
		} `yaml:"credentials"`
	} `yaml:"identities"`
	Epochs []int `yaml:"epochs"`
}

// IdentityReport is the result of an identity file: the trust score of
// each identity (in input order) at each epoch (in input order).
type IdentityReport struct {
	Trust Ordered[Ordered[float64]] `json:"trust"`
}

// ReadIdentityFile reads an identity file (name names it in errors) and
// evaluates it.
func ReadIdentityFile(name string, r io.Reader) (*IdentityReport, error) {
	return evaluateFile(name, r, &IdentityInput{}, (*IdentityInput).Evaluate)
}

// Evaluate checks the input, registers the identities and scores them.
func (f *IdentityInput) Evaluate() (*IdentityReport, error) {
	cfg := DefaultIdentityConfig()
	if f.Config != nil && f.Config.CredentialExpiryEpochs != nil {
		cfg.CredentialExpiryEpochs = *f.Config.CredentialExpiryEpochs
	}
	r, err := NewRegistry(cfg)
	if err != nil {
		return nil, configErr(err, "credential_expiry_epochs")
	}
	if cfg.CredentialExpiryEpochs > MaxCredentialExpiryEpochs {
		return nil, overMax("config.credential_expiry_epochs", cfg.CredentialExpiryEpochs, MaxCredentialExpiryEpochs)
	}
	switch {
	case len(f.Identities) == 0:
		return nil, fieldErr("identities", "give at least one identity")
	case len(f.Epochs) == 0:
		return nil, fieldErr("epochs", "give at least one epoch")
	}
	var ids []*Identity
	for i, in := range f.Identities {
		p := fmt.Sprintf("identities[%d]", i)
		if in.ID == "" {
			return nil, fieldErr(p+".id", "missing")
		}
		id, err := r.CreateIdentity(in.ID, "", in.ProofOfPersonhood, 0)
		if err != nil {
			return nil, fieldErr(p+".id", "%s: %v", in.ID, err)
		}
		for j, c := range in.Credentials {
			if c.IssuedEpoch == nil {
				return nil, fieldErr(fmt.Sprintf("%s.credentials[%d].issued_epoch", p, j), "missing")
			}
			cr, err := r.Issue(in.ID, "credential", nil, *c.IssuedEpoch, "")
			if err != nil {
				return nil, err
			}
			if c.Revoked {
				r.Revoke(cr.ID)
			}
		}
		ids = append(ids, id)
	}
	// An epoch listed twice is one key, in its first place: the keys are
	// made once here, not looked up again for every identity.
	var epochs []int
	var keys []string
	seen := map[int]bool{}
	for _, e := range f.Epochs {
		if !seen[e] {
			seen[e] = true
			epochs, keys = append(epochs, e), append(keys, strconv.Itoa(e))
		}
	}
	out := &IdentityReport{Trust: Ordered[Ordered[float64]]{}}
	for _, id := range ids {
		per := make(Ordered[float64], len(epochs))
		for i, e := range epochs {
			per[i] = KeyValue[float64]{keys[i], id.TrustScore(e)}
		}
		out.Trust.Set(id.Agent, per)
	}
	return out, nil
}
