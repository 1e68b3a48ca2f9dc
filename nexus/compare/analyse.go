package compare

import (
	"hash/fnv"
	"math"
	"sort"

	"github.com/swarm-dev/swarm/shadow"
)

// Report is compare.json.
type Report struct {
	Mission    string           `json:"mission"`
	Scale      string           `json:"scale"`
	Roles      string           `json:"roles"`
	Repeats    int              `json:"repeats"`
	SealedHash string           `json:"sealed_hash"`
	Judge      string           `json:"judge"`
	SealAuthor string           `json:"seal_author"`
	Contenders []ContenderStats `json:"contenders"` // ranked, best first
	Pairwise   []PairResult     `json:"pairwise"`
	Runs       []RunSummary     `json:"runs"`
	Categories []string         `json:"categories"`
}

// ContenderStats summarises one contender over its repeats.
type ContenderStats struct {
	Rank              int                `json:"rank"`
	Model             string             `json:"model"`
	Scores            []float64          `json:"aggregate_scores"` // per repeat
	Median            float64            `json:"median"`
	Mean              float64            `json:"mean"`
	CI95              Interval           `json:"ci95"`
	BundleScores      []float64          `json:"bundle_scores"`
	Levels            map[string]int     `json:"levels"`
	CriterionPassRate map[string]float64 `json:"criterion_pass_rate"`
	CategoryFailRate  map[string]float64 `json:"category_failure_rate"`
	Velocity          float64            `json:"hardening_velocity"`
	Gates             map[string]int     `json:"gates"`
	ReviewScore       float64            `json:"review_score"`
	Toxicity          float64            `json:"toxicity"`
	QualityGap        float64            `json:"quality_gap"`
	InputTokens       int                `json:"input_tokens"`
	OutputTokens      int                `json:"output_tokens"`
	CostUSD           float64            `json:"cost_usd"`
	LatencyP50MS      float64            `json:"latency_p50_ms"`
	LatencyP95MS      float64            `json:"latency_p95_ms"`
	Failures          map[string]int     `json:"failure_classes"`
	JudgeDisagreement float64            `json:"judge_disagreement"`
	Advisory          bool               `json:"advisory"`
	AdvisoryReason    string             `json:"advisory_reason,omitempty"`
	TiedWithNext      bool               `json:"not_distinguishable_from_next"`
	latencies         []float64
}

// PairResult compares two contenders.
type PairResult struct {
	A, B            string   `json:"-"`
	First           string   `json:"a"`
	Second          string   `json:"b"`
	Paired          int      `json:"paired_verdicts"`
	McNemar         McNemar  `json:"mcnemar"`
	MeanDiff        float64  `json:"mean_score_difference"` // a − b (lower score is better)
	DiffCI95        Interval `json:"difference_ci95"`
	Distinguishable bool     `json:"distinguishable"`
	Better          string   `json:"better,omitempty"`
}

const bootstrapB = 4000

