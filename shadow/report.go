package shadow

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/swarm-dev/swarm/providers"
)

// Spec versions.
const (
	SpecV2 = "2.0.0" // "Shadow Report" (default)
	SpecV1 = "1.0.0" // "Gap Report"
)

// ConformanceLevel this implementation claims.
const ConformanceLevel = "L3"

//go:embed schema/shadow-report-v2.schema.json
var ReportSchemaV2 []byte

//go:embed schema/gap-report-v1.schema.json
var ReportSchemaV1 []byte

// Report is a Shadow Report (v2) or Gap Report (v1) in the spec's JSON shape.
// Provenance lives under "report", never at the root.
type Report struct {
	SpecVersion string          `json:"shadow_score_spec_version"`
	Report      ReportMeta      `json:"report"`
	SealedTests TestCounts      `json:"sealed_tests"`
	Failures    []Failure       `json:"failures"`
	Hardening   *HardeningBlock `json:"hardening,omitempty"`
}

// ReportMeta is the "report" object.
type ReportMeta struct {
	ID                 string   `json:"id"`
	Timestamp          string   `json:"timestamp"`
	Specification      string   `json:"specification"`
	ShadowScore        float64  `json:"shadow_score"`
	Level              Level    `json:"level"`
	SealedHash         string   `json:"sealed_hash,omitempty"`
	ConformanceLevel   string   `json:"conformance_level,omitempty"`
	Independence       string   `json:"independence,omitempty"`
	ImplementerFamily  string   `json:"implementer_family,omitempty"`
	ImplementerModel   string   `json:"implementer_model,omitempty"`
	SealAuthorFamilies []string `json:"seal_author_families,omitempty"`
	SealAuthorModels   []string `json:"seal_author_models,omitempty"`
	WorkspaceIsolation string   `json:"workspace_isolation,omitempty"`
	Advisory           bool     `json:"advisory"`
	AdvisoryReason     string   `json:"advisory_reason,omitempty"`
	Valid              bool     `json:"x_valid"`
	JudgeDisagreement  float64  `json:"x_judge_disagreement,omitempty"`
}

// TestCounts is the "sealed_tests" (and "open_tests") object.
type TestCounts struct {
	Total  int `json:"total"`
	Passed int `json:"passed"`
	Failed int `json:"failed"`
}

// Failure is one failed sealed test.
type Failure struct {
	TestName  string `json:"test_name"`
	Category  string `json:"category"`
	Expected  string `json:"expected"`
	Actual    string `json:"actual"`
	Message   string `json:"message"`
	XCategory string `json:"x_category,omitempty"` // a config category outside the spec enum
}

// HardeningBlock is the "hardening" object (v2 only).
type HardeningBlock struct {
	CyclesCompleted    int     `json:"cycles_completed"`
	MaxCycles          int     `json:"max_cycles"`
	InitialShadowScore float64 `json:"initial_shadow_score"`
	FinalShadowScore   float64 `json:"final_shadow_score"`
	HardeningVelocity  float64 `json:"hardening_velocity"`
	MaxReveal          int     `json:"max_reveal"`
}

// ReportOptions are the inputs of BuildReport.
type ReportOptions struct {
	ID            string
	Timestamp     time.Time
	SpecVersion   string // "2.0.0" (default) or "1.0.0"
	Envelope      *Envelope
	Implementer   providers.Ref
	Evaluation    *Evaluation // nil when the bundle was not scored
	Hardening     *HardeningResult
	MaxCycles     int
	Invalid       bool   // envelope verification failed
	InvalidReason string // why
}

