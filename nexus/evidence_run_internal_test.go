package nexus

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/vocab"
	"github.com/swarm-dev/swarm/workspace"
)

// citeWrap makes every atom and bundle the mock writes cite the
// workspace: each atom ok.go (verified) and, for the first worker of each
// team, ghost.go (fabricated); each bundle ok.go, and each of its
// findings ok.go and env (unverifiable), the first also ghost.go. The mock itself cites nothing
// without the read tools.
func citeWrap(_ providers.Ref, p providers.Provider) providers.Provider {
	return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		resp, err := p.Complete(ctx, req)
		if err != nil || req.Schema == nil {
			return resp, err
		}
		var doc map[string]any
		if json.Unmarshal([]byte(resp.Text), &doc) != nil {
			return resp, nil
		}
		switch req.Schema.Name {
		case vocab.SchemaAtom:
			paths := []string{"ok.go"}
			if strings.HasSuffix(req.Caller.AgentID, "-01") {
				paths = append(paths, "ghost.go")
			}
			doc["evidence"] = cites(paths...)
		case vocab.SchemaBundle:
			doc["evidence"] = cites("ok.go")
			fs, _ := doc["findings"].([]any)
			for i, f := range fs {
				if m, ok := f.(map[string]any); ok {
					m["evidence"] = cites("ok.go", "env")
					if i == 0 {
						m["evidence"] = cites("ok.go", "env", "ghost.go")
					}
				}
			}
		default:
			return resp, nil
		}
		b, _ := json.Marshal(doc)
		return providers.Response{Text: string(b), Usage: resp.Usage, Model: resp.Model, FinishReason: resp.FinishReason, Latency: resp.Latency}, nil
	})
}

// recordingMatcher is a ground truth that records what it was matched
// against and answers a fixed match.
type recordingMatcher struct {
	mu  sync.Mutex
	got [][]workspace.Check
}

func (m *recordingMatcher) Match(findings [][]workspace.Check) workspace.Match {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = findings
	return workspace.Match{Defects: 3, Found: 1, Findings: len(findings), Matching: 1, Recall: ptr(1.0 / 3), Precision: ptr(1 / float64(len(findings))), Missed: []string{"D2", "D3"}}
}

