package nexus

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/workspace"
)

var defaultConsensus = config.Consensus{ConsensusThreshold: 0.70, MajorityThreshold: 0.50,
	Weights: config.ConsensusWeights{Confidence: 0.40, Evidence: 0.30, Scope: 0.15, Coverage: 0.15}, ConflictCap: 0.30, UnanimityBoost: 0.05}

func TestTier(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		score   float64
		reviews int
		want    string
	}{
		{"exactly 0.70 is consensus (>=)", 0.70, 2, tierConsensus},
		{"just under 0.70 is majority", 0.6999, 4, tierMajority},
		{"exactly 0.50 is majority", 0.50, 3, tierMajority},
		{"under 0.50 is conflict", 0.49, 2, TierConflict},
		{"a single review is unique whatever the score", 0.95, 1, tierUnique},
		{"no review is unique", 0, 0, tierUnique},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tier(tc.score, tc.reviews, defaultConsensus); got != tc.want {
				t.Errorf("tier(%v, %d) = %s, want %s", tc.score, tc.reviews, got, tc.want)
			}
		})
	}
}

func TestFormula(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   FormulaInputs
		want float64
	}{
		{"all ones and no conflict gives the weight sum", FormulaInputs{Confidence: 1, Evidence: ptr(1.0), Scope: 1, Coverage: 1}, 1.0},
		{"weights apply per term", FormulaInputs{Confidence: 0.5, Evidence: ptr(0.5), Scope: 0, Coverage: 1}, 0.40*0.5 + 0.30*0.5 + 0.15},
		{"measured evidence of 0 is a zero term, not a dropped one", FormulaInputs{Confidence: 1, Evidence: ptr(0.0), Scope: 1, Coverage: 1}, 0.70},
		{"conflict penalty is 0.30 x rate", FormulaInputs{Confidence: 1, Evidence: ptr(1.0), Scope: 1, Coverage: 1, ConflictRate: 0.5}, 1 - 0.15},
		{"conflict penalty is capped at 0.30", FormulaInputs{Confidence: 1, Evidence: ptr(1.0), Scope: 1, Coverage: 1, ConflictRate: 3}, 0.70},
		{"never below zero", FormulaInputs{Evidence: ptr(0.0), ConflictRate: 1}, 0},
		// Without a workspace evidence is not measured: the other weights
		// (0.40, 0.15, 0.15) are scaled by 1/0.70 so they sum to 1 again.
		{"unmeasured evidence: all other terms at one still give the weight sum", FormulaInputs{Confidence: 1, Scope: 1, Coverage: 1}, 1.0},
		{"unmeasured evidence: weights renormalised exactly", FormulaInputs{Confidence: 0.5, Scope: 0, Coverage: 1}, (0.40*0.5 + 0.15) / 0.70},
		{"unmeasured evidence: the conflict penalty is not rescaled", FormulaInputs{Confidence: 1, Scope: 1, Coverage: 1, ConflictRate: 0.5}, 1 - 0.15},
		{"unmeasured evidence: never below zero", FormulaInputs{ConflictRate: 1}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := formula(tc.in, defaultConsensus); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Formula = %v, want %v", got, tc.want)
			}
		})
	}
}

// atom builds an atom result citing one line of a file per evidence name.
func atom(content string, conf float64, status string, evidence ...string) commanders.AtomResult {
	var cites []citation.Citation
	for _, e := range evidence {
		cites = append(cites, citation.Citation{Path: e, StartLine: 1, EndLine: 1, Quote: e})
	}
	return commanders.AtomResult{Atom: commanders.Atom{Status: status, Content: content, Confidence: conf, Evidence: cites}}
}

