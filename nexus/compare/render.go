package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/nexus"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Write writes compare.json, compare.md and compare.html into dir, each
// replaced atomically and synced (rundir.Dir.WriteFile); a write that
// fails is an error wrapping nexus.ErrWrite, naming the file and the reason.
func (r *Report) Write(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	h, err := r.HTML()
	if err != nil {
		return err
	}
	d := rundir.Open(dir)
	for _, f := range []struct {
		name string
		data []byte
	}{{"compare.json", append(b, '\n')}, {"compare.md", []byte(textsafe.PrintableLines(r.Markdown()))}, {"compare.html", []byte(h)}} {
		if err := d.WriteFile(f.name, f.data, 0o644); err != nil {
			return fmt.Errorf("%w: %w", nexus.ErrWrite, err)
		}
	}
	return nil
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
	what := "failed or were not judged"
	if n := c.BundleFailures[StatusSalvaged]; n > 0 {
		what = fmt.Sprintf("failed, were not judged or were salvaged from the workers' atoms (%d: the contender did not produce them)", n)
	}
	return fmt.Sprintf("%s: %d of %d planned bundles %s (%s); each counts as Shadow Score 100.",
		c.Model, c.BundlesFailed, c.BundlesPlanned, what, counts(c.BundleFailures))
}

// costCell is a cost without the dollar sign for the terminal table:
// "0.0123", "≥0.0123" when some calls had no known price, "—" when none
// had one.
func costCell(usd float64, unpriced []string) string {
	switch {
	case len(unpriced) == 0:
		return fmt.Sprintf("%.4f", usd)
	case usd == 0:
		return "—"
	default:
		return fmt.Sprintf("≥%.4f", usd)
	}
}

// unpriced is every model of the comparison without a known price whose
// calls used tokens (contenders, judge and every other role).
func (r *Report) unpriced() []string {
	var out []string
	for _, c := range r.Contenders {
		out = union(out, union(c.Unpriced, c.RunUnpriced))
	}
	return out
}

// Untrusted lists the untrusted contenders (fabrication), in rank order.
func (r *Report) Untrusted() []ContenderStats {
	var out []ContenderStats
	for _, c := range r.Contenders {
		if c.Untrusted {
			out = append(out, c)
		}
	}
	return out
}

// untrustedRule says what an untrusted contender is and where it ranks.
func (r *Report) untrustedRule() string {
	return fmt.Sprintf("Untrusted: the contender's fabrication rate (fabricated / cited) has its whole 95%% Wilson interval above %s (compare.max_fabrication_rate); "+
		"it is ranked after every trusted contender, whatever its Shadow Score.", pct1(r.MaxFabricationRate))
}

const failureRule = "A bundle that failed or was not judged counts as Shadow Score 100 (every sealed criterion failed) in the median, mean, interval, pass rates and paired tests, " +
	"and so does a bundle salvaged from the workers' atoms by the recovery ladder or the cost ceiling (the contender did not produce it); " +
	"a contender that judged no bundle has no result: it is ranked after every contender with one, with no score, no interval and no tier."

