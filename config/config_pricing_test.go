package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// The pricing: and compare: sections are decoded strictly and checked,
// every error naming the file, line and key.
func TestPricingAndCompareConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		line       int
		key, msg   string
	}{
		{"a fabrication limit above 1 could never flag anyone", "compare:\n  max_fabrication_rate: 1.5\n", 2, "compare.max_fabrication_rate", "out of range 0..1"},
		{"a negative fabrication limit", "compare:\n  max_fabrication_rate: -0.1\n", 2, "compare.max_fabrication_rate", "out of range 0..1"},
		{"a misspelt compare key", "compare:\n  max_fabrication: 0.3\n", 2, "compare.max_fabrication", "unknown"},
		{"a price without its kind", "pricing:\n  \"my-model\": {input_per_mtok: 1, output_per_mtok: 2}\n", 2, "pricing.my-model", "want kind:model"},
		{"a missing output price would be summed as 0", "pricing:\n  \"openai-compatible:m\": {input_per_mtok: 1}\n", 2, "pricing.openai-compatible:m.output_per_mtok", "missing"},
		{"a negative price", "pricing:\n  \"openai-compatible:m\": {input_per_mtok: -1, output_per_mtok: 2}\n", 2, "pricing.openai-compatible:m.input_per_mtok", "not negative"},
		{"a misspelt price key", "pricing:\n  \"openai-compatible:m\": {input: 1, output_per_mtok: 2}\n", 2, "pricing.openai-compatible:m.input", "unknown"},
		{"a negative cache-read rate", "pricing:\n  \"openai-compatible:m\": {input_per_mtok: 1, output_per_mtok: 2, cache_read_per_mtok: -0.1}\n", 2, "pricing.openai-compatible:m.cache_read_per_mtok", "not negative"},
		{"a negative cache-write rate", "pricing:\n  \"openai-compatible:m\": {input_per_mtok: 1, output_per_mtok: 2, cache_write_per_mtok: -3}\n", 2, "pricing.openai-compatible:m.cache_write_per_mtok", "not negative"},
		{"a negative reasoning rate", "pricing:\n  \"openai-compatible:m\": {input_per_mtok: 1, output_per_mtok: 2, reasoning_per_mtok: -3}\n", 2, "pricing.openai-compatible:m.reasoning_per_mtok", "not negative"},
		{"a cache rate alone still needs the input and output rates", "pricing:\n  \"openai:gpt-4.1\": {cache_read_per_mtok: 0.4}\n", 2, "pricing.openai:gpt-4.1.input_per_mtok", "missing"},
		{"a date that is not one", "pricing:\n  \"openai-compatible:m\": {input_per_mtok: 1, output_per_mtok: 2, as_of: \"last week\"}\n", 2, "pricing.openai-compatible:m.as_of", "not a date"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.yml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, shippedKinds())
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("not bad input: %v", err)
			}
			var ce Errors
			if !errors.As(err, &ce) || len(ce) == 0 {
				t.Fatalf("not ConfigErrors: %v", err)
			}
			e := ce[0]
			if e.File != path || e.Line != tc.line || !strings.HasPrefix(e.Key, tc.key) || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("got %s:%d key %q msg %q; want line %d key %q msg containing %q", e.File, e.Line, e.Key, e.Msg, tc.line, tc.key, tc.msg)
			}
		})
	}
}