func evidenceRun(t *testing.T, popts ...Option) (*Result, string) {
	t.Helper()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	mission, err := os.ReadFile(filepath.Join("..", "examples", "missions", "api-design.md"))
	if err != nil {
		t.Fatal(err)
	}
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{})
	dir := filepath.Join(t.TempDir(), "run")
	o := Options{Config: cfg, Registry: reg, Mission: string(mission), MissionName: "test", Scale: "ss-50",
		Provider: providers.Ref{Kind: "mock", Model: "honest"}, OutDir: dir}
	m, err := Prepare(o, append([]Option{WithProviderWrap(citeWrap)}, popts...)...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return res, dir
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// With a workspace (a fake verifier standing in for it) every citation of
// the run is checked and counted everywhere results go, and the findings
// reach the ground truth.
func TestRunMeasuresEvidenceWithAWorkspace(t *testing.T) {
	t.Parallel()
	gt := &recordingMatcher{}
	res, dir := evidenceRun(t, func(m *Mission) { m.ev.verify, m.ev.gt, m.ev.gtFile = evidenceFake, gt, "truth.yaml" })

	// Independent tally: every citation the run's atoms and bundles carry,
	// by the fake's rule.
	var want workspace.Counts
	findings := 0
	for _, o := range res.Bundles {
		var b workspace.Counts
		tally := func(cs []citation.Citation) {
			for _, c := range cs {
				b.Add(evidenceFake.Verify(c).State)
			}
		}
		for _, a := range o.result.Atoms {
			if !a.Failed {
				tally(a.Atom.Evidence)
			}
		}
		if !o.Failed {
			tally(o.Bundle.Evidence)
			for _, f := range o.Bundle.Findings {
				tally(f.Evidence)
				findings++
			}
		}
		if d := cmp.Diff(&b, o.Evidence); d != "" {
			t.Errorf("bundle %s evidence (-want +got)\n%s", o.ID, d)
		}
		if o.Formula.Evidence == nil {
			t.Errorf("bundle %s: formula evidence not measured with a workspace", o.ID)
		}
		want = want.Plus(b)
	}
	if want.Fabricated == 0 || want.Verified == 0 || want.Unverifiable == 0 {
		t.Fatalf("the wrap should produce every state: %+v", want)
	}
	if d := cmp.Diff(&want, res.Evidence); d != "" {
		t.Errorf("result evidence (-want +got)\n%s", d)
	}
	if d := cmp.Diff(&want, res.Telemetry.Evidence); d != "" {
		t.Errorf("telemetry evidence (-want +got)\n%s", d)
	}
	if got := res.EvidenceByModel["mock:honest"]; got != want {
		t.Errorf("evidence of mock:honest = %+v, want the run's %+v", got, want)
	}
	var agents workspace.Counts
	for _, n := range res.EvidenceByAgent {
		agents = agents.Plus(n)
	}
	if agents != want {
		t.Errorf("per-agent counts sum to %+v, want %+v", agents, want)
	}
	if res.Workspace == nil || res.Workspace.Fingerprint.FilesHash != "sha256:fake" {
		t.Errorf("workspace info = %+v", res.Workspace)
	}

	// Ground truth: matched against every finding's checks.
	if len(gt.got) != findings {
		t.Errorf("ground truth matched %d findings, want %d", len(gt.got), findings)
	}
	if res.GroundTruth == nil || res.GroundTruth.File != "truth.yaml" || res.GroundTruth.Found != 1 {
		t.Errorf("ground truth = %+v", res.GroundTruth)
	}

	// The run directory: evidence.json, telemetry.json, result.json and
	// the bundle files say the same.
	var ef evidenceRecord
	b, err := os.ReadFile(filepath.Join(dir, "evidence.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ef); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, ef.Counts); d != "" {
		t.Errorf("evidence.json counts (-want +got)\n%s", d)
	}
	if ef.Workspace.Dir != "/fake/ws" || len(ef.Atoms) == 0 || len(ef.Bundles) != len(res.Bundles) {
		t.Errorf("evidence.json: workspace %+v, %d atoms, %d bundles", ef.Workspace, len(ef.Atoms), len(ef.Bundles))
	}
	if tel := readJSON(t, filepath.Join(dir, "telemetry.json")); tel["evidence"] == nil {
		t.Error("telemetry.json has no evidence")
	}
	rj := readJSON(t, filepath.Join(dir, "result.json"))
	for _, k := range []string{"evidence", "evidence_by_model", "evidence_by_agent", "workspace", "ground_truth"} {
		if rj[k] == nil {
			t.Errorf("result.json lacks %s", k)
		}
	}
	for _, o := range res.Bundles {
		bf := readJSON(t, filepath.Join(dir, "bundles", o.ID+".json"))
		if bf["evidence"] == nil || bf["atom_evidence"] == nil {
			t.Errorf("bundles/%s.json lacks evidence or atom_evidence", o.ID)
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"## Evidence", "~~`ghost.go:3-4`~~ **fabricated**: no such file; it quoted `q ghost.go`", "`ok.go:1-2` verified", "`env:2-3` *unverifiable*", "## Ground truth", "Missed defects: `D2`, `D3`."} {
		if !strings.Contains(string(report), s) {
			t.Errorf("report.md lacks %q", s)
		}
	}
}

// Without a workspace nothing about evidence is measured: every evidence
// field is absent (nil, omitted), never zero.
func TestRunWithoutAWorkspaceMeasuresNoEvidence(t *testing.T) {
	t.Parallel()
	res, dir := evidenceRun(t)
	if res.Evidence != nil || res.EvidenceByModel != nil || res.EvidenceByAgent != nil || res.Workspace != nil || res.GroundTruth != nil || res.Telemetry.Evidence != nil {
		t.Errorf("evidence measured without a workspace: %+v %+v %+v %+v", res.Evidence, res.EvidenceByModel, res.Workspace, res.Telemetry.Evidence)
	}
	for _, o := range res.Bundles {
		if o.Evidence != nil || o.Formula.Evidence != nil {
			t.Errorf("bundle %s: evidence %+v, formula evidence %v; want both nil", o.ID, o.Evidence, o.Formula.Evidence)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "evidence.json")); !os.IsNotExist(err) {
		t.Errorf("evidence.json exists without a workspace (stat: %v)", err)
	}
	for _, f := range []string{"result.json", "telemetry.json"} {
		if v := readJSON(t, filepath.Join(dir, f)); v["evidence"] != nil {
			t.Errorf("%s has evidence without a workspace", f)
		}
	}
	report, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if strings.Contains(string(report), "## Evidence") || !strings.Contains(string(report), "evidence not measured (no workspace)") {
		t.Error("report.md: want no Evidence section and the formula's not-measured note")
	}
}

// Ground truth through the run with the real loader and matcher: the
// planted defect in ok.go (lines 1-3) is found by the findings citing
// ok.go:1-2 (verified); the one in ghost.go is missed (only fabricated
// citations point at it). A malformed file fails Prepare naming it. It
// needs the real workspace package; the contract stub (which loads
// nothing) is detected and skipped.
func TestGroundTruthThroughTheRun(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "bad.truth.yaml")
	if err := os.WriteFile(bad, []byte("workspace: x\ndefects: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := workspace.LoadGroundTruth(bad); err == nil {
		t.Fatal("a truncated ground-truth file loaded")
	}
	truth := filepath.Join(tmp, "shop.truth.yaml")
	if err := os.WriteFile(truth, []byte(`workspace: shop
defects:
  - {id: D1, path: ok.go, start_line: 1, end_line: 3, category: security, title: planted one}
  - {id: D2, path: ghost.go, start_line: 1, end_line: 9, category: docs, title: planted two}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{})
	// The defects' files are in the workspace, their lines in range (issue
	// 20: a ground truth is checked against the workspace at start); no
	// finding cites ghost.go, so D2 is missed.
	ws := t.TempDir()
	for name, n := range map[string]int{"ok.go": 3, "ghost.go": 9} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(strings.Repeat("x\n", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{Config: cfg, Registry: reg, Mission: "# Review\n\nReview the code.", Provider: providers.Ref{Kind: "mock", Model: "honest"}, Workspace: ws, GroundTruth: bad}
	if _, err := Prepare(o); !errors.Is(err, config.ErrBadInput) || !strings.Contains(err.Error(), bad) {
		t.Errorf("malformed ground truth: err = %v, want ErrBadInput naming %s", err, bad)
	}
	o.GroundTruth = truth
	s, err := prepareEvidence(o, o.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := evidenceRun(t, func(m *Mission) { m.ev.verify, m.ev.gt, m.ev.gtFile = evidenceFake, s.gt, s.gtFile })
	g := res.GroundTruth
	if g == nil {
		t.Fatal("no ground truth in the result")
	}
	findings := 0
	for _, b := range res.Bundles {
		findings += len(b.Bundle.Findings)
	}
	// Every finding cites ok.go:1-2 verified, so each matches D1.
	want := workspace.Match{Defects: 2, Found: 1, Findings: findings, Matching: findings, Recall: ptr(0.5), Precision: ptr(1.0), Missed: []string{"D2"}}
	if d := cmp.Diff(want, g.Match, cmpopts.IgnoreFields(workspace.Match{}, "ByDefect")); d != "" {
		t.Errorf("match (-want +got)\n%s", d)
	}
	// Per defect: D1 found by every finding, D2 by none.
	if len(g.ByDefect) != 2 || len(g.ByDefect[0].Found) != findings || g.ByDefect[0].ID != "D1" || len(g.ByDefect[1].Found) != 0 {
		t.Errorf("by defect: %+v, want D1 found by all %d findings and D2 by none", g.ByDefect, findings)
	}
}

// countingVerifier is evidenceFake counting its calls (from the workers'
// goroutines, so under a lock).
type countingVerifier struct {
	fakeVerifier
	mu    sync.Mutex
	calls int
}

func (c *countingVerifier) Verify(ci citation.Citation) workspace.Check {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.fakeVerifier.Verify(ci)
}

// Each citation of a run is verified once: an atom's as it arrives (the
// sandbox bridge uses the verdicts), and Phase 7 counts those checks
// rather than making them again.
func TestRunVerifiesEachCitationOnce(t *testing.T) {
	t.Parallel()
	v := &countingVerifier{fakeVerifier: evidenceFake}
	res, _ := evidenceRun(t, func(m *Mission) { m.ev.verify = v })
	if res.Evidence == nil || res.Evidence.Cited == 0 {
		t.Fatalf("evidence = %+v, want citations", res.Evidence)
	}
	if v.calls != res.Evidence.Cited {
		t.Errorf("%d citations verified %d times", res.Evidence.Cited, v.calls)
	}
}
