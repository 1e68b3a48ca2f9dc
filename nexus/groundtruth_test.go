package nexus_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/nexus"
)

// A ground truth is checked in Prepare, before a run directory or any
// LLM call exists: a bad one is bad input naming the file.
func TestPrepareChecksTheGroundTruth(t *testing.T) {
	t.Parallel()
	tmp, ws := t.TempDir(), t.TempDir()
	truth := filepath.Join(tmp, "truth.yaml")
	planted := filepath.Join(ws, "internal", "truth.yaml")
	if err := os.MkdirAll(filepath.Dir(planted), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(planted, []byte("workspace: x\ndefects: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truth, []byte("workspace: x\ndefects: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		workspace string
		truth     string
		wantIn    []string
	}{
		{"a ground truth needs a workspace", "", truth, []string{truth, "needs a workspace"}},
		{"a missing file is named", ws, filepath.Join(tmp, "nope.yaml"), []string{"nope.yaml"}},
		{"a directory is not a ground truth", ws, tmp, []string{tmp, "is a directory"}},
		{"a ground truth the agents could read is refused", ws, planted, []string{planted, "inside the workspace"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			o := missionOptions(t, dir)
			o.Workspace, o.GroundTruth = tc.workspace, tc.truth
			_, err := nexus.Prepare(o)
			if !errors.Is(err, config.ErrBadInput) {
				t.Fatalf("err = %v, want ErrBadInput", err)
			}
			for _, s := range tc.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a run directory exists after a bad ground truth (stat: %v)", err)
			}
		})
	}
}