func TestFormulaFromAtoms(t *testing.T) {
	t.Parallel()
	b := commanders.Bundle{Content: "covers token rotation and audit logging"}
	aspects := []string{"token rotation", "audit logging", "rollback"}
	t.Run("geometric mean, de-duplication and coverage", func(t *testing.T) {
		atoms := []commanders.AtomResult{
			atom("a", 0.9, commanders.StatusComplete, "e1"),
			atom("a", 0.9, commanders.StatusComplete, "e1"), // duplicate content counts once
			atom("b", 0.4, commanders.StatusPartial),
			{Failed: true},
		}
		got := formulaFromAtoms(atoms, nil, b, aspects, 1, 4, defaultConsensus)
		// No workspace: evidence is not measured (nil), whatever the atoms cite.
		want := FormulaInputs{Confidence: math.Sqrt(0.9 * 0.4), Evidence: nil, Scope: 0.5, Coverage: 2.0 / 3, ConflictRate: 0.25, UniqueAtoms: 2, Atoms: 4}
		if d := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); d != "" {
			t.Errorf("(-want +got)\n%s", d)
		}
	})
	t.Run("evidence term with a workspace", func(t *testing.T) {
		v := fakeVerifier{states: map[string]workspace.State{"ok": workspace.Verified, "ok2": workspace.Verified, "bad": workspace.Fabricated, "deny": workspace.Unverifiable}}
		tests := []struct {
			name  string
			atoms []commanders.AtomResult
			want  *float64
		}{
			{"every atom grounded", []commanders.AtomResult{atom("a", 0.5, "complete", "ok"), atom("b", 0.5, "complete", "ok", "ok2")}, ptr(1.0)},
			{"an atom citing nothing is not grounded", []commanders.AtomResult{atom("a", 0.5, "complete", "ok"), atom("b", 0.5, "complete")}, ptr(0.5)},
			{"one fabricated citation spoils an otherwise verified atom and counts against", []commanders.AtomResult{
				atom("a", 0.5, "complete", "ok"), atom("b", 0.5, "complete", "ok", "bad"), atom("c", 0.5, "complete"), atom("d", 0.5, "complete", "ok2")}, ptr((2.0 - 1) / 4)},
			{"unverifiable is neither grounded nor fabricated", []commanders.AtomResult{atom("a", 0.5, "complete", "deny"), atom("b", 0.5, "complete", "ok")}, ptr(0.5)},
			{"more fabricating than grounded atoms floors at 0", []commanders.AtomResult{atom("a", 0.5, "complete", "bad"), atom("b", 0.5, "complete", "bad"), atom("c", 0.5, "complete", "ok")}, ptr(0.0)},
			{"duplicate atoms count once", []commanders.AtomResult{atom("a", 0.5, "complete", "ok"), atom("a", 0.5, "complete", "ok"), atom("b", 0.5, "complete", "bad")}, ptr(0.0)},
			{"no finished atom: not measured", []commanders.AtomResult{{Failed: true}}, nil},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got := formulaFromAtoms(tc.atoms, atomChecks(v, tc.atoms), b, aspects, 0, 2, defaultConsensus)
				if d := cmp.Diff(tc.want, got.Evidence); d != "" {
					t.Errorf("evidence (-want +got)\n%s", d)
				}
			})
		}
	})
	t.Run("unanimous complete atoms get the boost", func(t *testing.T) {
		atoms := []commanders.AtomResult{atom("a", 0.8, commanders.StatusComplete, "e"), atom("b", 0.85, commanders.StatusComplete, "e")}
		got := formulaFromAtoms(atoms, nil, b, aspects, 0, 2, defaultConsensus)
		if want := math.Sqrt(0.8*0.85) + 0.05; math.Abs(got.Confidence-want) > 1e-12 {
			t.Errorf("confidence = %v, want %v", got.Confidence, want)
		}
	})
}

