package journalkeytest

import (
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMakeKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.key")
	if err := MakeKey(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("mode %04o, want 0600: nexus refuses a key others may read", got)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), "\n") {
		t.Errorf("key %q does not end in a newline, as a run writes it", b)
	}
	raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(raw) != 32 {
		t.Errorf("key %q: %d bytes (%v), want 32 in hex", b, len(raw), err)
	}
	// A second key never replaces the first: journals signed with it
	// would no longer verify.
	if err := MakeKey(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("MakeKey over an existing key: %v, want fs.ErrExist", err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(b) {
		t.Error("MakeKey over an existing key changed it")
	}
}