// A model is priced by its pricing: entry, else by the built-in table,
// else by its kind's prices when they are set; a kind whose prices are
// both 0 leaves its models unpriced (never $0), and the mock keeps its
// nominal prices. A rate an entry does not give stands in at the input
// (cache) or output (reasoning) rate, and the stand-ins are marked.
func TestPriceOf(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.yml")
	yml := "pricing:\n  \"openai-compatible:mine\": {input_per_mtok: 0.5, output_per_mtok: 1.5}\n  \"ollama:llama3.1:8b\": {input_per_mtok: 0, output_per_mtok: 0}\n" +
		"  \"anthropic:claude-sonnet-4-5\": {input_per_mtok: 2.5, output_per_mtok: 12, cache_read_per_mtok: 0.25, as_of: 2026-11-01, source: \"https://example.com/our-contract\"}\n"
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, shippedKinds())
	if err != nil {
		t.Fatal(err)
	}
	ref := func(s string) providers.Ref { r, _ := providers.ParseRef(s); return r }
	const openaiPage = "https://openai.com/api/pricing/"
	tests := []struct {
		name, ref string
		want      Price
	}{
		{"the quick start's figures stay: the mock is priced by its kind", "mock:honest", Price{InputPerMTok: 0.10, OutputPerMTok: 0.40,
			CacheReadPerMTok: 0.10, CacheWritePerMTok: 0.10, ReasoningPerMTok: 0.40, CacheReadAssumed: true, CacheWriteAssumed: true, Known: true, Origin: PriceFromKind}},
		{"a model of the built-in table, with its date and source", "openai:gpt-4.1", Price{InputPerMTok: 2, OutputPerMTok: 8,
			CacheReadPerMTok: 0.5, CacheWritePerMTok: 2, ReasoningPerMTok: 8, Known: true, Origin: PriceFromTable, AsOf: "2025-08-07", Source: openaiPage}},
		{"the table prices each model of a kind, not the kind's one figure", "openai:gpt-4.1-mini", Price{InputPerMTok: 0.4, OutputPerMTok: 1.6,
			CacheReadPerMTok: 0.1, CacheWritePerMTok: 0.4, ReasoningPerMTok: 1.6, Known: true, Origin: PriceFromTable, AsOf: "2025-08-07", Source: openaiPage}},
		{"a model the table lacks falls back to its kind", "openai:gpt-9-unreleased", Price{InputPerMTok: 2, OutputPerMTok: 8,
			CacheReadPerMTok: 2, CacheWritePerMTok: 2, ReasoningPerMTok: 8, CacheReadAssumed: true, CacheWriteAssumed: true, Known: true, Origin: PriceFromKind}},
		{"a config entry replaces the table's whole; its cache write stands in at the input rate", "anthropic:claude-sonnet-4-5", Price{InputPerMTok: 2.5, OutputPerMTok: 12,
			CacheReadPerMTok: 0.25, CacheWritePerMTok: 2.5, ReasoningPerMTok: 12, CacheWriteAssumed: true, Known: true, Origin: PriceFromConfig, AsOf: "2026-11-01", Source: "https://example.com/our-contract"}},
		{"a config entry prices a model no one lists", "openai-compatible:mine", Price{InputPerMTok: 0.5, OutputPerMTok: 1.5,
			CacheReadPerMTok: 0.5, CacheWritePerMTok: 0.5, ReasoningPerMTok: 1.5, CacheReadAssumed: true, CacheWriteAssumed: true, Known: true, Origin: PriceFromConfig}},
		{"the issue's case: was summed as $0", "openai-compatible:other", Price{}},
		{"free, and said so", "ollama:llama3.1:8b", Price{CacheReadAssumed: true, CacheWriteAssumed: true, Known: true, Origin: PriceFromConfig}},
		{"not said: unknown", "ollama:qwen", Price{}},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, cfg.PriceOf(ref(tc.ref))); d != "" {
			t.Errorf("%s: %s (-want +got)\n%s", tc.name, tc.ref, d)
		}
	}
	if d := cmp.Diff([]string{"ollama:qwen", "openai-compatible:other"}, cfg.Unpriced(ref("mock:honest"), ref("openai-compatible:other"), ref("ollama:qwen"), ref("openai-compatible:other"))); d != "" {
		t.Errorf("Unpriced (-want +got)\n%s", d)
	}
	if cfg.Compare.MaxFabricationRate != DefaultMaxFabricationRate {
		t.Errorf("shipped compare.max_fabrication_rate = %v, want %v", cfg.Compare.MaxFabricationRate, DefaultMaxFabricationRate)
	}
}

