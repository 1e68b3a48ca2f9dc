package nexus

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// The pricing: and compare: sections are decoded strictly and checked,
// every error naming the file, line and key.
func TestPricingAndCompareConfigErrors(t *testing.T) {
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.yml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadConfig(path, shippedKinds())
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("not bad input: %v", err)
			}
			var ce ConfigErrors
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

// A model is priced by its pricing: entry, else by its kind's prices when
// they are set; a kind whose prices are both 0 leaves its models unpriced
// (never $0), and the mock keeps its nominal prices.
func TestPriceOf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yml")
	yml := "pricing:\n  \"openai-compatible:mine\": {input_per_mtok: 0.5, output_per_mtok: 1.5}\n  \"ollama:llama3.1:8b\": {input_per_mtok: 0, output_per_mtok: 0}\n"
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(path, shippedKinds())
	if err != nil {
		t.Fatal(err)
	}
	ref := func(s string) providers.Ref { r, _ := providers.ParseRef(s); return r }
	tests := []struct {
		ref  string
		want Price
	}{
		{"mock:honest", Price{InputPerMTok: 0.10, OutputPerMTok: 0.40, Known: true}}, // the quick start's figures stay
		{"openai:gpt-4.1", Price{InputPerMTok: 2, OutputPerMTok: 8, Known: true}},
		{"openai-compatible:mine", Price{InputPerMTok: 0.5, OutputPerMTok: 1.5, Known: true}},
		{"openai-compatible:other", Price{}},       // the case: was summed as $0
		{"ollama:llama3.1:8b", Price{Known: true}}, // free, and said so
		{"ollama:qwen", Price{}},                   // not said: unknown
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, cfg.PriceOf(ref(tc.ref))); d != "" {
			t.Errorf("%s (-want +got)\n%s", tc.ref, d)
		}
	}
	if d := cmp.Diff([]string{"ollama:qwen", "openai-compatible:other"}, cfg.Unpriced(ref("mock:honest"), ref("openai-compatible:other"), ref("ollama:qwen"), ref("openai-compatible:other"))); d != "" {
		t.Errorf("Unpriced (-want +got)\n%s", d)
	}
	if cfg.Compare.MaxFabricationRate != DefaultMaxFabricationRate {
		t.Errorf("shipped compare.max_fabrication_rate = %v, want %v", cfg.Compare.MaxFabricationRate, DefaultMaxFabricationRate)
	}
}

func TestFormatCost(t *testing.T) {
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
