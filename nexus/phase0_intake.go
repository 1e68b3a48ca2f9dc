package nexus

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/slug"
	"github.com/swarm-dev/swarm/providers"
)

// intake is Phase 0: it validates the mission and options and computes the
// plan. It makes no LLM call and writes nothing.
func intake(o Options) (Plan, error) {
	if o.Config == nil {
		return Plan{}, fmt.Errorf("%w: no configuration", config.ErrBadInput)
	}
	if err := CheckMission(o.MissionName, o.Mission, o.Config.Run.MissionLimit()); err != nil {
		return Plan{}, err
	}
	mission := strings.TrimSpace(o.Mission)
	if mission == "" {
		return Plan{}, fmt.Errorf("%w: the mission is empty", config.ErrBadInput)
	}
	if o.Replays < 0 {
		return Plan{}, fmt.Errorf("%w: replays %d is negative: want 0 (one run) or the number of runs in all", config.ErrBadInput, o.Replays)
	}
	if o.OutDir != "" {
		if err := checkOutDir(o.OutDir, o.Force); err != nil {
			return Plan{}, err
		}
	}
	scaleName := o.Scale
	if scaleName == "" {
		scaleName = o.Config.DefaultScale
	}
	scale, err := o.Config.ScaleFor(scaleName)
	if err != nil {
		return Plan{}, fmt.Errorf("%w: %v", config.ErrBadInput, err)
	}
	pname := o.Personality
	if pname == "" {
		pname = o.Config.Run.Personality
	}
	pers, ok := o.Config.Personalities[pname]
	if pname != "" && !ok {
		return Plan{}, fmt.Errorf("%w: unknown personality %q (known: %s)", config.ErrBadInput, pname, strings.Join(slices.Sorted(maps.Keys(o.Config.Personalities)), ", "))
	}
	roster, err := config.ResolveRoster(o.Config, o.Provider, o.Models)
	if err != nil {
		return Plan{}, err
	}
	if roster.Fallbacks, err = config.ResolveFallbacks(o.Config.Fallbacks, o.Fallbacks); err != nil {
		return Plan{}, err
	}
	if o.Registry != nil {
		for _, ref := range roster.Refs() {
			if !o.Registry.Has(ref.Kind) {
				return Plan{}, fmt.Errorf("%w: model %s: %v %q", config.ErrBadInput, ref, providers.ErrUnknownKind, ref.Kind)
			}
		}
	}
	seed := o.Config.Run.Seed
	if o.Seed != nil {
		seed = *o.Seed
	}
	p := Plan{Scale: scaleName, Personality: pname, Seed: seed, Roster: roster,
		Criteria: scale.SealedCriteria, CostCeilingUSD: scale.CostCeilingUSD, Reviewers: scale.Reviewers,
		Hardening: o.Config.ShadowFor(scaleName), Workspace: o.Workspace}
	refs := roster.Refs()
	for _, role := range slices.Sorted(maps.Keys(roster.Fallbacks)) {
		refs = append(refs, roster.Fallbacks[role]...)
	}
	p.Unpriced = o.Config.Unpriced(refs...)
	p.Domains = selectDomains(mission, scale.Commanders, max(1, scale.MinCommanders))
	p.Commanders = len(p.Domains)
	factor := pers.WorkerFactor
	if factor <= 0 {
		factor = 1
	}
	if scale.SquadLeadsPerCommander > 0 {
		p.ChildrenPerCmd = scale.SquadLeadsPerCommander
		p.WorkersPerLead = max(1, int(math.Round(float64(scale.WorkersPerSquadLead)*factor)))
		p.SquadLeads = p.Commanders * p.ChildrenPerCmd
		p.Workers = p.SquadLeads * p.WorkersPerLead
	} else {
		p.ChildrenPerCmd = max(1, int(math.Round(float64(scale.WorkersPerCommander)*factor)))
		p.Workers = p.Commanders * p.ChildrenPerCmd
	}
	p.Agents = 1 + p.Commanders + p.SquadLeads + p.Workers + p.Reviewers
	p.MissionTitle = missionTitle(mission)
	name := o.MissionName
	if name == "" {
		name = p.MissionTitle
	}
	slug := slug.Make(strings.TrimSuffix(filepath.Base(name), filepath.Ext(name)))
	if len(slug) > 40 {
		slug = slug[:40]
	}
	p.RunID = fmt.Sprintf("%s-%s-%s", o.clock()().UTC().Format("20060102-150405"), slug, scaleName)
	return p, nil
}

func missionTitle(m string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(m), "\n")
	line = strings.TrimSpace(strings.TrimLeft(line, "# "))
	if len(line) > 80 {
		line = line[:80]
	}
	return line
}

// briefing runs Phase 0 inside the run: the briefing event, and every
// provider of the roster built (and cached) now; open has already checked
// that each can be built.
func (r *deps) briefing() error {
	p := r.plan
	r.rec.enter(events.Phase0, "intake")
	r.rec.emit(events.Event{Phase: events.Phase0, Kind: events.Briefing, Message: p.MissionTitle, Data: events.BriefingData{
		RunID: p.RunID, Scale: p.Scale, Personality: p.Personality, Agents: p.Agents, Domains: p.Domains,
		Commanders: p.Commanders, SquadLeads: p.SquadLeads, Workers: p.Workers, Reviewers: p.Reviewers,
		Criteria: p.Criteria, CostCeilingUSD: p.CostCeilingUSD, Models: p.Roster, Seed: p.Seed, Workspace: p.Workspace,
	}})
	for _, ref := range p.Roster.Refs() {
		if _, err := r.pool.provider(ref); err != nil {
			return err
		}
	}
	r.rec.leave(events.Phase0, nil)
	return nil
}

var domainKeywords = map[string][]string{
	"architecture":   {"architecture", "design", "system", "component", "service", "schema", "migration", "scal", "boundar", "api", "model"},
	"implementation": {"implement", "code", "build", "refactor", "change", "library", "dependency", "upgrade", "migrat", "patch", "fix"},
	"testing":        {"test", "coverage", "regression", "verify", "validation", "qa", "gap", "fuzz", "edge case", "ci"},
	"documentation":  {"document", "runbook", "guide", "readme", "docs", "explain", "procedure", "playbook", "onboard"},
	"integration":    {"integrat", "deploy", "rollout", "rollback", "pipeline", "release", "compatib", "client", "third-party", "vendor", "monitor"},
}

// selectDomains picks the n most relevant domains for a mission (by keyword
// hits, ties in canonical order), at least min of them; domains with no hit
// beyond min are dropped. For n ≥ 5 all domains are returned in canonical order.
func selectDomains(mission string, n, min int) []string {
	all := commanders.Domains()
	if n >= len(all) {
		return all
	}
	lm := strings.ToLower(mission)
	type scored struct {
		name  string
		score int
		order int
	}
	var ss []scored
	for i, d := range all {
		s := 0
		for _, k := range domainKeywords[d] {
			s += strings.Count(lm, k)
		}
		ss = append(ss, scored{d, s, i})
	}
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].score > ss[j].score })
	var out []string
	for i := 0; i < n && i < len(ss); i++ {
		if i >= min && ss[i].score == 0 {
			break
		}
		out = append(out, ss[i].name)
	}
	// Keep canonical order for stable output.
	sort.SliceStable(out, func(i, j int) bool { return slices.Index(all, out[i]) < slices.Index(all, out[j]) })
	return out
}
