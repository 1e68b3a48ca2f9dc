package sim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A criterion over the interactions of a run that had none fails, saying
// so, whatever its limit: before, toxicity 0 ≤ 0.4 and a minimum welfare
// of 0 passed on the metrics' zero values (an imported strict_governance
// ran 0 interactions and passed). A run with interactions is checked as
// before.
func TestCriterionOverZeroInteractionsFails(t *testing.T) {
	t.Parallel()
	zero, lim := 0.0, 0.4
	for _, tc := range []struct {
		name string
		c    SuccessCriteria
	}{
		{"max_toxicity passes on toxicity 0", SuccessCriteria{MaxToxicity: &lim}},
		{"min_welfare 0 passes on welfare 0", SuccessCriteria{MinWelfare: &zero}},
		{"min_quality_gap 0 passes on gap 0", SuccessCriteria{MinQualityGap: &zero}},
		{"max_quality_gap passes on gap 0", SuccessCriteria{MaxQualityGap: &lim}},
		{"max_uncertain_fraction passes on 0", SuccessCriteria{MaxUncertainFrac: &lim}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := check(tc.c, &Result{}, nil, nil)
			if ok || len(got) != 1 {
				t.Fatalf("passed %v, criteria %+v; want one failed criterion", ok, got)
			}
			want := CriterionResult{Name: got[0].Name, Limit: got[0].Limit, Reason: NoInteractions}
			if d := cmp.Diff(want, got[0]); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	t.Run("a whole run whose agents never propose", func(t *testing.T) {
		t.Parallel()
		s, err := ParseScenario("one.yaml", []byte("scenario_id: one\nagents:\n  - {type: honest, count: 2}\nsimulation: {epochs: 2, initiation_probability: 0}\nsuccess_criteria: {max_toxicity: 0.4}\n"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(t.Context(), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Interactions != 0 || res.Passed {
			t.Fatalf("%d interactions, passed %v; want 0 and failed", res.Interactions, res.Passed)
		}
		var b strings.Builder
		WriteSummary(&b, res, "out")
		if !strings.Contains(b.String(), "actual undefined FAILED (no interactions") {
			t.Errorf("summary does not say the run had no interactions:\n%s", b.String())
		}
	})
}
