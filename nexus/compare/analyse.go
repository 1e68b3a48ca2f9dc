package compare

import (
	"encoding/json"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/stats"
	"github.com/swarm-dev/swarm/shadow"
)

// Report is compare.json.
type Report struct {
	Mission    string  `json:"mission"`
	Scale      string  `json:"scale"`
	Roles      string  `json:"roles"`
	Repeats    int     `json:"repeats"`
	Seeds      []int64 `json:"seeds"` // repeat i ran with Seeds[i], the same for every contender
	SealedHash string  `json:"sealed_hash"`
	Judge      string  `json:"judge"`
	SealAuthor string  `json:"seal_author"`
	// JudgeSamples is k: how many times the judge was sampled per verdict.
	// With k = 1 judge disagreement cannot be measured and is reported 0.
	JudgeSamples int              `json:"judge_samples"`
	Contenders   []ContenderStats `json:"contenders"` // ranked, best first
	Pairwise     []PairResult     `json:"pairwise"`
	Runs         []RunSummary     `json:"runs"`
	Categories   []string         `json:"categories"`
	// Workspace is the directory every contender read and GroundTruth the
	// planted-defects file; absent without them, and so are the
	// contenders' evidence and ground_truth and the correlation.
	Workspace   string `json:"workspace,omitempty"`
	GroundTruth string `json:"ground_truth,omitempty"`
	// Correlation is Pearson's r between Shadow Score and recall over
	// contenders × repeats (only with a ground truth).
	Correlation *Correlation `json:"shadow_recall_correlation,omitempty"`
	// MaxFabricationRate is compare.max_fabrication_rate: a contender whose
	// fabrication rate's 95% interval lies entirely above it is untrusted.
	MaxFabricationRate float64 `json:"max_fabrication_rate"`
}

