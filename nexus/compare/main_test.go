package compare_test

import (
	"os"
	"testing"

	"github.com/swarm-dev/swarm/internal/journalkeytest"
)

// TestMain keeps the tests' journal key (every run signs its journal) out
// of the user's config directory.
func TestMain(m *testing.M) { os.Exit(journalkeytest.Run(m)) }
