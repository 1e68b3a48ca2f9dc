package nexus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
)

func score(v float64) *float64 { return &v }

func TestChainVelocity(t *testing.T) {
	t.Parallel()
	done := func(id string, s float64) runfiles.ChainRun {
		return runfiles.ChainRun{RunID: id, Status: runfiles.StatusComplete, ShadowScore: score(s), Scored: 5, Planned: 5}
	}
	tests := []struct {
		name   string
		chain  []runfiles.ChainRun
		want   *float64
		reason string // in the absent reason
	}{
		{"two runs, scores fall: positive (improving), like hardening velocity", []runfiles.ChainRun{done("a", 50), done("b", 12.5)}, score(37.5), ""},
		{"three runs: (first − last) / (runs − 1), the middle run does not weigh", []runfiles.ChainRun{done("a", 20), done("b", 60), done("c", 40)}, score(-10), ""},
		{"scores unchanged: a measured 0, not an absent one", []runfiles.ChainRun{done("a", 25), done("b", 25)}, score(0), ""},
		{"a perfect score in the chain is a real 0 and counts", []runfiles.ChainRun{done("a", 30), done("b", 0)}, score(30), ""},
		{"a single run has no velocity", []runfiles.ChainRun{done("a", 30)}, nil, "a chain of one run"},
		{"a run without a score: absent, never computed over a zero", []runfiles.ChainRun{done("a", 50),
			{RunID: "b", Status: runfiles.StatusInterrupted, NoScore: "no bundle was judged", Planned: 5}, done("c", 10)}, nil, "run b (interrupted) has no Shadow Score: no bundle was judged"},
		{"an incomplete run's median covers fewer bundles: not comparable", []runfiles.ChainRun{done("a", 50),
			{RunID: "b", Status: runfiles.StatusIncomplete, ShadowScore: score(0), Scored: 1, Planned: 5}}, nil, "run b is incomplete (1 of 5 bundles scored)"},
		{"an older run whose criteria no longer verify lost its score", []runfiles.ChainRun{
			{RunID: "a", Status: runfiles.StatusComplete, NoScore: "its sealed criteria do not verify: x"}, done("b", 10)}, nil, "run a (complete) has no Shadow Score: its sealed criteria do not verify"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := chainVelocity(tc.chain)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("velocity (-want +got)\n%s", d)
			}
			if (tc.reason == "") != (reason == "") || !strings.Contains(reason, tc.reason) {
				t.Errorf("reason %q, want one containing %q", reason, tc.reason)
			}
		})
	}
}

