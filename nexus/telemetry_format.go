package nexus

import (
	"fmt"

	"github.com/swarm-dev/swarm/runfiles"
)

// formatCallsCost is the cost of a group of calls (runfiles.CallStats) in a table
// cell: "$0.0123"; "≥ $0.0123" when some of its calls had no known price;
// "—" when none had one. The models are named where the run's cost is.
func formatCallsCost(c runfiles.CallStats) string {
	switch {
	case c.CostUSD == nil:
		return "—"
	case c.UnpricedCalls > 0:
		return fmt.Sprintf("≥ $%.4f", *c.CostUSD)
	default:
		return fmt.Sprintf("$%.4f", *c.CostUSD)
	}
}
