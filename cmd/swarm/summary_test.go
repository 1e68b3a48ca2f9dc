package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// The end-of-run summary of a workspace run with a ground truth: the run's
// status in words, its evidence counts and recall and precision on the
// headline, and the next commands that fit, with the real flag names.
func TestRunSummaryShowsEvidenceStatusAndNextCommands(t *testing.T) {
	t.Parallel()
	mission := filepath.Join("..", "..", "examples", "missions", "security-review-tinynotes.md")
	truth := filepath.Join("..", "..", "examples", "workspaces", "tinynotes.truth.yaml")
	dir := filepath.Join(t.TempDir(), "run")
	_, out, stderr := execCLI(t, "run", mission, "--provider", "mock:sloppy", "--scale", "ss-50", "--ground-truth", truth, "--out", dir, "-q")
	for _, want := range []*regexp.Regexp{
		// status in words (complete, with why nothing is recommended when
		// so, or why it is not complete: the sandbox breaker may cut the
		// run), then the directory
		regexp.MustCompile(`(?m)^Run (complete: every planned bundle judged \(\d+ of \d+\)(; .+)?|[A-Z]+: .+)\n  run directory: ` + regexp.QuoteMeta(dir) + `$`),
		// sloppy cites lines that do not exist: the counts say so
		regexp.MustCompile(`(?m)^  evidence: (\d+) cited · 0 verified · 0 unverifiable · (\d+) fabricated \(100\.0% of citations`),
		regexp.MustCompile(`(?m)^  ground truth .*tinynotes\.truth\.yaml: recall [0-9.]+% \(\d+ of \d+ defects found\) · precision `),
		regexp.MustCompile(`(?m)^    swarm verify-evidence ` + regexp.QuoteMeta(dir) + ` --workspace \S+tinynotes `),
		regexp.MustCompile(`(?m)^    swarm run ` + regexp.QuoteMeta(mission) + ` --follow-up ` + regexp.QuoteMeta(dir) + ` `),
		regexp.MustCompile(`(?m)^    swarm compare ` + regexp.QuoteMeta(mission) + ` --models mock:sloppy,KIND:MODEL --workspace \S+ --ground-truth \S+ `),
	} {
		if !want.MatchString(out) {
			t.Errorf("summary lacks %s:\n%s\n%s", want, out, stderr)
		}
	}
}

