package economy

import (
	"fmt"
	"io"

	"github.com/goccy/go-yaml"
)

// AuctionInput is the file of `swarm sandbox econ auction`.
type AuctionInput struct {
	Config *AuctionConfig `yaml:"config"` // nil: DefaultAuctionConfig
	Supply yaml.MapSlice  `yaml:"supply"` // resource: quantity, in order
	Bids   []BidInput     `yaml:"bids"`
}

// BidInput is one bid of an AuctionInput.
type BidInput struct {
	Agent      string             `yaml:"agent"`
	Budget     *float64           `yaml:"budget"`
	Valuations map[string]float64 `yaml:"valuations"`
}

// AuctionReport is the result of an auction file.
type AuctionReport struct {
	Converged      bool                      `json:"converged"`
	Rounds         int                       `json:"rounds"`
	Prices         Ordered[float64]          `json:"prices"`      // in supply order
	Allocations    Ordered[AllocationReport] `json:"allocations"` // in bid order
	EnvyFree       bool                      `json:"envy_free"`
	EnvyViolations []EnvyViolation           `json:"envy_violations"`
	TotalUtility   float64                   `json:"total_utility"`
	Gini           *float64                  `json:"gini,omitempty"` // absent: undefined
}

// AllocationReport is what one agent got.
type AllocationReport struct {
	PricePaid float64          `json:"price_paid"`
	Resources Ordered[float64] `json:"resources"` // in supply order
	Utility   float64          `json:"utility"`
}

// ReadAuctionFile reads an auction file (name names it in errors) and
// evaluates it.
func ReadAuctionFile(name string, r io.Reader) (*AuctionReport, error) {
	cfg := DefaultAuctionConfig()
	return evaluateFile(name, r, &AuctionInput{Config: &cfg}, (*AuctionInput).Evaluate)
}

// Evaluate checks the input and runs the auction.
func (f *AuctionInput) Evaluate() (*AuctionReport, error) {
	cfg := DefaultAuctionConfig()
	if f.Config != nil {
		cfg = *f.Config
	}
	if err := cfg.Validate(); err != nil {
		return nil, configErr(err, "max_rounds", "price_adjustment_rate", "convergence_tolerance", "envy_tolerance")
	}
	if cfg.MaxRounds > MaxAuctionRounds {
		return nil, overMax("config.max_rounds", cfg.MaxRounds, MaxAuctionRounds)
	}
	if len(f.Supply) == 0 {
		return nil, fieldErr("supply", "give at least one resource (resource: quantity)")
	}
	var supply []Supply
	seen := map[string]bool{}
	for _, it := range f.Supply {
		name := fmt.Sprint(it.Key)
		q, ok := number(it.Value)
		switch {
		case !ok:
			return nil, fieldErr("supply."+name, "want a number")
		case q < 0:
			return nil, fieldErr("supply."+name, "quantity %v is negative", q)
		case seen[name]:
			return nil, fieldErr("supply."+name, "resource listed twice")
		}
		seen[name] = true
		supply = append(supply, Supply{Resource: name, Quantity: q})
	}
	if len(f.Bids) == 0 {
		return nil, fieldErr("bids", "give at least one bid {agent, budget, valuations}")
	}
	var bids []Bid
	agents := map[string]bool{}
	for i, bd := range f.Bids {
		p := fmt.Sprintf("bids[%d]", i)
		switch {
		case bd.Agent == "":
			return nil, fieldErr(p+".agent", "missing")
		case agents[bd.Agent]:
			return nil, fieldErr(p+".agent", "agent %q bids twice", bd.Agent)
		case bd.Budget == nil:
			return nil, fieldErr(p+".budget", "missing")
		case *bd.Budget < 0:
			return nil, fieldErr(p+".budget", "%v is negative", *bd.Budget)
		}
		agents[bd.Agent] = true
		bids = append(bids, Bid{Agent: bd.Agent, Budget: *bd.Budget, Valuations: bd.Valuations})
	}
	r, err := RunAuction(cfg, bids, supply)
	if err != nil {
		return nil, err
	}
	out := &AuctionReport{Converged: r.Converged, Rounds: r.Rounds, EnvyFree: r.EnvyFree,
		EnvyViolations: nonNil(r.EnvyViolations), TotalUtility: r.TotalUtility,
		Prices: Ordered[float64]{}, Allocations: Ordered[AllocationReport]{}}
	for i, s := range supply {
		out.Prices.Set(s.Resource, r.Prices[i])
	}
	for _, a := range r.Allocations {
		res := Ordered[float64]{}
		for _, s := range supply {
			if q, ok := a.Resources[s.Resource]; ok {
				res.Set(s.Resource, q)
			}
		}
		out.Allocations.Set(a.Agent, AllocationReport{PricePaid: a.PricePaid, Resources: res, Utility: a.Utility})
	}
	out.Gini = optional(Gini(r.Utilities()))
	return out, nil
}