// BuildReport assembles a report. Weak independence (the seal author's model
// family equals the implementer's) and an invalid envelope make the report
// advisory with the reason; an invalid envelope is never scored.
func BuildReport(o ReportOptions) Report {
	spec := o.SpecVersion
	if spec != SpecV1 {
		spec = SpecV2
	}
	r := Report{SpecVersion: spec, Failures: []Failure{}}
	m := ReportMeta{ID: o.ID, Timestamp: o.Timestamp.UTC().Format(time.RFC3339), Valid: !o.Invalid}
	if spec == SpecV1 {
		m.Specification = "Shadow Score Spec 1.0.0 (Gap Report)"
	} else {
		m.Specification = "Shadow Score Spec 2.0.0 (Shadow Report)"
	}
	var reasons []string
	if o.Envelope != nil {
		m.SealedHash = o.Envelope.SealedHash
	}
	if spec == SpecV2 {
		m.ConformanceLevel = ConformanceLevel
		m.ImplementerFamily = providers.Family(o.Implementer)
		m.ImplementerModel = o.Implementer.String()
		m.WorkspaceIsolation = "sealed envelope stored apart (0600); agents receive only its hash"
		m.Independence = "strong"
		if o.Envelope != nil {
			sa := o.Envelope.SealAuthor
			m.SealAuthorFamilies = []string{sa.Family}
			m.SealAuthorModels = []string{sa.Provider + ":" + sa.Model}
			if sa.Family == m.ImplementerFamily {
				m.Independence = "weak"
				reasons = append(reasons, fmt.Sprintf("weak independence: seal author and implementer are both of model family %q", sa.Family))
			}
		}
	}
	if o.Invalid {
		reasons = append([]string{"invalid: " + o.InvalidReason}, reasons...)
	} else if ev := o.Evaluation; ev != nil {
		m.ShadowScore, m.Level = ev.Score, ev.Level
		m.JudgeDisagreement = ev.Disagreement
		r.SealedTests = TestCounts{Total: ev.Total, Passed: ev.Passed, Failed: ev.Failed}
		for _, v := range ev.Verdicts {
			if v.Status == "pass" {
				continue
			}
			f := Failure{TestName: v.ID, Category: v.Category, Expected: v.Expected, Actual: v.Actual, Message: v.Message}
			if !isSpecCategory(f.Category) {
				f.XCategory, f.Category = f.Category, "unknown"
			}
			r.Failures = append(r.Failures, f)
		}
	} else {
		reasons = append(reasons, "bundle was not scored")
	}
	if o.Invalid || (o.Evaluation == nil) {
		m.Level = LevelOf(m.ShadowScore)
	}
	m.Advisory = len(reasons) > 0
	m.AdvisoryReason = strings.Join(reasons, "; ")
	if spec == SpecV2 {
		h := HardeningBlock{MaxCycles: o.MaxCycles}
		if o.Evaluation != nil {
			h.InitialShadowScore, h.FinalShadowScore = o.Evaluation.Score, o.Evaluation.Score
		}
		if hr := o.Hardening; hr != nil {
			h.CyclesCompleted, h.InitialShadowScore, h.FinalShadowScore = hr.Cycles, hr.InitialScore, hr.FinalScore
			h.HardeningVelocity, h.MaxReveal = hr.Velocity, hr.MaxReveal
		}
		r.Hardening = &h
	}
	r.Report = m
	return r
}

func isSpecCategory(c string) bool {
	for _, s := range SpecCategories {
		if s == c {
			return true
		}
	}
	return false
}

// ValidateReport validates an emitted report against the shipped schema of
// its spec version (its "shadow_score_spec_version"; anything but "1.0.0"
// is checked against the v2 schema, which rejects it).
func ValidateReport(doc []byte) error {
	var head struct {
		SpecVersion string `json:"shadow_score_spec_version"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return fmt.Errorf("not a report: %w", err)
	}
	schema := ReportSchemaV2
	if head.SpecVersion == SpecV1 {
		schema = ReportSchemaV1
	}
	v, err := providers.CompileSchema(schema)
	if err != nil {
		return err
	}
	return v.Validate(doc)
}

// RenderMarkdown renders a report for humans.
func RenderMarkdown(r Report) string {
	var b strings.Builder
	m := r.Report
	title := "Shadow Report"
	if r.SpecVersion == SpecV1 {
		title = "Gap Report"
	}
	fmt.Fprintf(&b, "# %s: %s\n\n", title, m.ID)
	if m.Advisory {
		fmt.Fprintf(&b, "> **Advisory**: %s\n\n", m.AdvisoryReason)
	}
	fmt.Fprintf(&b, "**Shadow Score: %.1f%% %s (%s)** · sealed %d/%d passed\n\n", m.ShadowScore, m.Level.Indicator(), m.Level, r.SealedTests.Passed, r.SealedTests.Total)
	b.WriteString("| field | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| specification | %s |\n| timestamp | %s |\n| sealed hash | `%s` |\n", m.Specification, m.Timestamp, m.SealedHash)
	if r.SpecVersion == SpecV2 {
		fmt.Fprintf(&b, "| conformance | %s |\n| independence | %s |\n| implementer | %s (%s) |\n| seal author | %s (%s) |\n",
			m.ConformanceLevel, m.Independence, m.ImplementerModel, m.ImplementerFamily, strings.Join(m.SealAuthorModels, ", "), strings.Join(m.SealAuthorFamilies, ", "))
	}
	b.WriteString("\n## Failures\n\n")
	if len(r.Failures) == 0 {
		b.WriteString("None.\n")
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "- **%s** (%s): %s\n", f.TestName, f.Category, f.Message)
	}
	if h := r.Hardening; h != nil {
		fmt.Fprintf(&b, "\n## Hardening\n\n%d of %d cycles · %.1f → %.1f · velocity %.1f · max reveal %d\n",
			h.CyclesCompleted, h.MaxCycles, h.InitialShadowScore, h.FinalShadowScore, h.HardeningVelocity, h.MaxReveal)
	}
	return b.String()
}
