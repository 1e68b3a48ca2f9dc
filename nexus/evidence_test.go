package nexus

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/workspace"
)

func ptr[T any](v T) *T { return &v }

// fakeVerifier gives each cited path a known state (a path it does not
// know is fabricated, as a missing file is).
type fakeVerifier struct {
	states map[string]workspace.State
}

func (f fakeVerifier) Verify(c citation.Citation) workspace.Check {
	s, ok := f.states[c.Path]
	if !ok {
		return workspace.Check{Citation: c, State: workspace.Fabricated, Reason: "no such file"}
	}
	return workspace.Check{Citation: c, State: s, Reason: "fake: " + string(s)}
}

func (fakeVerifier) Dir() string { return "/fake/ws" }

func (fakeVerifier) Fingerprint() workspace.Fingerprint {
	return workspace.Fingerprint{Kind: "files", FilesHash: "sha256:fake", FilesRead: 2}
}

// atomChecks checks every finished atom's citations (nil for a failed one).
func atomChecks(v verifier, atoms []commanders.AtomResult) [][]workspace.Check {
	out := make([][]workspace.Check, len(atoms))
	for i, a := range atoms {
		if !a.Failed {
			out[i] = checkAll(v, a.Atom.Evidence)
		}
	}
	return out
}

func cites(paths ...string) []citation.Citation {
	var out []citation.Citation
	for i, p := range paths {
		out = append(out, citation.Citation{Path: p, StartLine: i + 1, EndLine: i + 2, Quote: "q " + p})
	}
	return out
}

func workerAtom(agent, model string, paths ...string) commanders.AtomResult {
	return commanders.AtomResult{AgentID: agent, Model: model, BriefID: "b-" + agent,
		Atom: commanders.Atom{Status: commanders.StatusComplete, Content: agent, Confidence: 0.5, Evidence: cites(paths...)}}
}

// evidenceBundles are two domains on two models: ok.go verifies, env is
// unverifiable (denied), anything else is fabricated.
func evidenceBundles() []*BundleOutcome {
	sec := &BundleOutcome{ID: "security", Domain: "security", Commander: "commander-security", Model: "mock:a",
		Bundle: commanders.Bundle{Evidence: cites("ok.go"), Findings: []commanders.Finding{
			{Title: "fix compare", Evidence: cites("ok.go", "ghost.go")},
			{Title: "no citation"},
		}},
		result: commanders.Result{Atoms: []commanders.AtomResult{
			workerAtom("worker-security-01", "mock:b", "ok.go", "env"),
			workerAtom("worker-security-02", "mock:a", "ghost.go"),
			{AgentID: "worker-security-03", Model: "mock:b", Failed: true, Atom: commanders.Atom{Evidence: cites("ok.go")}}, // failed: not counted
		}}}
	// A failed commander has no bundle of its own, but its finished atoms
	// are still checked.
	failed := &BundleOutcome{ID: "testing", Domain: "testing", Commander: "commander-testing", Model: "mock:b", Failed: true,
		Bundle: commanders.Bundle{Evidence: cites("ghost.go")},
		result: commanders.Result{Atoms: []commanders.AtomResult{workerAtom("worker-testing-01", "mock:b", "ok.go")}}}
	return []*BundleOutcome{sec, failed}
}

var evidenceFake = fakeVerifier{states: map[string]workspace.State{"ok.go": workspace.Verified, "env": workspace.Unverifiable}}

func TestEvidenceCountsPerAtomBundleAgentAndModel(t *testing.T) {
	t.Parallel()
	bundles := evidenceBundles()
	for _, o := range bundles {
		checkBundle(evidenceFake, o, nil)
	}
	c := func(cited, ver, unv, fab int) workspace.Counts {
		return workspace.Counts{Cited: cited, Verified: ver, Unverifiable: unv, Fabricated: fab}
	}
	// security: own ok.go (v); findings ok.go (v), ghost.go (f); atoms
	// ok.go (v), env (u); ghost.go (f). testing: its atom's ok.go (v) only.
	if d := cmp.Diff([]*workspace.Counts{ptr(c(6, 3, 1, 2)), ptr(c(1, 1, 0, 0))}, []*workspace.Counts{bundles[0].Evidence, bundles[1].Evidence}); d != "" {
		t.Errorf("bundle counts (-want +got)\n%s", d)
	}
	f := evidenceFile(bundles)
	if d := cmp.Diff(c(7, 4, 1, 2), f.Counts); d != "" {
		t.Errorf("run counts (-want +got)\n%s", d)
	}
	wantAgents := map[string]workspace.Counts{
		"commander-security": c(3, 2, 0, 1), "worker-security-01": c(2, 1, 1, 0), "worker-security-02": c(1, 0, 0, 1),
		"worker-testing-01": c(1, 1, 0, 0),
	}
	if d := cmp.Diff(wantAgents, f.ByAgent); d != "" {
		t.Errorf("per agent (-want +got)\n%s", d)
	}
	wantModels := map[string]workspace.Counts{"mock:a": c(4, 2, 0, 2), "mock:b": c(3, 2, 1, 0)}
	if d := cmp.Diff(wantModels, f.ByModel); d != "" {
		t.Errorf("per model (-want +got)\n%s", d)
	}
	var perAtom []workspace.Counts
	for _, a := range f.Atoms {
		perAtom = append(perAtom, workspace.CountChecks(a.Checks))
	}
	if d := cmp.Diff([]workspace.Counts{c(2, 1, 1, 0), c(1, 0, 0, 1), c(1, 1, 0, 0)}, perAtom); d != "" {
		t.Errorf("per atom (-want +got)\n%s", d)
	}
	// The failed bundle lists no bundle entry; the finding without a
	// citation is still listed (it counts for precision).
	if len(f.Bundles) != 1 || len(f.Bundles[0].Findings) != 2 || len(f.Bundles[0].Findings[1].Checks) != 0 {
		t.Errorf("bundles in evidence.json = %+v, want security with two findings, the second uncited", f.Bundles)
	}
	// Ground truth sees every finding of every bundle that has one: the
	// two of security (the failed bundle has none).
	if got := findingChecks(bundles); len(got) != 2 || len(got[0]) != 2 || len(got[1]) != 0 {
		t.Errorf("finding checks = %+v, want security's two findings (2 checks, 0 checks)", got)
	}
}