// writeRecord writes a minimal result.json of a run that was never judged
// (so no envelope is needed) following up prev ("" for none).
func writeRecord(t *testing.T, dir, id, prev string) {
	t.Helper()
	rec := map[string]any{"status": runfiles.StatusInterrupted, "plan": map[string]any{"run_id": id}, "shadow_valid": true,
		"shadow_aggregate": map[string]any{"median": nil, "mean": nil, "level": "none", "planned": 5, "scored": 0}}
	if prev != "" {
		rec["follow_up"] = map[string]any{"previous_dir": prev}
	}
	b, _ := json.Marshal(rec)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func runIDs(chain []runfiles.ChainRun) []string {
	var out []string
	for _, c := range chain {
		out = append(out, c.RunID)
	}
	return out
}

func TestReadPredecessors(t *testing.T) {
	t.Parallel()
	t.Run("follows each run's own previous_dir back, oldest first", func(t *testing.T) {
		root := t.TempDir()
		a, b, c := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
		writeRecord(t, a, "run-a", "")
		writeRecord(t, b, "run-b", a)
		writeRecord(t, c, "run-c", b)
		rec, err := readRunRecord(c)
		if err != nil {
			t.Fatal(err)
		}
		chain, truncated, warns := readPredecessors(c, rec, MaxChain-2)
		if d := cmp.Diff([]string{"run-a", "run-b"}, runIDs(chain)); d != "" || truncated || len(warns) > 0 {
			t.Errorf("chain (-want +got)\n%s truncated %v warnings %v", d, truncated, warns)
		}
	})
	t.Run("a cycle stops where it returns, with a warning", func(t *testing.T) {
		root := t.TempDir()
		a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
		writeRecord(t, a, "run-a", b) // a and b follow each other up
		writeRecord(t, b, "run-b", a)
		rec, err := readRunRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		chain, truncated, warns := readPredecessors(b, rec, MaxChain-2)
		if d := cmp.Diff([]string{"run-a"}, runIDs(chain)); d != "" || !truncated || len(warns) != 1 || !strings.Contains(warns[0], "a cycle") {
			t.Errorf("chain (-want +got)\n%s truncated %v warnings %v", d, truncated, warns)
		}
	})
	t.Run("a run following itself up is a cycle too", func(t *testing.T) {
		a := filepath.Join(t.TempDir(), "a")
		writeRecord(t, a, "run-a", a)
		rec, _ := readRunRecord(a)
		chain, truncated, _ := readPredecessors(a, rec, MaxChain-2)
		if len(chain) != 0 || !truncated {
			t.Errorf("chain %v truncated %v", runIDs(chain), truncated)
		}
	})
	t.Run("a predecessor that is gone ends the chain, with a warning", func(t *testing.T) {
		root := t.TempDir()
		b := filepath.Join(root, "b")
		writeRecord(t, b, "run-b", filepath.Join(root, "deleted"))
		rec, _ := readRunRecord(b)
		chain, truncated, warns := readPredecessors(b, rec, MaxChain-2)
		if len(chain) != 0 || !truncated || len(warns) != 1 || !strings.Contains(warns[0], "cannot be read") {
			t.Errorf("chain %v truncated %v warnings %v", runIDs(chain), truncated, warns)
		}
	})
	t.Run("a chain longer than MaxChain keeps the newest runs", func(t *testing.T) {
		root := t.TempDir()
		prev := ""
		for i := range MaxChain + 10 {
			d := filepath.Join(root, fmt.Sprint(i))
			writeRecord(t, d, fmt.Sprintf("run-%02d", i), prev)
			prev = d
		}
		rec, _ := readRunRecord(prev)
		chain, truncated, warns := readPredecessors(prev, rec, MaxChain-2)
		// The newest run (prev) is the previous run; with this run, the
		// chain holds MaxChain runs.
		if len(chain) != MaxChain-2 || !truncated || len(warns) != 1 {
			t.Fatalf("%d predecessors, truncated %v, warnings %v", len(chain), truncated, warns)
		}
		if chain[len(chain)-1].RunID != fmt.Sprintf("run-%02d", MaxChain+8) || chain[0].RunID != fmt.Sprintf("run-%02d", MaxChain+10-1-(MaxChain-2)) {
			t.Errorf("chain from %s to %s", chain[0].RunID, chain[len(chain)-1].RunID)
		}
	})
	t.Run("an older run's score without verifiable criteria is dropped, not trusted", func(t *testing.T) {
		root := t.TempDir()
		a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
		b1, _ := json.Marshal(map[string]any{"status": runfiles.StatusComplete, "plan": map[string]any{"run_id": "run-a"}, "shadow_valid": true, "sealed_hash": "sha256:00",
			"shadow_aggregate": map[string]any{"median": 10, "mean": 10, "level": "minor", "planned": 5, "scored": 5}})
		os.MkdirAll(a, 0o755)
		os.WriteFile(filepath.Join(a, "result.json"), b1, 0o644)
		writeRecord(t, b, "run-b", a)
		rec, _ := readRunRecord(b)
		chain, _, warns := readPredecessors(b, rec, MaxChain-2)
		if len(chain) != 1 || chain[0].ShadowScore != nil || !strings.Contains(chain[0].NoScore, "do not verify") || len(warns) != 1 {
			t.Errorf("chain %+v warnings %v", chain, warns)
		}
	})
}

func TestPriorFindings(t *testing.T) {
	t.Parallel()
	type f = recordFinding
	var rec runRecord
	add := func(id string, failed bool, fs ...f) {
		b := recordBundle{ID: id, Failed: failed}
		b.Bundle.Findings = fs
		rec.Bundles = append(rec.Bundles, b)
	}
	long := strings.Repeat("word ", 40)
	add("architecture", false,
		f{"Rotate the keys", "low"},
		f{"Fix the gap of SC-03 before launch", "high"}, // names a criterion id (case aside): withheld
		f{"Answer [sc-104] feedback", "high"},           // three-digit id: withheld
		f{"  Drain\n the   old sessions ", "medium"},    // white space collapsed
		f{"drain the old sessions", "high"},             // a duplicate (case aside): dropped
		f{long, "high"},                                 // capped
		f{"Add a runbook", "urgent"})                    // unknown priority sorts last
	add("testing", true, f{"From a failed commander", "high"}) // failed bundles' findings are not used
	add("testing-2", false, f{"Cover the sc-style naming (not an id)", "high"})
	shown, distinct, total, withheld := priorFindings(&rec)
	want := []runfiles.PriorFinding{
		{Bundle: "architecture", Priority: "high", Title: strings.TrimSpace(string([]rune(strings.TrimSpace(long))[:maxPriorTitleRunes-1])) + "…"},
		{Bundle: "testing-2", Priority: "high", Title: "Cover the sc-style naming (not an id)"},
		{Bundle: "architecture", Priority: "medium", Title: "Drain the old sessions"},
		{Bundle: "architecture", Priority: "low", Title: "Rotate the keys"},
		{Bundle: "architecture", Priority: "urgent", Title: "Add a runbook"},
	}
	if d := cmp.Diff(want, shown); d != "" {
		t.Errorf("findings (-want +got)\n%s", d)
	}
	if distinct != 5 || total != 8 || withheld != 2 {
		t.Errorf("distinct %d total %d withheld %d, want 5 8 2", distinct, total, withheld)
	}
}

func TestRenderPriorIsBoundedAndRecordsWhatItShowed(t *testing.T) {
	t.Parallel()
	p := runfiles.PriorContext{RunID: "r1", Status: runfiles.StatusComplete, ShadowScore: score(42.5), Level: "significant", Scored: 5, Planned: 5}
	for i := range 4 { // the config's four categories
		p.FailedCategories = append(p.FailedCategories, events.CategoryCount{Category: fmt.Sprintf("category_%d", i), Criteria: 1, Failures: 3})
	}
	for i := range maxPriorFindings {
		p.Findings = append(p.Findings, runfiles.PriorFinding{Bundle: "b", Priority: "high", Title: fmt.Sprintf("%02d %s", i, strings.Repeat("x", maxPriorTitleRunes-4))})
	}
	block, err := renderPrior(&p, 12)
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(block); n > maxPriorChars {
		t.Errorf("block of %d characters, bound %d", n, maxPriorChars)
	}
	if len(p.Findings) == 0 || len(p.Findings) == maxPriorFindings {
		t.Fatalf("%d findings kept: the bound did not cut (or cut everything)", len(p.Findings))
	}
	for i, f := range p.Findings {
		if !strings.Contains(block, f.Title) {
			t.Errorf("finding %d recorded as shown but not in the block", i)
		}
	}
	if want := fmt.Sprintf("(and %d more)", 12-len(p.Findings)); !strings.Contains(block, want) {
		t.Errorf("block lacks %q:\n%s", want, block)
	}
	for _, want := range []string{"r1 (complete)", "median 42.5% (significant), 5 of 5 bundles scored", "category_0: 1 checks, 3 failures"} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	none := runfiles.PriorContext{RunID: "r2", Status: runfiles.StatusInterrupted, NoScore: "no bundle was judged"}
	block, err = renderPrior(&none, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Its score (the share of acceptance checks failed, lower is better): none: no deliverable was scored.", "Checks it failed, by category: none recorded.", "Its findings: none recorded."} {
		if !strings.Contains(block, want) {
			t.Errorf("block without a score lacks %q:\n%s", want, block)
		}
	}
}

func TestFailedCategories(t *testing.T) {
	t.Parallel()
	reports := []shadow.Report{
		{Failures: []shadow.Failure{{TestName: "sc-01", Category: "security"}, {TestName: "sc-02", Category: "unknown", XCategory: "performance"}}},
		{Failures: []shadow.Failure{{TestName: "sc-01", Category: "security"}, {TestName: "sc-03", Category: "security"}, {TestName: "sc-04", Category: "edge case!"}}},
	}
	want := []events.CategoryCount{
		{Category: "security", Criteria: 2, Failures: 3}, // sc-01 failed in both bundles: one criterion, two verdicts
		{Category: "edgecase", Criteria: 1, Failures: 1}, // a name, never prose
		{Category: "performance", Criteria: 1, Failures: 1},
	}
	if d := cmp.Diff(want, failedCategories(reports)); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if got := failedCategories(nil); got == nil || len(got) != 0 {
		t.Errorf("no reports: %v, want an empty list", got)
	}
}

func TestCapsuleKeepsThePreviousRunBlockWithinTheBriefCap(t *testing.T) {
	t.Parallel()
	dom := Domain{Name: "testing", Summary: strings.Repeat("summary ", 50)}
	for i := range 5 {
		dom.SubTasks = append(dom.SubTasks, commanders.SubTask{BriefID: fmt.Sprintf("testing-%02d", i+1), Title: "t", Description: strings.Repeat("d", 300)})
	}
	d := Decomposition{MissionSummary: "Migrate", Domains: []Domain{dom}, Aspects: []string{"a"}}
	prior := "This run follows up an earlier run of the mission, r1 (complete).\n" + strings.Repeat("p", maxPriorChars-70)
	c := buildCapsule(d, dom, commanders.Constraints{Timeout: time.Minute}, prior)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(c.Brief, "\n"+prior) || !strings.HasPrefix(c.Brief, "Mission: Migrate\n") {
		t.Errorf("brief does not start with the capsule and end with the block:\n%s", c.Brief)
	}
	if n := utf8.RuneCountInString(c.Brief); n != commanders.MaxBriefChars {
		t.Errorf("brief of %d characters, want the cap %d (the capsule cut to leave the block room)", n, commanders.MaxBriefChars)
	}
	plain := buildCapsule(d, dom, commanders.Constraints{Timeout: time.Minute}, "")
	if strings.Contains(plain.Brief, "follows up") || utf8.RuneCountInString(plain.Brief) != commanders.MaxBriefChars {
		t.Errorf("capsule without a follow-up changed:\n%s", plain.Brief)
	}
}
