package commanders

import (
	"context"
	"fmt"

	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
)

// BundleView is a bundle as shown to reviewers and the synthesizer.
type BundleView struct {
	ID   string
	Text string
}

// Reviewer scores bundles. Reviewers work in pairs of different model
// families where the roster allows.
type Reviewer struct {
	Agent    Agent
	Settings Settings
}

// Review scores the given bundles. feedback, when set, carries the shadow
// gate's failure messages for a quarantined bundle. Cards for bundle ids the
// reviewer was not shown are dropped; bundles it skipped get no card.
func (r Reviewer) Review(ctx context.Context, aspects []string, bundles []BundleView, feedback string) (ReviewCards, providers.StructuredResult, error) {
	user, err := prompts.Render("review", map[string]any{"Aspects": aspects, "Bundles": bundles, "Feedback": feedback})
	if err != nil {
		return ReviewCards{}, providers.StructuredResult{}, err
	}
	tag := "review"
	for _, b := range bundles {
		tag += ":" + b.ID
	}
	if feedback != "" {
		tag += ":quarantine"
	}
	cards, sr, err := providers.Structured[ReviewCards](ctx, r.Agent.Provider, r.Agent.request(r.Settings, user, tag))
	if err != nil {
		return ReviewCards{}, sr, fmt.Errorf("reviewer %s: %w", r.Agent.ID, err)
	}
	shown := map[string]bool{}
	for _, b := range bundles {
		shown[b.ID] = true
	}
	kept := cards.Reviews[:0]
	seen := map[string]bool{}
	for _, c := range cards.Reviews {
		if shown[c.BundleID] && !seen[c.BundleID] {
			seen[c.BundleID] = true
			kept = append(kept, c)
		}
	}
	cards.Reviews = kept
	return cards, sr, nil
}
