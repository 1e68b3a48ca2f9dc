package shadow

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/vocab"
	"github.com/swarm-dev/swarm/workspace"
)

// forbidden are the words no text shown to a commander may carry: they
// would tell it that a seal and a judge stand behind the feedback.
var forbidden = regexp.MustCompile(`(?i)\bseal(ed|s)?\b|\bcriteri(on|a)\b|shadow score|protocol`)

// withChecks is criteria() (four judged criteria) and the three mechanical
// checks (sc-05, sc-06, sc-07).
func withChecks(t *testing.T) *Envelope {
	t.Helper()
	cs, err := WithChecks(criteria(), Checks)
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnvelope(cs, "d", SealAuthor{Family: "x"}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func ck(path string, s workspace.State, reason string) workspace.Check {
	return workspace.Check{Citation: citation.Citation{Path: path, StartLine: 3, EndLine: 5, Quote: "q"}, State: s, Reason: reason}
}

var (
	verified   = ck("auth/session.go", workspace.Verified, "")
	fabricated = ck("ghost.go", workspace.Fabricated, "ghost.go: not found")
	unverif    = ck(".env", workspace.Unverifiable, "denied")
)

// A clean ledger: every finding supported, nothing fabricated, every
// sub-task finished.
func cleanLedger() *Ledger {
	return &Ledger{
		Findings: []FindingLedger{{Title: "Compare signatures in constant time", Checks: []workspace.Check{verified, unverif}}},
		Evidence: []workspace.Check{verified},
		SubTasks: []SubTask{{ID: "security-01", Finished: true}},
	}
}

func TestWithChecksNumbersAfterTheAuthorsCriteria(t *testing.T) {
	t.Parallel()
	cs, err := WithChecks(criteria(), Checks)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs[4:] {
		got = append(got, c.ID+" "+c.Category+" "+c.Check)
	}
	want := []string{"sc-05 evidence findings_supported", "sc-06 evidence no_fabricated_citation", "sc-07 completeness subtasks_finished"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mechanical criteria (-want +got)\n%s", d)
	}
	if _, err := WithChecks(criteria(), []string{"vibes"}); !errors.Is(err, ErrUnknownCheck) {
		t.Errorf("unknown kind: err = %v, want ErrUnknownCheck", err)
	}
}

// The mechanical checks are part of the commitment: the hash covers the
// check field, an envelope without checks hashes as before (no "check"
// key at all), and a stored envelope whose check was edited or names an
// unknown kind does not verify.
func TestMechanicalChecksAreInTheHash(t *testing.T) {
	t.Parallel()
	plain, _ := NewEnvelope(criteria(), "d", SealAuthor{}, time.Unix(0, 0))
	b, _ := json.Marshal(criteria())
	if strings.Contains(string(b), `"check"`) {
		t.Fatalf("a judged criterion encodes a check key: %s", b)
	}
	if want, _ := HashJSON(b); plain.SealedHash != want {
		t.Errorf("plain envelope hash %s, want %s (the criteria's JSON as before)", plain.SealedHash, want)
	}
	env := withChecks(t)
	if env.SealedHash == plain.SealedHash || env.CriteriaCount != 7 || env.Mechanical() != 3 {
		t.Fatalf("envelope with checks: hash %s (plain %s), %d criteria, %d mechanical", env.SealedHash, plain.SealedHash, env.CriteriaCount, env.Mechanical())
	}
	path := filepath.Join(t.TempDir(), "envelope.json")
	if err := WriteSealed(path, env); err != nil {
		t.Fatal(err)
	}
	stored, _ := os.ReadFile(path)
	loaded, err := LoadSealed(path)
	if err != nil || loaded.Verify() != nil || loaded.Mechanical() != 3 {
		t.Fatalf("stored envelope with checks does not load and verify: %v", err)
	}
	cases := []struct {
		name, from, to string
		want           error
	}{
		{"a check turned off by removing its kind (now a judged criterion)", `"check": "subtasks_finished"`, `"check": ""`, ErrTampered},
		{"a check swapped for another", `"check": "no_fabricated_citation"`, `"check": "findings_supported"`, ErrTampered},
		{"a kind this version does not know", `"check": "subtasks_finished"`, `"check": "vibes"`, ErrUnknownCheck},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(string(stored), c.from) {
				t.Fatalf("%s not in the stored envelope", c.from)
			}
			if err := os.WriteFile(path, []byte(strings.Replace(string(stored), c.from, c.to, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			e, err := LoadSealed(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Verify(); !errors.Is(err, c.want) {
				t.Errorf("Verify = %v, want %v", err, c.want)
			}
		})
	}
}

func TestCheckVerdicts(t *testing.T) {
	t.Parallel()
	env := withChecks(t)
	crit := env.sealedCriteria()[4:]
	type out struct{ Findings, Fabricated, SubTasks string }
	msg := func(l *Ledger) out {
		var o [3]string
		for i, c := range crit {
			v := checkVerdict(c, l, 1)
			if v.Status == "pass" {
				o[i] = "pass: " + v.Actual
			} else {
				o[i] = v.Message
			}
			if v.Check != c.Check || v.Category != c.Category || v.Votes != 1 || v.Agree != 1 {
				t.Errorf("%s: verdict %+v", c.ID, v)
			}
			if forbidden.MatchString(v.Message) || forbidden.MatchString(v.Actual) {
				t.Errorf("%s: a forbidden word in %q / %q", c.ID, v.Message, v.Actual)
			}
			if Restates(v.Message, c.Assertion) || Restates(v.Message, c.Expected) {
				t.Errorf("%s: message %q restates the criterion", c.ID, v.Message)
			}
		}
		return out{o[0], o[1], o[2]}
	}
	many := &Ledger{SubTasks: []SubTask{{ID: "s-01", Finished: true}}}
	for i := range 7 {
		many.Findings = append(many.Findings, FindingLedger{Title: "Finding " + string(rune('A'+i)), Checks: []workspace.Check{fabricated}})
	}
	cases := []struct {
		name   string
		ledger *Ledger
		want   out
	}{
		{"every finding verified, nothing fabricated, every sub-task finished: all pass", cleanLedger(), out{
			"pass: 1 of 1 findings rest on verified workspace lines", "pass: 0 of 3 citations do not match the workspace", "pass: 1 of 1 sub-tasks finished"}},
		{"no record of what was verified: nothing passes on trust", nil, out{
			"the deliverable's citations and sub-tasks were not checked against the workspace, so nothing backs it",
			"the deliverable's citations and sub-tasks were not checked against the workspace, so nothing backs it",
			"the deliverable's citations and sub-tasks were not checked against the workspace, so nothing backs it"}},
		{"no finding and no sub-task: zero is never a pass", &Ledger{}, out{
			"the deliverable reports no finding: state each finding with the workspace lines (path, line range, exact quote) that show it",
			"pass: 0 of 0 citations do not match the workspace",
			"no sub-task was planned or carried out for this deliverable"}},
		{"unsupported findings are named with why; a fabricated citation cited twice is listed once; unfinished sub-tasks say why", &Ledger{
			Findings: []FindingLedger{
				{Title: "Compare signatures in constant time", Checks: []workspace.Check{verified}},
				{Title: "Parameterise the notes query", Checks: []workspace.Check{fabricated, fabricated}},
				{Title: "Drop the secret from the startup log", Checks: []workspace.Check{unverif}},
				{Title: "Check the note's owner", Checks: nil},
			},
			Evidence: []workspace.Check{fabricated},
			SubTasks: []SubTask{{ID: "security-01", Finished: true}, {ID: "security-02", Why: "not launched"}, {ID: "security-03", Why: "failed: timeout"}},
		}, out{
			`3 of 4 findings cite no line that matches the workspace: "Parameterise the notes query" (2 fabricated), "Drop the secret from the startup log" (1 unverifiable), "Check the note's owner" (cites nothing)`,
			"3 of 5 citations do not match the workspace: ghost.go:3-5 (not found)",
			"2 of 3 sub-tasks produced no finished result: security-02 (not launched), security-03 (failed: timeout)"}},
		{"a title naming the protocol is withheld: the message reaches the commander", &Ledger{
			Findings: []FindingLedger{{Title: "Meet the sealed criterion sc-02 on the Shadow Score", Checks: []workspace.Check{fabricated}}},
			SubTasks: []SubTask{{ID: "s-01", Finished: true}},
		}, out{
			`1 of 1 findings cite no line that matches the workspace: (a finding whose title is withheld) (1 fabricated)`,
			"1 of 1 citations do not match the workspace: ghost.go:3-5 (not found)",
			"pass: 1 of 1 sub-tasks finished"}},
		{"long lists are cut after five names", many, out{
			`7 of 7 findings cite no line that matches the workspace: "Finding A" (1 fabricated), "Finding B" (1 fabricated), "Finding C" (1 fabricated), "Finding D" (1 fabricated), "Finding E" (1 fabricated) and 2 more`,
			"7 of 7 citations do not match the workspace: ghost.go:3-5 (not found)",
			"pass: 1 of 1 sub-tasks finished"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if d := cmp.Diff(c.want, msg(c.ledger)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// The judge is never given a mechanical criterion; code decides them from
// the bundle's ledger and they count in the score like any other. A
// bundle resting on fabricated evidence therefore cannot be perfect, even
// when the judge passes everything it was asked.
func TestJudgeMergesMechanicalVerdicts(t *testing.T) {
	t.Parallel()
	env := withChecks(t)
	crit := env.sealedCriteria()
	fabricatedLedger := &Ledger{Findings: []FindingLedger{{Title: "Parameterise the notes query", Checks: []workspace.Check{fabricated}}},
		SubTasks: []SubTask{{ID: "security-01", Finished: true}}}
	for _, mode := range []Mode{PerBundle, PerCriterion} {
		p, seen := scripted(verdicts("pass", "pass", "pass", "pass"))
		j := NewJudge(JudgeConfig{Provider: p, Mode: mode})
		ev, err := j.Evaluate(t.Context(), env, BundleInput{ID: "b", Content: "the bundle", Ledger: fabricatedLedger})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Total != 7 || ev.Failed != 2 || ev.Score != Score(2, 7) || ev.Level == LevelPerfect {
			t.Errorf("mode %d: total %d failed %d score %v level %s, want 7, 2, %v, not perfect", mode, ev.Total, ev.Failed, ev.Score, ev.Level, Score(2, 7))
		}
		wantCalls := map[Mode]int{PerBundle: 1, PerCriterion: 4}[mode]
		if len(*seen) != wantCalls {
			t.Errorf("mode %d: %d judge calls, want %d (the judged criteria only)", mode, len(*seen), wantCalls)
		}
		for _, r := range *seen {
			for _, m := range r.Messages {
				for _, c := range crit[4:] {
					if strings.Contains(m.Content, c.Assertion) || strings.Contains(m.Content, vocab.CriterionPrefix+c.ID) {
						t.Errorf("mode %d: the judge was given mechanical criterion %s", mode, c.ID)
					}
				}
			}
		}
		var ids []string
		for _, v := range ev.Verdicts {
			ids = append(ids, v.ID+":"+v.Status)
		}
		if d := cmp.Diff([]string{"sc-01:pass", "sc-02:pass", "sc-03:pass", "sc-04:pass", "sc-05:fail", "sc-06:fail", "sc-07:pass"}, ids); d != "" {
			t.Errorf("mode %d: verdicts (-want +got)\n%s", mode, d)
		}
		fb := FeedbackFor(ev)
		for _, want := range []string{"- [sc-05] 1 of 1 findings cite no line that matches the workspace: \"Parameterise the notes query\" (1 fabricated)",
			"- [sc-06] 1 of 1 citations do not match the workspace: ghost.go:3-5 (not found)"} {
			if !strings.Contains(fb, want) {
				t.Errorf("mode %d: feedback lacks %q:\n%s", mode, want, fb)
			}
		}
		if forbidden.MatchString(fb) {
			t.Errorf("mode %d: feedback has a forbidden word:\n%s", mode, fb)
		}
	}
	t.Run("scope reduction judges every mechanical criterion", func(t *testing.T) {
		p, _ := scripted(verdicts("pass"))
		ev, unj, err := NewJudge(JudgeConfig{Provider: p}).EvaluateEach(t.Context(), env, BundleInput{ID: "b", Ledger: cleanLedger()})
		if err != nil || len(unj) != 0 || ev.Total != 7 {
			t.Fatalf("EvaluateEach: total %d unjudged %v err %v", ev.Total, unj, err)
		}
	})
	t.Run("disagreement counts the judge's verdicts only", func(t *testing.T) {
		p, _ := scripted(verdicts("pass", "fail", "pass", "pass"), verdicts("pass", "pass", "pass", "pass"), verdicts("pass", "fail", "fail", "pass"))
		ev, err := NewJudge(JudgeConfig{Provider: p, Samples: 3}).Evaluate(t.Context(), env, BundleInput{ID: "b", Ledger: cleanLedger()})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Disagreement != 0.5 {
			t.Errorf("disagreement %v, want 0.5 (2 of the judge's 4 verdicts split)", ev.Disagreement)
		}
	})
	t.Run("the judge prompt explains the ledger only for a bundle that has one", func(t *testing.T) {
		for _, l := range []*Ledger{nil, cleanLedger()} {
			p, seen := scripted(verdicts("pass", "pass", "pass", "pass"))
			if _, err := NewJudge(JudgeConfig{Provider: p}).Evaluate(t.Context(), env, BundleInput{ID: "b", Ledger: l}); err != nil {
				t.Fatal(err)
			}
			got := strings.Contains((*seen)[0].Messages[1].Content, "A criterion met only by\nunsupported findings fails")
			if got != (l != nil) {
				t.Errorf("ledger %v: the prompt explains the ledger: %v", l != nil, got)
			}
		}
	})
}

// A hardening revision is re-checked: its own ledger decides the
// mechanical checks of the re-judge, and the feedback carries the
// mechanical failures.
func TestHardeningRechecksTheRevisedLedger(t *testing.T) {
	t.Parallel()
	env := withChecks(t)
	bad := &Ledger{Findings: []FindingLedger{{Title: "Parameterise the notes query", Checks: []workspace.Check{fabricated}}},
		SubTasks: []SubTask{{ID: "security-01", Finished: true}}}
	p, _ := scripted(verdicts("pass", "pass", "pass", "pass"))
	j := NewJudge(JudgeConfig{Provider: p})
	in := BundleInput{ID: "b", Content: "v0", Ledger: bad}
	initial, err := j.Evaluate(t.Context(), env, in)
	if err != nil {
		t.Fatal(err)
	}
	var fbs []string
	res, err := Harden(t.Context(), HardeningConfig{Enabled: true, MaxCycles: 1, Threshold: 0}, j, env, in, initial,
		func(_ context.Context, b BundleInput, fb string) (BundleInput, error) {
			fbs = append(fbs, fb)
			b.Content, b.Ledger = "v1", cleanLedger()
			return b, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if res.InitialScore != Score(2, 7) || res.FinalScore != 0 || res.FinalBundle.Content != "v1" {
		t.Errorf("hardening %v -> %v (%q), want %v -> 0 on the revision", res.InitialScore, res.FinalScore, res.FinalBundle.Content, Score(2, 7))
	}
	if len(fbs) != 1 || !strings.Contains(fbs[0], "[sc-05] 1 of 1 findings cite no line that matches the workspace") || forbidden.MatchString(fbs[0]) {
		t.Errorf("feedback: %q", fbs)
	}
}

// A report with mechanical failures still validates against the spec's
// schema: their categories are outside the spec's enum, so they are listed
// as "unknown" with x_category.
func TestReportWithMechanicalFailuresValidates(t *testing.T) {
	t.Parallel()
	env := withChecks(t)
	p, _ := scripted(verdicts("pass", "fail", "pass", "pass"))
	ev, err := NewJudge(JudgeConfig{Provider: p}).Evaluate(t.Context(), env, BundleInput{ID: "b", Ledger: &Ledger{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{SpecV2, SpecV1} {
		r := BuildReport(ReportOptions{ID: "r/b", Timestamp: time.Unix(0, 0), SpecVersion: spec, Envelope: env, Evaluation: &ev, Implementer: providers.Ref{Kind: "mock", Model: "honest"}})
		assertValid(t, r)
		var got []string
		for _, f := range r.Failures {
			got = append(got, f.TestName+" "+f.Category+" "+f.XCategory)
		}
		want := []string{"sc-02 edge_case ", "sc-05 unknown evidence", "sc-07 unknown completeness"}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s failures (-want +got)\n%s", spec, d)
		}
	}
}

// The seal author cannot seal a mechanical check: its schema has no check
// field (an answer with one is refused and asked again), and the checks
// asked for are appended by code after its criteria.
func TestSealAppendsChecksAndIgnoresTheAuthorsOwn(t *testing.T) {
	t.Parallel()
	cs := criteria()
	cs[0].Check = CheckNoFabricated
	forged, _ := json.Marshal(SealedCriteria{Criteria: cs})
	honest, _ := json.Marshal(SealedCriteria{Criteria: criteria()})
	p, seen := scripted(string(forged), string(honest))
	env, err := Seal(t.Context(), SealConfig{Provider: p, Count: 4, Checks: Checks}, SealInput{Mission: "m", Decomposition: "d"})
	if err != nil {
		t.Fatal(err)
	}
	if len(*seen) != 2 {
		t.Errorf("%d seal author calls, want 2 (the answer with a check refused once)", len(*seen))
	}
	var got []string
	for _, c := range env.sealedCriteria() {
		got = append(got, c.ID+"="+c.Check)
	}
	want := []string{"sc-01=", "sc-02=", "sc-03=", "sc-04=", "sc-05=findings_supported", "sc-06=no_fabricated_citation", "sc-07=subtasks_finished"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sealed (-want +got)\n%s", d)
	}
	if env.SealedHash != withChecks(t).SealedHash {
		t.Errorf("sealed %s, want the hash of criteria() with the checks", env.SealedHash)
	}
	s, err := providers.SchemaOf[SealedCriteria]()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(s), `"check"`) {
		t.Errorf("the seal author's schema offers a check field:\n%s", s)
	}
}
