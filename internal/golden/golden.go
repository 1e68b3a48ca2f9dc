// Package golden compares test output with golden files. It is for tests
// only: each test package keeps its own -update flag and passes it in.
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Diff compares got with the golden file at path and returns their
// difference (-want +got), "" when they are equal. With update it writes
// got to path instead (creating its directory) and returns "". A golden
// file that cannot be read fails the test.
func Diff(t testing.TB, path string, got []byte, update bool) string {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return ""
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if bytes.Equal(want, got) {
		return ""
	}
	return cmp.Diff(string(want), string(got))
}
