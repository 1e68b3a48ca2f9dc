package shadow

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// TestEmittedReportsCarrySpecTypes checks the values the spec's schema
// types: an integer conformance level, workspace isolation from its enum,
// max_reveal as a reveal level, and a v1 Gap Report with its hardening block.
func TestEmittedReportsCarrySpecTypes(t *testing.T) {
	t.Parallel()
	env, _ := NewEnvelope(criteria(), "d", SealAuthor{"mock", "honest", "mock-honest"}, time.Now())
	ev := Evaluation{Total: 4, Passed: 3, Failed: 1, Score: 25, Level: LevelModerate, Verdicts: []Verdict{{ID: "sc-02", Category: "edge_case", Status: "fail", Message: "m"}}}
	hr := &HardeningResult{Cycles: 1, MaxCycles: 2, InitialScore: 50, FinalScore: 25, Velocity: 25, MaxReveal: RevealMessage}
	gpt := providers.Ref{Kind: "openai", Model: "gpt-4.1"}
	tests := []struct {
		name string
		o    ReportOptions
		want map[string]any // JSON paths "report.x" / "hardening.x" → value; nil value = absent
	}{
		{"v2 hardened: level 3, strict, reveal level message",
			ReportOptions{SpecVersion: SpecV2, Evaluation: &ev, Hardening: hr, HardeningEnabled: true, MaxCycles: 2},
			map[string]any{"report.conformance_level": 3.0, "report.workspace_isolation": "strict", "hardening.max_reveal": "message",
				"hardening.hardening_velocity": 25.0, "hardening.max_cycles": 2.0, "hardening.initial_shadow_score": 50.0}},
		{"v2 with hardening off claims level 2 and shows no velocity over zero cycles",
			ReportOptions{SpecVersion: SpecV2, Evaluation: &ev, MaxCycles: 1},
			map[string]any{"report.conformance_level": 2.0, "hardening.max_reveal": nil, "hardening.hardening_velocity": nil,
				"hardening.cycles_completed": 0.0, "hardening.initial_shadow_score": 25.0}},
		{"v1 Gap Report keeps its hardening block, without v2 fields",
			ReportOptions{SpecVersion: SpecV1, Evaluation: &ev, Hardening: hr, HardeningEnabled: true, MaxCycles: 2},
			map[string]any{"report.conformance_level": nil, "report.workspace_isolation": nil, "hardening.cycles_completed": 1.0,
				"hardening.max_cycles": 2.0, "hardening.initial_shadow_score": 50.0, "hardening.final_shadow_score": 25.0,
				"hardening.hardening_velocity": nil, "hardening.max_reveal": nil}},
		{"unscored bundle fails closed: 100.0 critical, advisory, no hardening scores",
			ReportOptions{SpecVersion: SpecV2, HardeningEnabled: true, MaxCycles: 1},
			map[string]any{"report.shadow_score": 100.0, "report.level": "critical", "report.advisory": true, "report.x_scored": false,
				"hardening.initial_shadow_score": nil, "hardening.final_shadow_score": nil}},
		{"zero criteria judged is never perfect",
			ReportOptions{SpecVersion: SpecV2, Evaluation: &Evaluation{}, HardeningEnabled: true, MaxCycles: 1},
			map[string]any{"report.level": "critical", "report.advisory": true, "report.x_scored": false}},
		{"invalid envelope: advisory, not scored",
			ReportOptions{SpecVersion: SpecV1, Evaluation: &ev, Invalid: true, InvalidReason: "hash mismatch"},
			map[string]any{"report.level": "critical", "report.x_valid": false, "report.x_scored": false, "sealed_tests.total": 0.0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.ID, tc.o.Timestamp, tc.o.Envelope, tc.o.Implementer = "run/b", time.Now(), env, gpt
			b, err := json.Marshal(BuildReport(tc.o))
			if err != nil {
				t.Fatal(err)
			}
			if err := ValidateReport(b); err != nil {
				t.Fatalf("does not validate against the published schema: %v\n%s", err, b)
			}
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			got := map[string]any{}
			for path := range tc.want {
				obj, key, _ := strings.Cut(path, ".")
				if o, ok := m[obj].(map[string]any); ok {
					got[path] = o[key]
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s\n%s", d, b)
			}
		})
	}
}

// TestScoresPrintLikeTheReference checks that a whole-number score keeps
// its decimal in JSON, as the reference validator prints it.
func TestScoresPrintLikeTheReference(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{60, "60.0"}, {0, "0.0"}, {100, "100.0"}, {11.1, "11.1"}, {33.3, "33.3"}, {6.25, "6.25"}, {-5, "-5.0"},
	} {
		b, err := json.Marshal(Float(tc.in))
		if err != nil || string(b) != tc.want {
			t.Errorf("%v prints %s (%v), want %s", tc.in, b, err, tc.want)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := json.Marshal(Float(bad)); err == nil {
			t.Errorf("%v printed", bad)
		}
	}
	var tests []SpecTest
	for i := 0; i < 15; i++ {
		st := "passed"
		if i < 9 {
			st = "failed"
		}
		tests = append(tests, SpecTest{Name: p("t"), Status: st})
	}
	out, err := ScoreSpec(SpecResults{Tests: tests}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	if !strings.Contains(string(b), `"shadow_score": 60.0,`) {
		t.Errorf("9 of 15 failed does not print 60.0:\n%s", b)
	}
	env, _ := NewEnvelope(criteria(), "d", SealAuthor{Family: "x"}, time.Now())
	r := BuildReport(ReportOptions{ID: "r", Timestamp: time.Now(), Envelope: env, Evaluation: &Evaluation{Total: 4, Passed: 2, Failed: 2, Score: 50, Level: LevelSignificant}})
	b, _ = json.Marshal(r)
	if !strings.Contains(string(b), `"shadow_score":50.0,`) || !strings.Contains(string(b), `"initial_shadow_score":50.0`) {
		t.Errorf("report prints whole scores without their decimal: %s", b)
	}
}

func TestReportsNeverPrintRawControls(t *testing.T) {
	t.Parallel()
	out, err := ScoreSpec(SpecResults{Tests: []SpecTest{{Name: p("evil\x1b[2J"), Status: "failed", Message: p("\x1b]0;title\x07gone")}}}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if s := out.Summary(); strings.ContainsAny(s, "\x1b\x07") || !strings.Contains(s, `evil\x1b[2J: \x1b]0;title\x07gone`) {
		t.Errorf("summary prints raw controls: %q", s)
	}
	if b, _ := json.Marshal(out); !strings.Contains(string(b), `evil\u001b[2J`) {
		t.Errorf("JSON output is not faithful: %s", b)
	}
	r := Report{SpecVersion: SpecV2, Report: ReportMeta{ID: "r\x1b[1m", Scored: true}, Failures: []Failure{{TestName: "sc-01", Message: "\x1b[31mx"}}}
	if md := RenderMarkdown(r); strings.Contains(md, "\x1b") {
		t.Errorf("markdown report prints raw controls: %q", md)
	}
}

func TestRestatesCatchesParaphrases(t *testing.T) {
	t.Parallel()
	const assertion = `The plan names an edge case of "clock skew" and its handling.`
	const expected = `"clock skew" edge case`
	for _, tc := range []struct {
		why  string
		msg  string
		text string
		want bool
	}{
		{"verbatim", "Fails: " + assertion, assertion, true},
		{"dropped period and quotes", "The plan names an edge case of clock skew and its handling", assertion, true},
		{"changed case", "THE PLAN NAMES AN EDGE CASE OF CLOCK SKEW AND ITS HANDLING.", assertion, true},
		{"reordered a little", "its handling and an edge case of clock skew: the plan names neither", assertion, true},
		{"a few words changed", "The plan should name an edge case of clock skew and its handling", assertion, true},
		{"message is a fragment of the criterion", "edge case of clock skew", assertion, true},
		{"expected outcome restated", "no clock-skew edge case", expected, true},
		{"own words about the same topic pass", "The deliverable never discusses time differences between servers.", assertion, false},
		{"a generic message passes", "missing the thing", assertion, false},
		{"two shared words are not a restatement", "clock skew", assertion, false},
		{"empty message", "", assertion, false},
		{"short criterion text inside a longer message is not proof", "the answer says yes in the intro", "yes", false},
	} {
		if got := Restates(tc.msg, tc.text); got != tc.want {
			t.Errorf("%s: Restates(%q, %q) = %v, want %v", tc.why, tc.msg, tc.text, got, tc.want)
		}
	}
}

// A criterion disguised character by character is still a restatement:
// each case is a trick that got criterion text through to a commander's
// hardening feedback (issue 22, point 6).
func TestRestatesSeesThroughDisguises(t *testing.T) {
	t.Parallel()
	const assertion = `The plan names an edge case of "clock skew" and its handling.`
	spaced := func(s string, sep string) string { return strings.Join(strings.Split(s, ""), sep) }
	for _, tc := range []struct {
		why  string
		msg  string
		want bool
	}{
		{"letters joined with zero-width spaces", spaced("The plan names an edge case of clock skew and its handling", "\u200b"), true},
		{"zero-width joiners inside every word", spaced("The plan names an edge case of clock skew and its handling", "\u200d"), true},
		{"Cyrillic look-alike letters (а е о р с)", "Thе plаn nаmеs аn еdgе cаsе оf clоck skеw аnd its hаndling", true},
		{"Greek omicron, Cyrillic a, e, es and er in every word", strings.NewReplacer("o", "ο", "a", "а", "e", "е", "c", "с", "p", "р").Replace(assertion), true},
		{"letter-spaced", spaced("The plan names an edge case of clock skew and its handling", " "), true},
		{"letter-spaced with hyphens", spaced("edge case of clock skew and its handling", "-"), true},
		{"fullwidth letters", "Ｔｈｅ ｐｌａｎ ｎａｍｅｓ ａｎ ｅｄｇｅ ｃａｓｅ ｏｆ ｃｌｏｃｋ ｓｋｅｗ", true},
		{"soft hyphens inside words", "The pla\u00adn names an ed\u00adge case of clo\u00adck skew and its handling", true},
		{"own words in another script still pass", "Развёртывание не обсуждает разницу во времени между серверами.", false},
		{"a generic message letter-spaced passes", spaced("missing the thing", " "), false},
	} {
		if got := Restates(tc.msg, assertion); got != tc.want {
			t.Errorf("%s: Restates(%q) = %v, want %v", tc.why, tc.msg, got, tc.want)
		}
	}
}

// TestJudgeScrubsParaphrasedCriteria drives the judge with messages that
// paraphrase the criteria and checks the hardening feedback.
func TestJudgeScrubsParaphrasedCriteria(t *testing.T) {
	t.Parallel()
	env, _ := NewEnvelope(criteria(), "d", SealAuthor{Family: "x"}, time.Now())
	cs := criteria()
	msgs := []string{
		"the plan explicitly addresses token rotation with a step",          // case and punctuation
		"The plan names an edge case of clock skew and its handling!",       // dropped quotes, other stop
		"refresh failure handled",                                           // the expected text, unquoted
		"It does not identify a security risk of replay, nor a mitigation.", // reworded a little
	}
	var vs []RawVerdict
	for i, m := range msgs {
		vs = append(vs, RawVerdict{ID: cs[i].ID, Status: "fail", Actual: "a", Message: m})
	}
	b, _ := json.Marshal(Verdicts{Verdicts: vs})
	prov, _ := scripted(string(b))
	ev, err := NewJudge(JudgeConfig{Provider: prov}).Evaluate(t.Context(), env, BundleInput{ID: "b"})
	if err != nil {
		t.Fatal(err)
	}
	fb := FeedbackFor(ev)
	for i, m := range msgs {
		if strings.Contains(fb, m) {
			t.Errorf("feedback carries the paraphrase %q", m)
		}
		for _, line := range strings.Split(fb, "\n") {
			if Restates(line, cs[i].Assertion) || Restates(line, cs[i].Expected) {
				t.Errorf("feedback line restates %s: %q", cs[i].ID, line)
			}
		}
		if want := WithheldMessage(cs[i].Category); ev.Verdicts[i].Message != want {
			t.Errorf("%s message %q, want %q", cs[i].ID, ev.Verdicts[i].Message, want)
		}
	}
}

func TestJudgeRefusesAnEnvelopeWithoutCriteria(t *testing.T) {
	t.Parallel()
	env, _ := NewEnvelope(nil, "d", SealAuthor{Family: "x"}, time.Now())
	prov, seen := scripted(`{"verdicts":[]}`)
	if _, err := NewJudge(JudgeConfig{Provider: prov}).Evaluate(t.Context(), env, BundleInput{ID: "b"}); !errors.Is(err, ErrNoCriteria) {
		t.Errorf("err %v, want ErrNoCriteria", err)
	}
	if len(*seen) != 0 {
		t.Errorf("judge called %d times", len(*seen))
	}
}

func TestVerifyTaskHash(t *testing.T) {
	t.Parallel()
	dec := map[string]any{"domains": []string{"a", "b"}, "aspects": []string{"x"}}
	env, _ := NewEnvelope(criteria(), dec, SealAuthor{Family: "x"}, time.Now())
	stored, _ := json.MarshalIndent(dec, "", "  ") // as the run writes it: indented, same document
	if err := VerifyTaskHash(stored, env.TaskHash); err != nil {
		t.Errorf("the stored decomposition does not verify: %v", err)
	}
	for _, tc := range []struct{ why, doc string }{
		{"a domain changed", `{"domains":["a","c"],"aspects":["x"]}`},
		{"not JSON", `{"domains":`},
		{"empty file", ``},
	} {
		if err := VerifyTaskHash([]byte(tc.doc), env.TaskHash); !errors.Is(err, ErrTampered) {
			t.Errorf("%s: err %v, want ErrTampered", tc.why, err)
		}
	}
}
