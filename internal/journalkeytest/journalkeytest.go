// Package journalkeytest keeps a test binary's journal key out of the
// user's config directory: every run signs its journal (nexus
// journal_mac.go) under the key SWARM_JOURNAL_KEY_FILE names, so test
// packages that run missions call Run from their TestMain.
package journalkeytest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// EnvKeyFile is nexus.EnvJournalKeyFile (this package must not import nexus,
// whose own tests use it).
const EnvKeyFile = "SWARM_JOURNAL_KEY_FILE"

// Run runs m's tests with the journal key in a temporary directory
// (inherited by the processes the tests start) unless the environment
// already names one, and returns their exit code.
//
// The key is made before any test runs (MakeKey): parallel tests, and the
// processes they start, then all read one finished key instead of racing
// to create it.
func Run(m *testing.M) int {
	if os.Getenv(EnvKeyFile) != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "swarm-journal-key-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "journal.key")
	if err := MakeKey(path); err != nil {
		panic(err)
	}
	os.Setenv(EnvKeyFile, path)
	return m.Run()
}

// MakeKey writes a new journal key to path as a run would make it: 32
// random bytes in hex and a newline, mode 0600. It fails if path exists.
func MakeKey(path string) error {
	var key [32]byte
	rand.Read(key[:]) // never fails (crypto/rand)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(hex.EncodeToString(key[:]) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
