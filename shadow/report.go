package shadow

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/providers"
)

// Spec versions.
const (
	SpecV2 = "2.0.0" // "Shadow Report" (default)
	SpecV1 = "1.0.0" // "Gap Report"
)

// ConformanceLevel is the Shadow Score Spec conformance level swarm claims
// for a run with hardening enabled (Level 3: sealed before work starts,
// tamper evidence, a hardening loop that shows only failure messages, and
// the initial score and velocity recorded). A run without hardening claims
// Level 2. swarm never claims Level 4: it audits family independence and
// marks weak independence advisory, but does not refuse to dispatch.
const ConformanceLevel = 3

// MaxConformanceLevel is the highest level the spec defines (Level 4:
// independence enforced).
const MaxConformanceLevel = 4

// WorkspaceIsolation is "strict": the sealed criteria are judged by a
// separate judge call from their own 0600 file and never enter any
// implementer's context or workspace, before, during or after hardening.
const WorkspaceIsolation = "strict"

// Reveal levels of progressive disclosure (spec section 4.4.1), from the
// least to the most shown to an implementer.
const (
	RevealCount     = "count"
	RevealName      = "name"
	RevealCategory  = "category"
	RevealMessage   = "message"
	RevealAssertion = "assertion"
)

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
	ShadowScore        Float    `json:"shadow_score"`
	Level              Level    `json:"level"`
	SealedHash         string   `json:"sealed_hash,omitempty"`
	ConformanceLevel   int      `json:"conformance_level,omitempty"`
	Independence       string   `json:"independence,omitempty"`
	ImplementerFamily  string   `json:"implementer_family,omitempty"`
	ImplementerModel   string   `json:"implementer_model,omitempty"`
	SealAuthorFamilies []string `json:"seal_author_families,omitempty"`
	SealAuthorModels   []string `json:"seal_author_models,omitempty"`
	WorkspaceIsolation string   `json:"workspace_isolation,omitempty"`
	Advisory           bool     `json:"advisory"`
	AdvisoryReason     string   `json:"advisory_reason,omitempty"`
	Valid              bool     `json:"x_valid"`
	// Scored is false when no judge verdicts stand behind the numbers: the
	// report then fails closed (100.0, critical, advisory), never perfect.
	Scored            bool  `json:"x_scored"`
	JudgeDisagreement Float `json:"x_judge_disagreement,omitempty"`
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

// HardeningBlock is the "hardening" object. A v1 Gap Report carries the
// four fields of the 1.0.0 schema; v2 adds velocity and the reveal level.
// Scores are absent (not 0) when the bundle was not scored; max_cycles is
// absent when hardening was off for the run.
type HardeningBlock struct {
	CyclesCompleted    int    `json:"cycles_completed"`
	MaxCycles          int    `json:"max_cycles,omitempty"`
	InitialShadowScore *Float `json:"initial_shadow_score,omitempty"`
	FinalShadowScore   *Float `json:"final_shadow_score,omitempty"`
	HardeningVelocity  *Float `json:"hardening_velocity,omitempty"`
	MaxReveal          string `json:"max_reveal,omitempty"`
	Enabled            *bool  `json:"x_enabled,omitempty"`
}

// ReportOptions are the inputs of BuildReport.
type ReportOptions struct {
	ID               string
	Timestamp        time.Time
	SpecVersion      string // "2.0.0" (default) or "1.0.0"
	Envelope         *Envelope
	Implementer      providers.Ref
	Evaluation       *Evaluation // nil when the bundle was not scored
	Hardening        *HardeningResult
	HardeningEnabled bool // hardening was on for this run
	MaxCycles        int
	// ConformanceCap is the highest conformance level the report may
	// claim (config shadow_scoring.conformance_level); it claims the lower
	// of it and what the run reaches. 0: what the run reaches.
	ConformanceCap int
	Invalid        bool   // envelope verification failed
	InvalidReason  string // why
}

func fptr(v float64) *Float { f := Float(v); return &f }

