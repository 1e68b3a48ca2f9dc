package nexus_test

import (
	"github.com/swarm-dev/swarm/nexus"
)

// withoutRecovery turns the recovery ladder off: for tests of what happens
// to a failure before any recovery.
func withoutRecovery(o *nexus.Options) { o.Config.Recovery.Enabled = false }
