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

// Reopen readies a run directory for a resumed attempt: the previous
// attempt's logs move under attempts/N/, what the run writes again is
// removed, and run.json, journal.jsonl, sealed/ and files that are no run
// entry stay.
func TestReopenKeepsTheJournalAndThePreviousAttemptsLogs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"run.json", "journal.jsonl", "events.jsonl", "transcripts.jsonl", "result.json", "report.md",
		"bundles/a.json", "reviews/r.json", "sealed/envelope.json", "notes.txt"} {
		write(name, name)
	}
	d, err := Reopen(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"run.json": "run.json", "journal.jsonl": "journal.jsonl", "sealed/envelope.json": "sealed/envelope.json", "notes.txt": "notes.txt",
		"attempts/1/events.jsonl": "events.jsonl", "attempts/1/transcripts.jsonl": "transcripts.jsonl",
	} {
		if b, err := os.ReadFile(d.Join(name)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	for _, name := range []string{"events.jsonl", "transcripts.jsonl", "result.json", "report.md", "bundles/a.json", "reviews/r.json"} {
		if _, err := os.Stat(d.Join(name)); !os.IsNotExist(err) {
			t.Errorf("%s still exists (%v)", name, err)
		}
	}
	for _, sub := range []string{"bundles", "reviews", "capsules", "reports"} {
		if fi, err := os.Stat(d.Join(sub)); err != nil || !fi.IsDir() {
			t.Errorf("%s/ not recreated: %v", sub, err)
		}
	}
}
