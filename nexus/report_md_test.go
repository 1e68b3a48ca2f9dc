package nexus

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/golden"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// The files under testdata/report pin report.md for the run endings and
// bundle states a golden mock run does not reach. They were written by the
// strings.Builder version of the report, before it became a template.
var updateReports = flag.Bool("update", false, "rewrite testdata/report/*.golden")

func fp(x float64) *float64 { return &x }

// reportPlan is the plan every case reports on.
func reportPlan() Plan {
	return Plan{RunID: "20250101-120000-auth-ss-50", Scale: "ss-50", Personality: "balanced", Seed: 42,
		CostCeilingUSD: 5, MissionTitle: "Migrate authentication"}
}

func reportTelemetry(failures map[string]int) runfiles.Telemetry {
	return runfiles.Telemetry{
		Agents:         runfiles.AgentTally{Nexus: 1, Commanders: 3, SquadLeads: 3, Workers: 6, Reviewers: 3, Total: 16},
		AgentsLaunched: runfiles.AgentTally{Nexus: 1, Commanders: 3, SquadLeads: 2, Workers: 5, Reviewers: 3, Total: 14},
		Calls:          31, InputTokens: 20123, OutputTokens: 4567, CostUSD: 0.01234, WallMS: 83500,
		FailureClasses: failures,
	}
}

// judged is a bundle judged with the given initial and final score, gate and
// (when cycles > 0) hardening.
func judged(id, model string, initial, final float64, gate string, cycles int, inSynthesis bool) *BundleOutcome {
	o := &BundleOutcome{ID: id, Model: model, Initial: &shadow.Evaluation{Score: initial}, ShadowScore: fp(final),
		Level: string(shadow.LevelOf(final)), Gate: &shadow.GateDecision{Action: gate},
		Review: MetaReview{Score: 0.756}, Tier: tierMajority, FormulaScore: 0.6789, InSynthesis: inSynthesis}
	if cycles > 0 {
		o.Hardening = &shadow.HardeningResult{Cycles: cycles, Velocity: (initial - final) / float64(cycles)}
	}
	return o
}

func fullSynthesis() *Synthesis {
	return &Synthesis{
		TopAction: "Rotate the signing keys first.",
		Summary:   "Three bundles, two usable.",
		QuickWins: []string{"Add PKCE to the\n  login flow", "Drop implicit grant"},
		DeepWork:  []string{"Rewrite   the session store"},
		Risks: []Risk{{Domain: "security", Level: "high", Note: "tokens\nleak   in logs"},
			{Domain: "testing", Level: "low", Note: "fine"}},
		Conflicts: []Conflict{{Topic: "token lifetime", Resolution: "15 minutes"}, {Topic: "refresh", Resolution: "rotate"}},
		Gaps:      []string{"no rollback plan"},
	}
}

const sandboxMarkdown = "## Distributional safety (sandbox)\n\n| scope | interactions |\n|---|---|\n| all | 6 |\n\n"

