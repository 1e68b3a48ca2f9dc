package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/internal/yamlx"
	"github.com/swarm-dev/swarm/providers"

	swarm "github.com/swarm-dev/swarm"
)

// This file holds the pricing: and compare: sections of the configuration
// (see docs/config.md): what a model costs and how compare ranks.

// DefaultMaxFabricationRate is compare.max_fabrication_rate in the shipped
// config.yml.
const DefaultMaxFabricationRate = 0.2

// ModelPrice is one model's price, in USD per million tokens: an entry of
// pricing: in the config or of the built-in table (pricing.yaml). Input and
// output must be given (0 is a price: a free local model); the others are
// optional (see Price for what stands in for them). AsOf (YYYY-MM-DD) and
// Source (the provider's pricing page) say when and where the price was
// published: the built-in table gives both; a config entry may.
type ModelPrice struct {
	InputPerMTok      *float64 `yaml:"input_per_mtok" json:"input_per_mtok"`
	OutputPerMTok     *float64 `yaml:"output_per_mtok" json:"output_per_mtok"`
	CacheReadPerMTok  *float64 `yaml:"cache_read_per_mtok" json:"cache_read_per_mtok,omitempty"`
	CacheWritePerMTok *float64 `yaml:"cache_write_per_mtok" json:"cache_write_per_mtok,omitempty"`
	ReasoningPerMTok  *float64 `yaml:"reasoning_per_mtok" json:"reasoning_per_mtok,omitempty"`
	AsOf              string   `yaml:"as_of" json:"as_of,omitempty"`
	Source            string   `yaml:"source" json:"source,omitempty"`
}

// Where a Price comes from (Price.Origin).
const (
	PriceFromConfig = "config" // the config's pricing: entry for the model
	PriceFromTable  = "table"  // the built-in pricing table (pricing.yaml)
	PriceFromKind   = "kind"   // its kind's input_per_mtok and output_per_mtok under providers:
)

// Price is what a model costs per million tokens, each kind of token at its
// own rate, and whether that is known. An unknown price is never taken as
// 0: a run's cost over calls of such a model is a lower bound, and the cost
// ceiling cannot act on them.
//
// A rate the price does not give is stood in for, and the stand-in is
// recorded: cache reads and cache writes at the input rate
// (CacheReadAssumed, CacheWriteAssumed; telemetry and report.md say so when
// a run had such tokens), reasoning at the output rate (how every provider
// swarm knows bills it).
type Price struct {
	InputPerMTok, OutputPerMTok                           float64
	CacheReadPerMTok, CacheWritePerMTok, ReasoningPerMTok float64
	CacheReadAssumed, CacheWriteAssumed                   bool
	Known                                                 bool
	// Origin is where the price comes from (PriceFrom*); AsOf and Source
	// are the entry's, when it gives them.
	Origin, AsOf, Source string
}

// Cost is the price of u (0 when the price is unknown: check Known), each
// part at its own rate: the input tokens neither read from nor written to
// the cache at the input rate, cache reads and cache writes at theirs, the
// output tokens that are not reasoning at the output rate, reasoning at
// its. Usage's details are parts of its totals (providers.Usage); a part
// larger than what is left of its total (an adapter's error) leaves the
// rest at 0 rather than a negative count.
func (p Price) Cost(u providers.Usage) float64 {
	if !p.Known {
		return 0
	}
	cacheRead, cacheWrite := max(0, u.CacheReadTokens), max(0, u.CacheWriteTokens)
	reasoning := max(0, u.ReasoningTokens)
	plainIn := max(0, u.InputTokens-cacheRead-cacheWrite)
	plainOut := max(0, u.OutputTokens-reasoning)
	return (float64(plainIn)*p.InputPerMTok + float64(cacheRead)*p.CacheReadPerMTok + float64(cacheWrite)*p.CacheWritePerMTok +
		float64(plainOut)*p.OutputPerMTok + float64(reasoning)*p.ReasoningPerMTok) / 1e6
}

// price is the Price of a complete entry (input and output given).
func (m ModelPrice) price(origin string) Price {
	p := Price{InputPerMTok: *m.InputPerMTok, OutputPerMTok: *m.OutputPerMTok, Known: true, Origin: origin, AsOf: m.AsOf, Source: m.Source}
	p.CacheReadPerMTok, p.CacheReadAssumed = p.InputPerMTok, true
	if m.CacheReadPerMTok != nil {
		p.CacheReadPerMTok, p.CacheReadAssumed = *m.CacheReadPerMTok, false
	}
	p.CacheWritePerMTok, p.CacheWriteAssumed = p.InputPerMTok, true
	if m.CacheWritePerMTok != nil {
		p.CacheWritePerMTok, p.CacheWriteAssumed = *m.CacheWritePerMTok, false
	}
	p.ReasoningPerMTok = p.OutputPerMTok
	if m.ReasoningPerMTok != nil {
		p.ReasoningPerMTok = *m.ReasoningPerMTok
	}
	return p
}

func (m ModelPrice) complete() bool { return m.InputPerMTok != nil && m.OutputPerMTok != nil }

