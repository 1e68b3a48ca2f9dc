package compare

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// judgedOutcome is a bundle the judge scored: every one of its four
// criteria with the given verdicts (p pass, f fail).
func judgedOutcome(domain, verdicts string) *nexus.BundleOutcome {
	ev := &shadow.Evaluation{BundleID: domain, Total: len(verdicts)}
	for i, v := range verdicts {
		st := "pass"
		if v == 'f' {
			st = "fail"
			ev.Failed++
		} else {
			ev.Passed++
		}
		ev.Verdicts = append(ev.Verdicts, shadow.Verdict{ID: fmt.Sprintf("sc-%d", i+1), Category: "happy_path", Status: st})
	}
	ev.Score = 100 * float64(ev.Failed) / float64(ev.Total)
	ev.Level = shadow.LevelOf(ev.Score)
	score := ev.Score
	return &nexus.BundleOutcome{ID: domain, Domain: domain, Initial: ev, Final: ev, ShadowScore: &score}
}

// A contender whose commander answers were all unparseable, and whose
// bundles the recovery ladder salvaged from the workers' atoms, must not
// tie with a contender that produced its bundles: the salvage is not its
// work, and the judge's verdict on it is kept for the record only.
func TestSalvagedBundlesCountAgainstTheContender(t *testing.T) {
	t.Parallel()
	salvagedByLadder := func(domain string) *nexus.BundleOutcome {
		o := judgedOutcome(domain, "pppp") // the workers' atoms pass everything
		o.Salvaged = true
		o.Degraded = []commanders.Degraded{{Unit: commanders.UnitBundle, UnitID: domain, Detail: "salvaged after the commander's assembly failed: unparseable"}}
		return o
	}
	salvagedByCeiling := func(domain string) *nexus.BundleOutcome {
		o := judgedOutcome(domain, "pppp")
		o.Salvaged = true // cutOff: no Degraded entry, only the flag
		return o
	}
	degradedAtomOnly := func(domain string) *nexus.BundleOutcome {
		o := judgedOutcome(domain, "pppp")
		o.Degraded = []commanders.Degraded{{Unit: commanders.UnitAtom, UnitID: "w1", Detail: "salvaged from an answer that failed its schema"}}
		return o
	}
	cases := []struct {
		name string
		// b's two bundles per repeat
		b          func(string) *nexus.BundleOutcome
		wantScore  float64 // b's per-repeat score
		wantFailed int     // of b's 2×3 planned bundles
		wantClass  map[string]int
		wantNoRes  bool
	}{
		{"the issue's case: every commander answer unparseable, the ladder salvaged both bundles", salvagedByLadder, 100, 6, map[string]int{StatusSalvaged: 6}, true},
		{"the cost ceiling salvaged both bundles", salvagedByCeiling, 100, 6, map[string]int{StatusSalvaged: 6}, true},
		// A degraded atom inside a bundle the commander assembled leaves the
		// bundle the contender's (the worker's answer was salvaged, not the
		// bundle): it ties with a, as it should.
		{"a degraded atom inside an assembled bundle is still the contender's bundle", degradedAtomOnly, 0, 0, map[string]int{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var runs []RunSummary
			for rep := range 3 {
				a := &nexus.Result{Bundles: []*nexus.BundleOutcome{judgedOutcome("api", "pppp"), judgedOutcome("db", "pppp")}}
				b := &nexus.Result{Bundles: []*nexus.BundleOutcome{tc.b("api"), tc.b("db")}}
				runs = append(runs, summarise(a, "a", rep, int64(rep)), summarise(b, "b", rep, int64(rep)))
			}
			bs := runs[1]
			if tc.wantFailed > 0 {
				u := bs.Unscored["api"]
				if u.Status != StatusSalvaged || u.JudgedScore == nil || *u.JudgedScore != 0 || u.Error == "" {
					t.Errorf("b's api bundle: %+v; want status salvaged, the judge's 0 kept for the record, a reason", u)
				}
			}
			r := Analyse(Options{Models: []string{"b", "a"}, Repeats: 3}, "h", "j", "s", runs)
			a, _ := findStats(r.Contenders, "a")
			b, _ := findStats(r.Contenders, "b")
			if tc.wantFailed > 0 && a.Rank != 1 {
				t.Fatalf("rank 1 is %s: want a, which produced its bundles", r.Contenders[0].Model)
			}
			type view struct {
				Scores         []float64
				Failed         int
				Classes        map[string]int
				NoResult, Tied bool
			}
			got := view{b.Scores, b.BundlesFailed, b.BundleFailures, b.NoResult, a.TiedWithNext || b.TiedWithNext}
			want := view{[]float64{tc.wantScore, tc.wantScore, tc.wantScore}, tc.wantFailed, tc.wantClass, tc.wantNoRes, !tc.wantNoRes}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("b (-want +got)\n%s", d)
			}
			if tc.wantFailed > 0 && !strings.Contains(r.Table(), "salvaged from the workers' atoms") {
				t.Errorf("the table does not say the bundles were salvaged:\n%s", r.Table())
			}
		})
	}
}

