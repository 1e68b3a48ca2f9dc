package shadow

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/swarm-dev/swarm/internal/textsafe"
)

// SpecTest is one test result in the spec validators' input format.
type SpecTest struct {
	Name     *string `json:"name"`
	Status   string  `json:"status"`
	Category *string `json:"category"`
	Expected *string `json:"expected"`
	Actual   *string `json:"actual"`
	Message  *string `json:"message"`
}

// SpecResults is the validators' input: {"tests": [...]}. Missing "tests"
// is an empty list.
type SpecResults struct {
	Tests []SpecTest `json:"tests"`
}

// ParseSpecResults reads validator input.
func ParseSpecResults(r io.Reader) (SpecResults, error) {
	var s SpecResults
	dec := json.NewDecoder(r)
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("not a test results document: %w", err)
	}
	return s, nil
}

// ScoreOutput is the JSON printed by `swarm shadow score`.
type ScoreOutput struct {
	SpecVersion        string                     `json:"shadow_score_spec_version"`
	Report             ScoreReport                `json:"report"`
	SealedTests        TestCounts                 `json:"sealed_tests"`
	OpenTests          *TestCounts                `json:"open_tests,omitempty"`
	Failures           []Failure                  `json:"failures"`
	CoverageComparison map[string]CategoryCompare `json:"coverage_comparison,omitempty"`
}

// ScoreReport is ScoreOutput's report object.
type ScoreReport struct {
	ShadowScore Float `json:"shadow_score"`
	Level       Level `json:"level"`
}

// CategoryCompare compares how many sealed and open tests one category has,
// as the reference validators do: delta = sealed − open.
type CategoryCompare struct {
	Sealed int `json:"sealed"`
	Open   int `json:"open"`
	Delta  int `json:"delta"`
}

func str(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

func counts(ts []SpecTest) TestCounts {
	c := TestCounts{Total: len(ts)}
	for _, t := range ts {
		if t.Status == "failed" {
			c.Failed++
		}
	}
	c.Passed = c.Total - c.Failed
	return c
}

// categoryCounts counts the tests of each spec category.
func categoryCounts(ts []SpecTest) map[string]int {
	n := map[string]int{}
	for _, t := range ts {
		n[str(t.Category, "unknown")]++
	}
	return n
}

// ErrNoTests means a results document holds no sealed tests. Scoring it
// would read "0.0% perfect" over nothing, so it is refused unless the caller
// opts in explicitly.
var ErrNoTests = errors.New("no sealed tests to score")

// ScoreSpec computes the validator output: any status other than "failed"
// counts as passed; missing names and categories become "unknown", missing
// texts "". Zero sealed tests fail closed with ErrNoTests unless allowEmpty
// is set, which scores them 0.0 (perfect) as the reference validators do.
func ScoreSpec(sealed SpecResults, open *SpecResults, allowEmpty bool) (ScoreOutput, error) {
	if len(sealed.Tests) == 0 && !allowEmpty {
		return ScoreOutput{}, ErrNoTests
	}
	c := counts(sealed.Tests)
	score := Score(c.Failed, c.Total)
	out := ScoreOutput{SpecVersion: SpecV2, Report: ScoreReport{ShadowScore: Float(score), Level: LevelOf(score)}, SealedTests: c, Failures: []Failure{}}
	for _, t := range sealed.Tests {
		if t.Status != "failed" {
			continue
		}
		out.Failures = append(out.Failures, Failure{TestName: str(t.Name, "unknown"), Category: str(t.Category, "unknown"),
			Expected: str(t.Expected, ""), Actual: str(t.Actual, ""), Message: str(t.Message, "")})
	}
	if open != nil {
		oc := counts(open.Tests)
		out.OpenTests = &oc
		s, o := categoryCounts(sealed.Tests), categoryCounts(open.Tests)
		out.CoverageComparison = map[string]CategoryCompare{}
		for _, cat := range SpecCategories {
			out.CoverageComparison[cat] = CategoryCompare{Sealed: s[cat], Open: o[cat], Delta: s[cat] - o[cat]}
		}
	}
	return out, nil
}

// Summary renders the reference validators' summary format: the score line,
// "Sealed: p/t passed", "Open:   p/t passed" (with --open; padded so the
// counts line up under Sealed's, as the reference validators print it), then
// the failures in input order. Test names and messages come from the input
// file and pass through textsafe.Printable: no escape sequence reaches the
// terminal.
func (o ScoreOutput) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Shadow Score: %.1f%% %s (%s)\n", float64(o.Report.ShadowScore), o.Report.Level.Indicator(), o.Report.Level)
	fmt.Fprintf(&b, "Sealed: %d/%d passed\n", o.SealedTests.Passed, o.SealedTests.Total)
	if o.OpenTests != nil {
		fmt.Fprintf(&b, "Open:   %d/%d passed\n", o.OpenTests.Passed, o.OpenTests.Total)
	}
	if len(o.Failures) > 0 {
		fmt.Fprintf(&b, "\nFailures (%d):\n", len(o.Failures))
		for _, f := range o.Failures {
			fmt.Fprintf(&b, "  ❌ %s: %s\n", textsafe.Printable(f.TestName), textsafe.Printable(f.Message))
		}
	}
	return b.String()
}
