package golden

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "a.golden")
	if d := Diff(t, path, []byte("one\ntwo\n"), true); d != "" {
		t.Fatalf("update returned a diff: %s", d)
	}
	if d := Diff(t, path, []byte("one\ntwo\n"), false); d != "" {
		t.Errorf("same content: diff %s", d)
	}
	d := Diff(t, path, []byte("one\nthree\n"), false)
	if !strings.Contains(d, "-") || !strings.Contains(d, "three") {
		t.Errorf("changed content: diff %q, want the change (-want +got)", d)
	}
}
