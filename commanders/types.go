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
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/vocab"
)

// domains a mission is decomposed into, in their canonical order.
var domains = [...]string{"architecture", "implementation", "testing", "documentation", "integration"}

// Domains returns the domains a mission is decomposed into, in their
// canonical order. The slice is the caller's.
func Domains() []string { return slices.Clone(domains[:]) }

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
	for _, d := range domains {
		known = known || d == c.Domain
	}
	if !known {
		errs = append(errs, fmt.Sprintf("domain %q is not one of %s", c.Domain, strings.Join(domains[:], ", ")))
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
	BriefID     string `json:"brief_id" jsonschema:"minLength=1" jsonschema_description:"Unique id of the sub-task: the domain name, a hyphen and a two-digit number (testing-01, testing-02, ...)."`
	Title       string `json:"title" jsonschema:"minLength=1" jsonschema_description:"Short title of the sub-task, a few words."`
	Description string `json:"description" jsonschema_description:"One paragraph saying what the sub-task must deliver."`
}

// SchemaDescription implements providers.Described.
func (SubTask) SchemaDescription() string {
	return "One sub-task of a domain: a brief its commander can hand to one of its agents."
}

// ShardPlan is a commander's plan for its children.
type ShardPlan struct {
	Shards []Shard `json:"shards" jsonschema:"minItems=1" jsonschema_description:"The shards: exactly as many as the Count line asks for, one per child, together covering every aspect of the brief."`
}

// SchemaDescription implements providers.Described.
func (ShardPlan) SchemaDescription() string {
	return "A commander's plan: its brief split into shards, one per child (worker or squad lead)."
}

// SchemaName implements providers.Named.
func (ShardPlan) SchemaName() string { return vocab.SchemaShardPlan }

// Shard is one child's share of a commander's work.
type Shard struct {
	BriefID string   `json:"brief_id" jsonschema:"minLength=1" jsonschema_description:"Id of the shard, unique within the plan: the domain name, a hyphen and a two-digit number (testing-01, testing-02, ...)."`
	Title   string   `json:"title" jsonschema_description:"Short title of the shard, a few words."`
	Brief   string   `json:"brief" jsonschema:"minLength=1" jsonschema_description:"Self-contained instructions for one child: what to produce, with enough context to do it without seeing the rest of the plan."`
	Aspects []string `json:"aspects" jsonschema_description:"The aspects this shard covers, copied verbatim from the Aspects line."`
	// FileScope optionally narrows the files this child may touch; it can
	// only tighten the capsule's scope (Constraints.Tighten). It is set by
	// code, not by the model (it is not part of the shard plan's schema).
	FileScope []string `json:"file_scope,omitempty" jsonschema:"-"`
}

// SchemaDescription implements providers.Described.
func (Shard) SchemaDescription() string { return "One child's share of the commander's work." }

// MicroBriefs is a squad lead's split of a shard for its workers.
type MicroBriefs struct {
	Briefs []MicroBrief `json:"briefs" jsonschema:"minItems=1" jsonschema_description:"The micro-briefs: exactly as many as the Count line asks for, one per worker, together covering every aspect of the shard."`
}

// SchemaDescription implements providers.Described.
func (MicroBriefs) SchemaDescription() string {
	return "A squad lead's split of its shard into micro-briefs, one per worker."
}

// SchemaName implements providers.Named.
func (MicroBriefs) SchemaName() string { return vocab.SchemaMicroBriefs }

// MicroBrief is one worker's brief under a squad lead.
type MicroBrief struct {
	BriefID string   `json:"brief_id" jsonschema:"minLength=1" jsonschema_description:"Id of the micro-brief, unique within the split: the shard id, a hyphen and a two-digit number (e.g. testing-01-02)."`
	Brief   string   `json:"brief" jsonschema:"minLength=1" jsonschema_description:"Self-contained instructions for one worker: what to produce, with enough context to do it alone."`
	Aspects []string `json:"aspects" jsonschema_description:"The aspects this micro-brief covers, copied verbatim from the Aspects line."`
}

// SchemaDescription implements providers.Described.
func (MicroBrief) SchemaDescription() string { return "One worker's brief." }

// Atom statuses.
const (
	StatusComplete = "complete"
	StatusPartial  = "partial"
	StatusFailed   = "failed"
)