// ContenderStats summarises one contender over its repeats. Tokens, cost,
// latency and failure classes are those of the contender's own calls in the
// roles being compared; the Run* fields are whole-run totals (judge,
// reviewers, workers and everyone else included).
//
// Every planned bundle of every repeat counts: a bundle that failed or was
// not judged counts as a Shadow Score of 100 (every sealed criterion
// failed) in the scores, intervals, pass rates and paired tests, and is
// counted in BundlesFailed. A contender that judged no bundle at all has
// NoResult set: it is ranked after every contender with a result, has no
// tier, and compare.json gives it no median, mean, interval or tier.
type ContenderStats struct {
	Rank   int       `json:"rank"`
	Model  string    `json:"model"`
	Tier   int       `json:"tier"`             // 1 + how many contenders are distinguishably better; 0 with NoResult
	Scores []float64 `json:"aggregate_scores"` // per repeat: RunSummary.Score
	Median float64   `json:"median"`
	Mean   float64   `json:"mean"`
	CI95   Interval  `json:"ci95"`
	// BundlesPlanned counts the planned bundles over every repeat; of
	// them BundlesJudged were judged and BundlesFailed (the rest) failed or
	// were not judged. FailureRate is BundlesFailed / BundlesPlanned.
	BundlesPlanned int     `json:"bundles_planned"`
	BundlesJudged  int     `json:"bundles_judged"`
	BundlesFailed  int     `json:"bundles_failed"`
	FailureRate    float64 `json:"failure_rate"`
	// BundleFailures counts the failed bundles by failure class (or
	// "failed" / "unjudged" when the class is unknown).
	BundleFailures map[string]int `json:"bundle_failure_classes"`
	// NoResult: not one bundle was judged in any repeat.
	NoResult bool `json:"no_result"`
	// BundleScores is each bundle's initial Shadow Score per repeat, by
	// domain (100 for a repeat where it failed); BundleMean its mean over
	// repeats; BundleFailed how many repeats it failed in.
	BundleScores      map[string][]float64 `json:"bundle_scores"`
	BundleMean        map[string]float64   `json:"bundle_mean"`
	BundleFailed      map[string]int       `json:"bundle_failed"`
	Levels            map[string]int       `json:"levels"`
	CriterionPassRate map[string]float64   `json:"criterion_pass_rate"`
	CategoryFailRate  map[string]float64   `json:"category_failure_rate"`
	// Velocity is the mean hardening velocity of the bundles that were
	// hardened; nil when hardening did not run (e.g. off at ss-50).
	Velocity     *float64       `json:"hardening_velocity"`
	Hardened     int            `json:"bundles_hardened"`
	Gates        map[string]int `json:"gates"`
	ReviewScore  float64        `json:"review_score"`
	Toxicity     float64        `json:"toxicity"`
	QualityGap   float64        `json:"quality_gap"`
	Calls        int            `json:"calls"`
	InputTokens  int            `json:"input_tokens"`
	OutputTokens int            `json:"output_tokens"`
	CostUSD      float64        `json:"cost_usd"`
	// TokenParts are its runs' (RunSummary's), summed.
	TokenParts
	// Unpriced are the models of the contender's own calls (RunUnpriced: of
	// the whole runs) that had no known price: CostUSD (RunCostUSD) leaves
	// them out, a lower bound, shown as "≥" or "—", never as a full sum.
	Unpriced          []string       `json:"unpriced_models,omitempty"`
	RunUnpriced       []string       `json:"run_unpriced_models,omitempty"`
	LatencyP50MS      float64        `json:"latency_p50_ms"`
	LatencyP95MS      float64        `json:"latency_p95_ms"`
	Failures          map[string]int `json:"failure_classes"`
	RunInputTokens    int            `json:"run_input_tokens"`
	RunOutputTokens   int            `json:"run_output_tokens"`
	RunCostUSD        float64        `json:"run_cost_usd"`
	RunFailures       map[string]int `json:"run_failure_classes"`
	JudgeDisagreement float64        `json:"judge_disagreement"`
	Advisory          bool           `json:"advisory"`
	AdvisoryReason    string         `json:"advisory_reason,omitempty"`
	// NotDistinguishable lists every contender this one cannot be told
	// apart from (not only its neighbours: the relation is not transitive).
	NotDistinguishable []string `json:"not_distinguishable_from"`
	TiedWithNext       bool     `json:"not_distinguishable_from_next"`
	// Evidence is the contender's citations and fabrication rate (only with
	// a workspace); GroundTruth its recall and precision (only with a
	// ground truth).
	Evidence    *EvidenceStats    `json:"evidence,omitempty"`
	GroundTruth *GroundTruthStats `json:"ground_truth,omitempty"`
	// Untrusted: the contender's fabrication rate interval lies entirely
	// above compare.max_fabrication_rate (UntrustedReason says by how
	// much). It is ranked after every trusted contender, whatever its
	// Shadow Score: a score earned on fabricated evidence is not a result.
	Untrusted       bool   `json:"untrusted"`
	UntrustedReason string `json:"untrusted_reason,omitempty"`
	latencies       []float64
}

// MarshalJSON writes a contender without a result with null median, mean,
// interval, scores, tier, review score and judge disagreement: it has none.
func (c ContenderStats) MarshalJSON() ([]byte, error) {
	type plain ContenderStats
	out := struct {
		plain
		Tier   *int      `json:"tier"`
		Scores []float64 `json:"aggregate_scores"`
		Median *float64  `json:"median"`
		Mean   *float64  `json:"mean"`
		CI95   *Interval `json:"ci95"`
		Review *float64  `json:"review_score"`
		JudgeD *float64  `json:"judge_disagreement"`
	}{plain: plain(c)}
	if !c.NoResult {
		out.Tier, out.Scores, out.Median, out.Mean, out.CI95 = &c.Tier, c.Scores, &c.Median, &c.Mean, &c.CI95
		out.Review, out.JudgeD = &c.ReviewScore, &c.JudgeDisagreement
	}
	return json.Marshal(out)
}

