package nexus

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/vocab"
)

// buildCapsule makes a domain's context capsule: the only context its
// commander receives. The brief is capped at commanders.MaxBriefChars; a
// follow-up's previous-run block (prior, "" for none) ends it, and the
// part before it is cut to leave it room.
func buildCapsule(d Decomposition, dom Domain, c commanders.Constraints, prior string) commanders.Capsule {
	var b strings.Builder
	fmt.Fprintf(&b, "Mission: %s\n", d.MissionSummary)
	fmt.Fprintf(&b, "%s%s. %s\n", vocab.DomainPrefix, dom.Name, dom.Summary)
	if len(dom.SubTasks) > 0 {
		b.WriteString("Sub-tasks:\n")
		for _, t := range dom.SubTasks {
			fmt.Fprintf(&b, "- %s %s: %s\n", t.BriefID, t.Title, t.Description)
		}
	}
	brief := b.String()
	limit := commanders.MaxBriefChars
	if prior != "" {
		limit -= utf8.RuneCountInString(prior) + 1
	}
	if r := []rune(brief); len(r) > limit {
		brief = string(r[:limit-1]) + "…"
	}
	if prior != "" {
		brief += "\n" + prior
	}
	// Every capsule carries the mission's aspects: each bundle is judged
	// against every sealed criterion, so each domain must address them from
	// its own angle. Domain-specific aspects come first.
	return commanders.Capsule{
		ID: "capsule-" + dom.Name, Domain: dom.Name, Brief: brief,
		Aspects:  dedupe(append(append([]string(nil), dom.Aspects...), d.Aspects...)),
		SubTasks: dom.SubTasks, Constraints: c.Tighten(commanders.Constraints{FileScope: dom.FileScope}),
	}
}

// capsules runs Phase 2: one context capsule per domain, the only context a
// commander gets.
func (r *deps) capsules(dec Decomposition, scale config.Scale) ([]commanders.Capsule, error) {
	r.rec.enter(events.Phase2, "context capsules")
	cons := commanders.Constraints{Timeout: r.scaled(scale.Timeouts.Commander), MaxTokens: r.cfg.Run.MaxTokens[commanders.RoleCommander],
		FileScope: r.opts.FileScope}
	var capsules []commanders.Capsule
	for _, dom := range dec.Domains {
		c := buildCapsule(dec, dom, cons, r.priorBlock())
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("phase 2: %w", err)
		}
		capsules = append(capsules, c)
		_ = r.dir.WriteJSON("capsules/"+dom.Name+".json", c)
	}
	r.rec.leave(events.Phase2, events.Phase2End{Capsules: len(capsules)})
	return capsules, nil
}
