package compare

import (
	"embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/swarm-dev/swarm/config"
)

// templateFS holds compare.md's and compare.html's templates.
//
//go:embed templates/compare.md.tmpl templates/compare.html.tmpl
var templateFS embed.FS

// markdownTemplate renders compare.md from a markdownView; it holds the
// layout, markdownView the computations.
var markdownTemplate = template.Must(template.ParseFS(templateFS, "templates/compare.md.tmpl"))

// Markdown renders compare.md.
func (r *Report) Markdown() string {
	var b strings.Builder
	if err := markdownTemplate.Execute(&b, r.markdownView()); err != nil {
		// The view holds only strings, numbers and slices of them: a
		// failure here is a bug in the template, which the tests render.
		panic(fmt.Sprintf("compare.md template: %v", err))
	}
	return b.String()
}

// markdownView is what templates/compare.md.tmpl shows, every number
// formatted; contenders in rank order.
type markdownView struct {
	Mission, Scale, Roles         string
	Repeats                       int
	Seeds                         string
	Judge, SealAuthor, SealedHash string
	JudgeSamples                  int
	Advisories                    []ContenderStats
	Untrusted                     []failingNote
	UntrustedRule                 string
	Failing                       []failingNote
	FailureRule                   string
	Ranking                       []rankRow
	Quality                       []qualityRow
	Domains                       []string
	PerBundle                     []bundleRow
	Criteria                      []string
	PassRates                     []cellRow
	Categories                    []string
	FailRates                     []cellRow
	Pairs                         []pairRow
	PerCriterion                  []criterionRow
	Evidence                      evidenceView
	// Unpriced warns that some calls had no known price ("" when all had).
	Unpriced string
}

// failingNote says why a contender's bundles failed (without its name).
type failingNote struct {
	Model, Line string
}

type rankRow struct {
	Rank               int
	Model              string
	NoResult           bool // no tier, score or interval
	Tier               int
	Median, Mean       string
	CILo, CIHi         string
	Failed             string
	NotDistinguishable []string
	Advisory           bool
	AdvisoryReason     string
	Untrusted          bool
}

type qualityRow struct {
	Model                     string
	Velocity, Review          string
	Toxicity, QualityGap      string
	JudgeD                    string
	Calls                     int
	InputTokens, OutputTokens int
	TokenDetail               string // the cache and reasoning parts; "" when none was reported
	Cost, RunCost             string
	P50, P95                  string
	Failures                  string
}

// bundleRow is a contender's cell per bundle domain, with its levels and
// gates.
type bundleRow struct {
	Model         string
	Cells         []string
	Levels, Gates string
}

// cellRow is a contender's rate per criterion or category ("—" where it has none).
type cellRow struct {
	Model string
	Cells []string
}

type pairRow struct {
	First, Second   string
	Paired          int
	OnlyA, OnlyB    int
	P, PHolm        string
	Diff            string
	CILo, CIHi      string
	Distinguishable bool
	Better          string
	NoResult        []string
	Untrusted       []string
	Advisory        bool
}

type criterionRow struct {
	First, Second, ID, Category string
	Paired, Both, Neither       int
	OnlyA, OnlyB                int
	P                           string
}