// Atom is a worker's result.
type Atom struct {
	Status     string              `json:"status" jsonschema:"enum=complete,enum=partial,enum=failed" jsonschema_description:"complete: the brief is fully done; partial: done in part (the content says what is missing); failed: nothing usable was produced."`
	Content    string              `json:"content" jsonschema_description:"The result itself: concrete and actionable, naming every aspect it addresses."`
	Confidence float64             `json:"confidence" jsonschema:"minimum=0,maximum=1" jsonschema_description:"How sure you are that the content is correct and complete, from 0 (not at all) to 1 (certain)."`
	Evidence   []citation.Citation `json:"evidence" jsonschema_description:"The workspace lines the result rests on, one citation each, quoted exactly as read_file showed them. Empty if none (and always empty when there is no workspace to read)."`
	SelfScore  float64             `json:"self_score" jsonschema:"minimum=0,maximum=10" jsonschema_description:"Your own rating of the result's overall quality, from 0 (useless) to 10 (excellent)."`
}

// SchemaDescription implements providers.Described.
func (Atom) SchemaDescription() string { return "A worker's result for its brief (a result atom)." }

// SchemaName implements providers.Named.
func (Atom) SchemaName() string { return vocab.SchemaAtom }

// Bundle is a commander's deliverable for its domain.
type Bundle struct {
	Domain         string              `json:"domain" jsonschema:"minLength=1" jsonschema_description:"The domain this bundle delivers, as named in the instructions (e.g. testing)."`
	Status         string              `json:"status" jsonschema:"enum=complete,enum=partial,enum=failed" jsonschema_description:"complete: the domain's brief is fully delivered; partial: delivered in part; failed: nothing usable."`
	Summary        string              `json:"summary" jsonschema_description:"A few sentences summarising the deliverable."`
	Content        string              `json:"content" jsonschema_description:"The full deliverable: concrete and actionable, naming every aspect it covers. This is what is judged."`
	Findings       []Finding           `json:"findings" jsonschema_description:"The actionable items the deliverable identifies. Empty if none."`
	Confidence     float64             `json:"confidence" jsonschema:"minimum=0,maximum=1" jsonschema_description:"How sure you are that the bundle is correct and complete, from 0 (not at all) to 1 (certain)."`
	Evidence       []citation.Citation `json:"evidence" jsonschema_description:"The workspace lines the deliverable as a whole rests on, one citation each, quoted exactly. Empty if none (and always empty when there is no workspace to read)."`
	CoveredAspects []string            `json:"covered_aspects" jsonschema_description:"The aspects from the Aspects line that the content actually covers, copied verbatim."`
}

// SchemaDescription implements providers.Described.
func (Bundle) SchemaDescription() string {
	return "A commander's deliverable for its domain, assembled from its workers' results."
}

// SchemaName implements providers.Named.
func (Bundle) SchemaName() string { return vocab.SchemaBundle }

// Finding is one actionable item of a bundle.
type Finding struct {
	Title    string              `json:"title" jsonschema:"minLength=1" jsonschema_description:"Short imperative title of the item."`
	Detail   string              `json:"detail" jsonschema_description:"What to do and why, specific enough to act on."`
	Priority string              `json:"priority" jsonschema:"enum=high,enum=medium,enum=low" jsonschema_description:"How much the item matters: high, medium or low."`
	Effort   string              `json:"effort" jsonschema:"enum=quick,enum=deep" jsonschema_description:"quick: a small change that can be made right away (a quick win); deep: substantial work."`
	Evidence []citation.Citation `json:"evidence" jsonschema_description:"The workspace lines this item is about or rests on, one citation each, quoted exactly as read_file showed them. Empty if none (and always empty when there is no workspace to read)."`
}

// SchemaDescription implements providers.Described.
func (Finding) SchemaDescription() string { return "One actionable item of a bundle." }

// Text renders what a bundle delivers, for judging and review. Claims about
// itself (confidence, covered_aspects) are deliberately left out: a claim is
// not evidence.
func (b Bundle) Text() string { return b.TextWith(TextMarks{}) }

// TextMarks annotates a bundle's text (TextWith) with lines code writes
// between the agent's: the judge's ledger in a run with a workspace. Each
// func may be nil (no such line).
type TextMarks struct {
	// Escape rewrites every piece of agent-written text (nil: as written).
	Escape func(string) string
	// Finding is the line before finding i (from 0); Citation the line
	// after its citation j; FindingsEnd the line after the findings;
	// Evidence the line after the bundle's own citation i.
	Finding     func(i int) string
	Citation    func(i, j int) string
	FindingsEnd func() string
	Evidence    func(i int) string
}

