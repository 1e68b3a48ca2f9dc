package rundir

import (
	"os"
	"path/filepath"
	"testing"
)

// A log is never opened through a symbolic link, even one planted after the
// directory was checked.
func TestOpenLogRefusesSymbolicLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "events.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenLog(link, 0o644); err == nil {
		f.Close()
		t.Fatal("OpenLog followed a symbolic link")
	}
	if b, _ := os.ReadFile(target); string(b) != "x" {
		t.Errorf("target changed: %q", b)
	}
	f, err := OpenLog(filepath.Join(dir, "new.jsonl"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