// PriceOf is ref's price: its pricing: entry in the config (kind:model),
// else its entry in the built-in pricing table (BuiltinPrices), else its
// kind's input_per_mtok and output_per_mtok under providers: when either is
// set (not 0). A kind whose prices are both 0 (a local or third-party
// server whose models have no list price) leaves the models neither entry
// names unpriced.
func (c *Config) PriceOf(ref providers.Ref) Price {
	if p, ok := c.Pricing[ref.String()]; ok && p.complete() {
		return p.price(PriceFromConfig)
	}
	if p, ok := BuiltinPrices()[ref.String()]; ok {
		return p.price(PriceFromTable)
	}
	kc := c.Providers[ref.Kind]
	if kc.InputPerMTok != 0 || kc.OutputPerMTok != 0 {
		return ModelPrice{InputPerMTok: &kc.InputPerMTok, OutputPerMTok: &kc.OutputPerMTok}.price(PriceFromKind)
	}
	return Price{}
}

// builtinPrices is pricing.yaml, decoded and checked once.
var builtinPrices = sync.OnceValues(func() (map[string]ModelPrice, error) {
	return parsePricingTable("pricing.yaml (embedded)", swarm.DefaultPricing)
})

// BuiltinPrices is the built-in pricing table (pricing.yaml at the
// repository's root, embedded): kind:model -> its price, each with its
// as_of date and source. Callers must not modify it.
func BuiltinPrices() map[string]ModelPrice {
	m, err := builtinPrices()
	if err != nil {
		// The table is part of the binary and TestBuiltinPricingTable
		// checks it: an error here is a bug in the build.
		panic(err)
	}
	return m
}

// parsePricingTable decodes a pricing table (a document whose pricing: has
// the shape of the config's) strictly and checks every entry, which must
// give as_of and source.
func parsePricingTable(name string, data []byte) (map[string]ModelPrice, error) {
	var doc struct {
		Pricing map[string]ModelPrice `yaml:"pricing"`
	}
	if _, err := yamlx.Decode(name, data, &doc, yamlx.DefaultLimits); err != nil {
		return nil, err
	}
	var errs []string
	add := func(key, format string, args ...any) {
		errs = append(errs, key+": "+fmt.Sprintf(format, args...))
	}
	for _, k := range slices.Sorted(maps.Keys(doc.Pricing)) {
		p := doc.Pricing[k]
		validateModelPrice("pricing."+k, k, p, add)
		if p.AsOf == "" {
			add("pricing."+k+".as_of", "missing: the built-in table says when each price held")
		}
		if p.Source == "" {
			add("pricing."+k+".source", "missing: the built-in table says where each price is published")
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %s", name, strings.Join(errs, "; "))
	}
	return doc.Pricing, nil
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
	for _, k := range slices.Sorted(maps.Keys(c.Pricing)) {
		validateModelPrice("pricing."+k, k, c.Pricing[k], add)
	}
	if r := c.Compare.MaxFabricationRate; !(r >= 0 && r <= 1) {
		add("compare.max_fabrication_rate", "%s is out of range 0..1 (the share of fabricated citations above which a contender is untrusted; 1 turns the rule off)", num(r))
	}
}

// validateModelPrice checks one price entry (key is where it is, model its
// kind:model): the model's spelling, input and output given, every rate a
// finite number not below 0, as_of a date.
func validateModelPrice(key, model string, p ModelPrice, add func(key, format string, args ...any)) {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	ref, err := providers.ParseRef(model)
	if err != nil {
		add(key, "%v", err)
		return
	}
	if ref.String() != model {
		add(key, "write the model as %q (the kind in lower case)", ref.String())
	}
	for _, f := range []struct {
		name     string
		v        *float64
		required bool
	}{
		{"input_per_mtok", p.InputPerMTok, true}, {"output_per_mtok", p.OutputPerMTok, true},
		{"cache_read_per_mtok", p.CacheReadPerMTok, false}, {"cache_write_per_mtok", p.CacheWritePerMTok, false},
		{"reasoning_per_mtok", p.ReasoningPerMTok, false},
	} {
		switch {
		case f.v == nil && f.required:
			add(key+"."+f.name, "missing: give the price in USD per million tokens (0 for a free model)")
		case f.v == nil:
		case !(*f.v >= 0) || math.IsInf(*f.v, 0):
			add(key+"."+f.name, "%s is out of range: must be a finite number, not negative (USD per million tokens)", num(*f.v))
		}
	}
	if p.AsOf != "" {
		if _, err := time.Parse(time.DateOnly, p.AsOf); err != nil {
			add(key+".as_of", "%q is not a date: write it as YYYY-MM-DD (quoted)", p.AsOf)
		}
	}
}

// TokenDetail is the parts of a token count worth showing beside "in / out":
// the input read from and written to the provider's prompt cache and the
// output spent reasoning, each only when reported (not 0): "1200 cache
// read (48% of input), 300 reasoning"; "" when none was.
func TokenDetail(input, reasoning, cacheRead, cacheWrite int) string {
	var parts []string
	if cacheRead > 0 {
		s := fmt.Sprintf("%d cache read", cacheRead)
		if input > 0 {
			s += fmt.Sprintf(" (%.0f%% of input)", 100*float64(cacheRead)/float64(input))
		}
		parts = append(parts, s)
	}
	if cacheWrite > 0 {
		parts = append(parts, fmt.Sprintf("%d cache write", cacheWrite))
	}
	if reasoning > 0 {
		parts = append(parts, fmt.Sprintf("%d reasoning", reasoning))
	}
	return strings.Join(parts, ", ")
}