// BuildReport assembles a report. Weak independence (the seal author's model
// family equals the implementer's) and an invalid envelope make the report
// advisory with the reason; an invalid envelope is never scored. A report
// without judge verdicts behind it fails closed: shadow_score 100.0, level
// critical, advisory, x_scored false (the spec requires a number; "perfect"
// over nothing would be the one reading that is certainly wrong).
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
		if !o.HardeningEnabled {
			m.ConformanceLevel = 2
		}
		if o.ConformanceCap > 0 {
			m.ConformanceLevel = min(m.ConformanceLevel, o.ConformanceCap)
		}
		m.ImplementerFamily = providers.Family(o.Implementer)
		m.ImplementerModel = o.Implementer.String()
		m.WorkspaceIsolation = WorkspaceIsolation
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
	ev := o.Evaluation
	if o.Invalid {
		reasons = append([]string{"invalid: " + o.InvalidReason}, reasons...)
		ev = nil
	} else if ev == nil {
		reasons = append(reasons, "bundle was not scored")
	} else if ev.Total <= 0 {
		reasons = append(reasons, "no sealed criteria were judged")
		ev = nil
	}
	if ev != nil {
		m.Scored = true
		m.ShadowScore, m.Level = Float(ev.Score), ev.Level
		m.JudgeDisagreement = Float(ev.Disagreement)
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
		m.ShadowScore, m.Level = 100, LevelCritical
	}
	m.Advisory = len(reasons) > 0
	m.AdvisoryReason = strings.Join(reasons, "; ")
	h := HardeningBlock{}
	if o.MaxCycles > 0 {
		h.MaxCycles = o.MaxCycles
	}
	if ev != nil {
		h.InitialShadowScore, h.FinalShadowScore = fptr(ev.Score), fptr(ev.Score)
		if hr := o.Hardening; hr != nil {
			h.CyclesCompleted, h.InitialShadowScore, h.FinalShadowScore = hr.Cycles, fptr(hr.InitialScore), fptr(hr.FinalScore)
		}
	}
	if spec == SpecV2 {
		en := o.HardeningEnabled
		h.Enabled = &en
		// Velocity is (initial − final) / cycles: undefined, so absent,
		// when no cycle ran.
		if hr := o.Hardening; ev != nil && hr != nil && hr.Cycles > 0 {
			h.HardeningVelocity, h.MaxReveal = fptr(hr.Velocity), hr.MaxReveal
		}
	}
	r.Hardening = &h
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

// ErrSpecVersion means a report names a spec version swarm does not emit.
var ErrSpecVersion = errors.New("unsupported shadow_score_spec_version")

// ValidateReport validates an emitted report against the Shadow Score
// Spec's published schema of its version: 2.0.0 (Shadow Report) or 1.0.0
// (Gap Report). Any other version is refused.
func ValidateReport(doc []byte) error {
	var head struct {
		SpecVersion string `json:"shadow_score_spec_version"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return fmt.Errorf("not a report: %w", err)
	}
	var schema []byte
	switch head.SpecVersion {
	case SpecV2:
		schema = ReportSchemaV2
	case SpecV1:
		schema = ReportSchemaV1
	default:
		return fmt.Errorf("%w: %q (want %s or %s)", ErrSpecVersion, head.SpecVersion, SpecV2, SpecV1)
	}
	v, err := providers.CompileSchema(schema)
	if err != nil {
		return err
	}
	return v.Validate(doc)
}

// RenderMarkdown renders a report for humans. Model- and user-written
// text is passed through textsafe.Printable.
func RenderMarkdown(r Report) string {
	var b strings.Builder
	m := r.Report
	title := "Shadow Report"
	if r.SpecVersion == SpecV1 {
		title = "Gap Report"
	}
	fmt.Fprintf(&b, "# %s: %s\n\n", title, textsafe.Printable(m.ID))
	if m.Advisory {
		fmt.Fprintf(&b, "> **Advisory**: %s\n\n", textsafe.Printable(m.AdvisoryReason))
	}
	if m.Scored {
		fmt.Fprintf(&b, "**Shadow Score: %.1f%% %s (%s)** · sealed %d/%d passed\n\n", float64(m.ShadowScore), m.Level.Indicator(), m.Level, r.SealedTests.Passed, r.SealedTests.Total)
	} else {
		b.WriteString("**Shadow Score: none (not scored)** · the report's number is a fail-closed placeholder\n\n")
	}
	b.WriteString("| field | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| specification | %s |\n| timestamp | %s |\n| sealed hash | `%s` |\n", m.Specification, textsafe.Printable(m.Timestamp), textsafe.Printable(m.SealedHash))
	if r.SpecVersion == SpecV2 {
		fmt.Fprintf(&b, "| conformance | level %d |\n| workspace isolation | %s |\n| independence | %s |\n| implementer | %s (%s) |\n| seal author | %s (%s) |\n",
			m.ConformanceLevel, textsafe.Printable(m.WorkspaceIsolation), textsafe.Printable(m.Independence), textsafe.Printable(m.ImplementerModel), textsafe.Printable(m.ImplementerFamily),
			textsafe.Printable(strings.Join(m.SealAuthorModels, ", ")), textsafe.Printable(strings.Join(m.SealAuthorFamilies, ", ")))
	}
	b.WriteString("\n## Failures\n\n")
	if len(r.Failures) == 0 {
		b.WriteString("None.\n")
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "- **%s** (%s): %s\n", textsafe.Printable(f.TestName), textsafe.Printable(f.Category), textsafe.Printable(f.Message))
	}
	if h := r.Hardening; h != nil && h.InitialShadowScore != nil && h.FinalShadowScore != nil {
		fmt.Fprintf(&b, "\n## Hardening\n\n%d of %d cycles · %.1f → %.1f", h.CyclesCompleted, h.MaxCycles, float64(*h.InitialShadowScore), float64(*h.FinalShadowScore))
		if h.HardeningVelocity != nil {
			fmt.Fprintf(&b, " · velocity %.1f", float64(*h.HardeningVelocity))
		}
		if h.MaxReveal != "" {
			fmt.Fprintf(&b, " · max reveal %s", textsafe.Printable(h.MaxReveal))
		}
		b.WriteString("\n")
	}
	return b.String()
}
