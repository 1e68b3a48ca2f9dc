package nexus

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// Only bundles that passed the Shadow Gate feed the synthesis.
func TestInSynthesisFollowsTheGate(t *testing.T) {
	t.Parallel()
	gate := func(a string) *shadow.GateDecision { return &shadow.GateDecision{Action: a} }
	cases := []struct {
		name     string
		why      string
		o        BundleOutcome
		shadowOn bool
		want     bool
	}{
		{"proceed", "passed the gate", BundleOutcome{Gate: gate(shadow.ActionProceed)}, true, true},
		{"warn", "passed the gate with a warning", BundleOutcome{Gate: gate(shadow.ActionWarn)}, true, true},
		{"quarantine re-reviewed high", "a quarantine re-review never releases a bundle: adversarial bundles whose citations were all fabricated were re-reviewed at 10/10 and went into the synthesis",
			BundleOutcome{Gate: gate(shadow.ActionQuarantine), Review: MetaReview{Score: 1, Reviews: 3}}, true, false},
		{"reject", "rejected", BundleOutcome{Gate: gate(shadow.ActionReject)}, true, false},
		{"failed", "no bundle", BundleOutcome{Failed: true, Gate: gate(shadow.ActionProceed)}, true, false},
		{"not judged, shadow on", "no gate decision while scoring was on (judge failed, or scoring invalid): nothing passed", BundleOutcome{}, true, false},
		{"shadow off", "no gate in the run at all: the synthesis goes on, flagged in the report", BundleOutcome{}, false, true},
	}
	for _, c := range cases {
		if got := inSynthesis(&c.o, c.shadowOn); got != c.want {
			t.Errorf("%s (%s): inSynthesis = %v, want %v", c.name, c.why, got, c.want)
		}
	}
}

// In a workspace mission only findings with a verified citation reach
// the synthesizer; without a workspace every finding does.
func TestSynthesisBundleKeepsVerifiedFindings(t *testing.T) {
	t.Parallel()
	o := &BundleOutcome{Bundle: commanders.Bundle{Domain: "security", Findings: []commanders.Finding{
		{Title: "Verified one"}, {Title: "Fabricated one"}, {Title: "Uncited one"}, {Title: "Mixed one"}}}}
	o.checks = &bundleChecks{findings: [][]workspace.Check{
		{ck("a.go", 1, 1, "x", workspace.Verified, "")},
		{ck("b.go", 1, 1, "x", workspace.Fabricated, "no such file")},
		nil,
		{ck("b.go", 1, 1, "x", workspace.Fabricated, "no such file"), ck("a.go", 2, 2, "y", workspace.Verified, "")},
	}}
	titles := func(b commanders.Bundle) []string {
		var out []string
		for _, f := range b.Findings {
			out = append(out, f.Title)
		}
		return out
	}
	if d := cmp.Diff([]string{"Verified one", "Mixed one"}, titles(synthesisBundle(o))); d != "" {
		t.Errorf("workspace mission: findings fed to the synthesis (-want +got):\n%s", d)
	}
	if strings.Contains(synthesisBundle(o).Text(), "Fabricated one") {
		t.Error("the synthesizer's text holds a finding without a verified citation")
	}
	o.checks = nil
	if d := cmp.Diff([]string{"Verified one", "Fabricated one", "Uncited one", "Mixed one"}, titles(synthesisBundle(o))); d != "" {
		t.Errorf("no workspace: every finding is fed (-want +got):\n%s", d)
	}
}

// Finding cards merge the same finding across domains, keep groups apart
// and sort by priority then support.
func TestFindingCards(t *testing.T) {
	t.Parallel()
	res := workspaceRunResult()
	type card struct {
		Group, Title, Priority string
		Domains                []string
		Verified, Fabricated   int
		Defects                []string
	}
	var got []card
	for _, c := range findingCards(res) {
		got = append(got, card{c.Group, c.Title, c.Priority, c.Domains, c.Support.Verified, c.Support.Fabricated, c.Defects})
	}
	want := []card{
		// Same verified location (handlers.go:30) in security and testing:
		// one card, the highest priority of the two.
		{groupRecommended, "Cap request bodies", "high", []string{"security", "testing"}, 1, 0, []string{"D2"}},
		// Same normalised title ("compare session signatures in constant
		// time!") in security and testing.
		{groupRecommended, "Compare session signatures in constant time", "high", []string{"security", "testing"}, 1, 1, []string{"D1"}},
		{groupUnsupported, "Rotate the signing key", "low", []string{"security"}, 0, 0, nil},
		// The quarantined bundle's same finding is not merged with the
		// recommended one: a failure is never ranked beside a success.
		{groupRejected, "Compare session signatures in constant time", "high", []string{"docs"}, 0, 1, nil},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("cards (-want +got):\n%s", d)
	}
}