func (r *Report) markdownView() markdownView {
	v := markdownView{
		Mission: r.Mission, Scale: r.Scale, Roles: r.Roles, Repeats: r.Repeats, Seeds: seedList(r.Seeds),
		Judge: r.Judge, SealAuthor: r.SealAuthor, SealedHash: r.SealedHash, JudgeSamples: r.JudgeSamples,
		Advisories: r.Advisories(), FailureRule: failureRule,
		Domains: r.domains(), Criteria: r.criteria(), Categories: r.Categories,
		Evidence: r.evidenceView(),
	}
	if u := r.unpriced(); len(u) > 0 {
		v.Unpriced = config.CeilingWarning(u)
	}
	for _, c := range r.Untrusted() {
		v.Untrusted = append(v.Untrusted, failingNote{Model: c.Model, Line: c.UntrustedReason})
	}
	if len(v.Untrusted) > 0 {
		v.UntrustedRule = r.untrustedRule()
	}
	for _, c := range r.Failing() {
		v.Failing = append(v.Failing, failingNote{Model: c.Model, Line: strings.TrimPrefix(failureLine(c), c.Model+": ")})
	}
	for _, c := range r.Contenders {
		v.Ranking = append(v.Ranking, rankRow{Rank: c.Rank, Model: c.Model, NoResult: c.NoResult, Tier: c.Tier,
			Median: f1(c.Median), Mean: f1(c.Mean), CILo: f1(c.CI95.Lo), CIHi: f1(c.CI95.Hi), Failed: failedCell(c),
			NotDistinguishable: c.NotDistinguishable, Advisory: c.Advisory, AdvisoryReason: c.AdvisoryReason, Untrusted: c.Untrusted})
		q := qualityRow{Model: c.Model, Velocity: velocity(c.Velocity), Review: fmt.Sprintf("%.2f", c.ReviewScore),
			Toxicity: fmt.Sprintf("%.3f", c.Toxicity), QualityGap: fmt.Sprintf("%.3f", c.QualityGap), JudgeD: r.judgeD(c.JudgeDisagreement),
			Calls: c.Calls, InputTokens: c.InputTokens, OutputTokens: c.OutputTokens, TokenDetail: tokenDetail(c),
			Cost: config.FormatCost(c.CostUSD, c.Unpriced), RunCost: config.FormatCost(c.RunCostUSD, c.RunUnpriced),
			P50: fmt.Sprintf("%.2f", c.LatencyP50MS), P95: fmt.Sprintf("%.2f", c.LatencyP95MS), Failures: counts(c.Failures)}
		if c.NoResult {
			q.Review, q.JudgeD = "—", "—" // no judged bundle to review or judge
		}
		v.Quality = append(v.Quality, q)
		b := bundleRow{Model: c.Model, Levels: counts(c.Levels), Gates: counts(c.Gates)}
		for _, d := range v.Domains {
			b.Cells = append(b.Cells, bundleCell(c, d))
		}
		v.PerBundle = append(v.PerBundle, b)
		v.PassRates = append(v.PassRates, cellRow{Model: c.Model, Cells: percents(c.CriterionPassRate, v.Criteria)})
		v.FailRates = append(v.FailRates, cellRow{Model: c.Model, Cells: percents(c.CategoryFailRate, v.Categories)})
	}
	for _, p := range r.Pairwise {
		v.Pairs = append(v.Pairs, pairRow{First: p.First, Second: p.Second, Paired: p.Paired, OnlyA: p.McNemar.B, OnlyB: p.McNemar.C,
			P: pval(p.McNemar.P), PHolm: pval(p.PHolm), Diff: fmt.Sprintf("%+.1f", p.MeanDiff), CILo: f1(p.DiffCI95.Lo), CIHi: f1(p.DiffCI95.Hi),
			Distinguishable: p.Distinguishable, Better: p.Better, NoResult: p.NoResult, Untrusted: p.Untrusted, Advisory: p.Advisory})
		for _, c := range p.PerCriterion {
			v.PerCriterion = append(v.PerCriterion, criterionRow{First: p.First, Second: p.Second, ID: c.ID, Category: c.Category,
				Paired: c.Paired, Both: c.Both, Neither: c.Neither, OnlyA: c.McNemar.B, OnlyB: c.McNemar.C, P: pval(c.McNemar.P)})
		}
	}
	return v
}

func f1(x float64) string { return fmt.Sprintf("%.1f", x) }

// percents is m's rate of each key as a whole percentage (percent).
func percents(m map[string]float64, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = percent(m, k)
	}
	return out
}

// percent is m's rate of k as a whole percentage, "—" when m lacks k.
func percent(m map[string]float64, k string) string {
	if v, ok := m[k]; ok {
		return fmt.Sprintf("%.0f%%", 100*v)
	}
	return "—"
}

// tokenDetail is the cache and reasoning parts of a contender's tokens
// (config.TokenDetail); "" when its provider reported none.
func tokenDetail(c ContenderStats) string {
	return config.TokenDetail(c.InputTokens, c.ReasoningTokens, c.CacheReadTokens, c.CacheWriteTokens)
}
