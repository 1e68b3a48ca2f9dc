package nexus_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
)

// The adversarial persona over the example workspace: every bundle is
// quarantined (critical leaks), and its reviewers score it 10/10, the
// quarantine re-review included. None of it may feed the synthesis: no
// bundle is in synthesis, there is no synthesis, report.md says plainly
// that nothing passed and shows the work only under a warning, and
// findings.sarif holds no result.
func TestQuarantinedWorkNeverRecommended(t *testing.T) {
	t.Parallel()
	ws := filepath.Join("..", "examples", "workspaces", "tinynotes")
	res, out := workspaceRun(t, mock.Adversarial, ws)
	quarantined := 0
	for _, b := range res.Bundles {
		if b.Gate != nil && b.Gate.Action == shadow.ActionQuarantine {
			quarantined++
		}
		if b.InSynthesis && (b.Gate == nil || (b.Gate.Action != shadow.ActionProceed && b.Gate.Action != shadow.ActionWarn)) {
			t.Errorf("%s: gate %+v, yet in synthesis", b.ID, b.Gate)
		}
	}
	if quarantined == 0 {
		t.Fatal("no bundle quarantined: the test lost its premise")
	}
	if res.Synthesis != nil {
		t.Errorf("a synthesis of work that did not pass the gate: %+v", res.Synthesis)
	}
	if res.NoRecommendation != nexus.NoRecommendationUngated {
		t.Errorf("no_recommendation %q, want %q", res.NoRecommendation, nexus.NoRecommendationUngated)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## No recommendation", "**No bundle passed the Shadow Gate**", "## Work that did not pass the Shadow Gate", "| escape |", "| denied |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, bad := range []string{"## The #1 action", "## Quick wins", "in synthesis: yes"} {
		if strings.Contains(string(md), bad) {
			t.Errorf("report.md holds %q", bad)
		}
	}
	var log struct {
		Runs []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(filepath.Join(out, runfiles.FindingsSARIF))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &log); err != nil || len(log.Runs) != 1 || len(log.Runs[0].Results) != 0 {
		t.Errorf("findings.sarif: %d results (err %v), want a run with none", len(log.Runs[0].Results), err)
	}
}

// The honest persona over the example workspace: the report shows merged
// finding cards with the quoted verified lines, the domain reports, and
// the exports carry the same cards.
func TestHonestWorkspaceReport(t *testing.T) {
	t.Parallel()
	ws := filepath.Join("..", "examples", "workspaces", "tinynotes")
	// ss-100: five domains, whose mock findings share titles (small teams
	// still give every domain findings to merge).
	res, out := workspaceRunWith(t, mock.Honest, ws, func(o *nexus.Options) { o.Scale = "ss-100" })
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`raised by [a-z-]+, [a-z-]+`).Match(md) {
		t.Errorf("report.md has no finding card raised by two domains or more:\n%s", md)
	}
	for _, want := range []string{"## The #1 action", "## Findings\n", "verified\n  ```\n", "## Domain reports", "| reviewer | model | kind |", "## Safety"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(string(md), "### Findings of ") {
		t.Error("report.md still lists the findings per domain")
	}
	f, err := os.Open(filepath.Join(out, runfiles.FindingsCSV))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	findings := 0
	for _, b := range res.Bundles {
		findings += len(b.Bundle.Findings)
	}
	if len(rows) < 2 || len(rows)-1 >= findings {
		t.Errorf("findings.csv: %d cards for %d findings: want them merged", len(rows)-1, findings)
	}
	b, err := os.ReadFile(filepath.Join(out, runfiles.FindingsSARIF))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"version": "2.1.0"`) || !strings.Contains(string(b), `"startLine"`) {
		t.Errorf("findings.sarif without a located result:\n%.400s", b)
	}
}

// The sloppy persona over the example workspace (sandbox breaker out of
// the way, so every bundle is judged): its bundles pass the gate with a
// warning, but every citation is fabricated. Nothing resting on fabricated
// evidence is ever recommended: no synthesis, and report.md says that no
// finding rests on verified evidence instead of showing a #1 action.
func TestUnverifiedWorkNeverRecommended(t *testing.T) {
	t.Parallel()
	res, out := workspaceRunWith(t, mock.Sloppy, filepath.Join("..", "examples", "workspaces", "tinynotes"), func(o *nexus.Options) {
		o.Scale = "ss-100"
		o.Config.CircuitBreaker.ToxicityThreshold = 1 // rolling toxicity never exceeds 1: the breaker stays closed
	})
	passed := 0
	for _, b := range res.Bundles {
		if b.Gate != nil && (b.Gate.Action == shadow.ActionProceed || b.Gate.Action == shadow.ActionWarn) {
			passed++
		}
	}
	if passed == 0 || res.Evidence == nil || res.Evidence.Verified != 0 || res.Evidence.Fabricated == 0 {
		t.Fatalf("premise lost: %d bundles passed the gate, evidence %+v; want some passed and every citation fabricated", passed, res.Evidence)
	}
	if res.Synthesis != nil {
		t.Errorf("a synthesis of findings without verified evidence: %+v", res.Synthesis)
	}
	if res.NoRecommendation != nexus.NoRecommendationUnverified {
		t.Errorf("no_recommendation %q, want %q", res.NoRecommendation, nexus.NoRecommendationUnverified)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## No recommendation", "**No finding rests on verified evidence**", "## Findings without verified evidence", "~~`"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, bad := range []string{"## The #1 action", "## Quick wins"} {
		if strings.Contains(string(md), bad) {
			t.Errorf("report.md holds %q", bad)
		}
	}
}