func TestActionReportVariants(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		why  string
		res  *Result
		// sandbox is what the sandbox bridge's report renders, "" when off.
		sandbox string
	}{{
		name: "complete",
		why:  "every section filled: synthesis with risks, lists and conflicts, a warned, a hardened and a salvaged bundle, the sandbox part and a failure table",
		res: &Result{Status: runfiles.StatusComplete, ShadowValid: true, SealedHash: "sha256:abc",
			Aggregate: ShadowAggregate{Median: fp(20), Mean: fp(21.25), Level: string(shadow.LevelModerate), Planned: 3, Scored: 3},
			Synthesis: fullSynthesis(),
			Bundles: []*BundleOutcome{
				judged("security", "mock:honest", 10, 0, shadow.ActionProceed, 0, true),
				judged("testing", "mock:sloppy", 40, 25, shadow.ActionWarn, 2, true),
				func() *BundleOutcome {
					o := judged("docs", "mock:deceptive", 80, 80, shadow.ActionReject, 1, false)
					o.Salvaged = true
					return o
				}(),
			},
			Telemetry: reportTelemetry(map[string]int{"rate_limit": 2, "schema": 1})},
		sandbox: sandboxMarkdown,
	}, {
		name: "failed",
		why:  "a failed run: the banner with its class and the error on one line, no synthesis, a failed bundle row, no sandbox",
		res: &Result{Status: runfiles.StatusFailed, Phase: "3", FailureClass: "auth", Error: "provider said:\n  401   unauthorized",
			ShadowValid: true, SealedHash: "sha256:abc",
			Aggregate: ShadowAggregate{Level: "none", Planned: 2, Failed: 2},
			Bundles: []*BundleOutcome{{ID: "security", Model: "openai:gpt-4.1", Failed: true, FailureClass: "auth", Tier: tierUnique},
				{ID: "testing", Model: "openai:gpt-4.1", Failed: true, FailureClass: "timeout", Tier: tierUnique}},
			Telemetry: reportTelemetry(map[string]int{"auth": 2})},
	}, {
		name: "interrupted",
		why:  "Ctrl-C: the partial-run banner names the phase and what was scored",
		res: &Result{Status: runfiles.StatusInterrupted, Phase: "5", ShadowValid: true,
			Aggregate: ShadowAggregate{Median: fp(0), Mean: fp(0), Level: string(shadow.LevelPerfect), Planned: 2, Scored: 1, Unjudged: 1},
			Bundles: []*BundleOutcome{judged("security", "mock:honest", 0, 0, shadow.ActionProceed, 0, false),
				{ID: "testing", Model: "mock:honest", Review: MetaReview{Score: 0.5}, Tier: tierMajority}},
			Telemetry: reportTelemetry(nil)},
	}, {
		name: "invalid",
		why:  "shadow scoring invalid: no Shadow Score row at all, the invalid banner in the metrics and in the shadow results, and no recommendation (nothing passed a gate)",
		res: &Result{Status: runfiles.StatusInvalid, ShadowReason: "criteria hash mismatch", SealedHash: "sha256:abc",
			Aggregate: ShadowAggregate{Level: "none", Planned: 2, Unjudged: 2},
			Synthesis: &Synthesis{TopAction: "Do it."},
			// Not judged while shadow scoring is on: no gate decision, so
			// not in synthesis (inSynthesis); a synthesis in the result
			// is never shown as the recommendation.
			Bundles: []*BundleOutcome{{ID: "security", Model: "mock:honest", Review: MetaReview{Score: 0.7}, Tier: tierConsensus, FormulaScore: 0.5},
				{ID: "testing", Model: "mock:honest", Review: MetaReview{Score: 0.6}, Tier: tierMajority}},
			Telemetry: reportTelemetry(nil)},
	}, {
		name: "cost-ceiling",
		why:  "the cost ceiling stopped the run: the partial banner and a salvaged bundle",
		res: &Result{Status: runfiles.StatusPartial, Error: "stopped by the cost ceiling: 1 of 2 scored (1 salvaged from finished atoms)", ShadowValid: true,
			Aggregate: ShadowAggregate{Median: fp(50), Mean: fp(50), Level: string(shadow.LevelSignificant), Planned: 2, Scored: 1, Failed: 1, Salvaged: 1},
			Bundles: []*BundleOutcome{func() *BundleOutcome {
				o := judged("security", "mock:honest", 50, 50, shadow.ActionQuarantine, 0, false) // quarantined: never in synthesis
				o.Salvaged = true
				return o
			}(), {ID: "testing", Model: "mock:honest", Failed: true, FailureClass: ClassCancelled, Tier: tierUnique}},
			Telemetry: reportTelemetry(map[string]int{"cancelled": 1})},
	}, {
		name: "incomplete-k-of-n",
		why:  "fewer bundles judged than planned: the score row says k of n scored",
		res: &Result{Status: runfiles.StatusIncomplete, Error: "fewer bundles judged than planned: 1 of 3 scored", ShadowValid: true,
			Aggregate: ShadowAggregate{Median: fp(12.5), Mean: fp(12.5), Level: string(shadow.LevelMinor), Planned: 3, Scored: 1, Failed: 2},
			Synthesis: &Synthesis{TopAction: "Ship.", Summary: ""},
			Bundles:   []*BundleOutcome{judged("security", "mock:honest", 12.5, 12.5, shadow.ActionProceed, 0, true)},
			Telemetry: reportTelemetry(nil)},
	}, {
		name: "incomplete-none-scored",
		why:  "nothing judged with valid shadow scoring: the score row says none and why, never 0%",
		res: &Result{Status: runfiles.StatusIncomplete, Error: "no bundle was judged: 0 of 2 scored", ShadowValid: true,
			Aggregate: ShadowAggregate{Level: "none", Planned: 2, Unjudged: 2},
			Bundles: []*BundleOutcome{{ID: "security", Model: "mock:honest", Tier: tierUnique},
				{ID: "testing", Model: "mock:honest", Tier: tierUnique}},
			Telemetry: reportTelemetry(nil)},
	}, {
		name: "shadow-off",
		why:  "shadow_scoring.enabled: false, every bundle delivered: a complete run whose shadow results say scoring is off (not invalid), the score row says none, the cards say no gate checked them",
		res: &Result{Status: runfiles.StatusComplete, ShadowReason: ShadowOff,
			Aggregate: ShadowAggregate{Level: "none", Planned: 1, Unjudged: 1},
			Synthesis: &Synthesis{TopAction: "Ship."},
			Bundles:   []*BundleOutcome{{ID: "security", Model: "mock:honest", Review: MetaReview{Score: 0.9}, Tier: tierConsensus, FormulaScore: 0.91, InSynthesis: true}},
			Telemetry: reportTelemetry(nil)},
		sandbox: sandboxMarkdown,
	}, {
		name: "table-breaking-text",
		why:  "text from users and models goes in as it is (pipes, backticks, newlines outside oneLine): pins today's lack of escaping so a template cannot change it silently",
		res: &Result{Status: runfiles.StatusComplete, ShadowValid: true, SealedHash: "sha256:abc",
			Aggregate: ShadowAggregate{Median: fp(0), Mean: fp(0), Level: string(shadow.LevelPerfect), Planned: 1, Scored: 1},
			Synthesis: &Synthesis{TopAction: "Use `a|b`\nthen *c*", Summary: "line one\nline two",
				Risks:     []Risk{{Domain: "sec|urity", Level: "hi|gh", Note: "a | b"}},
				QuickWins: []string{"x | y"}, Conflicts: []Conflict{{Topic: "t|1", Resolution: "r\nr"}}, Gaps: []string{" "}},
			Bundles:   []*BundleOutcome{judged("sec|urity", "mock:hon|est", 0, 0, shadow.ActionProceed, 0, true)},
			Telemetry: reportTelemetry(map[string]int{"a|b": 1})},
	}, {
		name: "workspace-evidence",
		why: "a run with a workspace: every finding with its checked citations (verified plain, fabricated struck and named with its quote, unverifiable marked), " +
			"paths, quotes and reasons with pipes, newlines and backticks escaped, the per-model counts, the ground truth with a missed defect and no formula note",
		res:     workspaceResult(),
		sandbox: "",
	}, {
		name: "workspace-run",
		why: "a workspace run as a reviewer reads it: one finding raised by two domains (same title) and one by two domains (same verified location) each merged into one card naming both, " +
			"verified citations with their quoted lines, a fabricated one struck, a quarantined bundle's work shown apart under a warning and never in synthesis, " +
			"domain reports with failure messages and reviewer dissent, a CONFLICT tier with both sides, the safety section (refusals by kind, a leak) and the per-defect ground-truth table",
		res: workspaceRunResult(),
	}, {
		name: "nothing-passed",
		why:  "every bundle quarantined or rejected: report.md says plainly there is no recommendation, names the best rejected work, and shows its findings only under the warning, never a #1 action",
		res:  nothingPassedResult(),
	}, {
		name: "usage",
		why: "calls and cost by role and model: a model without a known price shows — (never $0.0000) and a role mixing it with priced calls ≥; cache reads, writes and reasoning " +
			"shown only where reported, the prompt cache's hits per role, and the cache-write rate a price did not give named as stood in for",
		res: usageResult(),
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := reportPlan()
			if c.name == "table-breaking-text" {
				p.MissionTitle = "Title with | pipe and\nnewline"
			}
			got := []byte(renderActionReport(p, c.res, reportInputs{Sandbox: c.sandbox, MajorityThreshold: 0.5}))
			path := filepath.Join("testdata", "report", c.name+".md.golden")
			if d := golden.Diff(t, path, got, *updateReports); d != "" {
				t.Errorf("%s (%s): report.md differs (-want +got):\n%s", c.name, c.why, d)
			}
		})
	}
}