// PairResult compares two contenders.
type PairResult struct {
	First   string  `json:"a"`
	Second  string  `json:"b"`
	Paired  int     `json:"paired_verdicts"`
	McNemar McNemar `json:"mcnemar"`
	// PHolm is McNemar's p adjusted for every pair of the comparison
	// (Holm–Bonferroni); it is what decides distinguishability.
	PHolm           float64         `json:"p_holm"`
	PerCriterion    []CriterionPair `json:"per_criterion"`
	MeanDiff        float64         `json:"mean_score_difference"` // a − b (lower score is better)
	DiffCI95        Interval        `json:"difference_ci95"`
	Distinguishable bool            `json:"distinguishable"`
	Better          string          `json:"better,omitempty"`
	Advisory        bool            `json:"advisory"`
	AdvisoryReason  string          `json:"advisory_reason,omitempty"`
	// NoResult names the pair's contenders that judged no bundle. With one,
	// the other is better whatever the tests say; with two, neither is.
	NoResult []string `json:"no_result,omitempty"`
	// Untrusted names the pair's untrusted contenders (fabrication). When
	// both have a result and only one is untrusted, the other is better
	// whatever the tests say.
	Untrusted []string `json:"untrusted,omitempty"`
}

// CriterionPair is one sealed criterion judged for both contenders of a
// pair, pooled over bundles and repeats.
type CriterionPair struct {
	ID       string  `json:"id"`
	Category string  `json:"category"`
	Paired   int     `json:"paired"`
	Both     int     `json:"both_passed"`
	Neither  int     `json:"neither_passed"`
	McNemar  McNemar `json:"mcnemar"`
}

const (
	bootstrapB = 4000
	alpha      = 0.05
)

