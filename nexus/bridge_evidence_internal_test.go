package nexus

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/workspace"
)

// bridgedAtom bridges one atom through a fresh mission sandbox, with the
// workspace verifier v (nil: no workspace), and returns its interaction.
func bridgedAtom(t *testing.T, v verifier, a commanders.AtomResult) sandbox.Interaction {
	t.Helper()
	ms, err := newMissionSandbox(config.Sandbox{}, config.CircuitBreaker{}, func(events.Event) {}, func() {})
	if err != nil {
		t.Fatal(err)
	}
	var checks []workspace.Check // as checkArrived makes them
	if v != nil && !a.Failed {
		checks = checkAll(v, a.Atom.Evidence)
	}
	ms.atomDone("commander-security", a, checks)
	in := ms.bridge.Report().Interactions
	if len(in) != 1 {
		t.Fatalf("%d interactions, want 1", len(in))
	}
	return in[0]
}

// Fabricated evidence lowers an atom's interaction: one verifier rejection
// per fabricated citation and task progress down by twice the fabricated
// share (floored at -1), so p drops. Without a workspace, or with only
// verified and unverifiable citations, nothing changes.
func TestBridgeLowersAtomsCitingFabricatedEvidence(t *testing.T) {
	t.Parallel()
	atomCiting := func(paths ...string) commanders.AtomResult {
		a := workerAtom("worker-security-01", "mock:a", paths...)
		a.Atom.Confidence, a.Atom.SelfScore = 0.9, 8
		return a
	}
	plain := bridgedAtom(t, nil, atomCiting("ok.go", "ghost.go"))
	base := *plain.Observables // progress 2·0.9−1 = 0.8
	tests := []struct {
		name      string
		v         verifier
		atom      commanders.AtomResult
		want      sandbox.Observables
		wantLower bool
	}{
		{"no workspace: not measured, not lowered", nil, atomCiting("ghost.go"), base, false},
		{"verified and unverifiable citations change nothing", evidenceFake, atomCiting("ok.go", "env"), base, false},
		{"one of two fabricated: one rejection, progress down by 2·½", evidenceFake, atomCiting("ok.go", "ghost.go"),
			sandbox.Observables{TaskProgress: base.TaskProgress - 1, Rework: base.Rework, VerifierRejections: 1, ToolMisuse: base.ToolMisuse, Engagement: base.Engagement}, true},
		{"all fabricated: progress floors at -1", evidenceFake, atomCiting("ghost.go", "nowhere.go"),
			sandbox.Observables{TaskProgress: -1, Rework: base.Rework, VerifierRejections: 2, ToolMisuse: base.ToolMisuse, Engagement: base.Engagement}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := bridgedAtom(t, tc.v, tc.atom)
			if d := cmp.Diff(tc.want, *got.Observables, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 })); d != "" {
				t.Errorf("observables (-want +got)\n%s", d)
			}
			if lower := got.P < plain.P; lower != tc.wantLower {
				t.Errorf("p = %v vs %v without evidence checks: lowered %v, want %v", got.P, plain.P, lower, tc.wantLower)
			}
		})
	}
}

// A bundle citing fabricated lines (its own or its findings') is lowered
// the same way when the sandbox bridges it; without checks it is not.
func TestBridgeLowersBundlesCitingFabricatedEvidence(t *testing.T) {
	t.Parallel()
	bridged := func(checked bool) sandbox.Interaction {
		ms, err := newMissionSandbox(config.Sandbox{}, config.CircuitBreaker{}, func(events.Event) {}, func() {})
		if err != nil {
			t.Fatal(err)
		}
		o := evidenceBundles()[0]
		o.Formula.Coverage, o.InSynthesis = 1, true
		if checked {
			checkBundle(evidenceFake, o, nil)
		}
		rep := ms.finish(&Result{Bundles: []*BundleOutcome{o}}, 15, events.Phase8)
		for _, in := range rep.Interactions {
			if in.Kind != "atom" {
				return in
			}
		}
		t.Fatal("no bundle interaction")
		return sandbox.Interaction{}
	}
	plain, lowered := bridged(false), bridged(true)
	// security cites ok.go (own), ok.go and ghost.go (a finding): 1 of 3
	// fabricated.
	want := *plain.Observables
	want.VerifierRejections++
	want.TaskProgress -= 2.0 / 3
	if d := cmp.Diff(want, *lowered.Observables, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 })); d != "" {
		t.Errorf("observables (-want +got)\n%s", d)
	}
	if lowered.P >= plain.P {
		t.Errorf("p = %v, not below %v", lowered.P, plain.P)
	}
}
