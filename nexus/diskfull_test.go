package nexus_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers/builtin"
	"github.com/swarm-dev/swarm/runfiles"
)

// dirBytes is what the files under dir hold.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		n += fi.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkNothingTorn fails when a file under dir is cut short: a log line
// without its newline or that does not parse, a JSON file that does not
// parse, a temporary file left behind.
func checkNothingTorn(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if strings.HasPrefix(d.Name(), ".tmp-") {
			t.Errorf("%s: a temporary file was left behind", rel)
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".jsonl":
			if len(b) > 0 && b[len(b)-1] != '\n' {
				t.Errorf("%s ends mid-line: %q", rel, b[max(0, len(b)-40):])
			}
			for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
				if len(b) > 0 && !json.Valid(line) {
					t.Errorf("%s line %d does not parse", rel, i+1)
				}
			}
		case ".json":
			if !json.Valid(b) {
				t.Errorf("%s does not parse (%d bytes)", rel, len(b))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A run whose disk fills up says so: the error is ErrWrite, names the file
// and "no space left on device"; nothing written before is cut short; and
// the run, given room again, resumes to the sealed hash and the scores of a
// run that never lacked it. Main printed "Run complete" with no
// result.json and logs cut mid-line.
func TestFullDiskFailsTheRunAndLosesNothing(t *testing.T) {
	// Serial: rundir.FailWritesAfter fails every write of the process.
	mission, config := resumeFixture(t)
	full := filepath.Join(t.TempDir(), "full")
	want, err := prepareResumeRun(t, mission, config, full, nil).Run(t.Context())
	if err != nil || !want.OK {
		t.Fatalf("uninterrupted run: %v (%s)", err, want.Error)
	}
	total := dirBytes(t, full)
	for _, tc := range []struct {
		why   string
		limit int64
	}{
		{"nothing fits: run.json cannot be written, the run does not start", 0},
		{"the disk fills during the first phases (journal, events, transcripts)", total / 20},
		{"the disk fills while commanders and judges work", total / 2},
		{"the disk fills while the final files are written", total - total/20},
	} {
		t.Run(tc.why, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			m := prepareResumeRun(t, mission, config, out, nil)
			undo := rundir.FailWritesAfter(tc.limit)
			res, err := m.Run(t.Context())
			undo()
			if !errors.Is(err, nexus.ErrWrite) || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("err = %v, want ErrWrite with ENOSPC", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "no space left on device") || !strings.Contains(msg, out+string(filepath.Separator)) {
				t.Errorf("error %q does not name the file and the reason", msg)
			}
			t.Log(err)
			if res != nil && res.Interrupted {
				t.Error("a full disk reads as an interruption")
			}
			checkNothingTorn(t, out)
			if b, err := os.ReadFile(filepath.Join(out, "result.json")); err == nil {
				var r struct{ Status string }
				if json.Unmarshal(b, &r) != nil || r.Status != runfiles.StatusFailed {
					t.Errorf("result.json says %q on a full disk, want %q", r.Status, runfiles.StatusFailed)
				}
			}
			if _, err := os.Stat(filepath.Join(out, runfiles.ManifestFile)); err != nil {
				return // nothing to resume: the run never started
			}
			r, err := nexus.Resume(out, nexus.ResumeOptions{Registry: builtin.Registry(mock.Options{}), ConfigPath: config})
			if err != nil {
				t.Fatalf("resume after a full disk: %v", err)
			}
			got, err := r.Run(t.Context())
			if err != nil || !got.OK {
				t.Fatalf("resumed run: %v", err)
			}
			if got.SealedHash != want.SealedHash {
				t.Errorf("sealed hash %s after resume, want %s", got.SealedHash, want.SealedHash)
			}
			if d := cmp.Diff(bundleScores(want), bundleScores(got)); d != "" {
				t.Errorf("scores after resume (-want +got)\n%s", d)
			}
		})
	}
}
