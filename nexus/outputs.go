package nexus

import (
	"slices"
	"strings"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/shadow"
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

// Sealed is the outcome of Phases 1 and 1.5: the decomposition and the
// sealed envelope. Only its hash is meant for the rest of a run; the
// criteria inside the envelope reach the judge alone.
type Sealed struct {
	Decomposition Decomposition
	Envelope      *shadow.Envelope
}

// Hash is the envelope's commitment hash ("sha256:<hex>").
func (s *Sealed) Hash() string { return s.Envelope.SealedHash }
