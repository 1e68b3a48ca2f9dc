package rundir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A log is never opened through a symbolic link, even one planted after the
// directory was checked.
func TestOpenLogRefusesSymbolicLinks(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// Issue 22 (point 16a): a run directory handed over with attempts/ (or
// attempts/N/) a symbolic link out of it: Reopen refuses, naming the entry,
// and moves nothing out of the run directory; before, it created attempts/N
// through the link and moved the logs there.
func TestReopenRefusesSymlinkedAttempts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		why  string
		link string // the entry that is a symbolic link to a directory outside
		want string
	}{
		{"attempts/ is a link out of the run directory", "attempts", "attempts is a symbolic link"},
		{"attempts/1 is a link out of the run directory", "attempts/1", "attempts/1 is a symbolic link"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			for _, name := range []string{"run.json", "events.jsonl", "transcripts.jsonl"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, tc.link)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(dir, tc.link)); err != nil {
				t.Fatal(err)
			}
			_, err := Reopen(dir, 1)
			if !errors.Is(err, ErrNotDir) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Reopen: %v; want ErrNotDir saying %q", err, tc.want)
			}
			var found []string
			_ = filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
				if p != outside {
					found = append(found, p)
				}
				return nil
			})
			if len(found) > 0 {
				t.Errorf("Reopen wrote outside the run directory: %v", found)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "events.jsonl")); err != nil || string(b) != "events.jsonl" {
				t.Errorf("events.jsonl moved: %q, %v", b, err)
			}
		})
	}
}
