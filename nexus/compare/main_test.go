package compare_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/swarm-dev/swarm/nexus"
)

// TestMain keeps the tests' journal key (every run signs its journal) out
// of the user's config directory.
func TestMain(m *testing.M) {
	if os.Getenv(nexus.EnvJournalKeyFile) != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "swarm-journal-key-")
	if err != nil {
		panic(err)
	}
	os.Setenv(nexus.EnvJournalKeyFile, filepath.Join(dir, "journal.key"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
