package compare

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/workspace"
)

func counts4(cited, verified, unverifiable, fabricated int) *workspace.Counts {
	return &workspace.Counts{Cited: cited, Verified: verified, Unverifiable: unverifiable, Fabricated: fabricated}
}

// withEvidence is run(...) with the contender's own citations.
func withEvidence(s RunSummary, c *workspace.Counts) RunSummary {
	s.Evidence, s.RunEvidence = c, c
	return s
}

// withTruth is s with a ground-truth match of the given recall and
// precision (nil: not measured).
func withTruth(s RunSummary, recall, precision *float64) RunSummary {
	s.GroundTruth = &workspace.Match{Recall: recall, Precision: precision}
	return s
}

// failedRun is a run whose only bundle failed: no judged bundle.
func failedRun(contender string, rep int) RunSummary {
	return RunSummary{Contender: contender, Repeat: rep, Planned: []string{"d"}, Bundles: map[string]BundleSummary{},
		Unscored: map[string]UnscoredBundle{"d": {Status: StatusFailed, FailureClass: "unparseable"}}}
}

var approx = cmpopts.EquateApprox(0, 1e-9)

// TestFabricationRateFromRunSummaries: the rate pools every repeat's
// citations (fabricated / cited, not a mean of per-repeat rates), carries
// its Wilson interval, and is absent, never 0%, when nothing was cited.
func TestFabricationRateFromRunSummaries(t *testing.T) {
	t.Parallel()
	type view struct {
		Counts   workspace.Counts
		Repeats  int
		Rate     *float64
		CI       *Interval
		NoResult bool
		Rank     int
	}
	wilson := func(k, n int) *Interval {
		// Computed independently of stats.Wilson95 from the textbook
		// formula with z = 1.96.
		z, p, nf := 1.959963984540054, float64(k)/float64(n), float64(n)
		c := (p + z*z/(2*nf)) / (1 + z*z/nf)
		h := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
		return &Interval{Lo: math.Max(0, c-h), Hi: math.Min(1, c+h)}
	}
	runs := []RunSummary{
		// honest: 0 fabricated of 10 + 20 cited: rate 0 with a real upper bound.
		withEvidence(run("honest", 0, 10, "pp"), counts4(10, 10, 0, 0)),
		withEvidence(run("honest", 1, 10, "pp"), counts4(20, 19, 1, 0)),
		// deceptive: 1 of 4 and 8 of 8: pooled 9/12 (a mean of rates would say 62.5%).
		withEvidence(run("deceptive", 0, 50, "pf"), counts4(4, 3, 0, 1)),
		withEvidence(run("deceptive", 1, 50, "pf"), counts4(8, 0, 0, 8)),
		// silent: a workspace, but it cited nothing: no rate at all.
		withEvidence(run("silent", 0, 20, "pp"), counts4(0, 0, 0, 0)),
		withEvidence(run("silent", 1, 20, "pp"), counts4(0, 0, 0, 0)),
		// broken: every bundle failed, yet its workers' citations were counted:
		// its rate is shown, but it is ranked after every contender with a result.
		withEvidence(failedRun("broken", 0), counts4(5, 0, 0, 5)),
		withEvidence(failedRun("broken", 1), counts4(5, 0, 0, 5)),
	}
	r := Analyse(Options{Models: []string{"broken", "honest", "deceptive", "silent"}, Repeats: 2, Workspace: "ws"}, "h", "j", "s", runs)
	got := map[string]view{}
	for _, c := range r.Contenders {
		if c.Evidence == nil {
			t.Fatalf("%s: no evidence block though the comparison had a workspace", c.Model)
		}
		got[c.Model] = view{c.Evidence.Counts, c.Evidence.Repeats, c.Evidence.FabricationRate, c.Evidence.FabricationCI95, c.NoResult, c.Rank}
	}
	want := map[string]view{
		"honest":    {*counts4(30, 29, 1, 0), 2, fp(0), wilson(0, 30), false, 1},
		"silent":    {*counts4(0, 0, 0, 0), 2, nil, nil, false, 2},
		"deceptive": {*counts4(12, 3, 0, 9), 2, fp(0.75), wilson(9, 12), false, 3},
		"broken":    {*counts4(10, 0, 0, 10), 2, fp(1), wilson(10, 10), true, 4},
	}
	if d := cmp.Diff(want, got, approx); d != "" {
		t.Errorf("evidence per contender (-want +got)\n%s", d)
	}
	if r.Contenders[3].Model != "broken" {
		t.Errorf("the contender without a result is ranked %d, not last", got["broken"].Rank)
	}
	// JSON: null rate and interval for the contender that cited nothing.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Contenders []struct {
			Model    string                     `json:"model"`
			Evidence map[string]json.RawMessage `json:"evidence"`
		} `json:"contenders"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Contenders {
		if c.Model == "silent" {
			if string(c.Evidence["fabrication_rate"]) != "null" || string(c.Evidence["fabrication_ci95"]) != "null" || string(c.Evidence["cited"]) != "0" {
				t.Errorf("silent's evidence JSON = %v: want cited 0 and null rate and interval", c.Evidence)
			}
		}
	}
}

// TestNoWorkspaceNoEvidenceFigures: without a workspace there is no
// evidence block, no ground truth and no correlation, in the report and in
// its JSON (which stays as it was before workspaces existed).
func TestNoWorkspaceNoEvidenceFigures(t *testing.T) {
	t.Parallel()
	r := Analyse(Options{Models: []string{"a", "b"}, Repeats: 1}, "h", "j", "s", []RunSummary{run("a", 0, 10, "pp"), run("b", 0, 20, "pf")})
	for _, c := range r.Contenders {
		if c.Evidence != nil || c.GroundTruth != nil {
			t.Errorf("%s: evidence %+v ground truth %+v without a workspace", c.Model, c.Evidence, c.GroundTruth)
		}
	}
	if r.Correlation != nil {
		t.Errorf("correlation %+v without a ground truth", r.Correlation)
	}
	b, _ := json.Marshal(r)
	for _, key := range []string{`"evidence"`, `"ground_truth"`, `"fabrication_rate"`, `"shadow_recall_correlation"`, `"workspace"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("compare.json without a workspace has %s", key)
		}
	}
	for name, out := range map[string]string{"table": r.Table(), "markdown": r.Markdown()} {
		if strings.Contains(strings.ToLower(out), "fabricat") || strings.Contains(out, "recall") {
			t.Errorf("%s mentions evidence without a workspace:\n%s", name, out)
		}
	}
}

