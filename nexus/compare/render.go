package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Write writes compare.json, compare.md and compare.html into dir.
func (r *Report) Write(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "compare.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "compare.md"), []byte(r.Markdown()), 0o644); err != nil {
		return err
	}
	h, err := r.HTML()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "compare.html"), []byte(h), 0o644)
}

// velocity formats a hardening velocity that may not have been measured.
func velocity(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", *v)
}

// judgeD formats judge disagreement, which needs k > 1 samples.
func (r *Report) judgeD(d float64) string {
	if r.JudgeSamples <= 1 {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", d)
}

// Advisories lists the contenders whose results are advisory, with why.
func (r *Report) Advisories() []ContenderStats {
	var out []ContenderStats
	for _, c := range r.Contenders {
		if c.Advisory {
			out = append(out, c)
		}
	}
	return out
}

// failedCell says how many of a contender's planned bundles failed.
func failedCell(c ContenderStats) string {
	if c.BundlesFailed == 0 {
		return fmt.Sprintf("0 of %d", c.BundlesPlanned)
	}
	return fmt.Sprintf("%d of %d (%.0f%%)", c.BundlesFailed, c.BundlesPlanned, 100*c.FailureRate)
}

// Failing lists the contenders with failed or unjudged bundles.
func (r *Report) Failing() []ContenderStats {
	var out []ContenderStats
	for _, c := range r.Contenders {
		if c.BundlesFailed > 0 || c.BundlesPlanned == 0 {
			out = append(out, c)
		}
	}
	return out
}

// failureLine explains one failing contender in words.
func failureLine(c ContenderStats) string {
	if c.NoResult {
		return fmt.Sprintf("%s: no result: none of its %d planned bundles was judged (%s); it is ranked last, with no score and no tier.",
			c.Model, c.BundlesPlanned, counts(c.BundleFailures))
	}
	return fmt.Sprintf("%s: %d of %d planned bundles failed or were not judged (%s); each counts as Shadow Score 100.",
		c.Model, c.BundlesFailed, c.BundlesPlanned, counts(c.BundleFailures))
}

const failureRule = "A bundle that failed or was not judged counts as Shadow Score 100 (every sealed criterion failed) in the median, mean, interval, pass rates and paired tests; " +
	"a contender that judged no bundle has no result: it is ranked after every contender with one, with no score, no interval and no tier."

// Table renders the ranked table for the terminal.
func (r *Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-4s %-4s %-26s %7s %7s %15s %14s %6s %9s %9s %17s  %s\n", "rank", "tier", "contender", "median", "mean", "95% CI", "failed", "calls", "tokens", "cost $", "p50 / p95 ms", "")
	for _, c := range r.Contenders {
		var note []string
		if len(c.NotDistinguishable) > 0 {
			note = append(note, "≈ "+strings.Join(c.NotDistinguishable, ", "))
		}
		if c.Advisory {
			note = append(note, "[advisory]")
		}
		failed := fmt.Sprintf("%d/%d", c.BundlesFailed, c.BundlesPlanned)
		if c.NoResult {
			fmt.Fprintf(&b, "%-4d %-4s %-26s %-31s %14s %6d %9d %9.4f %8.2f / %6.2f  %s\n", c.Rank, "—", c.Model, "no result (nothing judged)",
				failed, c.Calls, c.InputTokens+c.OutputTokens, c.CostUSD, c.LatencyP50MS, c.LatencyP95MS, strings.Join(note, " "))
			continue
		}
		fmt.Fprintf(&b, "%-4d %-4d %-26s %7.1f %7.1f  [%5.1f, %5.1f] %14s %6d %9d %9.4f %8.2f / %6.2f  %s\n", c.Rank, c.Tier, c.Model, c.Median, c.Mean, c.CI95.Lo, c.CI95.Hi,
			failed, c.Calls, c.InputTokens+c.OutputTokens, c.CostUSD, c.LatencyP50MS, c.LatencyP95MS, strings.Join(note, " "))
	}
	b.WriteString("Shadow Score: % of sealed criteria failed (lower is better); 95% bootstrap CI over repeats. Tier: 1 + contenders distinguishably better.\n")
	b.WriteString("≈: not distinguishable (paired bootstrap CI of the difference contains 0, or Holm-adjusted exact McNemar p ≥ 0.05).\n")
	b.WriteString("failed: planned bundles (all repeats) that failed or were not judged. " + failureRule + "\n")
	b.WriteString("Calls, tokens, cost and latency are the contender's own calls in the roles compared (" + r.Roles + ").\n")
	for _, c := range r.Failing() {
		b.WriteString("[failed] " + failureLine(c) + "\n")
	}
	for _, c := range r.Advisories() {
		fmt.Fprintf(&b, "[advisory] %s: %s; its results and every pair it is in are advisory.\n", c.Model, c.AdvisoryReason)
	}
	return b.String()
}

// Markdown renders compare.md.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Compare: %s\n\n", r.Mission)
	fmt.Fprintf(&b, "Scale %s · roles compared: %s · %d repeats (seeds %s) · judge `%s` (k = %d samples per verdict) · seal author `%s` · sealed `%s`\n\n",
		r.Scale, r.Roles, r.Repeats, seedList(r.Seeds), r.Judge, r.JudgeSamples, r.SealAuthor, r.SealedHash)
	for _, c := range r.Advisories() {
		fmt.Fprintf(&b, "> **Advisory** `%s`: %s. Its results, and every pair it is in, are advisory: a judge or seal author of the same family may favour it.\n\n", c.Model, c.AdvisoryReason)
	}
	for _, c := range r.Failing() {
		b.WriteString("> **Failed bundles** `" + c.Model + "`: " + strings.TrimPrefix(failureLine(c), c.Model+": ") + "\n\n")
	}
	b.WriteString("Shadow Score is the share of sealed criteria a contender's bundles failed before hardening: **lower is better**. " +
		"Intervals are 95% percentile bootstrap intervals over repeats. Tier is 1 + the number of contenders distinguishably better. " +
		failureRule + " " +
		"Calls, tokens, cost and latency are the contender's own calls in the roles compared; run cost is the whole run (judge and every other role included).\n\n")
	b.WriteString("## Ranking\n\n| rank | tier | contender | median | mean | 95% CI | bundles failed | not distinguishable from | advisory |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range r.Contenders {
		adv := "—"
		if c.Advisory {
			adv = "yes: " + c.AdvisoryReason
		}
		nd := "—"
		if len(c.NotDistinguishable) > 0 {
			nd = "`" + strings.Join(c.NotDistinguishable, "`, `") + "`"
		}
		if c.NoResult {
			fmt.Fprintf(&b, "| %d | — | `%s` | no result | — | — | %s | %s | %s |\n", c.Rank, c.Model, failedCell(c), nd, adv)
			continue
		}
		fmt.Fprintf(&b, "| %d | %d | `%s` | %.1f | %.1f | [%.1f, %.1f] | %s | %s | %s |\n", c.Rank, c.Tier, c.Model, c.Median, c.Mean, c.CI95.Lo, c.CI95.Hi, failedCell(c), nd, adv)
	}
	b.WriteString("\n## Quality, cost and latency\n\n| contender | hardening velocity | review score | toxicity | quality gap | judge D | calls | tokens in / out | cost | run cost | latency p50 / p95 ms | failure classes |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range r.Contenders {
		review, judgeD := fmt.Sprintf("%.2f", c.ReviewScore), r.judgeD(c.JudgeDisagreement)
		if c.NoResult {
			review, judgeD = "—", "—" // no judged bundle to review or judge
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %.3f | %.3f | %s | %d | %d / %d | $%.4f | $%.4f | %.2f / %.2f | %s |\n",
			c.Model, velocity(c.Velocity), review, c.Toxicity, c.QualityGap, judgeD, c.Calls, c.InputTokens, c.OutputTokens,
			c.CostUSD, c.RunCostUSD, c.LatencyP50MS, c.LatencyP95MS, counts(c.Failures))
	}
	domains := r.domains()
	b.WriteString("\n## Shadow Score per bundle (mean over repeats; a failed bundle counts as 100)\n\n| contender |")
	for _, d := range domains {
		fmt.Fprintf(&b, " %s |", d)
	}
	b.WriteString(" levels | gates |\n|---|" + strings.Repeat("---|", len(domains)+2) + "\n")
	for _, c := range r.Contenders {
		fmt.Fprintf(&b, "| `%s` |", c.Model)
		for _, d := range domains {
			fmt.Fprintf(&b, " %s |", bundleCell(c, d))
		}
		fmt.Fprintf(&b, " %s | %s |\n", counts(c.Levels), counts(c.Gates))
	}
	crits := r.criteria()
	b.WriteString("\n## Pass rate per sealed criterion\n\n| contender |")
	for _, id := range crits {
		fmt.Fprintf(&b, " %s |", id)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(crits)) + "\n")
	for _, c := range r.Contenders {
		fmt.Fprintf(&b, "| `%s` |", c.Model)
		for _, id := range crits {
			if v, ok := c.CriterionPassRate[id]; ok {
				fmt.Fprintf(&b, " %.0f%% |", 100*v)
			} else {
				b.WriteString(" — |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Failure rate per category\n\n| contender |")
	for _, cat := range r.Categories {
		fmt.Fprintf(&b, " %s |", cat)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(r.Categories)) + "\n")
	for _, c := range r.Contenders {
		fmt.Fprintf(&b, "| `%s` |", c.Model)
		for _, cat := range r.Categories {
			if v, ok := c.CategoryFailRate[cat]; ok {
				fmt.Fprintf(&b, " %.0f%% |", 100*v)
			} else {
				b.WriteString(" — |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Pairwise\n\nPaired verdicts: the same criterion on the same bundle in the same repeat, judged for both. " +
		"McNemar is the exact two-sided binomial test on the discordant verdicts; p (Holm) is adjusted for all pairs. " +
		"The difference is mean(a) − mean(b) in Shadow Score points (negative: a failed fewer criteria), with its paired 95% bootstrap interval. " +
		"A pair is distinguishable when the interval excludes 0, p (Holm) < 0.05 and both point the same way.\n\n")
	b.WriteString("| a | b | paired verdicts | only a passed | only b passed | McNemar p | p (Holm) | difference (a − b) | 95% CI | verdict |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range r.Pairwise {
		fmt.Fprintf(&b, "| `%s` | `%s` | %d | %d | %d | %s | %s | %+.1f | [%.1f, %.1f] | %s |\n", p.First, p.Second, p.Paired, p.McNemar.B, p.McNemar.C,
			pval(p.McNemar.P), pval(p.PHolm), p.MeanDiff, p.DiffCI95.Lo, p.DiffCI95.Hi, p.verdict())
	}
	b.WriteString("\n### Per criterion\n\n| a | b | criterion | category | paired | both passed | only a | only b | neither | exact p |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range r.Pairwise {
		for _, c := range p.PerCriterion {
			fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %d | %d | %d | %d | %d | %s |\n", p.First, p.Second, c.ID, c.Category, c.Paired, c.Both, c.McNemar.B, c.McNemar.C, c.Neither, pval(c.McNemar.P))
		}
	}
	b.WriteString("\nEvery contender's run directories and Shadow Reports are under `runs/<contender>/rep-<i>/`; the shared envelope is under `seal/`.\n")
	return b.String()
}

func (p PairResult) verdict() string {
	v := "not distinguishable"
	if p.Distinguishable {
		v = "`" + p.Better + "` is better"
	}
	v += p.noResultNote()
	if p.Advisory {
		v += " (advisory)"
	}
	return v
}

// noResultNote says why a pair was decided without its tests.
func (p PairResult) noResultNote() string {
	switch len(p.NoResult) {
	case 1:
		return " (" + p.NoResult[0] + " has no result)"
	case 2:
		return " (neither has a result)"
	}
	return ""
}

// bundleCell is a contender's mean score on one bundle domain, with how many
// repeats it failed in.
func bundleCell(c ContenderStats, d string) string {
	if _, ok := c.BundleScores[d]; !ok {
		return "—"
	}
	s := fmt.Sprintf("%.1f", c.BundleMean[d])
	if n := c.BundleFailed[d]; n > 0 {
		s += fmt.Sprintf(" (failed %d of %d)", n, len(c.BundleScores[d]))
	}
	return s
}

func pval(p float64) string {
	if p < 0.0001 {
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.4f", p)
}

func seedList(xs []int64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "—"
	}
	var s []string
	for _, k := range sortedKeys(m) {
		s = append(s, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(s, ", ")
}

func (r *Report) domains() []string {
	set := map[string]bool{}
	for _, c := range r.Contenders {
		for d := range c.BundleScores {
			set[d] = true
		}
	}
	return sortedKeys(set)
}

func (r *Report) criteria() []string {
	set := map[string]bool{}
	for _, c := range r.Contenders {
		for id := range c.CriterionPassRate {
			set[id] = true
		}
	}
	return sortedKeys(set)
}

var palette = []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255}, {140, 86, 75, 255}}

func svgOf(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	wt, err := p.WriterTo(w, h, "svg")
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return "", err
	}
	s := buf.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return template.HTML(s), nil
}

// percentTicks labels 0..100 only (the room above 100 is for the legend).
type percentTicks struct{}

func (percentTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for v := 0.0; v <= math.Min(hi, 100); v += 10 {
		t := plot.Tick{Value: v}
		if int(v)%20 == 0 {
			t.Label = fmt.Sprintf("%.0f", v)
		}
		ts = append(ts, t)
	}
	return ts
}

// newPlot is a plot in a sans-serif face, like the page around it.
func newPlot() *plot.Plot {
	p := plot.New()
	for _, st := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle, &p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		st.Font.Variant = "Sans"
	}
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(6)
	return p
}

type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// addMeanWithCI draws a contender's mean Shadow Score at x as a filled dot
// with its 95% interval as an error bar.
func addMeanWithCI(p *plot.Plot, x float64, c ContenderStats, col color.Color) error {
	pts := errPoints{XYs: plotter.XYs{{X: x, Y: c.Mean}}, YErrors: plotter.YErrors{{Low: c.Mean - c.CI95.Lo, High: c.CI95.Hi - c.Mean}}}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	sc.Color, sc.Radius, sc.Shape = col, vg.Points(4), draw.CircleGlyph{}
	eb, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return err
	}
	eb.Color, eb.LineStyle.Width, eb.CapWidth = col, vg.Points(1.5), vg.Points(10)
	p.Add(eb, sc)
	return nil
}

func (r *Report) charts() (map[string]template.HTML, error) {
	out := map[string]template.HTML{}
	names := make([]string, len(r.Contenders))
	for i, c := range r.Contenders {
		names[i] = c.Model
	}
	// 1. Shadow Score with intervals, one colour per contender.
	{
		p := newPlot()
		p.Title.Text = "Shadow Score per contender (lower is better)"
		p.Y.Label.Text = "Shadow Score (% of criteria failed)"
		var none plotter.XYs
		var noneLabels []string
		for i, c := range r.Contenders {
			if c.NoResult {
				none = append(none, plotter.XY{X: float64(i), Y: 50})
				noneLabels = append(noneLabels, "no result")
				continue
			}
			if err := addMeanWithCI(p, float64(i), c, palette[i%len(palette)]); err != nil {
				return nil, err
			}
		}
		if len(none) > 0 {
			lb, err := plotter.NewLabels(plotter.XYLabels{XYs: none, Labels: noneLabels})
			if err != nil {
				return nil, err
			}
			for i := range lb.TextStyle {
				lb.TextStyle[i].Font.Variant = "Sans"
				lb.TextStyle[i].XAlign = draw.XCenter
				lb.TextStyle[i].Color = color.RGBA{207, 34, 46, 255}
			}
			p.Add(lb)
		}
		p.Add(plotter.NewGrid())
		p.NominalX(names...)
		p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
		p.Y.Min, p.Y.Max = 0, 100
		var err error
		if out["score"], err = svgOf(p, 18*vg.Centimeter, 10*vg.Centimeter); err != nil {
			return nil, err
		}
	}
	// 2. Failure rate per category.
	{
		p := newPlot()
		p.Title.Text = "Failure rate per criterion category"
		p.Y.Label.Text = "criteria failed (%)"
		n := len(r.Contenders)
		w := vg.Points(math.Min(14, 300/float64(max(n*len(r.Categories), 1))))
		for i, c := range r.Contenders {
			vals := make(plotter.Values, len(r.Categories))
			for j, cat := range r.Categories {
				vals[j] = 100 * c.CategoryFailRate[cat]
			}
			bars, err := plotter.NewBarChart(vals, w)
			if err != nil {
				return nil, err
			}
			bars.Color = palette[i%len(palette)]
			bars.Offset = w * vg.Length(float64(i)-float64(n-1)/2)
			bars.LineStyle.Width = 0
			p.Add(bars)
			p.Legend.Add(c.Model, bars)
		}
		// The legend sits above the bars: leave it room at the top.
		p.Legend.Top = true
		p.Legend.Left = true
		p.Legend.XOffs = vg.Points(8)
		p.NominalX(r.Categories...)
		p.Y.Min, p.Y.Max = 0, 100+float64(n)*9
		p.Y.Tick.Marker = percentTicks{}
		var err error
		if out["categories"], err = svgOf(p, 18*vg.Centimeter, 10*vg.Centimeter); err != nil {
			return nil, err
		}
	}
	// 3. Cost vs score. Contenders at the same point share one label.
	{
		p := newPlot()
		p.Title.Text = "Cost vs Shadow Score (bottom left is best)"
		p.X.Label.Text, p.Y.Label.Text = "cost of the contender's calls, all repeats (USD)", "mean Shadow Score (%)"
		var xys plotter.XYs
		var labels []string
		at := map[[2]float64]int{}
		maxCost := 0.0
		for i, c := range r.Contenders {
			if c.NoResult {
				continue // no score to plot
			}
			if err := addMeanWithCI(p, c.CostUSD, c, palette[i%len(palette)]); err != nil {
				return nil, err
			}
			k := [2]float64{math.Round(c.CostUSD * 1e6), math.Round(c.Mean * 10)}
			if j, ok := at[k]; ok {
				labels[j] += ", " + c.Model
				continue
			}
			at[k] = len(xys)
			xys = append(xys, plotter.XY{X: c.CostUSD, Y: c.Mean})
			labels = append(labels, c.Model)
			maxCost = math.Max(maxCost, c.CostUSD)
		}
		if len(xys) == 0 {
			// Nothing has a score: an empty chart, no labels.
			xys, labels = plotter.XYs{}, []string{}
		}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return nil, err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Font.Size = vg.Points(9)
			lb.TextStyle[i].Font.Variant = "Sans"
		}
		lb.Offset = vg.Point{X: vg.Points(7), Y: vg.Points(3)}
		p.Add(plotter.NewGrid(), lb)
		p.X.Min = 0
		if maxCost > 0 {
			p.X.Max = maxCost * 1.6 // room for the labels on the right
		} else {
			p.X.Max = 1
		}
		p.Y.Min, p.Y.Max = 0, 100
		if out["cost"], err = svgOf(p, 18*vg.Centimeter, 10*vg.Centimeter); err != nil {
			return nil, err
		}
	}
	// 4. Latency distribution.
	{
		p := newPlot()
		p.Title.Text = "Latency of each contender's own calls"
		p.Y.Label.Text = "latency per call (ms, log scale)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, c := range r.Contenders {
			// Log scale: one slow call must not flatten every box.
			vals := make(plotter.Values, 0, len(c.latencies))
			for _, v := range c.latencies {
				v = math.Max(v, 0.001)
				vals = append(vals, v)
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			if len(vals) == 0 {
				continue // no calls: no box
			}
			bp, err := plotter.NewBoxPlot(vg.Points(20), float64(i), vals)
			if err != nil {
				return nil, err
			}
			bp.FillColor = palette[i%len(palette)]
			p.Add(bp)
		}
		// Whole decades, at least one, so the log ticks have room.
		if math.IsInf(lo, 0) {
			lo, hi = 1, 10
		}
		p.Y.Min, p.Y.Max = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
		if p.Y.Max <= p.Y.Min {
			p.Y.Max = p.Y.Min * 10
		}
		p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
		p.NominalX(names...)
		var err error
		if out["latency"], err = svgOf(p, 18*vg.Centimeter, 10*vg.Centimeter); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var page = template.Must(template.New("compare").Funcs(template.FuncMap{
	"velocity": velocity, "pval": pval, "counts": counts,
	"pct": func(m map[string]float64, k string) string {
		if v, ok := m[k]; ok {
			return fmt.Sprintf("%.0f%%", 100*v)
		}
		return "—"
	},
	"bundle": bundleCell, "failed": failedCell, "failureLine": failureLine,
	"join": strings.Join,
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>swarm compare: {{.R.Mission}}</title>
<style>
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1180px;color:#1d2433;background:#fff;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem} h2{font-size:1.2rem;margin:1.6rem 0 .3rem} .meta{color:#5b6475;font-size:.9rem}
table{border-collapse:collapse;width:100%;margin:.6rem 0 1rem;font-size:.86rem} th,td{padding:.3rem .5rem;border-bottom:1px solid #e3e6ec;text-align:right;vertical-align:top}
th{background:#f4f6fa;font-weight:600} td{white-space:nowrap} td.l{white-space:normal} th.l,td.l{text-align:left}
.good{color:#1a7f37;font-weight:600} .tie{color:#9a6700} .adv{color:#cf222e;font-weight:600}
.banner{border:1px solid #f0b6b6;background:#fff5f5;border-radius:8px;padding:.5rem .8rem;margin:1rem 0}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:1rem} .card{border:1px solid #e3e6ec;border-radius:8px;padding:.5rem;background:#fff}
.card p{margin:.2rem .3rem;font-size:.8rem;color:#5b6475} svg{width:100%;height:auto}
code{background:#f4f6fa;padding:0 .25rem;border-radius:3px;white-space:nowrap} details{margin:.5rem 0} summary{cursor:pointer;color:#3a4a6b}
</style></head><body>
<h1>Which model should run the {{.R.Roles}}?</h1>
<p class="meta">Mission <b>{{.R.Mission}}</b> · scale {{.R.Scale}} · {{.R.Repeats}} repeats (seeds {{.Seeds}}, the same for every contender) · one sealed envelope <code>{{.R.SealedHash}}</code> · judge <code>{{.R.Judge}}</code> (k = {{.R.JudgeSamples}}) · seal author <code>{{.R.SealAuthor}}</code></p>
{{range .Adv}}<div class="banner"><span class="adv">Advisory:</span> <code>{{.Model}}</code>: {{.AdvisoryReason}}. Its results, and every pair it is in, are advisory: a judge or seal author of the same family may favour it.</div>
{{end}}{{range .Failing}}<div class="banner"><span class="adv">Failed bundles:</span> {{failureLine .}}</div>
{{end}}<p>Shadow Score is the share of sealed criteria a contender's bundles failed before hardening: <b>lower is better</b>. Intervals are 95% bootstrap intervals over repeats. Tier is 1 + the number of contenders distinguishably better; contenders in one tier cannot be told apart from those above them. {{.FailureRule}}</p>
<h2>Ranking</h2>
<table><tr><th>rank</th><th>tier</th><th class="l">contender</th><th>median</th><th>mean</th><th>95% CI</th><th>bundles failed</th><th class="l">not distinguishable from</th><th class="l">advisory</th></tr>
{{range .R.Contenders}}<tr><td>{{.Rank}}</td>{{if .NoResult}}<td>—</td><td class="l"><code>{{.Model}}</code></td><td class="adv">no result</td><td>—</td><td>—</td>{{else}}<td>{{.Tier}}</td><td class="l"><code>{{.Model}}</code></td><td>{{printf "%.1f" .Median}}</td><td>{{printf "%.1f" .Mean}}</td><td>[{{printf "%.1f" .CI95.Lo}}, {{printf "%.1f" .CI95.Hi}}]</td>{{end}}<td{{if .BundlesFailed}} class="adv"{{end}}>{{failed .}}</td><td class="l">{{if .NotDistinguishable}}<span class="tie">≈ {{join .NotDistinguishable ", "}}</span>{{else}}—{{end}}</td><td class="l">{{if .Advisory}}<span class="adv">advisory</span>: {{.AdvisoryReason}}{{else}}—{{end}}</td></tr>
{{end}}</table>
<div class="grid">
<div class="card">{{.C.score}}<p>Dot: mean Shadow Score over repeats (a failed bundle counts as 100); bar: 95% bootstrap interval. Lower is better. A contender that judged nothing has no dot.</p></div>
<div class="card">{{.C.categories}}<p>Share of the sealed criteria in each category that the contender's bundles failed, all repeats pooled.</p></div>
<div class="card">{{.C.cost}}<p>Cost of the contender's own calls, all repeats, against its mean Shadow Score (bar: 95% interval). Best is bottom left.</p></div>
<div class="card">{{.C.latency}}<p>Latency of the contender's own calls, log scale: box from p25 to p75, line at the median, whiskers to 1.5 IQR, dots beyond.</p></div>
</div>
<h2>Quality, cost and latency</h2>
<p class="meta">Calls, tokens, cost, latency and failure classes are the contender's own calls in the roles compared ({{.R.Roles}}); run cost covers the whole runs (judge and every other role included).{{if le .R.JudgeSamples 1}} Judge disagreement D needs <code>--judge-samples</code> k &gt; 1.{{end}}</p>
<table><tr><th class="l">contender</th><th>hardening velocity</th><th>review score</th><th>toxicity</th><th>quality gap</th><th>judge D</th><th>calls</th><th>tokens in / out</th><th>cost</th><th>run cost</th><th>latency p50 / p95 ms</th><th class="l">failure classes</th></tr>
{{range .R.Contenders}}<tr><td class="l"><code>{{.Model}}</code></td><td>{{velocity .Velocity}}</td><td>{{if .NoResult}}—{{else}}{{printf "%.2f" .ReviewScore}}{{end}}</td><td>{{printf "%.3f" .Toxicity}}</td><td>{{printf "%.3f" .QualityGap}}</td><td>{{if .NoResult}}—{{else if le $.R.JudgeSamples 1}}n/a{{else}}{{printf "%.3f" .JudgeDisagreement}}{{end}}</td><td>{{.Calls}}</td><td>{{.InputTokens}} / {{.OutputTokens}}</td><td>${{printf "%.4f" .CostUSD}}</td><td>${{printf "%.4f" .RunCostUSD}}</td><td>{{printf "%.2f" .LatencyP50MS}} / {{printf "%.2f" .LatencyP95MS}}</td><td class="l">{{counts .Failures}}</td></tr>
{{end}}</table>
<h2>Shadow Score per bundle (a failed bundle counts as 100)</h2>
<table><tr><th class="l">contender</th>{{range .Domains}}<th>{{.}}</th>{{end}}<th class="l">levels</th><th class="l">gates</th></tr>
{{range $c := .R.Contenders}}<tr><td class="l"><code>{{$c.Model}}</code></td>{{range $.Domains}}<td>{{bundle $c .}}</td>{{end}}<td class="l">{{counts $c.Levels}}</td><td class="l">{{counts $c.Gates}}</td></tr>
{{end}}</table>
<h2>Pass rate per sealed criterion</h2>
<table><tr><th class="l">contender</th>{{range .Criteria}}<th>{{.}}</th>{{end}}</tr>
{{range $c := .R.Contenders}}<tr><td class="l"><code>{{$c.Model}}</code></td>{{range $.Criteria}}<td>{{pct $c.CriterionPassRate .}}</td>{{end}}</tr>
{{end}}</table>
<h2>Pairwise</h2>
<p class="meta">Paired verdicts: the same criterion on the same bundle in the same repeat, judged for both. McNemar: exact two-sided binomial test on the discordant verdicts; p (Holm) adjusts it for all pairs. Difference: mean(a) − mean(b) in Shadow Score points (negative: a failed fewer), with its paired 95% bootstrap interval. Distinguishable when the interval excludes 0, p (Holm) &lt; 0.05 and both point the same way.</p>
<table><tr><th class="l">a</th><th class="l">b</th><th>paired verdicts</th><th>only a passed</th><th>only b passed</th><th>McNemar p</th><th>p (Holm)</th><th>difference (a − b)</th><th>95% CI</th><th class="l">verdict</th></tr>
{{range .R.Pairwise}}<tr><td class="l"><code>{{.First}}</code></td><td class="l"><code>{{.Second}}</code></td><td>{{.Paired}}</td><td>{{.McNemar.B}}</td><td>{{.McNemar.C}}</td><td>{{pval .McNemar.P}}</td><td>{{pval .PHolm}}</td><td>{{printf "%+.1f" .MeanDiff}}</td><td>[{{printf "%.1f" .DiffCI95.Lo}}, {{printf "%.1f" .DiffCI95.Hi}}]</td><td class="l">{{if .Distinguishable}}<span class="good">{{.Better}} is better</span>{{else}}<span class="tie">not distinguishable</span>{{end}}{{with .NoResult}} <span class="adv">({{if eq (len .) 1}}{{index . 0}} has no result{{else}}neither has a result{{end}})</span>{{end}}{{if .Advisory}} <span class="adv" title="{{.AdvisoryReason}}">(advisory)</span>{{end}}</td></tr>
{{end}}</table>
<details><summary>Per criterion, pair by pair</summary>
<table><tr><th class="l">a</th><th class="l">b</th><th class="l">criterion</th><th class="l">category</th><th>paired</th><th>both passed</th><th>only a</th><th>only b</th><th>neither</th><th>exact p</th></tr>
{{range $p := .R.Pairwise}}{{range $p.PerCriterion}}<tr><td class="l"><code>{{$p.First}}</code></td><td class="l"><code>{{$p.Second}}</code></td><td class="l">{{.ID}}</td><td class="l">{{.Category}}</td><td>{{.Paired}}</td><td>{{.Both}}</td><td>{{.McNemar.B}}</td><td>{{.McNemar.C}}</td><td>{{.Neither}}</td><td>{{pval .McNemar.P}}</td></tr>
{{end}}{{end}}</table></details>
<p class="meta">Run directories and Shadow Reports: <code>runs/&lt;contender&gt;/rep-&lt;i&gt;/</code>; the shared envelope: <code>seal/</code>. Machine-readable: <code>compare.json</code>.</p>
</body></html>
`))

// HTML renders the self-contained compare.html (inline CSS and SVG; no network).
func (r *Report) HTML() (string, error) {
	c, err := r.charts()
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := page.Execute(&b, map[string]any{"R": r, "C": c, "Adv": r.Advisories(), "Failing": r.Failing(), "FailureRule": failureRule, "Domains": r.domains(), "Criteria": r.criteria(), "Seeds": seedList(r.Seeds)}); err != nil {
		return "", err
	}
	return b.String(), nil
}
