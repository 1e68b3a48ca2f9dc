package nexus

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/workspace"
)

// Re-checking a finished run: the same workspace changes nothing; a file
// changed since (the fake now finds ok.go's lines differ) turns every
// citation of it from verified to fabricated, each one listed.
func TestVerifyEvidenceReportsChangedStates(t *testing.T) {
	t.Parallel()
	res, dir := evidenceRun(t, func(m *Mission) { m.ev.verify = evidenceFake })

	same, err := verifyRunEvidence(dir, evidenceFake)
	if err != nil {
		t.Fatal(err)
	}
	if same.Changed() || same.Counts != *res.Evidence || same.RecordedCounts != *res.Evidence {
		t.Errorf("unchanged workspace: changes %v, counts %+v, recorded %+v, want none and %+v", same.Changes, same.Counts, same.RecordedCounts, *res.Evidence)
	}

	edited := fakeVerifier{states: map[string]workspace.State{"env": workspace.Unverifiable}} // ok.go's lines no longer match
	rep, err := verifyRunEvidence(dir, edited)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Changed() {
		t.Fatal("an edited file changed nothing")
	}
	for _, c := range rep.Changes {
		if c.Citation.Path != "ok.go" || c.Was != workspace.Verified || c.Now != workspace.Fabricated {
			t.Errorf("unexpected change %+v", c)
		}
	}
	if len(rep.Changes) != res.Evidence.Verified {
		t.Errorf("%d changes, want every verified citation (%d)", len(rep.Changes), res.Evidence.Verified)
	}
	want := workspace.Counts{Cited: res.Evidence.Cited, Unverifiable: res.Evidence.Unverifiable, Fabricated: res.Evidence.Cited - res.Evidence.Unverifiable}
	if d := cmp.Diff(want, rep.Counts); d != "" {
		t.Errorf("fresh counts (-want +got)\n%s", d)
	}
	if !strings.HasPrefix(rep.Changes[0].Where, "atom worker-") {
		t.Errorf("first change at %q, want an atom's", rep.Changes[0].Where)
	}
}

func TestVerifyEvidenceNamesTheFileItCannotRead(t *testing.T) {
	t.Parallel()
	_, dir := evidenceRun(t, func(m *Mission) { m.ev.verify = evidenceFake })
	bundles, _ := filepath.Glob(filepath.Join(dir, "bundles", "*.json"))
	if err := os.WriteFile(bundles[0], []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyRunEvidence(dir, evidenceFake); err == nil || !strings.Contains(err.Error(), bundles[0]) {
		t.Errorf("err = %v, want it to name %s", err, bundles[0])
	}
	if err := os.Remove(filepath.Join(dir, "evidence.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyRunEvidence(dir, evidenceFake); !errors.Is(err, ErrNoEvidence) || !strings.Contains(err.Error(), "evidence.json") {
		t.Errorf("err = %v, want ErrNoEvidence naming evidence.json", err)
	}
	if _, err := VerifyEvidence(dir, nil); !errors.Is(err, config.ErrBadInput) {
		t.Errorf("nil workspace: err = %v, want ErrBadInput", err)
	}
}
