package shadow

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/vocab"
)

// SealedCriteria is the seal author's structured output.
type SealedCriteria struct {
	Criteria []Criterion `json:"criteria" jsonschema:"minItems=1" jsonschema_description:"Exactly as many criteria as the Count line asks for, with ids sc-01, sc-02, ... in order, no two alike."`
}

// SchemaDescription implements providers.Described.
func (SealedCriteria) SchemaDescription() string {
	return "The sealed acceptance criteria every domain's deliverable will be judged against. The agents doing the work never see them."
}

// SchemaName implements providers.Named.
func (SealedCriteria) SchemaName() string { return vocab.SchemaSealedCriteria }

// SealConfig configures the seal author.
type SealConfig struct {
	Provider    providers.Provider
	Ref         providers.Ref
	Count       int
	Categories  []string
	MaxAttempts int // generations before giving up (default 3)
	Seed        *int64
	Now         func() time.Time
	// Checks are the mechanical checks (of Checks) sealed after the seal
	// author's criteria, numbered after them; code evaluates them from
	// each bundle's Ledger. A run with a workspace seals Checks; none
	// without one.
	Checks []string
}

// SealInput is everything the seal author may see: the mission and its
// decomposition, never any commander output.
type SealInput struct {
	Mission       string
	Decomposition any
	Aspects       []string
}

// ErrSealInvalid means the seal author could not produce valid criteria.
var ErrSealInvalid = errors.New("sealed criteria invalid")

// Seal generates the criteria with the seal author, validates them and
// commits them by hash. Invalid criteria are regenerated (with the problems
// shown to the model) up to MaxAttempts times.
func Seal(ctx context.Context, c SealConfig, in SealInput) (*Envelope, error) {
	if c.Count <= 0 {
		return nil, fmt.Errorf("%w: criteria count must be positive", ErrSealInvalid)
	}
	cats := c.Categories
	if len(cats) == 0 {
		cats = SpecCategories
	}
	attempts := c.MaxAttempts
	if attempts <= 0 {
		attempts = 3
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	decJSON, _ := jsonIndent(in.Decomposition)
	user, err := prompts.Render("seal_author", map[string]any{
		"Mission": in.Mission, "Aspects": in.Aspects, "Decomposition": decJSON,
		"CountLine":      vocab.CountPrefix + fmt.Sprint(c.Count),
		"CategoriesLine": vocab.CategoriesPrefix + strings.Join(cats, ", "),
		"Count":          c.Count,
	})
	if err != nil {
		return nil, err
	}
	system, _ := prompts.Render("system", nil)
	req := providers.Request{
		Messages: []providers.Message{{Role: providers.RoleSystem, Content: system}, {Role: providers.RoleUser, Content: user}},
		Seed:     c.Seed, Caller: providers.Caller{Role: "seal_author", AgentID: "seal-author"},
	}
	var problems []string
	for i := 0; i < attempts; i++ {
		sc, _, err := providers.StructuredRetry[SealedCriteria](ctx, c.Provider, req, 3)
		if err != nil {
			return nil, fmt.Errorf("seal author %s: %w", c.Ref, err)
		}
		for i := range sc.Criteria {
			sc.Criteria[i].Check = "" // only code seals a mechanical check
		}
		problems = ValidateCriteria(sc.Criteria, c.Count, cats)
		if len(problems) == 0 {
			all, err := WithChecks(sc.Criteria, c.Checks)
			if err != nil {
				return nil, err
			}
			return NewEnvelope(all, in.Decomposition, SealAuthor{Provider: c.Ref.Kind, Model: c.Ref.Model, Family: providers.Family(c.Ref)}, now())
		}
		b, _ := jsonIndent(sc)
		req.Messages = append(req.Messages[:2:2],
			providers.Message{Role: providers.RoleAssistant, Content: b},
			providers.Message{Role: providers.RoleUser, Content: "These criteria cannot be sealed:\n- " + strings.Join(problems, "\n- ") + "\nWrite the full set again, fixing every problem."})
		if c.Seed != nil {
			req.Seed = providers.Int64(*c.Seed + int64(i) + 1)
		}
	}
	return nil, fmt.Errorf("%w after %d attempts: %s", ErrSealInvalid, attempts, strings.Join(problems, "; "))
}

var (
	idRe    = regexp.MustCompile(`^sc-\d{2,}$`)
	vagueRe = regexp.MustCompile(`(?i)\b(should be (good|nice|fine|ok)|as appropriate|as needed|etc\.?|high[- ]quality|well[- ]designed|user[- ]friendly|robust enough|looks good)\b`)
	spaceRe = regexp.MustCompile(`\s+`)
)

// ValidateCriteria returns every problem that prevents sealing: the count,
// unique well-formed ids, categories from the list with every spec category
// present when the count allows it, binary (checkable) assertions, no
// duplicates.
func ValidateCriteria(cs []Criterion, count int, categories []string) []string {
	var p []string
	if len(cs) != count {
		p = append(p, fmt.Sprintf("%d criteria, want exactly %d", len(cs), count))
	}
	allowed := map[string]bool{}
	for _, c := range categories {
		allowed[c] = true
	}
	ids, texts, seenCat := map[string]bool{}, map[string]string{}, map[string]bool{}
	for _, c := range cs {
		switch {
		case !idRe.MatchString(c.ID):
			p = append(p, fmt.Sprintf("id %q is not of the form sc-01", c.ID))
		case ids[c.ID]:
			p = append(p, fmt.Sprintf("id %s is used twice", c.ID))
		}
		ids[c.ID] = true
		if !allowed[c.Category] {
			p = append(p, fmt.Sprintf("%s: category %q is not one of %s", c.ID, c.Category, strings.Join(categories, ", ")))
		}
		seenCat[c.Category] = true
		a := strings.TrimSpace(c.Assertion)
		if len(a) < 20 || vagueRe.MatchString(a) {
			p = append(p, fmt.Sprintf("%s: assertion is not a binary, checkable statement", c.ID))
		}
		if strings.TrimSpace(c.Expected) == "" {
			p = append(p, fmt.Sprintf("%s: expected outcome is empty", c.ID))
		}
		norm := strings.ToLower(spaceRe.ReplaceAllString(a, " "))
		if other, dup := texts[norm]; dup {
			p = append(p, fmt.Sprintf("%s duplicates %s", c.ID, other))
		}
		texts[norm] = c.ID
	}
	spec := 0
	for _, c := range SpecCategories {
		if allowed[c] {
			spec++
		}
	}
	if count >= spec {
		for _, c := range SpecCategories {
			if allowed[c] && !seenCat[c] {
				p = append(p, fmt.Sprintf("no criterion of category %s", c))
			}
		}
	}
	return p
}