// TestRecallAndPrecisionMeans: means over the repeats that measured each,
// with how many did; absent (null) when none did.
func TestRecallAndPrecisionMeans(t *testing.T) {
	t.Parallel()
	runs := []RunSummary{
		withTruth(run("a", 0, 10, "pp"), fp(0.5), fp(1)),
		withTruth(run("a", 1, 10, "pp"), fp(1), nil), // no finding: no precision
		withTruth(run("a", 2, 10, "pp"), fp(0.75), fp(0.5)),
		withTruth(run("b", 0, 10, "pp"), nil, nil), // no defect: nothing measured
		run("b", 1, 10, "pp"),                      // no match recorded at all
	}
	r := Analyse(Options{Models: []string{"a", "b"}, Repeats: 3, Workspace: "ws", GroundTruth: "t.yaml"}, "h", "j", "s", runs)
	got := map[string]GroundTruthStats{}
	for _, c := range r.Contenders {
		got[c.Model] = *c.GroundTruth
	}
	want := map[string]GroundTruthStats{
		"a": {Recall: fp(0.75), RecallRepeats: 3, Precision: fp(0.75), PrecisionRepeats: 2},
		"b": {},
	}
	if d := cmp.Diff(want, got, approx); d != "" {
		t.Errorf("ground truth per contender (-want +got)\n%s", d)
	}
}

