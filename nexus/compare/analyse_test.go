package compare

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// run builds a run summary with one bundle whose verdicts are given as a
// string of p (pass) and f (fail), criteria sc-1, sc-2, ...
func run(contender string, rep int, score float64, verdicts string) RunSummary {
	b := BundleSummary{Initial: score, Final: score, Level: "minor", Gate: "warn", Verdicts: map[string]bool{}, Category: map[string]string{}}
	for i, v := range verdicts {
		id := fmt.Sprintf("sc-%d", i+1)
		b.Verdicts[id] = v == 'p'
		b.Category[id] = "happy_path"
	}
	return RunSummary{Contender: contender, Repeat: rep, Bundles: map[string]BundleSummary{"d": b}}
}

func pairOf(r *Report, a, b string) PairResult {
	for _, p := range r.Pairwise {
		if p.First == a && p.Second == b || p.First == b && p.Second == a {
			return p
		}
	}
	return PairResult{}
}

func TestPairCountsPerCriterionByHand(t *testing.T) {
	t.Parallel()
	// Two repeats, three criteria. Repeat 0: a ppf, b pff; repeat 1: a ppp, b fpf.
	// sc-1: a-only in rep 1 (rep 0 both) -> both 1, a-only 1
	// sc-2: a-only in rep 0, both in rep 1 -> both 1, a-only 1
	// sc-3: neither in rep 0, a-only in rep 1 -> neither 1, a-only 1
	runs := []RunSummary{run("a", 0, 33.3, "ppf"), run("b", 0, 66.7, "pff"), run("a", 1, 0, "ppp"), run("b", 1, 66.7, "fpf")}
	r := Analyse(Options{Models: []string{"a", "b"}, Repeats: 2}, "h", "j", "s", runs)
	p := pairOf(r, "a", "b")
	want := []CriterionPair{
		{ID: "sc-1", Category: "happy_path", Paired: 2, Both: 1, McNemar: McNemar{B: 1, C: 0, P: 1}},
		{ID: "sc-2", Category: "happy_path", Paired: 2, Both: 1, McNemar: McNemar{B: 1, C: 0, P: 1}},
		{ID: "sc-3", Category: "happy_path", Paired: 2, Neither: 1, McNemar: McNemar{B: 1, C: 0, P: 1}},
	}
	if d := cmp.Diff(want, p.PerCriterion); d != "" {
		t.Errorf("per criterion (-want +got)\n%s", d)
	}
	// Pooled: 3 discordant, all a-only: p = 2/8.
	if p.Paired != 6 || p.McNemar.B != 3 || p.McNemar.C != 0 || math.Abs(p.McNemar.P-0.25) > 1e-12 {
		t.Errorf("pooled: paired %d, %+v", p.Paired, p.McNemar)
	}
	// Three discordant verdicts cannot make a difference significant.
	if p.Distinguishable {
		t.Errorf("3-0 discordance (p=0.25) reported distinguishable: %+v", p)
	}
	a := r.Contenders[0]
	if d := cmp.Diff(map[string]float64{"sc-1": 1, "sc-2": 1, "sc-3": 0.5}, a.CriterionPassRate); d != "" || a.Model != "a" {
		t.Errorf("pass rates of %s (-want +got)\n%s", a.Model, d)
	}
	if a.Velocity != nil {
		t.Errorf("no bundle was hardened, velocity should be n/a, got %v", *a.Velocity)
	}
}

// many makes n repeats of one contender with the given score and verdicts.
func many(c string, n int, score float64, verdicts string) []RunSummary {
	var out []RunSummary
	for i := range n {
		out = append(out, run(c, i, score+float64(i%2), verdicts))
	}
	return out
}

