package nexus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// RunDir is a run's directory:
//
//	mission.md, config.effective.yml, events.jsonl, transcripts.jsonl,
//	capsules/, bundles/, reviews/, sealed/ (0700; envelope 0600), reports/,
//	report.md, telemetry.json, sandbox.json
type RunDir struct{ Path string }

func createRunDir(path string) (RunDir, error) {
	for _, sub := range []string{"", "capsules", "bundles", "reviews", "reports"} {
		if err := os.MkdirAll(filepath.Join(path, sub), 0o755); err != nil {
			return RunDir{}, fmt.Errorf("create run directory: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Join(path, "sealed"), 0o700); err != nil {
		return RunDir{}, fmt.Errorf("create run directory: %w", err)
	}
	return RunDir{Path: path}, nil
}

// Join returns a path inside the run directory.
func (d RunDir) Join(elem ...string) string {
	return filepath.Join(append([]string{d.Path}, elem...)...)
}

// EnvelopePath is where the sealed envelope lives.
func (d RunDir) EnvelopePath() string { return d.Join("sealed", "envelope.json") }

// WriteFile writes atomically (temp file + rename) so readers never see a
// half-written file.
func (d RunDir) WriteFile(name string, data []byte, perm os.FileMode) error {
	path := d.Join(name)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), perm); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// WriteJSON writes v as indented JSON.
func (d RunDir) WriteJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return d.WriteFile(name, append(b, '\n'), 0o644)
}
