package nexus

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/commanders"
)

var defaultConsensus = ConsensusConfig{ConsensusThreshold: 0.70, MajorityThreshold: 0.50,
	Weights: ConsensusWeights{Confidence: 0.40, Evidence: 0.30, Scope: 0.15, Coverage: 0.15}, ConflictCap: 0.30, UnanimityBoost: 0.05}

func TestTier(t *testing.T) {
	tests := []struct {
		name    string
		score   float64
		reviews int
		want    string
	}{
		{"exactly 0.70 is consensus (>=)", 0.70, 2, TierConsensus},
		{"just under 0.70 is majority", 0.6999, 4, TierMajority},
		{"exactly 0.50 is majority", 0.50, 3, TierMajority},
		{"under 0.50 is conflict", 0.49, 2, TierConflict},
		{"a single review is unique whatever the score", 0.95, 1, TierUnique},
		{"no review is unique", 0, 0, TierUnique},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Tier(tc.score, tc.reviews, defaultConsensus); got != tc.want {
				t.Errorf("Tier(%v, %d) = %s, want %s", tc.score, tc.reviews, got, tc.want)
			}
		})
	}
}

func TestFormula(t *testing.T) {
	tests := []struct {
		name string
		in   FormulaInputs
		want float64
	}{
		{"all ones and no conflict gives the weight sum", FormulaInputs{Confidence: 1, Evidence: 1, Scope: 1, Coverage: 1}, 1.0},
		{"weights apply per term", FormulaInputs{Confidence: 0.5, Evidence: 0.5, Scope: 0, Coverage: 1}, 0.40*0.5 + 0.30*0.5 + 0.15},
		{"conflict penalty is 0.30 x rate", FormulaInputs{Confidence: 1, Evidence: 1, Scope: 1, Coverage: 1, ConflictRate: 0.5}, 1 - 0.15},
		{"conflict penalty is capped at 0.30", FormulaInputs{Confidence: 1, Evidence: 1, Scope: 1, Coverage: 1, ConflictRate: 3}, 0.70},
		{"never below zero", FormulaInputs{ConflictRate: 1}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Formula(tc.in, defaultConsensus); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Formula = %v, want %v", got, tc.want)
			}
		})
	}
}

func atom(content string, conf float64, status string, evidence ...string) commanders.AtomResult {
	return commanders.AtomResult{Atom: commanders.Atom{Status: status, Content: content, Confidence: conf, Evidence: evidence}}
}

func TestFormulaFromAtoms(t *testing.T) {
	b := commanders.Bundle{Content: "covers token rotation and audit logging"}
	aspects := []string{"token rotation", "audit logging", "rollback"}
	t.Run("geometric mean, de-duplication and coverage", func(t *testing.T) {
		atoms := []commanders.AtomResult{
			atom("a", 0.9, commanders.StatusComplete, "e1"),
			atom("a", 0.9, commanders.StatusComplete, "e1"), // duplicate content counts once
			atom("b", 0.4, commanders.StatusPartial),
			{Failed: true},
		}
		got := FormulaFromAtoms(atoms, b, aspects, 1, 4, defaultConsensus)
		want := FormulaInputs{Confidence: math.Sqrt(0.9 * 0.4), Evidence: 0.5, Scope: 0.5, Coverage: 2.0 / 3, ConflictRate: 0.25, UniqueAtoms: 2, Atoms: 4}
		if d := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); d != "" {
			t.Errorf("(-want +got)\n%s", d)
		}
	})
	t.Run("unanimous complete atoms get the boost", func(t *testing.T) {
		atoms := []commanders.AtomResult{atom("a", 0.8, commanders.StatusComplete, "e"), atom("b", 0.85, commanders.StatusComplete, "e")}
		got := FormulaFromAtoms(atoms, b, aspects, 0, 2, defaultConsensus)
		if want := math.Sqrt(0.8*0.85) + 0.05; math.Abs(got.Confidence-want) > 1e-12 {
			t.Errorf("confidence = %v, want %v", got.Confidence, want)
		}
	})
}

func TestMetaReviewCorrectsInflationAndRubberStamps(t *testing.T) {
	card := func(v float64) commanders.ScoreCard {
		return commanders.ScoreCard{Correctness: v, Completeness: v, Clarity: v, ConsensusAlignment: v}
	}
	recs := []ReviewRecord{
		{Reviewer: "r1", BundleID: "a", Card: card(6)},
		{Reviewer: "r2", BundleID: "a", Card: card(5)},
		{Reviewer: "r3", BundleID: "a", Card: card(9)}, // inflates by ~3.5 on a
		{Reviewer: "r1", BundleID: "b", Card: card(4)},
		{Reviewer: "r2", BundleID: "b", Card: card(4)},
		{Reviewer: "r3", BundleID: "b", Card: card(9)}, // and by 5 on b: identical high totals -> rubber stamp
	}
	meta, out, corr := MetaReviewAll(recs)
	kinds := map[string]string{}
	for _, c := range corr {
		kinds[c.Kind] = c.Reviewer
	}
	if kinds["inflation"] != "r3" || kinds["rubber_stamp"] != "r3" {
		t.Fatalf("corrections = %+v, want inflation and rubber_stamp for r3", corr)
	}
	for _, r := range out {
		if r.Reviewer == "r3" && (r.Corrected >= r.Total || r.Weight != 0.5) {
			t.Errorf("r3 not corrected: %+v", r)
		}
	}
	// Without correction bundle b's median would be 4 of (4,4,9); it stays
	// 4 and a's drops from 6 toward the honest reviewers.
	if got := meta["b"].Score; math.Abs(got-0.4) > 1e-9 {
		t.Errorf("b score = %v, want 0.4", got)
	}
	if meta["a"].Reviews != 3 || meta["a"].Reliability >= 1 {
		t.Errorf("a meta = %+v", meta["a"])
	}
}

func TestSelectDomains(t *testing.T) {
	tests := []struct {
		name    string
		mission string
		n, min  int
		want    []string
	}{
		{"ss-100 takes all five in canonical order", "anything", 5, 5, commanders.Domains},
		{"testing-heavy mission ranks testing first, canonical order kept", "test coverage gaps, regression tests, flaky test, document the runbook", 3, 2, []string{"testing", "documentation"}},
		{"at least min domains even without keyword hits", "zzz", 3, 2, []string{"architecture", "implementation"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, SelectDomains(tc.mission, tc.n, tc.min)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}