func TestRankingTiersAndNonTransitiveTies(t *testing.T) {
	t.Parallel()
	// a beats c clearly; b sits between and cannot be told from either:
	// b's verdicts differ from a's and c's on too few criteria.
	const n = 6
	var runs []RunSummary
	runs = append(runs, many("c", n, 80, "ffffffffff")...)
	runs = append(runs, many("b", n, 40, "ppfffffffff"[:10])...)
	runs = append(runs, many("a", n, 0, "pppfffffff")...)
	// Per repeat a passes 3 more criteria than c (18 discordant, p = 2^-17),
	// b 2 more than c (12, p = 2^-11), a 1 more than b (6, p = 2/64).
	r := Analyse(Options{Models: []string{"c", "b", "a"}, Repeats: n}, "h", "j", "s", runs)
	got := map[string][2]int{}
	for _, c := range r.Contenders {
		got[c.Model] = [2]int{c.Rank, c.Tier}
	}
	ab, bc, ac := pairOf(r, "a", "b"), pairOf(r, "b", "c"), pairOf(r, "a", "c")
	if !ac.Distinguishable || ac.Better != "a" || !bc.Distinguishable || bc.Better != "b" {
		t.Fatalf("a vs c %+v\nb vs c %+v", ac, bc)
	}
	// a vs b: raw p = 2/64 = 0.03125 is the largest of the three, so Holm
	// multiplies it by 1: still < 0.05, a beats b.
	if math.Abs(ab.PHolm-0.03125) > 1e-12 || !ab.Distinguishable || ab.Better != "a" {
		t.Errorf("a vs b: %+v", ab)
	}
	if d := cmp.Diff(map[string][2]int{"a": {1, 1}, "b": {2, 2}, "c": {3, 3}}, got); d != "" {
		t.Errorf("rank/tier (-want +got)\n%s", d)
	}

	// Now b is only 5 repeats apart from a: p = 0.0625, not distinguishable,
	// yet a still beats c and b beats c. b ≈ a, b is not tied with c.
	runs = runs[:0]
	runs = append(runs, many("c", 5, 80, "ffffffffff")...)
	runs = append(runs, many("b", 5, 40, "ppffffffff")...)
	runs = append(runs, many("a", 5, 0, "pppfffffff")...)
	r = Analyse(Options{Models: []string{"c", "b", "a"}, Repeats: 5}, "h", "j", "s", runs)
	if p := pairOf(r, "a", "b"); p.Distinguishable || math.Abs(p.McNemar.P-0.0625) > 1e-12 {
		t.Errorf("a vs b with 5 discordant: %+v", p)
	}
	want := map[string]ContenderStats{
		"a": {Rank: 1, Tier: 1, NotDistinguishable: []string{"b"}, TiedWithNext: true},
		"b": {Rank: 2, Tier: 1, NotDistinguishable: []string{"a"}},
		"c": {Rank: 3, Tier: 3, NotDistinguishable: []string{}},
	}
	for _, c := range r.Contenders {
		w := want[c.Model]
		if c.Rank != w.Rank || c.Tier != w.Tier || c.TiedWithNext != w.TiedWithNext || !cmp.Equal(c.NotDistinguishable, w.NotDistinguishable) {
			t.Errorf("%s: rank %d tier %d tied %v ≈ %v; want rank %d tier %d tied %v ≈ %v", c.Model, c.Rank, c.Tier, c.TiedWithNext, c.NotDistinguishable,
				w.Rank, w.Tier, w.TiedWithNext, w.NotDistinguishable)
		}
	}
}

func TestDirectionsMustAgree(t *testing.T) {
	t.Parallel()
	// a's aggregate scores are clearly lower (better), but on the paired
	// verdicts b passes more: the two tests disagree, so no winner.
	var runs []RunSummary
	for i := range 8 {
		runs = append(runs, run("a", i, 10, "ffffff"), run("b", i, 60, "pfffff"))
	}
	r := Analyse(Options{Models: []string{"a", "b"}, Repeats: 8}, "h", "j", "s", runs)
	p := pairOf(r, "a", "b")
	if p.DiffCI95.Hi >= 0 || p.McNemar.C != 8 || p.McNemar.P >= 0.05 {
		t.Fatalf("setup: %+v", p)
	}
	if p.Distinguishable {
		t.Errorf("contradicting tests declared a winner: %+v", p)
	}
}