func TestMetaReviewCorrectsInflationAndRubberStamps(t *testing.T) {
	t.Parallel()
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
	meta, out, corr := metaReviewAll(recs)
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
	t.Parallel()
	tests := []struct {
		name    string
		mission string
		n, min  int
		want    []string
	}{
		{"ss-100 takes all five in canonical order", "anything", 5, 5, commanders.Domains()},
		{"testing-heavy mission ranks testing first, canonical order kept", "test coverage gaps, regression tests, flaky test, document the runbook", 3, 2, []string{"testing", "documentation"}},
		{"at least min domains even without keyword hits", "zzz", 3, 2, []string{"architecture", "implementation"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, selectDomains(tc.mission, tc.n, tc.min)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// TestConsensusByHand checks the bundle-level numbers against values worked
// out by hand from the definitions.
func TestConsensusByHand(t *testing.T) {
	t.Parallel()
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %.12f, want %.12f", name, got, want)
		}
	}
	t.Run("formula from atoms", func(t *testing.T) {
		// 4 seats: two identical complete atoms (one counted), one partial,
		// one failed. Confidence = geomean(0.9, 0.4) = 0.6; evidence 1 of 2
		// unique; scope 2 complete of 4 seats; coverage 2 of 3 aspects;
		// conflict rate 1/4; e1 verifies.
		// 0.40·0.6 + 0.30·0.5 + 0.15·0.5 + 0.15·(2/3) − min(0.30, 0.30·0.25)
		// = 0.24 + 0.15 + 0.075 + 0.10 − 0.075 = 0.49
		// Without a workspace: (0.24 + 0.075 + 0.10)/0.70 − 0.075.
		b := commanders.Bundle{Content: "covers token rotation and audit logging"}
		atoms := []commanders.AtomResult{
			atom("a", 0.9, commanders.StatusComplete, "e1"),
			atom(" a ", 0.9, commanders.StatusComplete, "e1"), // same content once trimmed
			atom("b", 0.4, commanders.StatusPartial),
			{Failed: true},
		}
		v := fakeVerifier{states: map[string]workspace.State{"e1": workspace.Verified}}
		in := formulaFromAtoms(atoms, atomChecks(v, atoms), b, []string{"token rotation", "audit logging", "rollback"}, 1, 4, defaultConsensus)
		near("confidence", in.Confidence, 0.6)
		near("formula", formula(in, defaultConsensus), 0.49)
		in = formulaFromAtoms(atoms, nil, b, []string{"token rotation", "audit logging", "rollback"}, 1, 4, defaultConsensus)
		near("formula without a workspace", formula(in, defaultConsensus), (0.24+0.075+0.10)/0.70-0.075)
		if in.UniqueAtoms != 2 {
			t.Errorf("unique atoms = %d, want 2", in.UniqueAtoms)
		}
	})
	t.Run("unanimity boost and conflict cap", func(t *testing.T) {
		// Three complete atoms 0.8, 0.8, 0.85 (spread 0.05 ≤ 0.1): confidence
		// = (0.8·0.8·0.85)^(1/3) + 0.05; every atom has evidence; full scope
		// and coverage; 5 conflicts in 2 reviews: the penalty is capped at 0.30.
		atoms := []commanders.AtomResult{
			atom("x", 0.8, commanders.StatusComplete, "e"), atom("y", 0.8, commanders.StatusComplete, "e"), atom("z", 0.85, commanders.StatusComplete, "e"),
		}
		v := fakeVerifier{states: map[string]workspace.State{"e": workspace.Verified}}
		in := formulaFromAtoms(atoms, atomChecks(v, atoms), commanders.Bundle{Content: "rollback"}, []string{"rollback"}, 5, 2, defaultConsensus)
		conf := math.Cbrt(0.8*0.8*0.85) + 0.05
		near("confidence", in.Confidence, conf)
		near("formula", formula(in, defaultConsensus), 0.40*conf+0.30+0.15+0.15-0.30)
	})
	t.Run("no boost when an atom failed", func(t *testing.T) {
		atoms := []commanders.AtomResult{atom("x", 0.8, commanders.StatusComplete, "e"), atom("y", 0.8, commanders.StatusComplete, "e"), {Failed: true}}
		in := formulaFromAtoms(atoms, nil, commanders.Bundle{}, []string{"rollback"}, 0, 2, defaultConsensus)
		near("confidence", in.Confidence, 0.8)
		near("scope", in.Scope, 2.0/3)
	})
	t.Run("meta-review scores, corrections and reliability", func(t *testing.T) {
		card := func(v float64) commanders.ScoreCard {
			return commanders.ScoreCard{Correctness: v, Completeness: v, Clarity: v, ConsensusAlignment: v}
		}
		recs := []ReviewRecord{
			{Reviewer: "r1", BundleID: "a", Card: card(6)}, {Reviewer: "r2", BundleID: "a", Card: card(5)}, {Reviewer: "r3", BundleID: "a", Card: card(9)},
			{Reviewer: "r1", BundleID: "b", Card: card(4)}, {Reviewer: "r2", BundleID: "b", Card: card(4)}, {Reviewer: "r3", BundleID: "b", Card: card(9)},
		}
		meta, out, _ := metaReviewAll(recs)
		// r3's offsets from the bundles' medians: 9−6 = 3 and 9−4 = 5, mean 4:
		// its totals become 5 and 5, at half weight (rubber stamp). r2's mean
		// offset (−1 + 0)/2 = −0.5 is under 1 and stays uncorrected.
		for _, r := range out {
			want := r.Total
			if r.Reviewer == "r3" {
				want = 5
			}
			near(r.Reviewer+"/"+r.BundleID+" corrected", r.Corrected, want)
		}
		// a: corrected 6,5 at weight 1 (twice each) and 5 at half weight
		// (once): median of 6,6,5,5,5 = 5 → 0.5. b: 4,4,4,4,5 → 0.4.
		near("a score", meta["a"].Score, 0.5)
		near("b score", meta["b"].Score, 0.4)
		// Reliability 1 − sd/5 of the raw totals 6, 5, 9 (population sd).
		m := (6.0 + 5 + 9) / 3
		sd := math.Sqrt(((6-m)*(6-m) + (5-m)*(5-m) + (9-m)*(9-m)) / 3)
		near("a reliability", meta["a"].Reliability, 1-sd/5)
		if got := tier(meta["a"].Score, meta["a"].Reviews, defaultConsensus); got != tierMajority {
			t.Errorf("a tier = %s, want MAJORITY at 0.5", got)
		}
		if got := tier(meta["b"].Score, meta["b"].Reviews, defaultConsensus); got != TierConflict {
			t.Errorf("b tier = %s, want CONFLICT at 0.4", got)
		}
	})
	t.Run("herding is detected and recorded", func(t *testing.T) {
		card := func(v float64) commanders.ScoreCard {
			return commanders.ScoreCard{Correctness: v, Completeness: v, Clarity: v, ConsensusAlignment: v}
		}
		// Bundle h: three reviewers give the identical 7 while the run's
		// totals spread widely (2..9).
		recs := []ReviewRecord{
			{Reviewer: "r1", BundleID: "h", Card: card(7)}, {Reviewer: "r2", BundleID: "h", Card: card(7)}, {Reviewer: "r3", BundleID: "h", Card: card(7)},
			{Reviewer: "r1", BundleID: "x", Card: card(2)}, {Reviewer: "r2", BundleID: "x", Card: card(9)}, {Reviewer: "r3", BundleID: "x", Card: card(3)},
		}
		meta, _, corr := metaReviewAll(recs)
		found := false
		for _, c := range corr {
			found = found || (c.Kind == "herding" && c.BundleID == "h")
		}
		if !meta["h"].Herding || !found || meta["x"].Herding {
			t.Errorf("herding: h %v, x %v, corrections %+v", meta["h"].Herding, meta["x"].Herding, corr)
		}
		near("h reliability", meta["h"].Reliability, 1)
	})
}
