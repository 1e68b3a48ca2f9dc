package nexus_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
)

func missionOptions(t *testing.T, dir string) nexus.Options {
	t.Helper()
	return nexus.Options{Config: defaultConfig(t), Registry: mockRegistry(mock.Options{}), Mission: loadMission(t, "api-design.md"),
		MissionName: "test", Scale: "ss-50", Provider: providers.Ref{Kind: "mock", Model: "honest"}, OutDir: dir, KeepEvents: true}
}

// Prepare is Phase 0 only: the plan is known and nothing is written (the
// CLI shows the briefing from it before anything exists on disk).
func TestPrepareWritesNothing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	m, err := nexus.Prepare(missionOptions(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Plan(); p.Commanders == 0 || p.Agents == 0 || p.RunID == "" {
		t.Errorf("plan %+v lacks commanders, agents or run id", p)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Prepare created %s (stat: %v)", dir, err)
	}
}

// Seal then Run is the same mission as Run alone: same sealed hash, same
// bundles and scores, and Run after Seal makes no second decomposition or
// seal call.
func TestSealThenRunEqualsRun(t *testing.T) {
	t.Parallel()
	one, err := nexus.Run(t.Context(), missionOptions(t, filepath.Join(t.TempDir(), "one")))
	if err != nil {
		t.Fatal(err)
	}
	m, err := nexus.Prepare(missionOptions(t, filepath.Join(t.TempDir(), "two")))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := m.Seal(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if sealed.Hash() != one.SealedHash {
		t.Errorf("Seal hash %s, Run hash %s", sealed.Hash(), one.SealedHash)
	}
	two, err := m.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(scores(one), scores(two)); d != "" {
		t.Errorf("scores differ (-Run +Seal/Run):\n%s", d)
	}
	if d := cmp.Diff(callsBySchema(one), callsBySchema(two)); d != "" {
		t.Errorf("calls differ (-Run +Seal/Run):\n%s", d)
	}
	if two.Status != runfiles.StatusComplete {
		t.Errorf("status %s: %s", two.Status, two.Error)
	}
}

// Two contenders run against one envelope: both are judged against the
// same hash, neither makes a decomposition or seal call, and the sealing
// mission, closed, says "sealed".
func TestRunSealedSharesOneEnvelope(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	m, err := nexus.Prepare(missionOptions(t, filepath.Join(base, "seal")))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := m.Seal(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if f := readResult(t, filepath.Join(base, "seal")); f.Status != runfiles.StatusSealed {
		t.Errorf("sealing mission: status %q, want sealed", f.Status)
	}
	for _, persona := range []string{"mock:honest", "mock:sloppy"} {
		o := missionOptions(t, filepath.Join(base, persona[5:]))
		o.Provider = ref(t, persona)
		c, err := nexus.Prepare(o)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.RunSealed(t.Context(), sealed)
		if err != nil {
			t.Fatal(err)
		}
		if res.SealedHash != sealed.Hash() {
			t.Errorf("%s judged against %s, want %s", persona, res.SealedHash, sealed.Hash())
		}
		calls := callsBySchema(res)
		if calls["decomposition"]+calls["sealed_criteria"] != 0 {
			t.Errorf("%s: %d decomposition and %d seal calls, want none", persona, calls["decomposition"], calls["sealed_criteria"])
		}
		if res.Aggregate.Scored == 0 {
			t.Errorf("%s: no bundle judged: %s", persona, res.Error)
		}
	}
}

func scores(r *nexus.Result) map[string]float64 {
	out := map[string]float64{}
	for _, b := range r.Bundles {
		if b.ShadowScore != nil {
			out[b.ID] = *b.ShadowScore
		}
	}
	return out
}

func callsBySchema(r *nexus.Result) map[string]int {
	out := map[string]int{}
	for _, e := range r.Events {
		if e.Kind == events.LLMCall {
			out[e.Data.(events.CallData).Schema]++
		}
	}
	return out
}
