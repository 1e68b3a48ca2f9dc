package compare_test

import (
	"path/filepath"
	"testing"

	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/nexus/compare"
	"github.com/swarm-dev/swarm/shadow"
)

// compare seals once for every contender: with a workspace that envelope
// holds the mechanical checks (and every contender is judged against it);
// a seal made without a workspace is not reused once one is given (its
// missing checks would let fabricated evidence read as perfect).
func TestCompareSealsMechanicalChecksWithAWorkspace(t *testing.T) {
	t.Parallel()
	o := options(t, "mock:honest", "mock:sloppy")
	o.Repeats, o.Resume = 1, true
	r, err := compare.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	mech := func() int {
		t.Helper()
		s, err := nexus.LoadSealed(filepath.Join(o.Out, "seal"))
		if err != nil {
			t.Fatal(err)
		}
		return s.Envelope.Mechanical()
	}
	if n := mech(); n != 0 {
		t.Fatalf("without a workspace: %d mechanical checks sealed, want 0", n)
	}
	plain := r.SealedHash
	o.Workspace = "../../examples/workspaces/tinynotes"
	r, err = compare.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if n := mech(); n != len(shadow.Checks) || r.SealedHash == plain {
		t.Fatalf("with a workspace: %d mechanical checks sealed (hash %s, before %s), want %d under a new hash", n, r.SealedHash, plain, len(shadow.Checks))
	}
	for _, m := range o.Models {
		if s := stats(r, m); s.NoResult || (m == "mock:sloppy" && s.Median == 0) {
			t.Errorf("%s: no result %v, median %v; sloppy's fabricated citations must not read as perfect", m, s.NoResult, s.Median)
		}
	}
}
