package nexus

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/vocab"
)

// normalise checks a decomposition against the requested domains: unknown
// domains are dropped, missing ones added with the mission summary, duplicate
// and empty aspects removed.
func (d *Decomposition) normalise(domains []string) error {
	byName := map[string]Domain{}
	for _, dom := range d.Domains {
		name := strings.ToLower(strings.TrimSpace(dom.Name))
		if slices.Index(domains, name) >= 0 {
			if _, dup := byName[name]; !dup {
				dom.Name = name
				byName[name] = dom
			}
		}
	}
	d.Aspects = dedupe(d.Aspects)
	if len(d.Aspects) == 0 {
		for _, dom := range d.Domains {
			d.Aspects = append(d.Aspects, dom.Aspects...)
		}
		d.Aspects = dedupe(d.Aspects)
	}
	if len(d.Aspects) == 0 {
		return fmt.Errorf("decomposition names no aspects to cover")
	}
	d.Domains = d.Domains[:0]
	for _, name := range domains {
		dom, ok := byName[name]
		if !ok {
			dom = Domain{Name: name, Summary: d.MissionSummary}
		}
		dom.Aspects = dedupe(dom.Aspects)
		d.Domains = append(d.Domains, dom)
	}
	return nil
}

// decompose runs Phase 1: the nexus splits the mission into the plan's
// domains (or preset's decomposition is reused, with no LLM call).
func (r *deps) decompose(ctx context.Context, preset *Sealed) (Decomposition, error) {
	p := r.plan
	settings := r.settings()
	r.followUpEvent()
	r.rec.enter(events.Phase1, "decomposition")
	var dec Decomposition
	if pre := preset; pre != nil {
		dec = pre.Decomposition.clone()
	} else {
		nexus, err := r.agent(commanders.RoleNexus, "nexus", p.Roster.Nexus)
		if err != nil {
			return Decomposition{}, err
		}
		user, err := prompts.Render("decomposition", map[string]any{
			"Mission": r.opts.Mission, "Scale": p.Scale,
			"DomainsLine": vocab.DomainsPrefix + strings.Join(p.Domains, ", "),
			"CountLine":   vocab.CountPrefix + fmt.Sprint(min(p.ChildrenPerCmd, 5)),
			"Previous":    r.priorBlock(), // a follow-up's previous-run block; "" renders nothing
		})
		if err != nil {
			return Decomposition{}, err
		}
		dec, _, err = providers.StructuredRetry[Decomposition](ctx, nexus.Provider, agentRequest(nexus, settings, user, "decomposition"), 3)
		if err != nil {
			return Decomposition{}, fmt.Errorf("phase 1 decomposition: %w", err)
		}
	}
	if err := dec.normalise(p.Domains); err != nil {
		return Decomposition{}, fmt.Errorf("phase 1 decomposition: %w", err)
	}
	_ = r.dir.WriteJSON(runfiles.DecompositionFile, dec)
	r.rec.leave(events.Phase1, events.Phase1End{Domains: len(dec.Domains), Aspects: len(dec.Aspects)})
	return dec, nil
}