// workspaceResult is a complete run with a workspace: its bundle's
// findings cite verified, fabricated and unverifiable lines.
func workspaceResult() *Result {
	o := judged("security", "mock:honest", 10, 0, shadow.ActionProceed, 0, true)
	o.Bundle.Findings = []commanders.Finding{
		{Title: "Compare tokens in\nconstant time", Priority: "high", Effort: "quick"},
		{Title: "Document the | API", Priority: "low", Effort: "deep"},
	}
	check := func(path string, start, end int, quote string, st workspace.State, reason string) workspace.Check {
		return workspace.Check{Citation: citation.Citation{Path: path, StartLine: start, EndLine: end, Quote: quote}, State: st, Reason: reason}
	}
	o.checks = &bundleChecks{
		own: []workspace.Check{check("README.md", 3, 3, "x", workspace.Verified, "")},
		findings: [][]workspace.Check{
			{check("internal/auth/session.go", 40, 52, "if a == b {", workspace.Verified, ""),
				check("internal/a|b`x`.go", 7, 9, "return \"ok\" |\n nil", workspace.Fabricated, "no such file"),
				check(".env", 1, 1, "SECRET", workspace.Unverifiable, "denied: *deny list*")},
			nil,
		},
	}
	c := workspace.Counts{Cited: 4, Verified: 2, Unverifiable: 1, Fabricated: 1}
	o.Evidence = &c
	return &Result{Status: runfiles.StatusComplete, ShadowValid: true, SealedHash: "sha256:abc",
		Aggregate: ShadowAggregate{Median: fp(0), Mean: fp(0), Level: string(shadow.LevelPerfect), Planned: 1, Scored: 1},
		Bundles:   []*BundleOutcome{o},
		Workspace: &WorkspaceInfo{Dir: "examples/workspaces/shop"},
		Evidence:  &c, EvidenceByModel: map[string]workspace.Counts{"mock:honest": c, "odd|model": {}},
		GroundTruth: &GroundTruthResult{File: "examples/workspaces/shop.truth.yaml", Match: workspace.Match{Defects: 2, Found: 1, Findings: 0, Recall: fp(0.5), Missed: []string{"D2"}}},
		Telemetry:   reportTelemetry(nil)}
}