// Each kind of token is priced at its own rate; the details are parts of
// the totals (providers.Usage), so they are taken out of them once.
func TestPriceCostPerComponent(t *testing.T) {
	t.Parallel()
	p := Price{InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.3, CacheWritePerMTok: 3.75, ReasoningPerMTok: 20, Known: true}
	tests := []struct {
		name string
		u    providers.Usage
		want float64 // USD
	}{
		{"plain input and output", providers.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, 3 + 15},
		{"cache reads at their rate, not the input rate", providers.Usage{InputTokens: 1_000_000, CacheReadTokens: 800_000}, 0.2*3 + 0.8*0.3},
		{"cache writes at their rate", providers.Usage{InputTokens: 1_000_000, CacheWriteTokens: 1_000_000}, 3.75},
		{"reads and writes in one call", providers.Usage{InputTokens: 1_000_000, CacheReadTokens: 500_000, CacheWriteTokens: 250_000}, 0.25*3 + 0.5*0.3 + 0.25*3.75},
		{"reasoning at its rate, the rest of the output at the output rate", providers.Usage{OutputTokens: 1_000_000, ReasoningTokens: 400_000}, 0.6*15 + 0.4*20},
		{"every part at once", providers.Usage{InputTokens: 2_000_000, OutputTokens: 1_000_000, CacheReadTokens: 1_000_000, CacheWriteTokens: 500_000, ReasoningTokens: 500_000},
			0.5*3 + 1*0.3 + 0.5*3.75 + 0.5*15 + 0.5*20},
		{"an adapter's parts larger than its total never count negative tokens", providers.Usage{InputTokens: 100, CacheReadTokens: 1_000_000}, 1 * 0.3},
	}
	for _, tc := range tests {
		if got := p.Cost(tc.u); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: cost %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := (Price{}).Cost(providers.Usage{InputTokens: 1000}); got != 0 {
		t.Errorf("unknown price: cost %v, want 0 (and Known false)", got)
	}
	// The stand-ins: a price without cache or reasoning rates charges
	// cache tokens at the input rate and reasoning at the output rate,
	// which is the old two-rate figure.
	in, out := 2.0, 8.0
	two := ModelPrice{InputPerMTok: &in, OutputPerMTok: &out}.price(PriceFromConfig)
	u := providers.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000, CacheReadTokens: 300_000, CacheWriteTokens: 100_000, ReasoningTokens: 200_000}
	if got := two.Cost(u); math.Abs(got-10) > 1e-9 {
		t.Errorf("two-rate price: cost %v, want 10 (every input token at 2, every output token at 8)", got)
	}
}

// The built-in table decodes strictly, every entry gives input and output
// rates, a date and a source, and covers the main models of the four
// providers with list prices.
func TestBuiltinPricingTable(t *testing.T) {
	t.Parallel()
	table := BuiltinPrices()
	for _, model := range []string{"openai:gpt-4.1", "openai:gpt-4o-mini", "openai:o4-mini", "anthropic:claude-sonnet-4-5", "anthropic:claude-haiku-4-5",
		"google:gemini-2.5-pro", "google:gemini-2.5-flash", "mistral:mistral-medium-2505"} {
		p, ok := table[model]
		if !ok {
			t.Errorf("%s: not in the built-in table", model)
			continue
		}
		if _, err := time.Parse(time.DateOnly, p.AsOf); err != nil || !strings.HasPrefix(p.Source, "https://") {
			t.Errorf("%s: as_of %q, source %q: want a date and the provider's pricing page", model, p.AsOf, p.Source)
		}
	}
	// Anthropic's cache rates as its page gives them: reads 0.1 ×, 5-minute
	// writes 1.25 × the input rate.
	for model, p := range table {
		if strings.HasPrefix(model, "anthropic:") && (p.CacheReadPerMTok == nil || p.CacheWritePerMTok == nil ||
			math.Abs(*p.CacheReadPerMTok-0.1**p.InputPerMTok) > 1e-9 || math.Abs(*p.CacheWritePerMTok-1.25**p.InputPerMTok) > 1e-9) {
			t.Errorf("%s: cache rates %v / %v off Anthropic's multipliers of input %v", model, p.CacheReadPerMTok, p.CacheWritePerMTok, *p.InputPerMTok)
		}
	}
	// A table with a missing date or source, or a bad rate, is refused
	// naming the entry's field.
	bad := []struct{ name, yaml, want string }{
		{"no date", "pricing:\n  \"openai:x\": {input_per_mtok: 1, output_per_mtok: 2, source: \"https://x\"}\n", "pricing.openai:x.as_of: missing"},
		{"no source", "pricing:\n  \"openai:x\": {input_per_mtok: 1, output_per_mtok: 2, as_of: \"2025-01-01\"}\n", "pricing.openai:x.source: missing"},
		{"a negative cache rate", "pricing:\n  \"openai:x\": {input_per_mtok: 1, output_per_mtok: 2, cache_read_per_mtok: -1, as_of: \"2025-01-01\", source: \"https://x\"}\n", "pricing.openai:x.cache_read_per_mtok: -1 is out of range"},
	}
	for _, tc := range bad {
		if _, err := parsePricingTable("t.yaml", []byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestFormatCost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		usd      float64
		unpriced []string
		want     string
	}{
		{"every call priced", 0.01234, nil, "$0.0123"},
		{"some calls unpriced: a lower bound", 0.01234, []string{"openai-compatible:x"}, "≥ $0.0123 (+ unpriced calls on openai-compatible:x)"},
		{"no call priced: never $0.0000", 0, []string{"openai-compatible:x", "vllm:y"}, "— (no price for openai-compatible:x, vllm:y)"},
	}
	for _, tc := range tests {
		if got := FormatCost(tc.usd, tc.unpriced); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
