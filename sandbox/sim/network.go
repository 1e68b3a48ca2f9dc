package sim

import (
	"context"
	"math/rand/v2"
	"sort"
)

// buildNetwork returns adjacency lists over n nodes. It stops with ctx's
// error when ctx is done.
func buildNetwork(ctx context.Context, n int, c Network, rng *rand.Rand) ([][]int, error) {
	adj := make([]map[int]bool, n)
	for i := range adj {
		adj[i] = map[int]bool{}
	}
	link := func(a, b int) {
		if a != b {
			adj[a][b], adj[b][a] = true, true
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
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for j := i + 1; j < n; j++ {
				if rng.Float64() < p {
					link(i, j)
				}
			}
		}
	case "small_world":
		k := max(1, c.K)
		if k == 0 {
			k = 2
		}
		beta := c.P
		for i := 0; i < n; i++ {
			for d := 1; d <= k; d++ {
				j := (i + d) % n
				if rng.Float64() < beta {
					j = rng.IntN(n)
				}
				link(i, j)
			}
		}
	case "scale_free":
		m := max(1, c.M)
		for i := 1; i < n; i++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			// preferential attachment: pick by degree (+1)
			for e := 0; e < min(m, i); e++ {
				total := 0
				for j := 0; j < i; j++ {
					total += len(adj[j]) + 1
				}
				r := rng.IntN(total)
				for j := 0; j < i; j++ {
					r -= len(adj[j]) + 1
					if r < 0 {
						link(i, j)
						break
					}
				}
			}
		}
	default: // complete
		for i := 0; i < n; i++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for j := i + 1; j < n; j++ {
				link(i, j)
			}
		}
	}
	out := make([][]int, n)
	for i, m := range adj {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for j := range m {
			out[i] = append(out[i], j)
		}
		sort.Ints(out[i])
		if len(out[i]) == 0 && n > 1 { // no isolated nodes
			j := (i + 1) % n
			out[i] = []int{j}
			out[j] = append(out[j], i)
			sort.Ints(out[j])
		}
	}
	return out, nil
}
