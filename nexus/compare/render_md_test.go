package compare

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/internal/golden"
	"github.com/swarm-dev/swarm/workspace"
)

// The files under testdata/markdown pin compare.md for the contender and
// pair states a golden mock compare does not reach. They were written by
// the strings.Builder version of Markdown, before it became a template.
var updateMarkdown = flag.Bool("update", false, "rewrite testdata/markdown/*.golden")

func fp(x float64) *float64 { return &x }

// richReport reaches every branch of compare.md: an advisory contender, one
// without a result, ties, a hardened contender, judge disagreement (k = 3),
// criteria and categories a contender lacks, and pairs decided each way.
func richReport() *Report {
	return &Report{
		Mission: "api-design", Scale: "ss-50", Roles: RolesCommanders, Repeats: 2, Seeds: []int64{42, 43},
		SealedHash: "sha256:abc", Judge: "openai:gpt-4.1", SealAuthor: "anthropic:claude", JudgeSamples: 3,
		Categories: []string{"edge_case", "happy_path"},
		Contenders: []ContenderStats{{
			Rank: 1, Tier: 1, Model: "mock:honest", Median: 12.5, Mean: 13.75, CI95: Interval{Lo: 10, Hi: 17.5},
			BundlesPlanned: 4, BundleScores: map[string][]float64{"api": {10, 15}, "db": {12, 14}},
			BundleMean: map[string]float64{"api": 12.5, "db": 13}, Levels: map[string]int{"minor": 4}, Gates: map[string]int{"proceed": 4},
			CriterionPassRate: map[string]float64{"sc-1": 1, "sc-2": 0.75}, CategoryFailRate: map[string]float64{"edge_case": 0.25, "happy_path": 0},
			Velocity: fp(2.5), ReviewScore: 0.81, Toxicity: 0.1234, QualityGap: 0.5, JudgeDisagreement: 0.0625,
			Calls: 12, InputTokens: 3000, OutputTokens: 700, CostUSD: 0.00123, RunCostUSD: 0.0456, LatencyP50MS: 12.345, LatencyP95MS: 99.5,
			NotDistinguishable: []string{"openai:gpt-4.1-mini"},
		}, {
			Rank: 2, Tier: 1, Model: "openai:gpt-4.1-mini", Median: 20, Mean: 20, CI95: Interval{Lo: 15, Hi: 25},
			BundlesPlanned: 4, BundlesFailed: 1, FailureRate: 0.25, BundleFailures: map[string]int{"timeout": 1},
			BundleScores: map[string][]float64{"api": {100, 20}}, BundleMean: map[string]float64{"api": 60}, BundleFailed: map[string]int{"api": 1},
			Levels: map[string]int{"moderate": 1}, Gates: map[string]int{"warn": 1},
			CriterionPassRate: map[string]float64{"sc-1": 0.5}, CategoryFailRate: map[string]float64{"happy_path": 0.5},
			ReviewScore: 0.7, Toxicity: 0.2, QualityGap: 0.1, JudgeDisagreement: 0.1,
			Calls: 10, InputTokens: 2000, OutputTokens: 500, CostUSD: 0.02, RunCostUSD: 0.05, LatencyP50MS: 300, LatencyP95MS: 900,
			TokenParts: TokenParts{ReasoningTokens: 120, CacheReadTokens: 1500, PromptCacheHits: 6}, // shown beside its tokens; mock:honest reported none, so none are shown for it
			Failures:   map[string]int{"timeout": 1, "rate_limit": 2},
			Advisory:   true, AdvisoryReason: "judge openai:gpt-4.1 is of the contender's family openai",
			NotDistinguishable: []string{"mock:honest", "mock:prose"},
		}, {
			Rank: 3, Model: "mock:prose", NoResult: true, BundlesPlanned: 4, BundlesFailed: 4, FailureRate: 1,
			BundleFailures: map[string]int{"unparseable": 4}, Failures: map[string]int{"unparseable": 4},
			Calls: 4, CostUSD: 0.001, RunCostUSD: 0.01,
		}},
		Pairwise: []PairResult{{
			First: "mock:honest", Second: "openai:gpt-4.1-mini", Paired: 8, McNemar: McNemar{B: 3, C: 1, P: 0.625}, PHolm: 1,
			MeanDiff: -6.25, DiffCI95: Interval{Lo: -12.5, Hi: 0}, Advisory: true, AdvisoryReason: "judge family",
			PerCriterion: []CriterionPair{{ID: "sc-1", Category: "happy_path", Paired: 4, Both: 2, Neither: 0, McNemar: McNemar{B: 2, C: 0, P: 0.5}},
				{ID: "sc-2", Category: "edge_case", Paired: 4, Both: 1, Neither: 1, McNemar: McNemar{B: 1, C: 1, P: 1}}},
		}, {
			First: "mock:honest", Second: "mock:prose", Paired: 40, McNemar: McNemar{B: 40, C: 0, P: 1.8e-12}, PHolm: 3.6e-12,
			MeanDiff: -86.25, DiffCI95: Interval{Lo: -90, Hi: -82.5}, Distinguishable: true, Better: "mock:honest", NoResult: []string{"mock:prose"},
		}, {
			First: "openai:gpt-4.1-mini", Second: "mock:prose", Paired: 8, McNemar: McNemar{B: 4, C: 0, P: 0.125}, PHolm: 0.25,
			MeanDiff: 80, DiffCI95: Interval{Lo: 75, Hi: 85}, Distinguishable: true, Better: "openai:gpt-4.1-mini",
			Advisory: true, NoResult: []string{"mock:prose", "mock:prose"},
		}},
	}
}

