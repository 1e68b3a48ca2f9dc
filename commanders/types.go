// Package commanders holds the agents below the Nexus: Commander, SquadLead,
// Worker and Reviewer, and the structured types they exchange.
//
// The depth guard is structural: a Worker has no way to spawn anything (it
// holds only a provider and a brief), a SquadLead can only run the workers
// its Commander gave it, and a Commander never creates more children than
// its Limits allow, whatever its plan says.
package commanders

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/swarm-dev/swarm/providers"
)

// Domains a mission is decomposed into, in their canonical order.
var Domains = []string{"architecture", "implementation", "testing", "documentation", "integration"}

// MaxBriefChars caps a capsule's brief.
const MaxBriefChars = 1500

// Constraints only tighten going down the hierarchy.
type Constraints struct {
	Timeout   time.Duration `json:"timeout"`
	MaxTokens int           `json:"max_tokens,omitempty"`
	FileScope []string      `json:"file_scope,omitempty"`
}

// Tighten returns the constraints a child gets: never looser than c. A
// child's timeout and token ceiling replace the parent's only when smaller;
// its file scope keeps only paths within the parent's scope (a child asking
// for files outside it keeps the parent's scope, never an open one).
func (c Constraints) Tighten(child Constraints) Constraints {
	out := c
	if child.Timeout > 0 && (c.Timeout == 0 || child.Timeout < c.Timeout) {
		out.Timeout = child.Timeout
	}
	if child.MaxTokens > 0 && (c.MaxTokens == 0 || child.MaxTokens < c.MaxTokens) {
		out.MaxTokens = child.MaxTokens
	}
	if len(child.FileScope) > 0 {
		if len(c.FileScope) == 0 {
			out.FileScope = append([]string(nil), child.FileScope...)
		} else if in := narrowScope(c.FileScope, child.FileScope); len(in) > 0 {
			out.FileScope = in
		}
	}
	return out
}

