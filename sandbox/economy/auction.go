package economy

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ErrInvalidConfig is wrapped by every configuration error of the package.
var ErrInvalidConfig = errors.New("invalid configuration")

// AuctionConfig configures the Dworkin-style auction. The reference's
// initial_endowment is validated there but never read, so it is absent here:
// each bid carries its own budget.
type AuctionConfig struct {
	MaxRounds            int     `json:"max_rounds" yaml:"max_rounds"`                       // ≥ 1 (50)
	PriceAdjustmentRate  float64 `json:"price_adjustment_rate" yaml:"price_adjustment_rate"` // α in (0, 1] (0.1)
	ConvergenceTolerance float64 `json:"convergence_tolerance" yaml:"convergence_tolerance"` // > 0 (0.01)
	EnvyTolerance        float64 `json:"envy_tolerance" yaml:"envy_tolerance"`               // ε ≥ 0 (0.05)
}

// DefaultAuctionConfig is the reference's default.
func DefaultAuctionConfig() AuctionConfig {
	return AuctionConfig{MaxRounds: 50, PriceAdjustmentRate: 0.1, ConvergenceTolerance: 0.01, EnvyTolerance: 0.05}
}

// Validate reports the first out-of-range field by its YAML name.
func (c AuctionConfig) Validate() error {
	switch {
	case c.MaxRounds < 1:
		return fmt.Errorf("%w: max_rounds = %d, want ≥ 1", ErrInvalidConfig, c.MaxRounds)
	case !(c.PriceAdjustmentRate > 0 && c.PriceAdjustmentRate <= 1):
		return fmt.Errorf("%w: price_adjustment_rate = %v, want in (0, 1]", ErrInvalidConfig, c.PriceAdjustmentRate)
	case !(c.ConvergenceTolerance > 0):
		return fmt.Errorf("%w: convergence_tolerance = %v, want > 0", ErrInvalidConfig, c.ConvergenceTolerance)
	case !(c.EnvyTolerance >= 0):
		return fmt.Errorf("%w: envy_tolerance = %v, want ≥ 0", ErrInvalidConfig, c.EnvyTolerance)
	}
	return nil
}

// Supply is one offered resource; the auction keeps the order given.
type Supply struct {
	Resource string
	Quantity float64
}

// Bid is one agent's bid: a budget and a utility per unit of each resource.
// Valuations of resources that are not offered are ignored.
type Bid struct {
	Agent      string
	Budget     float64
	Valuations map[string]float64
}

// Allocation is what one agent receives. Resources holds only what it bought.
type Allocation struct {
	Agent     string
	Resources map[string]float64
	PricePaid float64
	Utility   float64
}

// EnvyViolation says that Envious values Envied's affordable bundle more
// than its own by Gap (> ε).
type EnvyViolation struct {
	Envious string  `json:"envious_agent"`
	Envied  string  `json:"envied_agent"`
	Gap     float64 `json:"utility_gap"`
}

// AuctionResult is the outcome of one auction.
type AuctionResult struct {
	Allocations    []Allocation // in bid order
	Prices         []float64    // clearing prices, in supply order
	Rounds         int
	Converged      bool
	MaxExcess      float64 // the last round's max |excess demand|
	EnvyFree       bool
	EnvyViolations []EnvyViolation
	TotalUtility   float64
}

// Utilities returns the agents' utilities in bid order (the input of Gini).
func (r AuctionResult) Utilities() []float64 {
	u := make([]float64, len(r.Allocations))
	for i, a := range r.Allocations {
		u[i] = a.Utility
	}
	return u
}