// TestShadowRecallCorrelation: r by hand over contenders × repeats, and
// "not enough data" when it cannot be measured.
func TestShadowRecallCorrelation(t *testing.T) {
	t.Parallel()
	// Scores 10, 20, 30, 40 (one bundle each), recalls 0.9, 0.8, 0.5, 0.6.
	// By hand: mean score 25, mean recall 0.7; Σdxdy = (−15)(0.2) + (−5)(0.1)
	// + 5(−0.2) + 15(−0.1) = −6; Σdx² = 500; Σdy² = 0.1; r = −6/√50 = −0.848528...
	four := []RunSummary{
		withTruth(run("a", 0, 10, "pp"), fp(0.9), nil), withTruth(run("a", 1, 20, "pp"), fp(0.8), nil),
		withTruth(run("b", 0, 30, "pp"), fp(0.5), nil), withTruth(run("b", 1, 40, "pp"), fp(0.6), nil),
	}
	tests := []struct {
		why  string
		runs []RunSummary
		want Correlation
	}{
		{"four runs of two contenders: r by hand, negative when lower scores go with higher recall", four,
			Correlation{R: fp(-6 / math.Sqrt(50)), N: 4}},
		{"a failed run is left out and counted, not correlated at its penalty score of 100",
			append(append([]RunSummary{}, four...), withTruth(failedRun("c", 0), fp(0), nil)),
			Correlation{R: fp(-6 / math.Sqrt(50)), N: 4, Excluded: 1}},
		{"two runs: not enough data", four[:2], Correlation{N: 2}},
		{"runs without a recall do not count", []RunSummary{four[0], four[1], withTruth(run("b", 0, 30, "pp"), nil, nil)}, Correlation{N: 2}},
		{"recall never varies: r undefined", []RunSummary{
			withTruth(run("a", 0, 10, "pp"), fp(0.5), nil), withTruth(run("a", 1, 20, "pp"), fp(0.5), nil), withTruth(run("b", 0, 30, "pp"), fp(0.5), nil)},
			Correlation{N: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			got := *shadowRecallCorrelation(tc.runs)
			if d := cmp.Diff(tc.want, got, approx, cmpopts.IgnoreFields(Correlation{}, "Note")); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			if tc.want.R == nil && !strings.HasPrefix(got.Note, "not enough data") {
				t.Errorf("note %q: want it to say not enough data", got.Note)
			}
		})
	}
	// Through Analyse: the report carries it only with a ground truth.
	r := Analyse(Options{Models: []string{"a", "b"}, Repeats: 2, Workspace: "ws", GroundTruth: "t.yaml"}, "h", "j", "s", four)
	if r.Correlation == nil || r.Correlation.R == nil || math.Abs(*r.Correlation.R+6/math.Sqrt(50)) > 1e-9 || r.Correlation.N != 4 {
		t.Errorf("report correlation %+v", r.Correlation)
	}
}

// TestEvidenceOfResult: what a contender's summary keeps of a nexus.Result
// built as the nexus part fills it: its own citations by model (zero when
// the model cited nothing), the run's, and the ground-truth match; nothing
// without a workspace.
func TestEvidenceOfResult(t *testing.T) {
	t.Parallel()
	match := workspace.Match{Defects: 4, Found: 3, Findings: 5, Matching: 4, Recall: fp(0.75), Precision: fp(0.8), Missed: []string{"D2"}}
	tests := []struct {
		why   string
		res   nexus.Result
		model string
		want  RunSummary
	}{
		{"no workspace: nothing measured", nexus.Result{}, "mock:honest", RunSummary{}},
		{"the contender's own citations, the run's, and the match",
			nexus.Result{Evidence: counts4(12, 8, 1, 3), EvidenceByModel: map[string]workspace.Counts{"mock:honest": *counts4(7, 5, 0, 2), "mock:sloppy": *counts4(5, 3, 1, 1)},
				GroundTruth: &nexus.GroundTruthResult{File: "t.yaml", Match: match}},
			"mock:honest", RunSummary{Evidence: counts4(7, 5, 0, 2), RunEvidence: counts4(12, 8, 1, 3), GroundTruth: &match}},
		{"a workspace run where the contender cited nothing: zero, not absent",
			nexus.Result{Evidence: counts4(5, 3, 1, 1), EvidenceByModel: map[string]workspace.Counts{"mock:sloppy": *counts4(5, 3, 1, 1)}},
			"mock:honest", RunSummary{Evidence: counts4(0, 0, 0, 0), RunEvidence: counts4(5, 3, 1, 1)}},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			var got RunSummary
			evidenceOf(&got, &tc.res, tc.model)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// TestEvidenceInTableAndHTML: the terminal table and compare.html show the
// same evidence cells as compare.md, and neither shows any without a
// workspace.
func TestEvidenceInTableAndHTML(t *testing.T) {
	t.Parallel()
	withWS := evidenceReport(true)
	without := richReport()
	for _, tc := range []struct {
		why  string
		r    *Report
		want []string
		none bool
	}{
		{"a workspace and a ground truth", withWS, []string{"0.0% (0 of 30)", "[46.8%, 91.1%]", "— (nothing cited)", "75.0% (2 of 2 repeats)", "r = -0.85 over n = 4 runs", "negative"}, false},
		{"no workspace", without, nil, true},
	} {
		t.Run(tc.why, func(t *testing.T) {
			h, err := tc.r.HTML()
			if err != nil {
				t.Fatal(err)
			}
			for name, out := range map[string]string{"table": tc.r.Table(), "html": h} {
				for _, s := range tc.want {
					if !strings.Contains(out, s) {
						t.Errorf("%s lacks %q", name, s)
					}
				}
				if tc.none && (strings.Contains(out, "abricat") || strings.Contains(out, "Wilson")) {
					t.Errorf("%s shows evidence without a workspace", name)
				}
			}
		})
	}
}
