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
	return RunSummary{Contender: contender, Repeat: rep, Aggregate: score, Bundles: map[string]BundleSummary{"d": b}}
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
