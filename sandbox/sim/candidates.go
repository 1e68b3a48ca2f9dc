package sim

import (
	"math/rand/v2"

	"github.com/swarm-dev/swarm/sandbox/agents"
	"github.com/swarm-dev/swarm/sandbox/governance"
)

// candidates implements agents.Candidates for one proposing agent: its
// neighbours that are not frozen, drawn without listing them.
//
// On a complete network a draw is uniform over all agents (or over the
// allies, or the honest agents) and is redrawn when it hits the agent
// itself or a frozen agent; after rejectTries misses the eligible agents
// are counted and one is drawn by rank, so the draw stays exactly uniform
// over the eligible ones and terminates when there is none. On a CSR
// network the same is done over the agent's neighbour row (a kind other
// than "any" is counted directly: rows are short).
type candidates struct {
	self   int
	g      *graph
	gs     *governance.State
	ids    []string
	ally   []bool  // by agent index
	honest []bool  // by agent index
	allies []int32 // indices of the allies (complete network)
	honsts []int32 // indices of the honest agents (complete network)
}

const rejectTries = 32

func (c *candidates) eligible(j int, k agents.Kind) bool {
	if j == c.self {
		return false
	}
	switch k {
	case agents.AllyCandidate:
		if !c.ally[j] {
			return false
		}
	case agents.HonestCandidate:
		if !c.honest[j] {
			return false
		}
	}
	return len(c.gs.FrozenUntil) == 0 || !c.gs.Frozen(c.ids[j])
}

// Pick implements agents.Candidates.
func (c *candidates) Pick(rng *rand.Rand, k agents.Kind) (int, bool) {
	if c.g.complete {
		switch k {
		case agents.AllyCandidate:
			return c.fromList(rng, c.allies, k)
		case agents.HonestCandidate:
			return c.fromList(rng, c.honsts, k)
		}
		n := c.g.n
		for range rejectTries {
			if j := rng.IntN(n); c.eligible(j, k) {
				return j, true
			}
		}
		count := 0
		for j := range n {
			if c.eligible(j, k) {
				count++
			}
		}
		if count == 0 {
			return 0, false
		}
		r := rng.IntN(count)
		for j := range n {
			if c.eligible(j, k) {
				if r == 0 {
					return j, true
				}
				r--
			}
		}
		return 0, false
	}
	row := c.g.neighbours(c.self)
	if k == agents.AnyCandidate && len(row) > 0 {
		for range rejectTries {
			if j := int(row[rng.IntN(len(row))]); c.eligible(j, k) {
				return j, true
			}
		}
	}
	return c.fromList(rng, row, k)
}

// fromList draws uniformly among the eligible members of list: by
// rejection first (lists are large), then by rank.
func (c *candidates) fromList(rng *rand.Rand, list []int32, k agents.Kind) (int, bool) {
	if len(list) == 0 {
		return 0, false
	}
	if c.g.complete {
		for range rejectTries {
			if j := int(list[rng.IntN(len(list))]); c.eligible(j, k) {
				return j, true
			}
		}
	}
	count := 0
	for _, j := range list {
		if c.eligible(int(j), k) {
			count++
		}
	}
	if count == 0 {
		return 0, false
	}
	r := rng.IntN(count)
	for _, j := range list {
		if c.eligible(int(j), k) {
			if r == 0 {
				return int(j), true
			}
			r--
		}
	}
	return 0, false
}