// Table renders the ranked table for the terminal.
func (r *Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-4s %-4s %-26s %7s %7s %15s %14s %6s %9s %10s %17s  %s\n", "rank", "tier", "contender", "median", "mean", "95% CI", "failed", "calls", "tokens", "cost $", "p50 / p95 ms", "")
	for _, c := range r.Contenders {
		var note []string
		if len(c.NotDistinguishable) > 0 {
			note = append(note, "≈ "+strings.Join(c.NotDistinguishable, ", "))
		}
		if c.Advisory {
			note = append(note, "[advisory]")
		}
		if c.Untrusted {
			note = append(note, "[untrusted]")
		}
		failed := fmt.Sprintf("%d/%d", c.BundlesFailed, c.BundlesPlanned)
		if c.NoResult {
			fmt.Fprintf(&b, "%-4d %-4s %-26s %-31s %14s %6d %9d %10s %8.2f / %6.2f  %s\n", c.Rank, "—", c.Model, "no result (nothing judged)",
				failed, c.Calls, c.InputTokens+c.OutputTokens, costCell(c.CostUSD, c.Unpriced), c.LatencyP50MS, c.LatencyP95MS, strings.Join(note, " "))
			continue
		}
		fmt.Fprintf(&b, "%-4d %-4d %-26s %7.1f %7.1f  [%5.1f, %5.1f] %14s %6d %9d %10s %8.2f / %6.2f  %s\n", c.Rank, c.Tier, c.Model, c.Median, c.Mean, c.CI95.Lo, c.CI95.Hi,
			failed, c.Calls, c.InputTokens+c.OutputTokens, costCell(c.CostUSD, c.Unpriced), c.LatencyP50MS, c.LatencyP95MS, strings.Join(note, " "))
	}
	b.WriteString("Shadow Score: % of sealed criteria failed (lower is better); 95% bootstrap CI over repeats. Tier: 1 + contenders distinguishably better.\n")
	b.WriteString("≈: not distinguishable (paired bootstrap CI of the difference contains 0, or Holm-adjusted exact McNemar p ≥ 0.05).\n")
	b.WriteString("failed: planned bundles (all repeats) that failed or were not judged. " + failureRule + "\n")
	b.WriteString("Calls, tokens, cost and latency are the contender's own calls in the roles compared (" + r.Roles + ").\n")
	if u := r.unpriced(); len(u) > 0 {
		b.WriteString("[unpriced] " + config.CeilingWarning(u) + "; cost: ≥ is the priced calls only, — none was priced.\n")
	}
	b.WriteString(r.evidenceTable())
	for _, c := range r.Untrusted() {
		fmt.Fprintf(&b, "[untrusted] %s: %s; ranked after every trusted contender.\n", c.Model, c.UntrustedReason)
	}
	for _, c := range r.Failing() {
		b.WriteString("[failed] " + failureLine(c) + "\n")
	}
	for _, c := range r.Advisories() {
		fmt.Fprintf(&b, "[advisory] %s: %s; its results and every pair it is in are advisory.\n", c.Model, c.AdvisoryReason)
	}
	return b.String()
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
	for _, k := range slices.Sorted(maps.Keys(m)) {
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
	return slices.Sorted(maps.Keys(set))
}

func (r *Report) criteria() []string {
	set := map[string]bool{}
	for _, c := range r.Contenders {
		for id := range c.CriterionPassRate {
			set[id] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
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
			label := c.Model
			if len(c.Unpriced) > 0 {
				label += " (cost ≥: unpriced calls)"
			}
			if j, ok := at[k]; ok {
				labels[j] += ", " + label
				continue
			}
			at[k] = len(xys)
			xys = append(xys, plotter.XY{X: c.CostUSD, Y: c.Mean})
			labels = append(labels, label)
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

// page renders compare.html (html/template: every value is escaped for
// where it appears).
var page = template.Must(template.New("compare.html.tmpl").Funcs(template.FuncMap{
	"velocity": velocity, "pval": pval, "counts": counts, "cost": config.FormatCost, "tokenDetail": tokenDetail,
	"pct":    percent,
	"bundle": bundleCell, "failed": failedCell, "failureLine": failureLine,
	"join": strings.Join,
}).ParseFS(templateFS, "templates/compare.html.tmpl"))

// HTML renders the self-contained compare.html (inline CSS and SVG; no network).
func (r *Report) HTML() (string, error) {
	c, err := r.charts()
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := page.Execute(&b, map[string]any{"R": r, "C": c, "Adv": r.Advisories(), "Untrusted": r.Untrusted(), "UntrustedRule": r.untrustedRule(), "Failing": r.Failing(), "FailureRule": failureRule, "Domains": r.domains(), "Criteria": r.criteria(), "Seeds": seedList(r.Seeds),
		"Ev": r.evidenceView()}); err != nil {
		return "", err
	}
	return b.String(), nil
}
