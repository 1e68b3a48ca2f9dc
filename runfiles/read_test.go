package runfiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/shadow"
)

func TestRunDirReportsAndCommitmentNameWhatIsWrong(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := ReadReports(dir); !errors.Is(err, ErrNoReports) || !strings.HasPrefix(err.Error(), dir+": ") {
		t.Errorf("no reports: %v, want %s: %v", err, dir, ErrNoReports)
	}
	if err := os.MkdirAll(filepath.Join(dir, "reports"), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "reports", "b.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReports(dir); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Errorf("bad report: %v, want an error naming %s", err, bad)
	}
	// A run directory without events.jsonl cannot show what it committed:
	// that is tampering, never a pass.
	if err := VerifyCommitment(dir, &shadow.Envelope{SealedHash: "sha256:x"}); !errors.Is(err, shadow.ErrTampered) {
		t.Errorf("no events: %v, want %v", err, shadow.ErrTampered)
	}
}
