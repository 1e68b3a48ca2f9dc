package nexus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Cross-review pairs depend on which bundles exist, never on the order
// they arrived in: each bundle with the next existing one in domain order,
// the ring closed by the last with the first (three or more), a pair
// handed out as soon as both exist and everything between them is known.
func TestReviewRingPairsByDomainOrderWhateverTheArrival(t *testing.T) {
	t.Parallel()
	type ev struct {
		i  int
		ok bool
	}
	tests := []struct {
		name   string
		n      int
		events []ev
		want   [][][2]int // pairs handed out after each event, then at close
	}{
		{"in order: each pair as soon as its second bundle exists", 4, []ev{{0, true}, {1, true}, {2, true}, {3, true}},
			[][][2]int{nil, {{0, 1}}, {{1, 2}}, {{2, 3}}, {{3, 0}}}},
		{"reverse arrival: the same pairs", 4, []ev{{3, true}, {2, true}, {1, true}, {0, true}},
			[][][2]int{nil, {{2, 3}}, {{1, 2}}, {{0, 1}}, {{3, 0}}}},
		{"a failed bundle is skipped: 0 pairs with 2 once 1 is known failed", 4, []ev{{0, true}, {2, true}, {1, false}, {3, true}},
			[][][2]int{nil, nil, {{0, 2}}, {{2, 3}}, {{3, 0}}}},
		{"two bundles: one pair, no ring", 3, []ev{{1, true}, {0, false}, {2, true}},
			[][][2]int{nil, nil, {{1, 2}}, nil}},
		{"a bundle never reported counts as failed at close", 3, []ev{{0, true}, {2, true}},
			[][][2]int{nil, nil, {{0, 2}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newReviewRing(tc.n)
			var got [][][2]int
			for _, e := range tc.events {
				g.known(e.i, e.ok)
				got = append(got, g.ready())
			}
			got = append(got, g.close())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pairs (-want +got):\n%s", diff)
			}
		})
	}
}