func seedOf(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// Analyse computes every statistic from the run summaries.
func Analyse(o Options, hash, judge, seal string, runs []RunSummary) *Report {
	r := &Report{Mission: o.MissionName, Scale: o.Scale, Roles: o.Roles, Repeats: o.Repeats, SealedHash: hash, Judge: judge, SealAuthor: seal,
		JudgeSamples: max(o.JudgeSamples, 1), Runs: runs, Categories: shadow.SpecCategories}
	for rep := 0; rep < o.Repeats; rep++ {
		r.Seeds = append(r.Seeds, o.Seed+int64(rep))
	}
	ws, gt := hasWorkspace(o, runs), hasGroundTruth(o, runs)
	r.Workspace, r.GroundTruth = o.Workspace, o.GroundTruth
	r.MaxFabricationRate = config.DefaultMaxFabricationRate
	if o.Config != nil {
		r.MaxFabricationRate = o.Config.Compare.MaxFabricationRate
	}
	crit := criteriaOf(runs)
	by := map[string][]RunSummary{}
	for i := range runs {
		runs[i].Score = Score(runs[i]) // once: contenderStats and pair read it
		by[runs[i].Contender] = append(by[runs[i].Contender], runs[i])
	}
	for _, m := range o.Models {
		if _, dup := findStats(r.Contenders, m); dup {
			continue
		}
		c := contenderStats(m, by[m], crit)
		if ws {
			c.Evidence = evidenceStats(by[m])
			c.Untrusted, c.UntrustedReason = untrusted(c.Evidence, r.MaxFabricationRate)
		}
		if gt {
			c.GroundTruth = groundTruthStats(by[m])
		}
		r.Contenders = append(r.Contenders, c)
	}
	if gt {
		r.Correlation = shadowRecallCorrelation(runs)
	}
	// Pairs in the order given, Holm-adjusted together.
	for i := range r.Contenders {
		for j := i + 1; j < len(r.Contenders); j++ {
			a, b := r.Contenders[i], r.Contenders[j]
			p := pair(a.Model, b.Model, by[a.Model], by[b.Model], crit)
			if a.Advisory || b.Advisory {
				p.Advisory = true
				p.AdvisoryReason = joinReasons(a, b)
			}
			for _, c := range []ContenderStats{a, b} {
				if c.NoResult {
					p.NoResult = append(p.NoResult, c.Model)
				}
				if c.Untrusted {
					p.Untrusted = append(p.Untrusted, c.Model)
				}
			}
			r.Pairwise = append(r.Pairwise, p)
		}
	}
	decide(r.Pairwise)
	rank(r)
	return r
}

func joinReasons(cs ...ContenderStats) string {
	s := ""
	for _, c := range cs {
		if c.Advisory {
			if s != "" {
				s += "; "
			}
			s += c.Model + ": " + c.AdvisoryReason
		}
	}
	return s
}

// Complete reports whether every contender judged every planned bundle of
// every repeat.
func (r *Report) Complete() bool { return len(r.Failing()) == 0 }

// criteriaOf is the sealed criteria (id -> category) the runs were judged
// against: those the runs recorded and every verdict's.
func criteriaOf(runs []RunSummary) map[string]string {
	crit := map[string]string{}
	for _, s := range runs {
		for id, cat := range s.Criteria {
			crit[id] = cat
		}
		for _, b := range s.Bundles {
			for id := range b.Verdicts {
				if _, ok := crit[id]; !ok || crit[id] == "" {
					crit[id] = b.Category[id]
				}
			}
		}
	}
	return crit
}

// verdictsOf is the verdicts of one planned bundle of a run: the judge's,
// or, for a bundle that failed or was not judged, every criterion failed.
func verdictsOf(s RunSummary, dom string, crit map[string]string) (verdicts map[string]bool, category map[string]string) {
	if b, ok := s.Bundles[dom]; ok {
		return b.Verdicts, b.Category
	}
	verdicts = make(map[string]bool, len(crit))
	for id := range crit {
		verdicts[id] = false
	}
	return verdicts, crit
}

// decide adjusts the pairs' McNemar p-values for multiplicity (Holm) and
// says which pairs are distinguishable: the paired bootstrap interval of
// the score difference excludes 0, the adjusted exact test rejects at 5%,
// and both point the same way. A contender that judged nothing is worse
// than one that judged something, whatever the tests say (its p-values
// still count in Holm's adjustment, which only makes it more cautious).
func decide(ps []PairResult) {
	raw := make([]float64, len(ps))
	for i, p := range ps {
		raw[i] = p.McNemar.P
	}
	adj := Holm(raw)
	for i := range ps {
		p := &ps[i]
		p.PHolm = adj[i]
		// Lower score is better: a better means MeanDiff < 0 and more
		// criteria passed by a alone than by b alone.
		aBetter := p.DiffCI95.Hi < 0 && p.McNemar.B > p.McNemar.C
		bBetter := p.DiffCI95.Lo > 0 && p.McNemar.C > p.McNemar.B
		p.Distinguishable = (aBetter || bBetter) && p.PHolm < alpha
		p.Better = ""
		if p.Distinguishable {
			p.Better = p.First
			if bBetter {
				p.Better = p.Second
			}
		}
		switch {
		case len(p.NoResult) == 2:
			p.Distinguishable, p.Better = false, ""
		case len(p.NoResult) == 1:
			p.Distinguishable, p.Better = true, p.First
			if p.NoResult[0] == p.First {
				p.Better = p.Second
			}
		case len(p.Untrusted) == 1:
			// Fabricated evidence is not beaten on points: the trusted
			// contender is better, however close the scores.
			p.Distinguishable, p.Better = true, p.First
			if p.Untrusted[0] == p.First {
				p.Better = p.Second
			}
		}
	}
}

// Holm returns the Holm–Bonferroni adjusted p-values (step-down, made
// monotone, capped at 1) in the order given.
func Holm(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	out := make([]float64, m)
	run := 0.0
	for k, i := range idx {
		v := math.Min(1, float64(m-k)*ps[i])
		run = math.Max(run, v)
		out[i] = run
	}
	return out
}

// rank orders the contenders: by tier (1 + the number of contenders that
// are distinguishably better), then by mean score, then as given. Two
// contenders share a tier only when nothing separates them from above; the
// full "not distinguishable from" lists are kept because the relation is
// not transitive (A ≈ B and B ≈ C while A beats C). Contenders without a
// result come after every contender with one, with no tier and no "≈":
// there is no score to tell them apart by. Untrusted contenders (with a
// result) come after every trusted one: each trusted contender is better
// than each untrusted one (decide), so their tiers are below every trusted
// tier too.
func rank(r *Report) {
	better := map[string]int{}
	same := map[string][]string{}
	for _, p := range r.Pairwise {
		switch {
		case len(p.NoResult) > 0:
			// Not a comparison of two results: no tier, no tie.
		case !p.Distinguishable:
			same[p.First] = append(same[p.First], p.Second)
			same[p.Second] = append(same[p.Second], p.First)
		case p.Better == p.First:
			better[p.Second]++
		default:
			better[p.First]++
		}
	}
	for i := range r.Contenders {
		c := &r.Contenders[i]
		c.Tier = 1 + better[c.Model]
		if c.NoResult {
			c.Tier = 0
		}
		c.NotDistinguishable = append([]string{}, same[c.Model]...)
	}
	sort.SliceStable(r.Contenders, func(i, j int) bool {
		a, b := r.Contenders[i], r.Contenders[j]
		if a.NoResult != b.NoResult {
			return b.NoResult
		}
		if a.NoResult {
			return false // as given
		}
		if a.Untrusted != b.Untrusted {
			return b.Untrusted
		}
		if a.Tier != b.Tier {
			return a.Tier < b.Tier
		}
		return a.Mean < b.Mean
	})
	pos := map[string]int{}
	for i := range r.Contenders {
		r.Contenders[i].Rank = i + 1
		pos[r.Contenders[i].Model] = i
	}
	for i := range r.Contenders {
		sort.Slice(r.Contenders[i].NotDistinguishable, func(a, b int) bool {
			return pos[r.Contenders[i].NotDistinguishable[a]] < pos[r.Contenders[i].NotDistinguishable[b]]
		})
		if i+1 < len(r.Contenders) {
			for _, m := range r.Contenders[i].NotDistinguishable {
				if m == r.Contenders[i+1].Model {
					r.Contenders[i].TiedWithNext = true
				}
			}
		}
	}
}

func findStats(cs []ContenderStats, m string) (ContenderStats, bool) {
	for _, c := range cs {
		if c.Model == m {
			return c, true
		}
	}
	return ContenderStats{}, false
}

func contenderStats(m string, runs []RunSummary, crit map[string]string) ContenderStats {
	c := ContenderStats{Model: m, BundleScores: map[string][]float64{}, BundleMean: map[string]float64{}, BundleFailed: map[string]int{},
		BundleFailures: map[string]int{}, Levels: map[string]int{}, CriterionPassRate: map[string]float64{}, CategoryFailRate: map[string]float64{},
		Gates: map[string]int{}, Failures: map[string]int{}, RunFailures: map[string]int{}, NotDistinguishable: []string{}}
	passN, totN := map[string]int{}, map[string]int{}
	catFail, catN := map[string]int{}, map[string]int{}
	var rev, tox, gap, dis []float64
	var velSum float64
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Repeat < runs[j].Repeat })
	for _, s := range runs {
		c.Scores = append(c.Scores, s.Score)
		for _, dom := range plannedOf(s) {
			c.BundlesPlanned++
			b, judged := s.Bundles[dom]
			if judged {
				c.BundlesJudged++
				c.BundleScores[dom] = append(c.BundleScores[dom], b.Initial)
				c.Levels[b.Level]++
				c.Gates[b.Gate]++
			} else {
				c.BundlesFailed++
				c.BundleFailed[dom]++
				c.BundleFailures[s.Unscored[dom].Class()]++
				c.BundleScores[dom] = append(c.BundleScores[dom], 100)
			}
			verdicts, cats := verdictsOf(s, dom, crit)
			for id, ok := range verdicts {
				totN[id]++
				cat := cats[id]
				catN[cat]++
				if ok {
					passN[id]++
				} else {
					catFail[cat]++
				}
			}
		}
		if s.Hardened > 0 {
			velSum += s.Velocity * float64(s.Hardened)
			c.Hardened += s.Hardened
		}
		tox, gap = append(tox, s.Toxicity), append(gap, s.QualityGap)
		// Review score and judge disagreement are means over judged
		// bundles: a run without one has neither.
		if len(s.Bundles) > 0 {
			rev, dis = append(rev, s.ReviewScore), append(dis, s.Disagreement)
		}
		c.Calls += s.Calls
		c.InputTokens += s.InputTokens
		c.OutputTokens += s.OutputTokens
		c.TokenParts.add(s.TokenParts)
		c.CostUSD += s.CostUSD
		c.RunInputTokens += s.RunInputTokens
		c.RunOutputTokens += s.RunOutputTokens
		c.RunCostUSD += s.RunCostUSD
		c.Unpriced = union(c.Unpriced, s.Unpriced)
		c.RunUnpriced = union(c.RunUnpriced, s.RunUnpriced)
		c.latencies = append(c.latencies, s.LatenciesMS...)
		for k, v := range s.Failures {
			c.Failures[k] += v
		}
		for k, v := range s.RunFailures {
			c.RunFailures[k] += v
		}
		if s.Advisory {
			c.Advisory, c.AdvisoryReason = true, s.AdvisoryWhy
		}
	}
	for dom, xs := range c.BundleScores {
		c.BundleMean[dom] = stats.Mean(xs)
	}
	for id, n := range totN {
		c.CriterionPassRate[id] = float64(passN[id]) / float64(n)
	}
	for cat, n := range catN {
		c.CategoryFailRate[cat] = float64(catFail[cat]) / float64(n)
	}
	if c.BundlesPlanned > 0 {
		c.FailureRate = float64(c.BundlesFailed) / float64(c.BundlesPlanned)
	}
	c.NoResult = c.BundlesJudged == 0
	c.Mean = stats.Mean(c.Scores)
	c.Median = stats.Quantile(c.Scores, 0.5)
	c.CI95 = BootstrapMeanCI(c.Scores, 0.95, bootstrapB, seedOf("ci95"))
	if c.Hardened > 0 {
		v := velSum / float64(c.Hardened)
		c.Velocity = &v
	}
	c.ReviewScore, c.Toxicity, c.QualityGap, c.JudgeDisagreement = stats.Mean(rev), stats.Mean(tox), stats.Mean(gap), stats.Mean(dis)
	sort.Float64s(c.latencies)
	if len(c.latencies) > 0 {
		c.LatencyP50MS, c.LatencyP95MS = stats.QuantileSorted(c.latencies, 0.5), stats.QuantileSorted(c.latencies, 0.95)
	}
	return c
}