// TextWith renders the bundle as Text does, with m's lines among the
// agent's: without marks it is Text.
func (b Bundle) TextWith(m TextMarks) string {
	e := m.Escape
	if e == nil {
		e = func(s string) string { return s }
	}
	var s strings.Builder
	fmt.Fprintf(&s, vocab.BundleDomainPrefix+"%s\nStatus: %s\n\nSummary: %s\n\n%s\n", e(b.Domain), e(b.Status), e(b.Summary), e(b.Content))
	if len(b.Findings) > 0 {
		s.WriteString("\nFindings:\n")
		for i, f := range b.Findings {
			if m.Finding != nil {
				s.WriteString(m.Finding(i) + "\n")
			}
			fmt.Fprintf(&s, vocab.FindingPrefix+"%s/%s] %s: %s\n", e(f.Priority), e(f.Effort), e(f.Title), e(f.Detail))
			for j, c := range f.Evidence {
				fmt.Fprintf(&s, "  - cites %s\n", e(citationText(c)))
				if m.Citation != nil {
					s.WriteString("    " + m.Citation(i, j) + "\n")
				}
			}
		}
		if m.FindingsEnd != nil {
			s.WriteString(m.FindingsEnd() + "\n")
		}
	}
	if len(b.Evidence) > 0 {
		s.WriteString("\nEvidence:\n")
		for i, c := range b.Evidence {
			fmt.Fprintf(&s, "- %s\n", e(citationText(c)))
			if m.Evidence != nil {
				s.WriteString("  " + m.Evidence(i) + "\n")
			}
		}
	}
	return s.String()
}

// citationText renders a citation on one line: path:start-end "quote".
func citationText(c citation.Citation) string {
	return fmt.Sprintf("%s %q", c.Ref(), c.Quote)
}

// ReviewCards is one reviewer's answer about the bundles it was shown.
type ReviewCards struct {
	Reviews []ScoreCard `json:"reviews" jsonschema:"minItems=1" jsonschema_description:"One score card per bundle shown, each bundle at most once."`
}

// SchemaDescription implements providers.Described.
func (ReviewCards) SchemaDescription() string {
	return "A cross-reviewer's score cards for the bundles it was shown."
}

// SchemaName implements providers.Named.
func (ReviewCards) SchemaName() string { return vocab.SchemaReview }

// ScoreCard scores one bundle on four dimensions (0-10).
type ScoreCard struct {
	BundleID           string   `json:"bundle_id" jsonschema:"minLength=1" jsonschema_description:"The id of the bundle scored, exactly as given on its Bundle: line."`
	Correctness        float64  `json:"correctness" jsonschema:"minimum=0,maximum=10" jsonschema_description:"Whether the bundle's claims and instructions are right, from 0 (mostly wrong) to 10 (fully correct)."`
	Completeness       float64  `json:"completeness" jsonschema:"minimum=0,maximum=10" jsonschema_description:"How much of the mission's aspects (the Aspects line) the bundle covers, from 0 (none) to 10 (all)."`
	Clarity            float64  `json:"clarity" jsonschema:"minimum=0,maximum=10" jsonschema_description:"How clear and actionable the bundle is, from 0 (unusable) to 10 (ready to act on)."`
	ConsensusAlignment float64  `json:"consensus_alignment" jsonschema:"minimum=0,maximum=10" jsonschema_description:"How far the bundle agrees with the other bundles shown, from 0 (contradicts them) to 10 (fully consistent)."`
	Conflicts          []string `json:"conflicts" jsonschema_description:"Points where this bundle contradicts another bundle shown, one item each, naming that bundle. Empty if none."`
	Dissent            string   `json:"dissent" jsonschema_description:"Your disagreement with the bundle that the scores do not capture, in a sentence or two. Empty string if none."`
}

// SchemaDescription implements providers.Described.
func (ScoreCard) SchemaDescription() string {
	return "One bundle's scores on four dimensions, each from 0 (worst) to 10 (best)."
}

// Total is the mean of the four dimensions (0-10).
func (c ScoreCard) Total() float64 {
	return (c.Correctness + c.Completeness + c.Clarity + c.ConsensusAlignment) / 4
}