// narrowScope returns the paths of child that lie within parent's scope, and
// the paths of parent that lie within child's (the child named a broader
// directory): the intersection of the two scopes, as paths.
func narrowScope(parent, child []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(x string) {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	for _, x := range child {
		for _, p := range parent {
			if pathWithin(x, p) {
				add(x)
				break
			}
		}
	}
	for _, p := range parent {
		for _, x := range child {
			if pathWithin(p, x) {
				add(p)
				break
			}
		}
	}
	return out
}

// pathWithin reports whether path x is dir or lies under it.
func pathWithin(x, dir string) bool {
	x, dir = strings.TrimSuffix(strings.TrimSpace(x), "/"), strings.TrimSuffix(strings.TrimSpace(dir), "/")
	return x == dir || dir == "" || dir == "." || strings.HasPrefix(x, dir+"/")
}

// Capsule is the only context a commander receives.
type Capsule struct {
	ID          string      `json:"id"`
	Domain      string      `json:"domain"`
	Brief       string      `json:"brief"`
	Aspects     []string    `json:"aspects"`
	SubTasks    []SubTask   `json:"sub_tasks"`
	Constraints Constraints `json:"constraints"`
}

// Validate checks a capsule: domain known, brief non-empty and within the
// size cap, at least one aspect.
func (c Capsule) Validate() error {
	var errs []string
	if c.ID == "" {
		errs = append(errs, "id is empty")
	}
	known := false
	for _, d := range Domains {
		known = known || d == c.Domain
	}
	if !known {
		errs = append(errs, fmt.Sprintf("domain %q is not one of %s", c.Domain, strings.Join(Domains, ", ")))
	}
	if n := utf8.RuneCountInString(c.Brief); n == 0 || n > MaxBriefChars {
		errs = append(errs, fmt.Sprintf("brief has %d characters, want 1..%d", n, MaxBriefChars))
	}
	if len(c.Aspects) == 0 {
		errs = append(errs, "no aspects to cover")
	}
	if c.Constraints.Timeout <= 0 {
		errs = append(errs, "constraints.timeout must be positive")
	}
	if len(errs) > 0 {
		return fmt.Errorf("capsule %s: %s", c.ID, strings.Join(errs, "; "))
	}
	return nil
}

// SubTask is one brief of a decomposition domain.
type SubTask struct {
	BriefID     string `json:"brief_id" jsonschema:"minLength=1"`
	Title       string `json:"title" jsonschema:"minLength=1"`
	Description string `json:"description"`
}

// ShardPlan is a commander's plan for its children.
type ShardPlan struct {
	Shards []Shard `json:"shards" jsonschema:"minItems=1"`
}

// SchemaName implements providers.Named.
func (ShardPlan) SchemaName() string { return providers.SchemaShardPlan }

// Shard is one child's share of a commander's work.
type Shard struct {
	BriefID string   `json:"brief_id" jsonschema:"minLength=1"`
	Title   string   `json:"title"`
	Brief   string   `json:"brief" jsonschema:"minLength=1"`
	Aspects []string `json:"aspects"`
	// FileScope optionally narrows the files this child may touch; it can
	// only tighten the capsule's scope (Constraints.Tighten). It is set by
	// code, not by the model (it is not part of the shard plan's schema).
	FileScope []string `json:"file_scope,omitempty" jsonschema:"-"`
}

// MicroBriefs is a squad lead's split of a shard for its workers.
type MicroBriefs struct {
	Briefs []MicroBrief `json:"briefs" jsonschema:"minItems=1"`
}

// SchemaName implements providers.Named.
func (MicroBriefs) SchemaName() string { return providers.SchemaMicroBriefs }

// MicroBrief is one worker's brief under a squad lead.
type MicroBrief struct {
	BriefID string   `json:"brief_id" jsonschema:"minLength=1"`
	Brief   string   `json:"brief" jsonschema:"minLength=1"`
	Aspects []string `json:"aspects"`
}

// Atom statuses.
const (
	StatusComplete = "complete"
	StatusPartial  = "partial"
	StatusFailed   = "failed"
)

// Atom is a worker's result.
type Atom struct {
	Status     string   `json:"status" jsonschema:"enum=complete,enum=partial,enum=failed"`
	Content    string   `json:"content"`
	Confidence float64  `json:"confidence" jsonschema:"minimum=0,maximum=1"`
	Evidence   []string `json:"evidence"`
	SelfScore  float64  `json:"self_score" jsonschema:"minimum=0,maximum=10"`
}

// SchemaName implements providers.Named.
func (Atom) SchemaName() string { return providers.SchemaAtom }

// Bundle is a commander's deliverable for its domain.
type Bundle struct {
	Domain         string    `json:"domain" jsonschema:"minLength=1"`
	Status         string    `json:"status" jsonschema:"enum=complete,enum=partial,enum=failed"`
	Summary        string    `json:"summary"`
	Content        string    `json:"content"`
	Findings       []Finding `json:"findings"`
	Confidence     float64   `json:"confidence" jsonschema:"minimum=0,maximum=1"`
	Evidence       []string  `json:"evidence"`
	CoveredAspects []string  `json:"covered_aspects"`
}

// SchemaName implements providers.Named.
func (Bundle) SchemaName() string { return providers.SchemaBundle }

// Finding is one actionable item of a bundle.
type Finding struct {
	Title    string `json:"title" jsonschema:"minLength=1"`
	Detail   string `json:"detail"`
	Priority string `json:"priority" jsonschema:"enum=high,enum=medium,enum=low"`
	Effort   string `json:"effort" jsonschema:"enum=quick,enum=deep"`
}

// Text renders what a bundle delivers, for judging and review. Claims about
// itself (confidence, covered_aspects) are deliberately left out: a claim is
// not evidence.
func (b Bundle) Text() string {
	var s strings.Builder
	fmt.Fprintf(&s, "Domain: %s\nStatus: %s\n\nSummary: %s\n\n%s\n", b.Domain, b.Status, b.Summary, b.Content)
	if len(b.Findings) > 0 {
		s.WriteString("\nFindings:\n")
		for _, f := range b.Findings {
			fmt.Fprintf(&s, "- [%s/%s] %s: %s\n", f.Priority, f.Effort, f.Title, f.Detail)
		}
	}
	if len(b.Evidence) > 0 {
		s.WriteString("\nEvidence:\n")
		for _, e := range b.Evidence {
			fmt.Fprintf(&s, "- %s\n", e)
		}
	}
	return s.String()
}

// ReviewCards is one reviewer's answer about the bundles it was shown.
type ReviewCards struct {
	Reviews []ScoreCard `json:"reviews" jsonschema:"minItems=1"`
}

// SchemaName implements providers.Named.
func (ReviewCards) SchemaName() string { return providers.SchemaReview }

// ScoreCard scores one bundle on four dimensions (0-10).
type ScoreCard struct {
	BundleID           string   `json:"bundle_id" jsonschema:"minLength=1"`
	Correctness        float64  `json:"correctness" jsonschema:"minimum=0,maximum=10"`
	Completeness       float64  `json:"completeness" jsonschema:"minimum=0,maximum=10"`
	Clarity            float64  `json:"clarity" jsonschema:"minimum=0,maximum=10"`
	ConsensusAlignment float64  `json:"consensus_alignment" jsonschema:"minimum=0,maximum=10"`
	Conflicts          []string `json:"conflicts"`
	Dissent            string   `json:"dissent"`
}

// Total is the mean of the four dimensions (0-10).
func (c ScoreCard) Total() float64 {
	return (c.Correctness + c.Completeness + c.Clarity + c.ConsensusAlignment) / 4
}