// ck is a checked citation.
func ck(path string, start, end int, quote string, st workspace.State, reason string) workspace.Check {
	return workspace.Check{Citation: citation.Citation{Path: path, StartLine: start, EndLine: end, Quote: quote}, State: st, Reason: reason}
}

// workspaceRunResult is a run over a workspace with three domains: two
// that passed the gate and share findings, one quarantined whose
// reviewers disagree.
func workspaceRunResult() *Result {
	sec := judged("security", "mock:honest", 12.5, 0, shadow.ActionProceed, 1, true)
	sec.Domain = "security"
	sec.Bundle.Summary = "Session tokens are compared in variable time;\nqueries are parameterised."
	sec.Bundle.Findings = []commanders.Finding{
		{Title: "Compare session signatures in constant time", Priority: "high", Effort: "quick",
			Detail: "Lookup compares the HMAC with ==, which leaks timing; use hmac.Equal."},
		{Title: "Cap request bodies", Priority: "medium", Effort: "quick", Detail: "Handlers read the whole body."},
		{Title: "Rotate the signing key", Priority: "low", Effort: "deep", Detail: "The key never changes."},
	}
	sec.checks = &bundleChecks{
		own: []workspace.Check{ck("internal/auth/session.go", 40, 41, "func Lookup(", workspace.Verified, "")},
		findings: [][]workspace.Check{
			{ck("internal/auth/session.go", 52, 53, "if sig == want {\n\treturn id, true", workspace.Verified, ""),
				ck("internal/auth/token.go", 7, 9, "return nil", workspace.Fabricated, "internal/auth/token.go: no such file")},
			{ck("internal/api/handlers.go", 30, 30, "body, _ := io.ReadAll(r.Body)", workspace.Verified, "")},
			{ck(".env", 1, 1, "KEY=", workspace.Unverifiable, ".env: denied by the deny list")},
		},
	}
	sec.Final = &shadow.Evaluation{Total: 8, Passed: 8, Score: 0, Verdicts: []shadow.Verdict{{ID: "sc-1", Status: "pass"}}}
	sec.Gate.Reason = "shadow score ≤ 15: proceed"
	sec.Tier = tierConsensus

	tst := judged("testing", "mock:sloppy", 25, 25, shadow.ActionWarn, 0, true)
	tst.Domain = "testing"
	tst.Bundle.Summary = "Tests miss the forged-cookie path."
	tst.Bundle.Findings = []commanders.Finding{
		{Title: "compare session signatures in constant time!", Priority: "medium", Effort: "quick",
			Detail: "A forged cookie is accepted after enough tries; no test covers it."},
		{Title: "Limit the size of request bodies", Priority: "high", Effort: "quick", Detail: "A 1 GB body is read whole."},
	}
	tst.checks = &bundleChecks{findings: [][]workspace.Check{
		{ck("internal/auth/session.go", 52, 53, "if sig == want {", workspace.Verified, "")},
		{ck("internal/api/handlers.go", 30, 30, "body, _ := io.ReadAll(r.Body)", workspace.Verified, "")},
	}}
	tst.Final = &shadow.Evaluation{Total: 8, Passed: 6, Failed: 2, Score: 25, Verdicts: []shadow.Verdict{
		{ID: "sc-2", Status: "fail", Message: "no test exercises a forged session cookie", Expected: "SEALED EXPECTED TEXT"},
		{ID: "sc-5", Status: "fail", Message: ""},
		{ID: "sc-6", Status: "pass", Message: "fine"},
	}}
	tst.Gate.Reason = "shadow score in (15, 30]: proceed with a warning"

	doc := judged("docs", "mock:adversarial", 40, 40, shadow.ActionQuarantine, 0, false)
	doc.Domain = "docs"
	doc.Bundle.Summary = "Everything is documented."
	doc.Bundle.Findings = []commanders.Finding{
		{Title: "Compare session signatures in constant time", Priority: "high", Effort: "quick", Detail: "Trust me."},
	}
	doc.checks = &bundleChecks{findings: [][]workspace.Check{
		{ck("internal/auth/session.go", 52, 53, "if hmac.Equal(sig, want) {", workspace.Fabricated, "internal/auth/session.go:52-53: the quote is not what those lines say")},
	}}
	doc.Final = &shadow.Evaluation{Total: 8, Passed: 5, Failed: 3, Score: 40, Verdicts: []shadow.Verdict{
		{ID: "sc-3", Status: "fail", Message: "the API page does not name the cookie flags"},
	}}
	doc.Gate.Reason = "shadow score in (30, 50]: quarantined for re-review with the failure messages"
	doc.Tier, doc.Review = TierConflict, MetaReview{Score: 0.45, Reviews: 3}
	doc.LeakReport = []commanders.Leak{{Source: "atom:docs-1", Agent: "worker-docs-01", Field: "content", Name: "aws_access_key_id", Kind: "credential", Severity: "critical"}}

	failed := &BundleOutcome{ID: "integration", Domain: "integration", Model: "mock:flaky", Failed: true, FailureClass: "timeout",
		Error: "commander timed out\nafter 30s", Tier: tierUnique}

	card := func(total float64, dissent string, conflicts ...string) commanders.ScoreCard {
		return commanders.ScoreCard{Correctness: total, Completeness: total, Clarity: total, ConsensusAlignment: total, Dissent: dissent, Conflicts: conflicts}
	}
	reviews := []ReviewRecord{
		{Reviewer: "reviewer-1", Model: "mock:honest", BundleID: "security", Card: card(9, ""), Total: 9, Corrected: 9, Weight: 1},
		{Reviewer: "reviewer-2", Model: "mock:sloppy", BundleID: "security", Card: card(8, ""), Total: 8, Corrected: 8, Weight: 0.5},
		{Reviewer: "reviewer-1", Model: "mock:honest", BundleID: "docs", Card: card(2, "cites lines that do not say this", "contradicts security on the token lifetime"), Total: 2, Corrected: 2, Weight: 1},
		{Reviewer: "reviewer-2", Model: "mock:sloppy", BundleID: "docs", Card: card(9, ""), Total: 9, Corrected: 8, Weight: 1},
		{Reviewer: "reviewer-1", Model: "mock:honest", BundleID: "docs", Card: card(3, "the failures stand"), Total: 3, Corrected: 3, Weight: 1, Quarantine: true},
	}
	c := workspace.Counts{Cited: 8, Verified: 4, Unverifiable: 1, Fabricated: 2}
	tel := reportTelemetry(nil)
	tel.Tools = map[string]runfiles.ToolStats{"worker": {Calls: 40, Refused: 5, Refusals: map[string]int{"escape": 2, "denied": 2, "limit": 1}}}
	tel.Refusals = []runfiles.RefusalGroup{
		{Kind: "escape", Count: 2, Examples: []runfiles.RefusalExample{{Agent: "worker-docs-01", Role: "worker", Tool: "read_file", Path: "../../etc/passwd", Reason: "../../etc/passwd: path leaves the workspace root"}}},
		{Kind: "denied", Count: 2, Examples: []runfiles.RefusalExample{{Agent: "worker-security-01", Role: "worker", Tool: "read_file", Path: ".env", Reason: ".env: denied by the deny list"},
			{Agent: "worker-security-02", Role: "worker", Tool: "grep", Pattern: "password|secret", Reason: "id_rsa: denied"}}},
		{Kind: "limit", Count: 1, Examples: []runfiles.RefusalExample{{Agent: "worker-testing-01", Role: "worker", Tool: "read_file", Path: "big.log", Reason: "limit reached: max_read_bytes (65536)"}}},
	}
	return &Result{Status: runfiles.StatusIncomplete, Error: "fewer bundles judged than planned: 3 of 4 scored", ShadowValid: true, SealedHash: "sha256:abc",
		Aggregate: ShadowAggregate{Median: fp(25), Mean: fp(21.7), Level: string(shadow.LevelModerate), Planned: 4, Scored: 3, Failed: 1},
		Synthesis: &Synthesis{TopAction: "Compare session signatures in constant time.", Summary: "Two domains agree on the session check.",
			QuickWins: []string{"Compare session signatures in constant time", "Cap request bodies"}, Conflicts: []Conflict{}},
		Bundles:   []*BundleOutcome{sec, tst, doc, failed},
		Reviews:   reviews,
		Workspace: &WorkspaceInfo{Dir: "examples/workspaces/tinynotes"},
		Evidence:  &c, EvidenceByModel: map[string]workspace.Counts{"mock:honest": {Cited: 5, Verified: 3, Unverifiable: 1, Fabricated: 1}},
		GroundTruth: &GroundTruthResult{File: "examples/workspaces/tinynotes.truth.yaml", Match: workspace.Match{Defects: 3, Found: 2, Findings: 6, Matching: 4,
			Recall: fp(2.0 / 3), Precision: fp(4.0 / 6), Missed: []string{"D3"},
			ByDefect: []workspace.DefectMatch{
				// Findings are indexed in bundle then finding order: 0-2 security, 3-4 testing, 5 docs.
				{ID: "D1", Path: "internal/auth/session.go", StartLine: 52, EndLine: 52, Title: "Signature compared with ==", Found: []int{0, 3}, NearMisses: []int{5}},
				{ID: "D2", Path: "internal/api/handlers.go", StartLine: 30, EndLine: 31, Title: "Unbounded body", Found: []int{1, 4}, NearMisses: []int{}},
				{ID: "D3", Path: "internal/storage/store.go", StartLine: 12, EndLine: 14, Title: "SQL built with Sprintf", Found: []int{}, NearMisses: []int{}},
			}}},
		Telemetry: tel}
}