// The summary's pieces on their own: each status in words, evidence that
// was not measured or is empty never reads as clean, and the next
// commands of a run without a workspace.
func TestSummaryPieces(t *testing.T) {
	t.Parallel()
	rec := 0.5
	tests := []struct {
		name  string
		res   nexus.Result
		want  []string
		never []string
	}{
		{"complete", nexus.Result{Status: runfiles.StatusComplete, Aggregate: nexus.ShadowAggregate{Planned: 3, Scored: 3}},
			[]string{"Run complete: every planned bundle judged (3 of 3)"}, []string{"evidence", "verify-evidence"}},
		{"incomplete says why", nexus.Result{Status: runfiles.StatusIncomplete, Error: "fewer bundles judged than planned: 2 of 3 scored", Aggregate: nexus.ShadowAggregate{Planned: 3, Scored: 2}},
			[]string{"Run INCOMPLETE: fewer bundles judged than planned: 2 of 3 scored", "swarm run m.md --config 'my config.yml' --follow-up RUN", "swarm compare m.md --config 'my config.yml' --models mock:honest,KIND:MODEL"}, nil},
		{"partial says why", nexus.Result{Status: runfiles.StatusPartial, Error: "stopped by the cost ceiling: 1 of 3 scored"},
			[]string{"Run PARTIAL: stopped by the cost ceiling: 1 of 3 scored"}, nil},
		{"nothing cited is not clean evidence", nexus.Result{Status: runfiles.StatusComplete, Evidence: &workspace.Counts{}, Workspace: &nexus.WorkspaceInfo{Dir: "ws dir"}},
			[]string{"evidence: nothing cited", "swarm verify-evidence RUN --workspace 'ws dir'"}, []string{"0 fabricated"}},
		{"judged but nothing passed the gate: no recommendation", nexus.Result{Status: runfiles.StatusComplete, Aggregate: nexus.ShadowAggregate{Planned: 2, Scored: 2},
			NoRecommendation: nexus.NoRecommendationUngated,
			Bundles:          []*nexus.BundleOutcome{{ID: "a", Gate: &shadow.GateDecision{Action: shadow.ActionReject}}, {ID: "b", Gate: &shadow.GateDecision{Action: shadow.ActionQuarantine}}}},
			[]string{"Run complete: every planned bundle judged (2 of 2); none passed the Shadow Gate: no recommendation"}, nil},
		{"passed the gate on fabricated evidence: no recommendation", nexus.Result{Status: runfiles.StatusComplete, Aggregate: nexus.ShadowAggregate{Planned: 1, Scored: 1},
			NoRecommendation: nexus.NoRecommendationUnverified,
			Bundles:          []*nexus.BundleOutcome{{ID: "a", Gate: &shadow.GateDecision{Action: shadow.ActionWarn}}},
			Evidence:         &workspace.Counts{Cited: 4, Fabricated: 4}, Workspace: &nexus.WorkspaceInfo{Dir: "ws"}},
			[]string{"(1 of 1); no finding of the bundles that passed the Shadow Gate rests on a verified citation: no recommendation"}, []string{"none passed"}},
		{"passed with verified evidence: nothing added", nexus.Result{Status: runfiles.StatusComplete, Aggregate: nexus.ShadowAggregate{Planned: 1, Scored: 1},
			Bundles:  []*nexus.BundleOutcome{{ID: "a", Gate: &shadow.GateDecision{Action: shadow.ActionProceed}}},
			Evidence: &workspace.Counts{Cited: 4, Verified: 4}, Workspace: &nexus.WorkspaceInfo{Dir: "ws"}},
			[]string{"Run complete: every planned bundle judged (1 of 1)\n"}, []string{"no recommendation"}},
		{"the cache and reasoning parts of the tokens, and the prompt cache's hits", nexus.Result{Status: runfiles.StatusComplete,
			Telemetry: runfiles.Telemetry{Calls: 10, InputTokens: 2000, OutputTokens: 500, CacheReadTokens: 1500, CacheWriteTokens: 200, ReasoningTokens: 120, PromptCacheHits: 6, CostUSD: 0.0021}},
			[]string{"LLM calls 10 · tokens 2000 in / 500 out · 1500 cache read (75% of input), 200 cache write, 120 reasoning · prompt cache hit by 6 of 10 calls · cost $0.0021"}, nil},
		{"no part reported: none shown", nexus.Result{Status: runfiles.StatusComplete, Telemetry: runfiles.Telemetry{Calls: 10, InputTokens: 2000, OutputTokens: 500, CostUSD: 0.0021}},
			[]string{"LLM calls 10 · tokens 2000 in / 500 out · cost $0.0021"}, []string{"cache", "reasoning"}},
		{"an unpriced model's calls: — and never $0.0000", nexus.Result{Status: runfiles.StatusComplete,
			Telemetry: runfiles.Telemetry{Calls: 4, InputTokens: 2000, OutputTokens: 500, UnpricedModels: []string{"vllm:x"}, UnpricedCalls: 4}},
			[]string{"cost — (no price for vllm:x)"}, []string{"$0.0000"}},
		{"no defects: recall is not 0%", nexus.Result{Status: runfiles.StatusComplete, GroundTruth: &nexus.GroundTruthResult{File: "t.yaml", Match: workspace.Match{Findings: 2, Matching: 1, Precision: &rec}}},
			[]string{"recall — (no defects) · precision 50.0% (1 of 2 findings match a defect)"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.res.Dir = "RUN"
			tc.res.ShadowValid = true
			tc.res.Plan.Roster.Commanders = []providers.Ref{{Kind: "mock", Model: "honest"}}
			var b bytes.Buffer
			printSummary(&b, &tc.res, "m.md", "my config.yml")
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.never {
				if strings.Contains(b.String(), w) {
					t.Errorf("says %q:\n%s", w, b.String())
				}
			}
		})
	}
}

// The briefing warns when the scores are advisory (one --provider for
// every role) and when the cost ceiling cannot act on a model without a
// known price.
func TestBriefingWarnsAdvisoryScoresAndUnpricedModels(t *testing.T) {
	t.Parallel()
	r := func(s string) providers.Ref { x, _ := providers.ParseRef(s); return x }
	p := nexus.Plan{Roster: config.Roster{Judge: r("openai-compatible:m"), SealAuthor: r("openai-compatible:m"), Commanders: []providers.Ref{r("openai-compatible:m")}},
		Unpriced: []string{"openai-compatible:m"}, CostCeilingUSD: 5}
	var b bytes.Buffer
	printBriefing(&b, p)
	for _, w := range []string{"Scores:   advisory: the judge and the seal author openai-compatible:m share the model family", "--model judge=KIND:MODEL",
		"warning: no known price for openai-compatible:m: the cost ceiling cannot act on those calls"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("briefing lacks %q:\n%s", w, b.String())
		}
	}
	p.Roster.Judge, p.Roster.SealAuthor, p.Unpriced = r("anthropic:claude-sonnet-4"), r("anthropic:claude-sonnet-4"), nil
	b.Reset()
	printBriefing(&b, p)
	if strings.Contains(b.String(), "advisory") || strings.Contains(b.String(), "warning") {
		t.Errorf("independent judge, priced models: %s", b.String())
	}
}

// The briefing counts what will be sealed: a workspace run seals the
// mechanical checks beside the seal author's criteria, and the criteria
// line says so (it said "8 sealed" while the envelope held 11).
func TestBriefingCountsTheSealedChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		workspace, want, never string
	}{
		{"", "Criteria: 8 sealed · hardening", "checks of the evidence"},
		{"/ws", "Criteria: 8 sealed + 3 checks of the evidence (sealed too, decided by code) · hardening", ""},
	} {
		var b bytes.Buffer
		printBriefing(&b, nexus.Plan{Criteria: 8, Workspace: tc.workspace})
		if !strings.Contains(b.String(), tc.want) || (tc.never != "" && strings.Contains(b.String(), tc.never)) {
			t.Errorf("workspace %q: briefing lacks %q (or says %q):\n%s", tc.workspace, tc.want, tc.never, b.String())
		}
	}
}