// evidenceReport is richReport over a workspace with a ground truth: a
// contender with a rate and recall, one that cited nothing and measured no
// precision, and the one without a result (its citations shown, its rank
// last).
func evidenceReport(truth bool) *Report {
	r := richReport()
	r.Workspace = "examples/workspaces/shop"
	ev := []*EvidenceStats{
		{Counts: workspace.Counts{Cited: 30, Verified: 29, Unverifiable: 1}, Repeats: 2, FabricationRate: fp(0), FabricationCI95: &Interval{Lo: 0, Hi: 0.1135}},
		{Counts: workspace.Counts{}, Repeats: 2},
		{Counts: workspace.Counts{Cited: 12, Verified: 3, Fabricated: 9}, Repeats: 2, FabricationRate: fp(0.75), FabricationCI95: &Interval{Lo: 0.4677, Hi: 0.9111}},
	}
	gt := []*GroundTruthStats{
		{Recall: fp(0.75), RecallRepeats: 2, Precision: fp(0.6), PrecisionRepeats: 2},
		{Recall: fp(0.25), RecallRepeats: 2},
		{},
	}
	for i := range r.Contenders {
		r.Contenders[i].Scores = make([]float64, 2)
		r.Contenders[i].Evidence = ev[i]
		if truth {
			r.Contenders[i].GroundTruth = gt[i]
		}
	}
	if truth {
		r.GroundTruth = "examples/workspaces/shop.truth.yaml"
		r.Correlation = &Correlation{R: fp(-0.8485), N: 4, Excluded: 2}
	}
	return r
}

func TestMarkdownVariants(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, why string
		r         *Report
	}{
		{"rich", "every cell kind: advisory, no result, ties, velocity, judge D with k > 1, missing criteria and categories, pairs decided each way", richReport()},
		{"failing", "the failing contenders of render_test.go through Analyse: k = 1 (judge D n/a), failed-bundle banners", failingReport()},
		{"empty", "no contender, pair, bundle, criterion or category: every table keeps its header", &Report{Mission: "m", Scale: "ss-50", Roles: RolesAll, JudgeSamples: 1}},
		{"evidence", "a workspace and a ground truth: fabrication rate with interval, nothing cited (—), recall and precision means, r with runs left out", evidenceReport(true)},
		{"evidence-without-ground-truth", "a workspace only: the evidence table without recall, precision or correlation", evidenceReport(false)},
		{"evidence-not-enough-data", "a ground truth but fewer than 3 runs to correlate", func() *Report {
			r := evidenceReport(true)
			r.Correlation = shadowRecallCorrelation([]RunSummary{withTruth(run("a", 0, 10, "pp"), fp(0.5), nil), withTruth(run("b", 0, 20, "pp"), fp(0.25), nil)})
			return r
		}()},
		{"table-breaking-text", "names with pipes and newlines go in as they are: pins today's lack of escaping", func() *Report {
			r := richReport()
			r.Mission = "Title | with\nnewline"
			r.Contenders[1].AdvisoryReason = "a | b"
			r.Categories = append(r.Categories, "odd|cat")
			return r
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := []byte(c.r.Markdown())
			path := filepath.Join("testdata", "markdown", c.name+".md.golden")
			if d := golden.Diff(t, path, got, *updateMarkdown); d != "" {
				t.Errorf("%s (%s): compare.md differs (-want +got):\n%s", c.name, c.why, d)
			}
		})
	}
}

// A contender whose model has no known price shows "—" for its cost in
// every format (terminal table, compare.md, compare.html), never $0.0000,
// and one whose runs mixed priced and unpriced calls shows "≥".
func TestUnpricedContenderCostInEveryFormat(t *testing.T) {
	t.Parallel()
	r := richReport()
	r.Contenders[1].CostUSD, r.Contenders[1].Unpriced = 0, []string{"openai-compatible:x"}
	r.Contenders[1].RunCostUSD, r.Contenders[1].RunUnpriced = 0.004, []string{"openai-compatible:x"}
	html, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		out  string
		want []string
	}{
		"terminal": {r.Table(), []string{"—"}},
		"markdown": {r.Markdown(), []string{"| — (no price for openai-compatible:x) | ≥ $0.0040 (+ unpriced calls on openai-compatible:x) |"}},
		"html":     {html, []string{"<td>— (no price for openai-compatible:x)</td>", "<td>≥ $0.0040 (&#43; unpriced calls on openai-compatible:x)</td>"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.out, w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
		for _, line := range strings.Split(tc.out, "\n") {
			if strings.Contains(line, "gpt-4.1-mini") && strings.Contains(line, "0.0000") {
				t.Errorf("%s shows the unpriced contender at 0: %s", name, line)
			}
		}
	}
}