// RunAuction runs the tâtonnement of the reference: prices start at 1, move
// by p·(1 + α·excess/supply) (floored at 0.01) for at most MaxRounds rounds,
// then demand at the final prices is rationed proportionally so that no
// resource is over-allocated. It is a pure function of its arguments.
func RunAuction(cfg AuctionConfig, bids []Bid, supply []Supply) (AuctionResult, error) {
	if err := cfg.Validate(); err != nil {
		return AuctionResult{}, err
	}
	if len(bids) == 0 || len(supply) == 0 {
		return AuctionResult{Converged: true, EnvyFree: true}, nil
	}
	idx := make(map[string]int, len(supply))
	for i, s := range supply {
		if _, dup := idx[s.Resource]; dup {
			return AuctionResult{}, fmt.Errorf("%w: resource %q offered twice", ErrInvalidConfig, s.Resource)
		}
		idx[s.Resource] = i
	}
	prices := make([]float64, len(supply))
	for i := range prices {
		prices[i] = 1.0
	}
	res := AuctionResult{}
	for k := 1; k <= cfg.MaxRounds; k++ {
		_, total := allDemand(bids, supply, idx, prices)
		m := 0.0
		for r, s := range supply {
			e := total[r] - s.Quantity
			m = max(m, math.Abs(e))
			prices[r] = max(0.01, prices[r]*(1+cfg.PriceAdjustmentRate*e/max(s.Quantity, 1e-10)))
		}
		res.Rounds, res.MaxExcess = k, m
		if m < cfg.ConvergenceTolerance {
			res.Converged = true
			break
		}
	}
	q, total := allDemand(bids, supply, idx, prices)
	for r, s := range supply {
		if total[r] > s.Quantity && total[r] > 0 {
			f := s.Quantity / total[r]
			for a := range q {
				q[a][r] *= f
			}
		}
	}
	res.Prices = prices
	res.Allocations = make([]Allocation, len(bids))
	for a, b := range bids {
		al := Allocation{Agent: b.Agent, Resources: map[string]float64{}}
		for r, s := range supply {
			if q[a][r] > 0 {
				al.Resources[s.Resource] = q[a][r]
			}
			al.Utility += b.Valuations[s.Resource] * q[a][r]
			al.PricePaid += prices[r] * q[a][r]
		}
		res.Allocations[a] = al
		res.TotalUtility += al.Utility
	}
	// Envy: i envies j when j's bundle is affordable to i (within ε) and
	// worth more than ε above i's own utility to i.
	for i, bi := range bids {
		for j := range bids {
			if i == j {
				continue
			}
			var cost, worth float64
			for r, s := range supply {
				cost += prices[r] * q[j][r]
				worth += bi.Valuations[s.Resource] * q[j][r]
			}
			if cost > bi.Budget+cfg.EnvyTolerance {
				continue
			}
			if gap := worth - res.Allocations[i].Utility; gap > cfg.EnvyTolerance {
				res.EnvyViolations = append(res.EnvyViolations, EnvyViolation{Envious: bi.Agent, Envied: bids[j].Agent, Gap: gap})
			}
		}
	}
	res.EnvyFree = len(res.EnvyViolations) == 0
	return res, nil
}

// allDemand returns each bid's demand (indexed by supply position) and the
// total per resource.
func allDemand(bids []Bid, supply []Supply, idx map[string]int, prices []float64) ([][]float64, []float64) {
	q := make([][]float64, len(bids))
	total := make([]float64, len(supply))
	for a, b := range bids {
		q[a] = demand(b, supply, idx, prices)
		for r := range total {
			total[r] += q[a][r]
		}
	}
	return q, total
}

// demand walks the offered resources by descending (value/price, name,
// value) and buys as much of each as the remaining budget and the supply
// allow. Zero and negative valuations are bought too, as in the reference.
func demand(b Bid, supply []Supply, idx map[string]int, prices []float64) []float64 {
	type cand struct {
		r        int
		name     string
		v, ratio float64
	}
	var cs []cand
	for name, v := range b.Valuations {
		r, ok := idx[name]
		if !ok || !(prices[r] > 0) {
			continue
		}
		cs = append(cs, cand{r: r, name: name, v: v, ratio: v / prices[r]})
	}
	slices.SortFunc(cs, func(x, y cand) int {
		switch {
		case x.ratio != y.ratio:
			if x.ratio > y.ratio {
				return -1
			}
			return 1
		case x.name != y.name:
			return -strings.Compare(x.name, y.name)
		case x.v > y.v:
			return -1
		case x.v < y.v:
			return 1
		}
		return 0
	})
	q := make([]float64, len(supply))
	budget := b.Budget
	for _, c := range cs {
		if budget <= 0 {
			break
		}
		x := min(budget/prices[c.r], supply[c.r].Quantity)
		if x > 0 {
			q[c.r] = x
			budget -= x * prices[c.r]
		}
	}
	return q
}
