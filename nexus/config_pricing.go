package nexus

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/swarm-dev/swarm/providers"
)

// This file holds the pricing: and compare: sections of the configuration
// (see docs/config.md): what a model costs and how compare ranks.

// DefaultMaxFabricationRate is compare.max_fabrication_rate in the shipped
// config.yml.
const DefaultMaxFabricationRate = 0.2

// ModelPrice is one model's price under pricing:, in USD per million
// tokens. Both prices must be given (0 is a price: a free local model).
type ModelPrice struct {
	InputPerMTok  *float64 `yaml:"input_per_mtok" json:"input_per_mtok"`
	OutputPerMTok *float64 `yaml:"output_per_mtok" json:"output_per_mtok"`
}

// Price is what a model costs per million tokens, and whether that is
// known. An unknown price is never taken as 0: a run's cost over calls of
// such a model is a lower bound, and the cost ceiling cannot act on them.
type Price struct {
	InputPerMTok, OutputPerMTok float64
	Known                       bool
}

// Cost is the price of u (0 when the price is unknown: check Known).
func (p Price) Cost(u providers.Usage) float64 {
	if !p.Known {
		return 0
	}
	return (float64(u.InputTokens)*p.InputPerMTok + float64(u.OutputTokens)*p.OutputPerMTok) / 1e6
}

// PriceOf is ref's price: its pricing: entry (kind:model), else its kind's
// input_per_mtok and output_per_mtok under providers: when either is set
// (not 0). A kind whose prices are both 0 (a local or third-party server
// whose models have no list price) leaves its models unpriced unless
// pricing: names them.
func (c *Config) PriceOf(ref providers.Ref) Price {
	if p, ok := c.Pricing[ref.String()]; ok && p.InputPerMTok != nil && p.OutputPerMTok != nil {
		return Price{InputPerMTok: *p.InputPerMTok, OutputPerMTok: *p.OutputPerMTok, Known: true}
	}
	kc := c.Providers[ref.Kind]
	if kc.InputPerMTok != 0 || kc.OutputPerMTok != 0 {
		return Price{InputPerMTok: kc.InputPerMTok, OutputPerMTok: kc.OutputPerMTok, Known: true}
	}
	return Price{}
}

// Unpriced lists the models of refs (kind:model, sorted, once each) that
// have no known price.
func (c *Config) Unpriced(refs ...providers.Ref) []string {
	var out []string
	for _, r := range refs {
		if r.IsZero() || c.PriceOf(r).Known {
			continue
		}
		if s := r.String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// FormatCost is a cost in USD as reports and the terminal show it, with the
// models whose calls had no known price: "$0.0123" when every call was
// priced; "≥ $0.0123 (+ unpriced calls on X)" when some were not (the sum
// of the priced calls is a lower bound); "— (no price for X)" when no call
// was priced. Unpriced calls are never summed as 0.
func FormatCost(usd float64, unpriced []string) string {
	if len(unpriced) == 0 {
		return fmt.Sprintf("$%.4f", usd)
	}
	on := strings.Join(unpriced, ", ")
	if usd == 0 {
		return "— (no price for " + on + ")"
	}
	return fmt.Sprintf("≥ $%.4f (+ unpriced calls on %s)", usd, on)
}

// CeilingWarning is the briefing's warning that the cost ceiling cannot act
// on the calls of unpriced models ("" when every model has a price).
func CeilingWarning(unpriced []string) string {
	if len(unpriced) == 0 {
		return ""
	}
	return fmt.Sprintf("no known price for %s: the cost ceiling cannot act on those calls and every cost shown leaves them out (a lower bound); give prices under pricing: in the config (see docs/config.md)",
		strings.Join(unpriced, ", "))
}

// validatePricing checks the pricing: and compare: sections.
func (c *Config) validatePricing(add func(key, format string, args ...any)) {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, k := range sortedKeys(c.Pricing) {
		key := "pricing." + k
		ref, err := providers.ParseRef(k)
		if err != nil {
			add(key, "%v", err)
			continue
		}
		if ref.String() != k {
			add(key, "write the model as %q (the kind in lower case)", ref.String())
		}
		p := c.Pricing[k]
		for _, f := range []struct {
			name string
			v    *float64
		}{{"input_per_mtok", p.InputPerMTok}, {"output_per_mtok", p.OutputPerMTok}} {
			switch {
			case f.v == nil:
				add(key+"."+f.name, "missing: give the price in USD per million tokens (0 for a free model)")
			case !(*f.v >= 0) || math.IsInf(*f.v, 0):
				add(key+"."+f.name, "%s is out of range: must be a finite number, not negative (USD per million tokens)", num(*f.v))
			}
		}
	}
	if r := c.Compare.MaxFabricationRate; !(r >= 0 && r <= 1) {
		add("compare.max_fabrication_rate", "%s is out of range 0..1 (the share of fabricated citations above which a contender is untrusted; 1 turns the rule off)", num(r))
	}
}