func TestAdvisoryReachesPairs(t *testing.T) {
	t.Parallel()
	runs := []RunSummary{run("a", 0, 0, "pp"), run("b", 0, 50, "pf"), run("c", 0, 50, "pf")}
	runs[0].Advisory, runs[0].AdvisoryWhy = true, "judge x is of the contender's family x"
	r := Analyse(Options{Models: []string{"a", "b", "c"}, Repeats: 1}, "h", "j", "s", runs)
	for _, p := range r.Pairwise {
		involved := p.First == "a" || p.Second == "a"
		if p.Advisory != involved {
			t.Errorf("pair %s/%s advisory %v, want %v", p.First, p.Second, p.Advisory, involved)
		}
	}
	for _, out := range []string{r.Table(), r.Markdown()} {
		if !contains(out, "judge x is of the contender's family x") || !contains(out, "(advisory)") && !contains(out, "[advisory]") {
			t.Errorf("advisory reason missing from output:\n%s", out)
		}
	}
	h, err := r.HTML()
	if err != nil || !contains(h, "judge x is of the contender&#39;s family x") || !contains(h, "(advisory)") {
		t.Errorf("advisory missing from html (err %v)", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// bundles builds a run summary over several planned bundle domains: judged
// ones with verdict strings (p pass, f fail over sc-1, sc-2, ...) and failed
// ones with a failure class. Its score is left for Analyse to compute.
func bundles(contender string, rep int, judged map[string]string, failed map[string]string) RunSummary {
	s := RunSummary{Contender: contender, Repeat: rep, Bundles: map[string]BundleSummary{}, Unscored: map[string]UnscoredBundle{}, Criteria: map[string]string{}}
	for dom, verdicts := range judged {
		fails := strings.Count(verdicts, "f")
		score := 100 * float64(fails) / float64(len(verdicts))
		s.Bundles[dom] = run(contender, rep, score, verdicts).Bundles["d"]
	}
	for dom, class := range failed {
		s.Unscored[dom] = UnscoredBundle{Status: StatusFailed, FailureClass: class}
	}
	for dom := range judged {
		s.Planned = append(s.Planned, dom)
	}
	for dom := range failed {
		s.Planned = append(s.Planned, dom)
	}
	for i := range 4 {
		s.Criteria[fmt.Sprintf("sc-%d", i+1)] = "happy_path"
	}
	return s
}

func TestContenderWhoseBundlesAllFailedIsNeverBesideAWorkingOne(t *testing.T) {
	t.Parallel()
	twoDomains := func(v string) map[string]string { return map[string]string{"api": v, "db": v} }
	allFailed := map[string]string{"api": "unparseable", "db": "unparseable"}
	cases := []struct {
		name    string
		repeats int
		aPasses string // a's verdicts on both bundles of every repeat
	}{
		// The case: b behind a server that answers prose, a good.
		{"a passes everything", 5, "pppp"},
		// a judged but failed every criterion: the scores tie at 100 and
		// the tests cannot separate them, yet a delivered and b did not.
		{"a fails every criterion", 5, "ffff"},
		// One repeat: no test can reject anything.
		{"a single repeat", 1, "ppff"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var runs []RunSummary
			for rep := range tc.repeats {
				runs = append(runs, bundles("b", rep, nil, allFailed), bundles("a", rep, twoDomains(tc.aPasses), nil))
			}
			// b first, so "as given" would put it first.
			r := Analyse(Options{Models: []string{"b", "a"}, Repeats: tc.repeats}, "h", "j", "s", runs)
			a, b := r.Contenders[0], r.Contenders[1]
			if a.Model != "a" || b.Model != "b" {
				t.Fatalf("order %s, %s: want a ranked above b", a.Model, b.Model)
			}
			type view struct {
				Rank, Tier              int
				Planned, Judged, Failed int
				Rate                    float64
				NoResult                bool
				NotDistinguishable      []string
				TiedWithNext            bool
				FailureClasses          map[string]int
			}
			got := view{b.Rank, b.Tier, b.BundlesPlanned, b.BundlesJudged, b.BundlesFailed, b.FailureRate, b.NoResult, b.NotDistinguishable, b.TiedWithNext, b.BundleFailures}
			want := view{Rank: 2, Tier: 0, Planned: 2 * tc.repeats, Failed: 2 * tc.repeats, Rate: 1, NoResult: true, NotDistinguishable: []string{},
				FailureClasses: map[string]int{"unparseable": 2 * tc.repeats}}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("b (-want +got)\n%s", d)
			}
			if a.Tier != 1 || a.NoResult || a.BundlesFailed != 0 || len(a.NotDistinguishable) != 0 || a.TiedWithNext {
				t.Errorf("a: tier %d no result %v failed %d ≈ %v tied %v", a.Tier, a.NoResult, a.BundlesFailed, a.NotDistinguishable, a.TiedWithNext)
			}
			if p := pairOf(r, "a", "b"); !p.Distinguishable || p.Better != "a" || !cmp.Equal(p.NoResult, []string{"b"}) {
				t.Errorf("pair: %+v", p)
			}
			if r.Complete() {
				t.Error("report with failed bundles says complete")
			}
			for name, out := range map[string]string{"table": r.Table(), "markdown": r.Markdown()} {
				if strings.Contains(out, "≈") && !strings.Contains(out, "≈:") {
					t.Errorf("%s marks a tie:\n%s", name, out)
				}
			}
		})
	}
}

func TestFailedBundlesCountAsHundredInTheMean(t *testing.T) {
	t.Parallel()
	// b planned five bundles per repeat and two failed; its three judged
	// bundles failed one criterion in four (25). Counting each failed
	// bundle as 100: (3·25 + 2·100) / 5 = 55 per repeat, not 25.
	judged := map[string]string{"d1": "pppf", "d2": "pppf", "d3": "pppf"}
	failed := map[string]string{"d4": "schema_invalid", "d5": ""}
	aJudged := map[string]string{"d1": "pppf", "d2": "pppf", "d3": "pppf", "d4": "pppf", "d5": "pppf"}
	var runs []RunSummary
	for rep := range 3 {
		runs = append(runs, bundles("a", rep, aJudged, nil), bundles("b", rep, judged, failed))
	}
	r := Analyse(Options{Models: []string{"a", "b"}, Repeats: 3}, "h", "j", "s", runs)
	b, _ := findStats(r.Contenders, "b")
	type view struct {
		Scores                  []float64
		Mean, Median            float64
		CI                      Interval
		Planned, Judged, Failed int
		Rate                    float64
		NoResult                bool
		Classes                 map[string]int
		D4, D1                  float64
		PassRate                map[string]float64
	}
	got := view{b.Scores, b.Mean, b.Median, b.CI95, b.BundlesPlanned, b.BundlesJudged, b.BundlesFailed, b.FailureRate, b.NoResult, b.BundleFailures,
		b.BundleMean["d4"], b.BundleMean["d1"], b.CriterionPassRate}
	// Passes: sc-1..3 in 3 of 5 bundles, sc-4 in none.
	want := view{Scores: []float64{55, 55, 55}, Mean: 55, Median: 55, CI: Interval{55, 55}, Planned: 15, Judged: 9, Failed: 6, Rate: 0.4,
		Classes: map[string]int{"schema_invalid": 3, "failed": 3}, D4: 100, D1: 25, PassRate: map[string]float64{"sc-1": 0.6, "sc-2": 0.6, "sc-3": 0.6, "sc-4": 0}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("b (-want +got)\n%s", d)
	}
	// Paired per criterion: on d4 and d5 a passed sc-1..3 where b failed
	// them (its bundle failed): 2 bundles × 3 criteria × 3 repeats = 18
	// discordant verdicts, all a's.
	p := pairOf(r, "a", "b")
	if p.McNemar.B != 18 || p.McNemar.C != 0 || p.Paired != 5*4*3 || p.MeanDiff != 25-55 {
		t.Errorf("pair: paired %d, a only %d, b only %d, diff %v", p.Paired, p.McNemar.B, p.McNemar.C, p.MeanDiff)
	}
	if !p.Distinguishable || p.Better != "a" || len(p.NoResult) != 0 {
		t.Errorf("a delivered every bundle at 25, b 55 with failures: %+v", p)
	}
	if a, _ := findStats(r.Contenders, "a"); a.Rank != 1 || a.Tier != 1 || b.Rank != 2 || b.Tier != 2 {
		t.Errorf("a rank %d tier %d, b rank %d tier %d", a.Rank, a.Tier, b.Rank, b.Tier)
	}
}
