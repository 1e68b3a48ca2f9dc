// Package journalkeytest keeps a test binary's journal key out of the
// user's config directory: every run signs its journal (nexus
// journal_mac.go) under the key SWARM_JOURNAL_KEY_FILE names, so test
// packages that run missions call Run from their TestMain.
package journalkeytest

import (
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
func Run(m *testing.M) int {
	if os.Getenv(EnvKeyFile) != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "swarm-journal-key-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	os.Setenv(EnvKeyFile, filepath.Join(dir, "journal.key"))
	return m.Run()
}
