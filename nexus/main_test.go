package nexus_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/swarm-dev/swarm/internal/journalkeytest"
	"github.com/swarm-dev/swarm/internal/redact/redacttest"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/nexus"
)

// envHoldLock makes the test binary take the lock of the run directory it
// names, say so on stdout and wait to be killed (TestKilledLockHolder...).
const envHoldLock = "SWARM_TEST_HOLD_LOCK"

// envConfiguredKey names the variable of a configured API key whose value
// is redacttest.Secret for the whole test binary (set once in TestMain,
// never changed): tests that configure it need no t.Setenv, which would
// keep them serial.
const envConfiguredKey = "SWARM_TEST_CONFIGURED_KEY"

// TestMain keeps the tests' journal key out of the user's config directory
// (every run signs its journal: journal_mac.go), sets envConfiguredKey,
// and runs the lock-holding helper process when asked to.
func TestMain(m *testing.M) {
	os.Setenv(envConfiguredKey, redacttest.Secret)
	if dir := os.Getenv(envHoldLock); dir != "" {
		if _, err := rundir.Acquire(dir); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		select {} // until killed
	}
	os.Exit(journalkeytest.Run(m))
}

// The tests' key file variable is the one nexus reads.
func TestJournalKeyTestUsesNexusVariable(t *testing.T) {
	t.Parallel()
	if journalkeytest.EnvKeyFile != nexus.EnvJournalKeyFile {
		t.Fatalf("journalkeytest.EnvKeyFile = %q, nexus reads %q", journalkeytest.EnvKeyFile, nexus.EnvJournalKeyFile)
	}
}
