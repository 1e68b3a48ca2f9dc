package sim

import (
	"context"
	"math/rand/v2"
	"slices"
)

// graph is the interaction network. A complete network is implicit (every
// other agent is a neighbour: no memory, no list to rebuild); every other
// topology is held as compressed sparse rows (CSR): the neighbours of i are
// adj[off[i]:off[i+1]], sorted, without duplicates or self-loops.
type graph struct {
	n        int
	complete bool
	off      []int32 // len n+1
	adj      []int32
}

// degree is the number of neighbours of i.
func (g *graph) degree(i int) int {
	if g.complete {
		return g.n - 1
	}
	return int(g.off[i+1] - g.off[i])
}

// neighbours of i (not for a complete graph).
func (g *graph) neighbours(i int) []int32 { return g.adj[g.off[i]:g.off[i+1]] }

// maxEdges bounds the directed edges of a CSR graph: offsets are int32.
const maxEdges = 1<<31 - 1

// buildNetwork returns the network over n nodes. It stops with ctx's error
// when ctx is done. Every node has at least one neighbour (an isolated node
// i is linked to i+1).
func buildNetwork(ctx context.Context, n int, c Network, rng *rand.Rand) (*graph, error) {
	if c.Topology == "complete" || c.Topology == "" {
		return &graph{n: n, complete: true}, nil
	}
	var us, vs []int32 // undirected edges, in generation order
	link := func(a, b int) {
		if a != b {
			us, vs = append(us, int32(a)), append(vs, int32(b))
		}
	}
	switch c.Topology {
	case "ring":
		for i := 0; i < n; i++ {
			link(i, (i+1)%n)
		}
	case "star":
		for i := 1; i < n; i++ {
			link(0, i)
		}
	case "random":
		p := c.P
		if p <= 0 {
			p = 0.3
		}
		for i := 0; i < n; i++ {
			if i%256 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			for j := i + 1; j < n; j++ {
				if rng.Float64() < p {
					link(i, j)
				}
			}
		}
	case "small_world":
		k := max(1, c.K)
		beta := c.P
		for i := 0; i < n; i++ {
			if i%(1<<16) == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			for d := 1; d <= k; d++ {
				j := (i + d) % n
				if rng.Float64() < beta {
					j = rng.IntN(n)
				}
				link(i, j)
			}
		}
	case "scale_free":
		// Preferential attachment: node i links to m earlier nodes, each
		// drawn with probability ∝ degree + 1. pool holds every earlier
		// node once plus once per edge end, so a uniform draw from it has
		// exactly those weights (O(n·m), not O(n²·m)).
		m := max(1, c.M)
		pool := make([]int32, 0, n+2*n*m)
		pool = append(pool, 0)
		seen := map[int32]bool{}
		for i := 1; i < n; i++ {
			if i%(1<<16) == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			clear(seen)
			before := len(pool)
			for e := 0; e < min(m, i); e++ {
				j := pool[rng.IntN(len(pool))]
				if !seen[j] {
					seen[j] = true
					link(i, int(j))
					pool = append(pool, j) // j's degree grows now; i's after its round
				}
			}
			for range len(pool) - before {
				pool = append(pool, int32(i))
			}
			pool = append(pool, int32(i))
		}
	}
	return compress(ctx, n, us, vs)
}

// compress turns undirected edges into CSR (both directions, sorted,
// duplicates removed) and links isolated nodes to their successor.
func compress(ctx context.Context, n int, us, vs []int32) (*graph, error) {
	deg := make([]int32, n+1)
	for i := range us {
		deg[us[i]]++
		deg[vs[i]]++
	}
	if n > 1 {
		for i := 0; i < n; i++ {
			if deg[i] == 0 {
				j := (i + 1) % n
				us, vs = append(us, int32(i)), append(vs, int32(j))
				deg[i]++
				deg[j]++
			}
		}
	}
	g := &graph{n: n, off: make([]int32, n+1)}
	var total int64
	for i := 0; i < n; i++ {
		total += int64(deg[i])
		if total > maxEdges {
			return nil, &KeyError{"network", "more than 2^31 directed edges: use a sparser topology"}
		}
		g.off[i+1] = int32(total)
	}
	g.adj = make([]int32, total)
	fill := slices.Clone(g.off[:n])
	for i := range us {
		u, v := us[i], vs[i]
		g.adj[fill[u]] = v
		fill[u]++
		g.adj[fill[v]] = u
		fill[v]++
	}
	// sort and deduplicate each row, compacting in place
	w := int32(0)
	for i := 0; i < n; i++ {
		if i%(1<<16) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		row := g.adj[g.off[i]:g.off[i+1]]
		slices.Sort(row)
		row = slices.Compact(row)
		g.off[i] = w
		w += int32(copy(g.adj[w:], row))
	}
	g.off[n] = w
	g.adj = slices.Clip(g.adj[:w])
	return g, nil
}
