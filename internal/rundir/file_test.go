package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A file that cannot be written on a full disk leaves the previous one
// whole and no temporary file; the error names the file (not the temporary
// one) and the reason, and the Dir remembers it for the run's end. On main
// the error named .tmp-NNN and nothing remembered it.
func TestWriteFileOnAFullDisk(t *testing.T) {
	// Serial: rundir.FailWritesAfter fails every write of the process.
	d, err := Create(filepath.Join(t.TempDir(), "run"), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("report.md", []byte("the previous report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d.Err() != nil {
		t.Fatalf("Err() = %v after a good write", d.Err())
	}
	undo := FailWritesAfter(4)
	err = d.WriteJSON("report.md", map[string]string{"text": strings.Repeat("x", 100)})
	undo()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want ENOSPC", err)
	}
	want := "write " + d.Join("report.md") + ": no space left on device"
	if err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	if b, _ := os.ReadFile(d.Join("report.md")); string(b) != "the previous report\n" {
		t.Errorf("report.md = %q: the previous file was not kept", b)
	}
	if left, _ := filepath.Glob(d.Join(".tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// A copy of the Dir (the run passes it by value) sees the failure.
	c := d
	if c.Err() == nil || c.Err().Error() != want {
		t.Errorf("Err() = %v, want %q", c.Err(), want)
	}
	// Later good writes do not clear it.
	if err := d.WriteFile("other.md", []byte("ok"), 0o644); err != nil || d.Err() == nil {
		t.Errorf("after a good write: %v, Err() = %v", err, d.Err())
	}
}

// A log's write that crosses the limit writes what fits, as a full disk
// does, and says ENOSPC with the log's name.
func TestLogWriteOnAFullDiskIsShort(t *testing.T) {
	// Serial: rundir.FailWritesAfter fails every write of the process.
	path := filepath.Join(t.TempDir(), "events.jsonl")
	f, err := OpenLog(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	undo := FailWritesAfter(3)
	defer undo()
	n, err := f.Write([]byte("abcdef\n"))
	if n != 3 || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
		t.Errorf("Write = %d, %v; want 3 bytes and ENOSPC naming %s", n, err, path)
	}
}

// A log that cannot write a line keeps the lines it had whole (the cut
// line's start is removed again) and writes nothing after, even once the
// disk has room again: one more line would follow a missing one.
func TestLogStopsAtTheFirstFailureWithNoHalfLine(t *testing.T) {
	// Serial: rundir.FailWritesAfter fails every write of the process.
	path := filepath.Join(t.TempDir(), "events.jsonl")
	f, err := OpenLog(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLog(f)
	if err != nil {
		t.Fatal(err)
	}
	var wrote []bool
	wrote = append(wrote, l.WriteLine([]byte("{\"seq\":1}\n")), l.WriteLine([]byte("{\"seq\":2}\n")))
	undo := FailWritesAfter(5)
	wrote = append(wrote, l.WriteLine([]byte("{\"seq\":3,\"message\":\"cut by a full disk\"}\n")))
	undo()
	wrote = append(wrote, l.WriteLine([]byte("{\"seq\":4}\n")))
	if d := cmp.Diff([]bool{true, true, false, false}, wrote); d != "" {
		t.Errorf("lines written (-want +got)\n%s", d)
	}
	err = l.Close()
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
		t.Errorf("close() = %v, want ENOSPC naming %s", err, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff("{\"seq\":1}\n{\"seq\":2}\n", string(b)); d != "" {
		t.Errorf("events.jsonl (-want +got)\n%s", d)
	}
}