// nothingPassedResult is a run whose every bundle was quarantined or
// rejected; the synthesizer was not called.
func nothingPassedResult() *Result {
	q := judged("security", "mock:adversarial", 35, 35, shadow.ActionQuarantine, 0, false)
	q.Bundle.Summary = "All good."
	q.Bundle.Findings = []commanders.Finding{{Title: "Act on session token", Priority: "high", Effort: "quick", Detail: "Give it an owner."}}
	r := judged("testing", "mock:deceptive", 75, 75, shadow.ActionReject, 0, false)
	r.Bundle.Findings = []commanders.Finding{{Title: "Act on session token", Priority: "high", Effort: "quick"}}
	return &Result{Status: runfiles.StatusComplete, ShadowValid: true, SealedHash: "sha256:abc",
		Aggregate: ShadowAggregate{Median: fp(55), Mean: fp(55), Level: string(shadow.LevelCritical), Planned: 2, Scored: 2},
		Bundles:   []*BundleOutcome{q, r},
		Telemetry: reportTelemetry(nil)}
}

// TestReportSaysScoresAreAdvisory: report.md carries the advisory under its
// banner when the judge or seal author shares the commanders' family, and
// only when there is a score to be advisory about.
func TestReportSaysScoresAreAdvisory(t *testing.T) {
	t.Parallel()
	ref := func(s string) providers.Ref {
		r, err := providers.ParseRef(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	scored := func() *Result {
		return &Result{Status: runfiles.StatusComplete, ShadowValid: true, SealedHash: "sha256:abc",
			Aggregate: ShadowAggregate{Median: fp(0), Mean: fp(0), Level: string(shadow.LevelPerfect), Planned: 1, Scored: 1},
			Bundles:   []*BundleOutcome{judged("security", "openai:gpt-4.1", 0, 0, shadow.ActionProceed, 0, true)},
			Telemetry: reportTelemetry(nil)}
	}
	unscored := func() *Result {
		return &Result{Status: runfiles.StatusIncomplete, Error: "no bundle was judged: 0 of 1 scored", ShadowValid: true,
			Aggregate: ShadowAggregate{Level: "none", Planned: 1, Unjudged: 1},
			Bundles:   []*BundleOutcome{{ID: "security", Model: "openai:gpt-4.1", Tier: tierUnique}},
			Telemetry: reportTelemetry(nil)}
	}
	cases := []struct {
		name, judge string
		res         *Result
		want        bool
	}{
		{"one --provider for every role: advisory", "openai:gpt-4.1", scored(), true},
		{"a judge of another family: independent", "anthropic:claude-sonnet-4", scored(), false},
		{"nothing scored: nothing to be advisory about", "openai:gpt-4.1", unscored(), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := reportPlan()
			p.Roster = config.Roster{Judge: ref(c.judge), SealAuthor: ref(c.judge), Commanders: []providers.Ref{ref("openai:gpt-4.1")}}
			md := renderActionReport(p, c.res, reportInputs{MajorityThreshold: 0.5})
			got := strings.Contains(md, "> **Advisory scores**: the judge and the seal author "+c.judge) && strings.Contains(md, "--model judge=KIND:MODEL")
			if got != c.want {
				t.Errorf("advisory shown = %v, want %v; report head:\n%s", got, c.want, md[:min(len(md), 900)])
			}
		})
	}
}

// usageResult is a complete run whose telemetry has calls by role and
// model: a priced model that cached and reasoned, and an unpriced one.
func usageResult() *Result {
	tel := reportTelemetry(nil)
	tel.CostUSD, tel.UnpricedModels, tel.UnpricedCalls = 0.0042, []string{"openai-compatible:local"}, 4
	tel.InputTokens, tel.OutputTokens, tel.ReasoningTokens, tel.CacheReadTokens, tel.CacheWriteTokens, tel.PromptCacheHits = 20123, 4567, 800, 9000, 1000, 9
	tel.CacheReadShare = fp(9000.0 / 20123)
	tel.ByRole = map[string]runfiles.CallStats{
		"worker": {Calls: 12, InputTokens: 12000, OutputTokens: 3000, ReasoningTokens: 800, CacheReadTokens: 9000, PromptCacheHits: 9,
			CacheReadShare: fp(0.75), CostUSD: fp(0.003)},
		"judge": {Calls: 15, Errors: 1, InputTokens: 7000, OutputTokens: 1200, CacheWriteTokens: 1000, CostUSD: fp(0.0012)},
		"nexus": {Calls: 4, InputTokens: 1123, OutputTokens: 367, UnpricedCalls: 4},
	}
	tel.ByModel = map[string]runfiles.CallStats{
		"anthropic:claude-sonnet-4-5": {Calls: 29, Errors: 1, InputTokens: 19000, OutputTokens: 4200, ReasoningTokens: 800, CacheReadTokens: 9000,
			CacheWriteTokens: 1000, PromptCacheHits: 9, CacheReadShare: fp(9000.0 / 19000), CostUSD: fp(0.0042)},
		"openai-compatible:local": {Calls: 4, InputTokens: 1123, OutputTokens: 367, UnpricedCalls: 4},
	}
	tel.Prices = map[string]runfiles.PriceUsed{"anthropic:claude-sonnet-4-5": {InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.3, CacheWritePerMTok: 3,
		ReasoningPerMTok: 15, Origin: config.PriceFromConfig, Assumed: []string{"cache_write"}}}
	tel.ByRole["nexus"] = runfiles.CallStats{Calls: 4, InputTokens: 1123, OutputTokens: 367, UnpricedCalls: 4}
	mixed := tel.ByRole["judge"]
	mixed.UnpricedCalls = 1
	tel.ByRole["judge"] = mixed
	return &Result{Status: runfiles.StatusComplete, ShadowValid: true, SealedHash: "sha256:abc",
		Aggregate: ShadowAggregate{Median: fp(0), Mean: fp(0), Level: string(shadow.LevelPerfect), Planned: 1, Scored: 1},
		Synthesis: &Synthesis{TopAction: "Ship."},
		Bundles:   []*BundleOutcome{judged("security", "anthropic:claude-sonnet-4-5", 0, 0, shadow.ActionProceed, 0, true)},
		Telemetry: tel}
}
