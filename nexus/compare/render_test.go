package compare

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// failingReport: a judges everything, b loses its db bundle in every
// repeat (timeouts), c produces nothing (its answers were prose).
func failingReport() *Report {
	var runs []RunSummary
	for rep := range 3 {
		runs = append(runs,
			bundles("a", rep, map[string]string{"api": "pppf", "db": "pppp"}, nil),
			bundles("b", rep, map[string]string{"api": "ppff"}, map[string]string{"db": "timeout"}),
			bundles("c", rep, nil, map[string]string{"api": "unparseable", "db": "unparseable"}))
	}
	return Analyse(Options{Models: []string{"c", "b", "a"}, Repeats: 3, Roles: RolesCommanders}, "h", "j", "s", runs)
}

func lines(s, prefix string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func TestMarkdownShowsFailedBundles(t *testing.T) {
	t.Parallel()
	md := failingReport().Markdown()
	// b: (3·50 + 3·100) / 6 = 75 per repeat with its failed db bundle at 100.
	want := []string{
		"| rank | tier | contender | median | mean | 95% CI | bundles failed | not distinguishable from | advisory |",
		"| 1 | 1 | `a` | 12.5 | 12.5 | [12.5, 12.5] | 0 of 6 | — | — |",
		"| 2 | 2 | `b` | 75.0 | 75.0 | [75.0, 75.0] | 3 of 6 (50%) | — | — |",
		"| 3 | — | `c` | no result | — | — | 6 of 6 (100%) | — | — |",
	}
	i := strings.Index(md, "## Ranking")
	if i < 0 {
		t.Fatalf("no ranking:\n%s", md)
	}
	if d := cmp.Diff(want[:1], lines(md[i:], "| rank")); d != "" {
		t.Errorf("header (-want +got)\n%s", d)
	}
	var rows []string
	for _, l := range lines(md[i:], "| ") {
		if regexp.MustCompile(`^\| \d \| `).MatchString(l) {
			rows = append(rows, l)
		}
	}
	if d := cmp.Diff(want[1:], rows); d != "" {
		t.Errorf("ranking rows (-want +got)\n%s", d)
	}
	for _, s := range []string{
		"> **Failed bundles** `b`: 3 of 6 planned bundles failed or were not judged (timeout 3); each counts as Shadow Score 100.",
		"> **Failed bundles** `c`: no result: none of its 6 planned bundles was judged (unparseable 6)",
		"| `b` | 50.0 | 100.0 (failed 3 of 3) | minor 3 | warn 3 |",
		"| `c` | n/a | — | 0.000 | 0.000 | — | 0 |", // no review score or judge D without a judged bundle
		"| `c` | `a` | 24 | 0 | 21 | 9.5e-07 | 2.9e-06 | +87.5 | [87.5, 87.5] | `a` is better (c has no result) |",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("compare.md lacks %q:\n%s", s, md)
		}
	}
}

func TestTableShowsFailedBundles(t *testing.T) {
	t.Parallel()
	tb := failingReport().Table()
	want := map[string]*regexp.Regexp{
		"a": regexp.MustCompile(`^1 +1 +a +12\.5 +12\.5 +\[ 12\.5,  12\.5\] +0/6 `),
		"b": regexp.MustCompile(`^2 +2 +b +75\.0 +75\.0 +\[ 75\.0,  75\.0\] +3/6 `),
		"c": regexp.MustCompile(`^3 +— +c +no result \(nothing judged\) +6/6 `),
	}
	ls := strings.Split(tb, "\n")
	if !strings.Contains(ls[0], " failed ") {
		t.Errorf("header lacks the failed column: %q", ls[0])
	}
	for i, m := range []string{"a", "b", "c"} {
		if !want[m].MatchString(ls[i+1]) {
			t.Errorf("row %d = %q, want %s", i+1, ls[i+1], want[m])
		}
	}
	if !strings.Contains(tb, "[failed] c: no result") || !strings.Contains(tb, "[failed] b: 3 of 6") {
		t.Errorf("table lacks the failure notes:\n%s", tb)
	}
}

func TestHTMLShowsFailedBundles(t *testing.T) {
	t.Parallel()
	h, err := failingReport().HTML()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`<th>95% CI</th><th>bundles failed</th>`,
		`<tr><td>1</td><td>1</td><td class="l"><code>a</code></td><td>12.5</td><td>12.5</td><td>[12.5, 12.5]</td><td>0 of 6</td>`,
		`<tr><td>2</td><td>2</td><td class="l"><code>b</code></td><td>75.0</td><td>75.0</td><td>[75.0, 75.0]</td><td class="adv">3 of 6 (50%)</td>`,
		`<tr><td>3</td><td>—</td><td class="l"><code>c</code></td><td class="adv">no result</td><td>—</td><td>—</td><td class="adv">6 of 6 (100%)</td>`,
		`<span class="adv">Failed bundles:</span> c: no result`,
		`<td>100.0 (failed 3 of 3)</td>`,
		`(c has no result)`,
	} {
		if !strings.Contains(h, s) {
			t.Errorf("compare.html lacks %q", s)
		}
	}
	// The score chart labels c "no result" instead of drawing a score.
	if i := strings.Index(h, "Shadow Score per contender"); i < 0 || !strings.Contains(h[i:i+strings.Index(h[i:], "</svg>")], ">no result</text>") {
		t.Error("the score chart does not mark c as no result")
	}
}

func TestJSONHasNoScoreForNoResult(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(failingReport())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Contenders []map[string]any `json:"contenders"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	pick := func(c map[string]any) map[string]any {
		out := map[string]any{}
		for _, k := range []string{"model", "rank", "tier", "median", "mean", "ci95", "aggregate_scores", "review_score", "bundles_planned", "bundles_judged", "bundles_failed", "failure_rate", "no_result"} {
			out[k] = c[k]
		}
		return out
	}
	want := []map[string]any{
		{"model": "a", "rank": 1.0, "tier": 1.0, "median": 12.5, "mean": 12.5, "ci95": map[string]any{"lo": 12.5, "hi": 12.5}, "aggregate_scores": []any{12.5, 12.5, 12.5}, "review_score": 0.0,
			"bundles_planned": 6.0, "bundles_judged": 6.0, "bundles_failed": 0.0, "failure_rate": 0.0, "no_result": false},
		{"model": "b", "rank": 2.0, "tier": 2.0, "median": 75.0, "mean": 75.0, "ci95": map[string]any{"lo": 75.0, "hi": 75.0}, "aggregate_scores": []any{75.0, 75.0, 75.0}, "review_score": 0.0,
			"bundles_planned": 6.0, "bundles_judged": 3.0, "bundles_failed": 3.0, "failure_rate": 0.5, "no_result": false},
		{"model": "c", "rank": 3.0, "tier": nil, "median": nil, "mean": nil, "ci95": nil, "aggregate_scores": nil, "review_score": nil,
			"bundles_planned": 6.0, "bundles_judged": 0.0, "bundles_failed": 6.0, "failure_rate": 1.0, "no_result": true},
	}
	var gotC []map[string]any
	for _, c := range got.Contenders {
		gotC = append(gotC, pick(c))
	}
	if d := cmp.Diff(want, gotC); d != "" {
		t.Errorf("compare.json contenders (-want +got)\n%s", d)
	}
}
