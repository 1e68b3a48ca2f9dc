package sim

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each lever of the paper's §8 is checked against its range when enabled,
// at both ends; a disabled lever's value does nothing and is not checked.
func TestOutOfRange(t *testing.T) {
	t.Parallel()
	const head = "scenario_id: r\nagents:\n  - {type: honest, count: 2}\ngovernance:\n"
	for _, tc := range []struct {
		name, gov string
		want      []*RangeError
	}{
		{"every lever at the ends of its range", "  transaction_tax: {enabled: true, rate: 0.5}\n  reputation_decay: {enabled: true, factor: 0.8}\n  circuit_breaker: {enabled: true, threshold: 0.3}\n  random_audit: {enabled: true, probability: 0.5}\n", nil},
		{"tax above 0.5", "  transaction_tax: {enabled: true, rate: 0.6}\n",
			[]*RangeError{{File: "r.yaml", Field: "governance.transaction_tax.rate", Value: 0.6, Min: 0, Max: 0.5}}},
		{"decay below 0.8 (the format allows 0 < factor <= 1)", "  reputation_decay: {enabled: true, factor: 0.5}\n",
			[]*RangeError{{File: "r.yaml", Field: "governance.reputation_decay.factor", Value: 0.5, Min: 0.8, Max: 1}}},
		{"freeze threshold below 0.3", "  circuit_breaker: {enabled: true, threshold: 0.2}\n",
			[]*RangeError{{File: "r.yaml", Field: "governance.circuit_breaker.threshold", Value: 0.2, Min: 0.3, Max: 1}}},
		{"audit above 0.5, and tax: both named", "  random_audit: {enabled: true, probability: 0.9}\n  transaction_tax: {enabled: true, rate: 0.7}\n",
			[]*RangeError{{File: "r.yaml", Field: "governance.transaction_tax.rate", Value: 0.7, Min: 0, Max: 0.5},
				{File: "r.yaml", Field: "governance.random_audit.probability", Value: 0.9, Min: 0, Max: 0.5}}},
		{"a disabled lever is not checked", "  transaction_tax: {enabled: false, rate: 0.9}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := ParseScenario("r.yaml", []byte(head+tc.gov))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, OutOfRange("r.yaml", s)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	e := &RangeError{File: "r.yaml", Field: "governance.transaction_tax.rate", Value: 0.6, Min: 0, Max: 0.5}
	if got, want := e.Error(), "r.yaml: governance.transaction_tax.rate: 0.6 is outside the paper's range 0..0.5 (§8)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// Every shipped scenario, and every point of the shipped sweep, is within
// the paper's ranges.
func TestShippedScenariosAreInThePapersRanges(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../examples/scenarios/*.yaml")
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "sweep") {
			sw, base, err := LoadSweep(f)
			if err != nil {
				t.Fatal(err)
			}
			errs, err := SweepOutOfRange(f, sw, base)
			if err != nil || len(errs) > 0 {
				t.Errorf("%s: %v %v", f, err, errs)
			}
			continue
		}
		if errs := OutOfRange(f, load(t, filepath.Base(f))); len(errs) > 0 {
			t.Errorf("%s: %v", f, errs)
		}
	}
}