func seedOf(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// Analyse computes every statistic from the run summaries.
func Analyse(o Options, hash, judge, seal string, runs []RunSummary) *Report {
	r := &Report{Mission: o.MissionName, Scale: o.Scale, Roles: o.Roles, Repeats: o.Repeats, SealedHash: hash, Judge: judge, SealAuthor: seal, Runs: runs, Categories: shadow.SpecCategories}
	by := map[string][]RunSummary{}
	for _, s := range runs {
		by[s.Contender] = append(by[s.Contender], s)
	}
	for _, m := range o.Models {
		if _, dup := findStats(r.Contenders, m); dup {
			continue
		}
		r.Contenders = append(r.Contenders, contenderStats(m, by[m]))
	}
	sort.SliceStable(r.Contenders, func(i, j int) bool { return r.Contenders[i].Mean < r.Contenders[j].Mean })
	for i := range r.Contenders {
		r.Contenders[i].Rank = i + 1
	}
	for i := range r.Contenders {
		for j := i + 1; j < len(r.Contenders); j++ {
			a, b := r.Contenders[i].Model, r.Contenders[j].Model
			r.Pairwise = append(r.Pairwise, pair(a, b, by[a], by[b]))
		}
	}
	for i := 0; i+1 < len(r.Contenders); i++ {
		for _, p := range r.Pairwise {
			if (p.First == r.Contenders[i].Model && p.Second == r.Contenders[i+1].Model) || (p.Second == r.Contenders[i].Model && p.First == r.Contenders[i+1].Model) {
				r.Contenders[i].TiedWithNext = !p.Distinguishable
			}
		}
	}
	return r
}

func findStats(cs []ContenderStats, m string) (ContenderStats, bool) {
	for _, c := range cs {
		if c.Model == m {
			return c, true
		}
	}
	return ContenderStats{}, false
}

func contenderStats(m string, runs []RunSummary) ContenderStats {
	c := ContenderStats{Model: m, Levels: map[string]int{}, CriterionPassRate: map[string]float64{}, CategoryFailRate: map[string]float64{},
		Gates: map[string]int{}, Failures: map[string]int{}}
	passN, totN := map[string]int{}, map[string]int{}
	catFail, catN := map[string]int{}, map[string]int{}
	var vel, rev, tox, gap, dis []float64
	for _, s := range runs {
		c.Scores = append(c.Scores, s.Aggregate)
		for _, b := range s.Bundles {
			c.BundleScores = append(c.BundleScores, b.Initial)
			c.Levels[b.Level]++
			c.Gates[b.Gate]++
			for id, ok := range b.Verdicts {
				totN[id]++
				cat := b.Category[id]
				catN[cat]++
				if ok {
					passN[id]++
				} else {
					catFail[cat]++
				}
			}
		}
		vel, rev, tox, gap, dis = append(vel, s.Velocity), append(rev, s.ReviewScore), append(tox, s.Toxicity), append(gap, s.QualityGap), append(dis, s.Disagreement)
		c.InputTokens += s.InputTokens
		c.OutputTokens += s.OutputTokens
		c.CostUSD += s.CostUSD
		c.latencies = append(c.latencies, s.LatenciesMS...)
		for k, v := range s.Failures {
			c.Failures[k] += v
		}
		if s.Advisory {
			c.Advisory, c.AdvisoryReason = true, s.AdvisoryWhy
		}
	}
	for id, n := range totN {
		c.CriterionPassRate[id] = float64(passN[id]) / float64(n)
	}
	for cat, n := range catN {
		c.CategoryFailRate[cat] = float64(catFail[cat]) / float64(n)
	}
	c.Mean = mean(c.Scores)
	c.Median, _ = shadow.Aggregate(c.Scores)
	c.CI95 = BootstrapMeanCI(c.Scores, 0.95, bootstrapB, seedOf("ci95"))
	c.Velocity, c.ReviewScore, c.Toxicity, c.QualityGap, c.JudgeDisagreement = mean(vel), mean(rev), mean(tox), mean(gap), mean(dis)
	if len(c.latencies) > 0 {
		c.LatencyP50MS, c.LatencyP95MS = Quantile(c.latencies, 0.5), Quantile(c.latencies, 0.95)
	}
	return c
}

// pair compares a and b: the same criterion on the same bundle domain in the
// same repeat, judged for both (exact McNemar), and the paired bootstrap of
// the per-repeat aggregate score difference. Two contenders are
// distinguishable when the difference's 95% interval excludes zero and
// McNemar's p < 0.05.
func pair(a, b string, ra, rb []RunSummary) PairResult {
	p := PairResult{A: a, B: b, First: a, Second: b}
	byRep := map[int]RunSummary{}
	for _, s := range rb {
		byRep[s.Repeat] = s
	}
	var da, db []float64
	bOnly, cOnly := 0, 0
	for _, sa := range ra {
		sb, ok := byRep[sa.Repeat]
		if !ok {
			continue
		}
		da, db = append(da, sa.Aggregate), append(db, sb.Aggregate)
		for dom, ba := range sa.Bundles {
			bb, ok := sb.Bundles[dom]
			if !ok {
				continue
			}
			for id, pa := range ba.Verdicts {
				pb, ok := bb.Verdicts[id]
				if !ok {
					continue
				}
				p.Paired++
				switch {
				case pa && !pb:
					bOnly++
				case !pa && pb:
					cOnly++
				}
			}
		}
	}
	p.McNemar = McNemarExact(bOnly, cOnly)
	p.MeanDiff = mean(da) - mean(db)
	p.DiffCI95 = BootstrapDiffCI(da, db, 0.95, bootstrapB, seedOf(a+"|"+b))
	p.Distinguishable = !p.DiffCI95.Contains(0) && p.McNemar.P < 0.05
	if p.Distinguishable {
		p.Better = a
		if p.MeanDiff > 0 {
			p.Better = b
		}
	}
	if math.IsNaN(p.MeanDiff) {
		p.MeanDiff = 0
	}
	return p
}