// union is a and b without repeats, sorted (nil when both are empty).
func union(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// pair compares a and b: the same criterion on the same bundle domain in the
// same repeat, for both (exact McNemar, pooled and per criterion), and the
// paired bootstrap of the per-repeat score difference. A bundle that failed
// or was not judged failed every criterion. Distinguishability is decided
// over all pairs together (decide).
func pair(a, b string, ra, rb []RunSummary, crit map[string]string) PairResult {
	p := PairResult{First: a, Second: b, PerCriterion: []CriterionPair{}}
	byRep := map[int]RunSummary{}
	for _, s := range rb {
		byRep[s.Repeat] = s
	}
	sort.SliceStable(ra, func(i, j int) bool { return ra[i].Repeat < ra[j].Repeat })
	var da, db []float64
	bOnly, cOnly := 0, 0
	type tally struct {
		cat                            string
		n, both, neither, aOnly, bOnly int
	}
	per := map[string]*tally{}
	for _, sa := range ra {
		sb, ok := byRep[sa.Repeat]
		if !ok {
			continue
		}
		da, db = append(da, sa.Score), append(db, sb.Score)
		inB := map[string]bool{}
		for _, d := range plannedOf(sb) {
			inB[d] = true
		}
		for _, dom := range plannedOf(sa) {
			if !inB[dom] {
				continue
			}
			va, ca := verdictsOf(sa, dom, crit)
			vb, cb := verdictsOf(sb, dom, crit)
			for id, pa := range va {
				pb, ok := vb[id]
				if !ok {
					continue
				}
				t := per[id]
				if t == nil {
					cat := ca[id]
					if cat == "" {
						cat = cb[id]
					}
					t = &tally{cat: cat}
					per[id] = t
				}
				t.n++
				p.Paired++
				switch {
				case pa && pb:
					t.both++
				case !pa && !pb:
					t.neither++
				case pa:
					bOnly++
					t.aOnly++
				default:
					cOnly++
					t.bOnly++
				}
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(per)) {
		t := per[id]
		p.PerCriterion = append(p.PerCriterion, CriterionPair{ID: id, Category: t.cat, Paired: t.n, Both: t.both, Neither: t.neither, McNemar: McNemarExact(t.aOnly, t.bOnly)})
	}
	p.McNemar = McNemarExact(bOnly, cOnly)
	p.MeanDiff = stats.Mean(da) - stats.Mean(db)
	// One seed for every pair: identical data gives identical intervals
	// whatever the contenders are called.
	p.DiffCI95 = BootstrapDiffCI(da, db, 0.95, bootstrapB, seedOf("diff95"))
	if math.IsNaN(p.MeanDiff) {
		p.MeanDiff = 0
	}
	return p
}