// The risk of a domain comes from its findings' priorities and its gate,
// never "low" for work nobody can trust.
func TestDomainRisk(t *testing.T) {
	t.Parallel()
	passed := func(gate string, findings ...commanders.Finding) *BundleOutcome {
		return &BundleOutcome{ID: "d", Gate: &shadow.GateDecision{Action: gate}, InSynthesis: true, Bundle: commanders.Bundle{Findings: findings}}
	}
	f := func(p string) commanders.Finding { return commanders.Finding{Title: p, Priority: p} }
	unverified := passed(shadow.ActionProceed, f("high"))
	unverified.checks = &bundleChecks{findings: [][]workspace.Check{{ck("a", 1, 1, "x", workspace.Fabricated, "")}}}
	verified := passed(shadow.ActionProceed, f("high"), f("low"))
	verified.checks = &bundleChecks{findings: [][]workspace.Check{{ck("a", 1, 1, "x", workspace.Fabricated, "")}, {ck("a", 1, 1, "x", workspace.Verified, "")}}}
	cases := []struct {
		name     string
		o        *BundleOutcome
		measured bool
		want     string
	}{
		{"highest priority", passed(shadow.ActionProceed, f("low"), f("high"), f("medium")), false, "high"},
		{"medium", passed(shadow.ActionProceed, f("low"), f("medium")), false, "medium"},
		{"gate warning raises low", passed(shadow.ActionWarn, f("low")), false, "medium"},
		{"no finding", passed(shadow.ActionProceed), false, "low"},
		{"quarantined: not trusted", &BundleOutcome{ID: "d", Gate: &shadow.GateDecision{Action: shadow.ActionQuarantine}, Bundle: commanders.Bundle{Findings: []commanders.Finding{f("low")}}}, false, "unknown"},
		{"failed", &BundleOutcome{ID: "d", Failed: true}, false, "unknown"},
		{"only fabricated evidence", unverified, true, "unknown"},
		{"only the verified finding counts", verified, true, "low"},
	}
	for _, c := range cases {
		if got := domainRisk(c.o, c.measured); got.Level != c.want {
			t.Errorf("%s: risk %q (%s), want %q", c.name, got.Level, got.Why, c.want)
		}
	}
}

// "None reported" never appears beside a CONFLICT-tier bundle: its two
// sides are listed.
func TestConflictsListConflictTiers(t *testing.T) {
	t.Parallel()
	res := workspaceRunResult()
	v := newConflictsView(res, 0.5)
	if v.None() {
		t.Fatal("a CONFLICT-tier bundle, yet no conflict")
	}
	want := []tierConflict{{ID: "`docs`", Review: "0.45",
		For:     []string{"reviewer-2 (mock:sloppy) 8.0"},
		Against: []string{"reviewer-1 (mock:honest) 2.0: cites lines that do not say this", "reviewer-1 (mock:honest) 3.0 in the quarantine re-review: the failures stand"}}}
	if d := cmp.Diff(want, v.Tiers); d != "" {
		t.Errorf("conflict tiers (-want +got):\n%s", d)
	}
	md := renderActionReport(reportPlan(), res, reportInputs{MajorityThreshold: 0.5})
	if i := strings.Index(md, "## Conflicts and resolutions"); i < 0 || strings.Contains(md[i:i+200], "None reported") {
		t.Errorf("report.md's conflicts section:\n%s", md[i:min(len(md), i+300)])
	}
}

// Refusals are grouped by kind (escape, denied, scope, limit first), with
// exact counts and up to three examples chosen in a fixed order.
func TestGroupRefusals(t *testing.T) {
	t.Parallel()
	ex := func(agent, path string) runfiles.RefusalExample {
		return runfiles.RefusalExample{Agent: agent, Tool: "read_file", Path: path, Reason: path + ": no"}
	}
	k := func(r runfiles.RefusalExample, kind string) runfiles.RefusalExample { r.Kind = kind; return r }
	rs := []runfiles.RefusalExample{k(ex("w2", "b"), "escape"), k(ex("w1", "a"), "escape"), k(ex("w1", "a"), "escape"), k(ex("w3", "c"), "escape"),
		k(ex("w4", "d"), "escape"), k(ex("w1", ".env"), "denied"), k(ex("w1", "x"), "not_found")}
	got := groupRefusals(rs, map[string]int{"escape": 7, "denied": 1, "not_found": 1})
	strip := func(xs []runfiles.RefusalExample) []runfiles.RefusalExample {
		for i := range xs {
			xs[i].Kind = ""
		}
		return xs
	}
	for i := range got {
		got[i].Examples = strip(got[i].Examples)
	}
	want := []runfiles.RefusalGroup{
		{Kind: "escape", Count: 7, Examples: []runfiles.RefusalExample{ex("w1", "a"), ex("w2", "b"), ex("w3", "c")}},
		{Kind: "denied", Count: 1, Examples: []runfiles.RefusalExample{ex("w1", ".env")}},
		{Kind: "not_found", Count: 1, Examples: []runfiles.RefusalExample{ex("w1", "x")}},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(runfiles.RefusalExample{})); d != "" {
		t.Errorf("groups (-want +got):\n%s", d)
	}
	if groupRefusals(nil, nil) != nil {
		t.Error("no refusal: want nil (telemetry leaves it out)")
	}
}

