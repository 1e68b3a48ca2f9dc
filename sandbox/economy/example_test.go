package economy_test

import (
	"fmt"

	"github.com/swarm-dev/swarm/sandbox/economy"
)

// Example shows the per-epoch cadence the simulation loop is meant to use:
// the Sybil lever sees every finalized interaction and acts at epoch start,
// identity trust and market volatility set the permeability, and the
// epoch's interactions spill over the boundary. Every mechanism owns its
// state and its seeded generator, so the run is reproducible.
func Example() {
	lever, _ := economy.NewSybilLever(economy.SybilConfig{Enabled: true, SimilarityThreshold: 0.8, PenaltyMultiplier: 1, RealtimeRate: 0.1, MaxClusterSize: 1})
	reg, _ := economy.NewRegistry(economy.DefaultIdentityConfig())
	perm, _ := economy.NewPermeability(economy.DefaultPermeabilityConfig(), economy.NewRand(7))
	for _, a := range []string{"s1", "s2", "h"} {
		_, _ = reg.CreateIdentity(a, "", a == "h", 0)
	}
	epochs := [][]economy.Interaction{
		{{ID: "e0-1", P: 0.2, Accepted: true}, {ID: "e0-2", P: 0.3, Accepted: true}, {ID: "e0-3", P: 0.9, Accepted: true}},
		{{ID: "e1-1", P: 0.1, Accepted: true}, {ID: "e1-2", P: 0.8, Accepted: true}},
	}
	pairs := [][2]string{{"s1", "t"}, {"s2", "t"}, {"h", "u"}}
	for epoch, ixs := range epochs {
		for _, p := range lever.OnEpochStart() {
			fmt.Printf("epoch %d: %s penalised (reputation %+.1f)\n", epoch, p.Agent, p.ReputationDelta)
		}
		trust := 0.0
		for _, a := range []string{"s1", "s2", "h"} {
			id, _ := reg.Identity(a)
			trust += id.TrustScore(epoch) / 3
		}
		pi := perm.ComputeEffective(0.2, trust) // threat, e.g. min(1, 5·market volatility)
		for i := range ixs {
			lever.OnInteraction(pairs[i%len(pairs)][0], pairs[i%len(pairs)][1])
		}
		perm.SimulateSpillover(ixs, nil)
		fmt.Printf("epoch %d: π %.3f, s1 may act: %v\n", epoch, pi, lever.CanAct("s1"))
	}
	// Output:
	// epoch 0: π 0.273, s1 may act: true
	// epoch 1: s1 penalised (reputation -0.1)
	// epoch 1: s2 penalised (reputation -0.1)
	// epoch 1: π 0.273, s1 may act: false
}
