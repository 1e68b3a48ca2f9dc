package nexus

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/vocab"
)

// Decomposition is Phase 1's structured output.
type Decomposition struct {
	MissionSummary string   `json:"mission_summary" jsonschema_description:"The mission restated in two or three sentences."`
	Domains        []Domain `json:"domains" jsonschema:"minItems=1" jsonschema_description:"One entry per domain on the Domains line, each domain once."`
	Aspects        []string `json:"aspects" jsonschema:"minItems=1" jsonschema_description:"What the whole mission must cover: 5 to 12 short, distinctive noun phrases taken from the mission, which a reader could check a deliverable for."`
}

// SchemaDescription implements providers.Described.
func (Decomposition) SchemaDescription() string {
	return "The decomposition of a mission into domains, their sub-tasks, and the aspects the mission must cover."
}

// SchemaName implements providers.Named.
func (Decomposition) SchemaName() string { return vocab.SchemaDecomposition }

// clone returns a deep copy, so a run can normalise a preset decomposition
// that other runs (compare's parallel contenders, replays) use too.
func (d Decomposition) clone() Decomposition {
	d.Aspects = slices.Clone(d.Aspects)
	d.Domains = slices.Clone(d.Domains)
	for i := range d.Domains {
		d.Domains[i].Aspects = slices.Clone(d.Domains[i].Aspects)
		d.Domains[i].SubTasks = slices.Clone(d.Domains[i].SubTasks)
	}
	return d
}

// Domain is one decomposed domain.
type Domain struct {
	Name     string               `json:"name" jsonschema:"minLength=1" jsonschema_description:"The domain's name, exactly as on the Domains line (e.g. testing)."`
	Summary  string               `json:"summary" jsonschema_description:"What this domain must achieve for the mission, in one or two sentences."`
	SubTasks []commanders.SubTask `json:"sub_tasks" jsonschema_description:"Exactly as many sub-tasks as the Count line asks for."`
	Aspects  []string             `json:"aspects" jsonschema_description:"The aspects (from the mission's aspects) most relevant to this domain."`
	// FileScope optionally limits the files the domain's agents may touch
	// within Options.FileScope; it becomes the capsule's constraint and only
	// narrows going down. It is set by code (a Preset), not by the model: it
	// is not part of the decomposition's schema.
	FileScope []string `json:"file_scope,omitempty" jsonschema:"-"`
}

// SchemaDescription implements providers.Described.
func (Domain) SchemaDescription() string { return "One domain of the mission." }

// Synthesis is the synthesizer's structured output (Phase 7).
type Synthesis struct {
	Summary   string     `json:"summary" jsonschema_description:"What the deliverables amount to for the mission, in a short paragraph."`
	TopAction string     `json:"top_action" jsonschema_description:"The single most important action to take next, in one sentence."`
	QuickWins []string   `json:"quick_wins" jsonschema_description:"Small actions that can be taken right away, one item each."`
	DeepWork  []string   `json:"deep_work" jsonschema_description:"Actions that need substantial work, one item each."`
	Risks     []Risk     `json:"risks" jsonschema_description:"The risk of each domain, one entry per domain."`
	Conflicts []Conflict `json:"conflicts" jsonschema_description:"Disagreements between bundles and how each is resolved. Empty if none."`
	Gaps      []string   `json:"gaps" jsonschema_description:"What the mission needs that no bundle covers, one item each. Empty if none."`
}

// SchemaDescription implements providers.Described.
func (Synthesis) SchemaDescription() string {
	return "The action report's parts, written from the bundles that passed the shadow gate."
}

// SchemaName implements providers.Named.
func (Synthesis) SchemaName() string { return vocab.SchemaSynthesis }

// Risk is a domain's risk level.
type Risk struct {
	Domain string `json:"domain" jsonschema_description:"The domain's name (e.g. testing)."`
	Level  string `json:"level" jsonschema:"enum=low,enum=medium,enum=high,enum=critical" jsonschema_description:"The domain's risk level: low, medium, high or critical."`
	Note   string `json:"note" jsonschema_description:"Why the risk is at this level, in one sentence."`
}

// SchemaDescription implements providers.Described.
func (Risk) SchemaDescription() string { return "One domain's risk level." }

// Conflict is a disagreement between bundles and how it was resolved.
type Conflict struct {
	Topic      string `json:"topic" jsonschema_description:"What the bundles disagree about, naming the bundles."`
	Resolution string `json:"resolution" jsonschema_description:"How the disagreement is resolved: which position to follow, and why."`
}

// SchemaDescription implements providers.Described.
func (Conflict) SchemaDescription() string {
	return "A disagreement between bundles and its resolution."
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

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		x = strings.TrimSpace(x)
		k := strings.ToLower(x)
		if x == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, x)
	}
	return out
}

// decompose runs Phase 1: the nexus splits the mission into the plan's
// domains (or the preset's decomposition is reused, with no LLM call).
func (r *runState) decompose(ctx context.Context) (Decomposition, error) {
	p := r.plan
	settings := r.settings()
	r.followUpEvent()
	r.rec.enter(events.Phase1, "decomposition")
	var dec Decomposition
	if pre := r.preset; pre != nil {
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
