package shadow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
)

// Mode is how the judge is called.
type Mode int

// Judge modes.
const (
	PerBundle    Mode = iota // one call per bundle with all criteria (default)
	PerCriterion             // one call per criterion
)

// Verdicts is the judge's structured output.
type Verdicts struct {
	Verdicts []RawVerdict `json:"verdicts" jsonschema:"minItems=1" jsonschema_description:"One verdict per criterion given, each criterion once."`
}

// SchemaDescription implements providers.Described.
func (Verdicts) SchemaDescription() string {
	return "The judge's verdicts on one deliverable against the criteria given."
}

// SchemaName implements providers.Named.
func (Verdicts) SchemaName() string { return providers.SchemaVerdicts }

// RawVerdict is one verdict as the judge writes it.
type RawVerdict struct {
	ID      string `json:"id" jsonschema:"minLength=1" jsonschema_description:"The criterion's id, exactly as given (e.g. sc-01)."`
	Status  string `json:"status" jsonschema:"enum=pass,enum=fail" jsonschema_description:"pass if the deliverable meets the criterion; fail if it does not, or if that cannot be checked from the deliverable alone."`
	Actual  string `json:"actual" jsonschema_description:"What the deliverable does contain on this point, in your own words; say so if it contains nothing."`
	Message string `json:"message" jsonschema_description:"For fail: what is missing, in your own words. Never quote the criterion's assertion or expected outcome: the message is shown to the agents that revise the deliverable. For pass: an empty string."`
}

// SchemaDescription implements providers.Described.
func (RawVerdict) SchemaDescription() string { return "The judge's verdict on one criterion." }

// Verdict is a criterion's judged outcome on one bundle.
type Verdict struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Status   string `json:"status"` // pass | fail
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	Message  string `json:"message"`
	Votes    int    `json:"votes"` // samples
	Agree    int    `json:"agree"` // samples agreeing with the majority
}

// Evaluation is one bundle judged against every criterion.
type Evaluation struct {
	BundleID     string          `json:"bundle_id"`
	Verdicts     []Verdict       `json:"verdicts"`
	Total        int             `json:"total"`
	Passed       int             `json:"passed"`
	Failed       int             `json:"failed"`
	Score        float64         `json:"shadow_score"`
	Level        Level           `json:"level"`
	Disagreement float64         `json:"disagreement"` // share of verdicts where samples disagreed
	Usage        providers.Usage `json:"usage"`
}

// BundleInput is what the judge sees of a bundle.
type BundleInput struct {
	ID          string
	Domain      string
	Content     string
	Implementer providers.Ref
}

// JudgeConfig configures the judge.
type JudgeConfig struct {
	Provider providers.Provider
	Ref      providers.Ref
	Mode     Mode
	Samples  int // self-ensemble size k (default 1)
	Seed     *int64
}

// Judge evaluates bundles against sealed criteria.
type Judge struct{ c JudgeConfig }

// NewJudge returns a judge.
func NewJudge(c JudgeConfig) *Judge {
	if c.Samples < 1 {
		c.Samples = 1
	}
	return &Judge{c: c}
}

// Ref is the judge's model.
func (j *Judge) Ref() providers.Ref { return j.c.Ref }

// Evaluate judges b against every criterion of env. It verifies the
// envelope's hash first and refuses to judge a tampered envelope.
func (j *Judge) Evaluate(ctx context.Context, env *Envelope, b BundleInput) (Evaluation, error) {
	if err := env.Verify(); err != nil {
		return Evaluation{}, err
	}
	crit := env.Criteria()
	ev := Evaluation{BundleID: b.ID, Total: len(crit)}
	groups := [][]Criterion{crit}
	if j.c.Mode == PerCriterion {
		groups = nil
		for _, c := range crit {
			groups = append(groups, []Criterion{c})
		}
	}
	votes := map[string][]RawVerdict{}
	for s := 0; s < j.c.Samples; s++ {
		for gi, g := range groups {
			vs, u, err := j.call(ctx, g, b, s, gi)
			if err != nil {
				return Evaluation{}, fmt.Errorf("judge %s on %s: %w", j.c.Ref, b.ID, err)
			}
			ev.Usage = ev.Usage.Add(u)
			for _, v := range vs {
				votes[v.ID] = append(votes[v.ID], v)
			}
		}
	}
	disagree := 0
	for _, c := range crit {
		v := majority(c, votes[c.ID], j.c.Samples)
		if v.Agree < v.Votes {
			disagree++
		}
		if v.Status == "pass" {
			ev.Passed++
		} else {
			ev.Failed++
		}
		ev.Verdicts = append(ev.Verdicts, v)
	}
	ev.Score = Score(ev.Failed, ev.Total)
	ev.Level = LevelOf(ev.Score)
	if len(crit) > 0 && j.c.Samples > 1 {
		ev.Disagreement = float64(disagree) / float64(len(crit))
	}
	return ev, nil
}