// findings.sarif validates against the official SARIF 2.1.0 schema and
// carries the recommended cards' verified locations only.
func TestFindingsSARIF(t *testing.T) {
	t.Parallel()
	b, err := findingsSARIF(findingCards(workspaceRunResult()))
	if err != nil {
		t.Fatal(err)
	}
	// testdata/sarif/sarif-schema-2.1.0.json: see testdata/sarif/README.md.
	raw, err := os.ReadFile(filepath.Join("testdata", "sarif", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	schemaDoc, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := sjs.NewCompiler()
	if err := c.AddResource("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("findings.sarif does not validate against SARIF 2.1.0: %v\n%s", err, b)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
							EndLine   int `json:"endLine"`
							Snippet   struct {
								Text string `json:"text"`
							} `json:"snippet"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &log); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range log.Runs[0].Results {
		for _, l := range r.Locations {
			p := l.PhysicalLocation
			got = append(got, r.RuleID+" "+r.Level+" "+citation.Citation{Path: p.ArtifactLocation.URI, StartLine: p.Region.StartLine, EndLine: p.Region.EndLine}.Ref()+" "+p.Region.Snippet.Text)
		}
	}
	// The fabricated token.go citation, the unverifiable .env one and the
	// quarantined bundle's card are absent.
	want := []string{
		"swarm/cap-request-bodies error internal/api/handlers.go:30 body, _ := io.ReadAll(r.Body)",
		"swarm/compare-session-signatures-in-constant-time error internal/auth/session.go:52-53 if sig == want {\n\treturn id, true",
	}
	if log.Version != "2.1.0" {
		t.Errorf("version %q", log.Version)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
}

// findings.csv has one row per card of every group, the counts only when
// evidence was measured, and no cell a spreadsheet would run.
func TestFindingsCSV(t *testing.T) {
	t.Parallel()
	res := workspaceRunResult()
	res.Bundles[0].Bundle.Findings[2].Title = "=HYPERLINK(\"x\")"
	b, err := findingsCSV(findingCards(res))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(csvHeader, rows[0]); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	want := [][]string{
		{"recommended", "Cap request bodies", "high", "quick", "security;testing", "security=proceed;testing=warn", "1", "1", "0", "0",
			"internal/api/handlers.go:30 (verified)", "D2", "security: Handlers read the whole body. | testing: A 1 GB body is read whole."},
		{"recommended", "Compare session signatures in constant time", "high", "quick", "security;testing", "security=proceed;testing=warn", "2", "1", "0", "1",
			"internal/auth/session.go:52-53 (verified);internal/auth/token.go:7-9 (fabricated)", "D1",
			"security: Lookup compares the HMAC with ==, which leaks timing; use hmac.Equal. | testing: A forged cookie is accepted after enough tries; no test covers it."},
		{"unsupported", "'=HYPERLINK(\"x\")", "low", "deep", "security", "security=proceed", "1", "0", "1", "0", ".env:1 (unverifiable)", "", "security: The key never changes."},
		{"rejected", "Compare session signatures in constant time", "high", "quick", "docs", "docs=quarantine", "1", "0", "0", "1",
			"internal/auth/session.go:52-53 (fabricated)", "", "docs: Trust me."},
	}
	if d := cmp.Diff(want, rows[1:]); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
}

// With shadow scoring off no gate checked the bundles: the findings say so
// under a warning instead of "from bundles that passed the Shadow Gate".
func TestCardsWithoutGate(t *testing.T) {
	t.Parallel()
	o := &BundleOutcome{ID: "security", InSynthesis: true, Bundle: commanders.Bundle{Findings: []commanders.Finding{{Title: "Ship", Priority: "high"}}}}
	res := &Result{ShadowReason: "shadow scoring disabled in config", Bundles: []*BundleOutcome{o}}
	s := newCardSections(res, findingCards(res))
	if len(s) != 1 || !s[0].Warning || !strings.Contains(s[0].Note, "Shadow scoring did not gate this run (shadow scoring disabled in config)") {
		t.Errorf("sections %+v", s)
	}
}
