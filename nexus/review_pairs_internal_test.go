package nexus

import (
	"fmt"
	"testing"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/providers"
)

func reviewer(id, model string) commanders.Reviewer {
	ref, _ := providers.ParseRef(model)
	return commanders.Reviewer{Agent: commanders.Agent{ID: id, Role: commanders.RoleReviewer, Ref: ref}}
}

func TestReviewerPairsMixFamiliesWhereTheRosterAllows(t *testing.T) {
	t.Parallel()
	gpt, claude, gemini := "openai:gpt-4.1", "anthropic:claude-sonnet-4", "google:gemini-2.5-pro"
	tests := []struct {
		name      string
		models    []string
		wantPairs int
		wantMixed int // pairs of two different families
	}{
		{"ss-50 roster of two families, odd count: no same-family pair", []string{gpt, claude, gpt}, 2, 2},
		{"pairs [[a,a],[b,b]] as configured: still every pair mixed", []string{gpt, gpt, claude, claude, gpt, gpt, claude, claude}, 4, 4},
		{"three families", []string{gpt, claude, gemini, gpt, claude, gemini}, 3, 3},
		{"one family: the roster does not allow mixing", []string{gpt, "openai:gpt-4.1-mini", gpt}, 2, 0},
		{"a lone reviewer works alone", []string{gpt}, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rs []commanders.Reviewer
			for i, m := range tc.models {
				rs = append(rs, reviewer(fmt.Sprintf("reviewer-%02d", i+1), m))
			}
			pairs := reviewerPairs(rs)
			if len(pairs) != tc.wantPairs {
				t.Fatalf("%d pairs, want %d", len(pairs), tc.wantPairs)
			}
			mixed := 0
			works := map[string]bool{}
			for _, p := range pairs {
				for _, r := range p {
					works[r.Agent.ID] = true
				}
				if len(p) == 2 {
					if p[0].Agent.ID == p[1].Agent.ID {
						t.Errorf("reviewer %s paired with itself", p[0].Agent.ID)
					}
					if providers.Family(p[0].Agent.Ref) != providers.Family(p[1].Agent.Ref) {
						mixed++
					}
				}
			}
			if mixed != tc.wantMixed {
				t.Errorf("%d mixed-family pairs, want %d", mixed, tc.wantMixed)
			}
			if len(works) != len(rs) {
				t.Errorf("%d of %d reviewers work", len(works), len(rs))
			}
		})
	}
}