// majority combines samples; a tie or a missing verdict counts as a fail
// (a criterion is passed only when the judge says so).
func majority(c Criterion, vs []RawVerdict, samples int) Verdict {
	out := Verdict{ID: c.ID, Category: c.Category, Expected: c.Expected, Votes: samples}
	pass := 0
	var passV, failV *RawVerdict
	for i := range vs {
		if vs[i].Status == "pass" {
			pass++
			if passV == nil {
				passV = &vs[i]
			}
		} else if failV == nil {
			failV = &vs[i]
		}
	}
	fail := samples - pass
	if pass > fail {
		out.Status, out.Agree = "pass", pass
		out.Actual, out.Message = passV.Actual, ""
		return out
	}
	out.Status, out.Agree = "fail", fail
	if failV != nil {
		out.Actual, out.Message = failV.Actual, failV.Message
	} else {
		out.Message = "no verdict from the judge"
	}
	out.Message = scrub(out.Message, c)
	if out.Message == "" {
		out.Message = "criterion not met"
	}
	return out
}

// scrub removes criterion text the judge quoted in a failure message, so
// hardening feedback never reveals assertions or expected outcomes.
func scrub(msg string, c Criterion) string {
	for _, s := range []string{c.Assertion, c.Expected} {
		if len(s) >= 12 {
			msg = strings.ReplaceAll(msg, s, "[criterion text withheld]")
		}
	}
	return strings.TrimSpace(msg)
}

func (j *Judge) call(ctx context.Context, crit []Criterion, b BundleInput, sample, group int) ([]RawVerdict, providers.Usage, error) {
	lines := make([]string, len(crit))
	for i, c := range crit {
		lines[i] = fmt.Sprintf("%s%s | %s | %s | expected: %s", providers.CriterionPrefix, c.ID, c.Category, oneLine(c.Assertion), oneLine(c.Expected))
	}
	user, err := prompts.Render("judge", map[string]any{"Criteria": lines, "Bundle": b.Content, "Domain": b.Domain})
	if err != nil {
		return nil, providers.Usage{}, err
	}
	system, _ := prompts.Render("system", nil)
	req := providers.Request{
		Messages:    []providers.Message{{Role: providers.RoleSystem, Content: system}, {Role: providers.RoleUser, Content: user}},
		Caller:      providers.Caller{Role: "judge", AgentID: "judge"},
		Temperature: providers.Float(0),
	}
	if j.c.Seed != nil {
		req.Seed = providers.Int64(*j.c.Seed + int64(sample)*1000003 + int64(group))
	}
	if j.c.Samples > 1 {
		req.Temperature = providers.Float(0.7)
	}
	out, sr, err := providers.StructuredRetry[Verdicts](ctx, j.c.Provider, req, 3)
	if err != nil {
		return nil, sr.Usage(), err
	}
	want := map[string]bool{}
	for _, c := range crit {
		want[c.ID] = true
	}
	var vs []RawVerdict
	seen := map[string]bool{}
	for _, v := range out.Verdicts {
		if want[v.ID] && !seen[v.ID] {
			seen[v.ID] = true
			vs = append(vs, v)
		}
	}
	return vs, sr.Usage(), nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "|", "/")), " ")
}

func jsonIndent(v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return string(b), err
}