// A contender whose fabrication-rate interval lies above the limit is
// untrusted and ranked after every trusted contender, whatever its Shadow
// Score; the rule holds on its own, without any sealed check failing.
func TestFabricationMakesAContenderUntrusted(t *testing.T) {
	t.Parallel()
	cfg := func(limit float64) *config.Config {
		return &config.Config{Compare: config.Compare{MaxFabricationRate: limit}}
	}
	cases := []struct {
		name          string
		cfg           *config.Config
		fabricator    *workspace.Counts // f's citations per repeat; f scores 0 (perfect), h 50
		wantUntrusted bool
	}{
		// The case: every citation fabricated, a perfect score.
		{"all fabricated", nil, counts4(16, 0, 0, 16), true},
		// 3 of 10 per repeat: 30% but the interval reaches below 20%.
		{"interval straddles the limit", nil, counts4(10, 7, 0, 3), false},
		// Nothing cited: no rate, nothing to distrust (and never 0%).
		{"nothing cited", nil, counts4(0, 0, 0, 0), false},
		// 1 turns the rule off.
		{"limit 1", cfg(1), counts4(16, 0, 0, 16), false},
		// 0: any interval above 0 is too much.
		{"limit 0 and a little fabrication", cfg(0), counts4(40, 38, 0, 2), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var runs []RunSummary
			for rep := range 3 {
				runs = append(runs,
					withEvidence(bundles("f", rep, map[string]string{"d1": "pppp", "d2": "pppp"}, nil), tc.fabricator),
					withEvidence(bundles("h", rep, map[string]string{"d1": "ppff", "d2": "ppff"}, nil), counts4(20, 20, 0, 0)))
			}
			r := Analyse(Options{Config: tc.cfg, Models: []string{"f", "h"}, Repeats: 3, Workspace: "ws"}, "h", "j", "s", runs)
			f, _ := findStats(r.Contenders, "f")
			h, _ := findStats(r.Contenders, "h")
			if f.Untrusted != tc.wantUntrusted {
				t.Fatalf("f untrusted = %v (%s), want %v", f.Untrusted, f.UntrustedReason, tc.wantUntrusted)
			}
			if h.Untrusted {
				t.Errorf("h cited only verified lines yet is untrusted: %s", h.UntrustedReason)
			}
			p := pairOf(r, "f", "h")
			if !tc.wantUntrusted {
				if f.Rank != 1 || f.Tier != 1 {
					t.Errorf("trusted f (score 0 vs 50): rank %d tier %d, want 1 1", f.Rank, f.Tier)
				}
				return
			}
			type view struct {
				HRank, HTier, FRank, FTier int
				Better                     string
				Untrusted                  []string
				Tied                       bool
			}
			got := view{h.Rank, h.Tier, f.Rank, f.Tier, p.Better, p.Untrusted, h.TiedWithNext}
			want := view{1, 1, 2, 2, "h", []string{"f"}, false}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("ranking (-want +got)\n%s", d)
			}
			if !strings.Contains(f.UntrustedReason, "compare.max_fabrication_rate") || !strings.Contains(f.UntrustedReason, "95% CI") {
				t.Errorf("reason %q does not give the interval and the key", f.UntrustedReason)
			}
			html, err := r.HTML()
			if err != nil {
				t.Fatal(err)
			}
			for name, out := range map[string]string{"table": r.Table(), "markdown": r.Markdown(), "html": html} {
				if !strings.Contains(out, "untrusted") || !strings.Contains(out, "fabricated") {
					t.Errorf("%s does not flag f untrusted with its reason:\n%s", name, out)
				}
			}
			if !strings.Contains(r.Markdown(), "| 2 | 2 | `f` (untrusted) |") {
				t.Errorf("compare.md's ranking row does not mark f untrusted:\n%s", r.Markdown())
			}
		})
	}
}

// Untrusted contenders come after every trusted one, and contenders without
// a result after both.
func TestUntrustedRankBetweenTrustedAndNoResult(t *testing.T) {
	t.Parallel()
	var runs []RunSummary
	for rep := range 3 {
		runs = append(runs,
			withEvidence(bundles("u", rep, map[string]string{"d": "pppp"}, nil), counts4(30, 0, 0, 30)),
			withEvidence(failedRun("n", rep), counts4(0, 0, 0, 0)),
			withEvidence(bundles("t1", rep, map[string]string{"d": "ffff"}, nil), counts4(10, 10, 0, 0)),
			withEvidence(bundles("t2", rep, map[string]string{"d": "pfff"}, nil), counts4(10, 10, 0, 0)))
	}
	r := Analyse(Options{Models: []string{"u", "n", "t1", "t2"}, Repeats: 3, Workspace: "ws"}, "h", "j", "s", runs)
	var order []string
	for _, c := range r.Contenders {
		order = append(order, c.Model)
	}
	if d := cmp.Diff([]string{"t2", "t1", "u", "n"}, order); d != "" {
		t.Errorf("order (-want +got)\n%s", d)
	}
	u, _ := findStats(r.Contenders, "u")
	for _, c := range r.Contenders {
		if !c.Untrusted && !c.NoResult && c.Tier >= u.Tier {
			t.Errorf("trusted %s in tier %d, untrusted u in tier %d", c.Model, c.Tier, u.Tier)
		}
	}
}
