package nexus_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/nexus"
)

// envHoldLock makes the test binary take the lock of the run directory it
// names, say so on stdout and wait to be killed (TestKilledLockHolder...).
const envHoldLock = "SWARM_TEST_HOLD_LOCK"

// TestMain keeps the tests' journal key out of the user's config directory
// (every run signs its journal: journal_mac.go), and runs the lock-holding
// helper process when asked to.
func TestMain(m *testing.M) {
	if dir := os.Getenv(envHoldLock); dir != "" {
		if _, err := rundir.Acquire(dir); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		select {} // until killed
	}
	if os.Getenv(nexus.EnvJournalKeyFile) == "" {
		dir, err := os.MkdirTemp("", "swarm-journal-key-")
		if err != nil {
			panic(err)
		}
		os.Setenv(nexus.EnvJournalKeyFile, filepath.Join(dir, "journal.key"))
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}
