package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
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

// Table renders the ranked table for the terminal.
func (r *Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-4s %-28s %8s %8s %17s %9s %9s %10s  %s\n", "rank", "contender", "median", "mean", "95% CI", "p50 ms", "cost $", "tokens", "")
	for _, c := range r.Contenders {
		note := ""
		if c.TiedWithNext {
			note = "≈ next (not distinguishable)"
		}
		if c.Advisory {
			note = strings.TrimSpace(note + " [advisory]")
		}
		fmt.Fprintf(&b, "%-4d %-28s %8.1f %8.1f   [%5.1f, %5.1f] %9.2f %9.4f %10d  %s\n", c.Rank, c.Model, c.Median, c.Mean, c.CI95.Lo, c.CI95.Hi,
			c.LatencyP50MS, c.CostUSD, c.InputTokens+c.OutputTokens, note)
	}
	return b.String()
}

// Markdown renders compare.md.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Compare: %s\n\n", r.Mission)
	fmt.Fprintf(&b, "Scale %s · roles compared: %s · %d repeats · judge `%s` · seal author `%s` · sealed `%s`\n\n", r.Scale, r.Roles, r.Repeats, r.Judge, r.SealAuthor, r.SealedHash)
	b.WriteString("Lower Shadow Score is better (share of sealed criteria failed, before hardening). Intervals are 95% percentile bootstrap over repeats.\n\n")
	b.WriteString("| rank | contender | median | mean | 95% CI | velocity | review | toxicity | quality gap | tokens | cost | p50 / p95 ms | judge D | note |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range r.Contenders {
		note := ""
		if c.TiedWithNext {
			note = "not distinguishable from the next"
		}
		if c.Advisory {
			note = strings.TrimSpace(note + " advisory: " + c.AdvisoryReason)
		}
		fmt.Fprintf(&b, "| %d | `%s` | %.1f | %.1f | [%.1f, %.1f] | %.1f | %.2f | %.3f | %.3f | %d | $%.4f | %.2f / %.2f | %.3f | %s |\n",
			c.Rank, c.Model, c.Median, c.Mean, c.CI95.Lo, c.CI95.Hi, c.Velocity, c.ReviewScore, c.Toxicity, c.QualityGap,
			c.InputTokens+c.OutputTokens, c.CostUSD, c.LatencyP50MS, c.LatencyP95MS, c.JudgeDisagreement, note)
	}
	b.WriteString("\n## Pairwise\n\n| a | b | paired verdicts | a only passed | b only passed | McNemar p | mean diff (a − b) | 95% CI | verdict |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range r.Pairwise {
		v := "not distinguishable"
		if p.Distinguishable {
			v = "`" + p.Better + "` is better"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %d | %d | %d | %.4f | %.1f | [%.1f, %.1f] | %s |\n", p.First, p.Second, p.Paired, p.McNemar.B, p.McNemar.C, p.McNemar.P, p.MeanDiff, p.DiffCI95.Lo, p.DiffCI95.Hi, v)
	}
	b.WriteString("\n## Failure rate per category\n\n| contender |")
	for _, cat := range r.Categories {
		fmt.Fprintf(&b, " %s |", cat)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(r.Categories)) + "\n")
	for _, c := range r.Contenders {
		fmt.Fprintf(&b, "| `%s` |", c.Model)
		for _, cat := range r.Categories {
			fmt.Fprintf(&b, " %.0f%% |", 100*c.CategoryFailRate[cat])
		}
		b.WriteString("\n")
	}
	b.WriteString("\nEvery contender's run directories and Shadow Reports are under `runs/<contender>/rep-<i>/`.\n")
	return b.String()
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

type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

func (r *Report) charts() (map[string]template.HTML, error) {
	out := map[string]template.HTML{}
	names := make([]string, len(r.Contenders))
	for i, c := range r.Contenders {
		names[i] = c.Model
	}
	// 1. Shadow Score with intervals.
	{
		p := plot.New()
		p.Title.Text = "Shadow Score per contender (mean, 95% CI; lower is better)"
		p.Y.Label.Text = "Shadow Score %"
		pts := errPoints{XYs: make(plotter.XYs, len(r.Contenders)), YErrors: make(plotter.YErrors, len(r.Contenders))}
		for i, c := range r.Contenders {
			pts.XYs[i] = plotter.XY{X: float64(i), Y: c.Mean}
			pts.YErrors[i] = struct{ Low, High float64 }{c.Mean - c.CI95.Lo, c.CI95.Hi - c.Mean}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Color = palette[0]
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, err
		}
		p.Add(sc, eb)
		p.NominalX(names...)
		p.Y.Min = 0
		p.Y.Max = 100
		if out["score"], err = svgOf(p, 18*vg.Centimeter, 10*vg.Centimeter); err != nil {
			return nil, err
		}
	}
	// 2. Failure rate per category.
	{
		p := plot.New()
		p.Title.Text = "Failure rate per criterion category"
		p.Y.Label.Text = "failed %"
		w := vg.Points(14)
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
			bars.Offset = w * vg.Length(float64(i)-float64(len(r.Contenders)-1)/2)
			bars.LineStyle.Width = 0
			p.Add(bars)
			p.Legend.Add(c.Model, bars)
		}
		p.Legend.Top = true
		p.NominalX(r.Categories...)
		p.Y.Min, p.Y.Max = 0, 100
		var err error
		if out["categories"], err = svgOf(p, 18*vg.Centimeter, 10*vg.Centimeter); err != nil {
			return nil, err
		}
	}
	// 3. Cost vs score.
	{
		p := plot.New()
		p.Title.Text = "Cost vs Shadow Score"
		p.X.Label.Text, p.Y.Label.Text = "cost (USD, all repeats)", "mean Shadow Score %"
		xys := make(plotter.XYs, len(r.Contenders))
		labels := make([]string, len(r.Contenders))
		for i, c := range r.Contenders {
			xys[i] = plotter.XY{X: c.CostUSD, Y: c.Mean}
			labels[i] = c.Model
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		sc.Color = palette[3]
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return nil, err
		}
		p.Add(sc, lb)
		p.Y.Min, p.Y.Max = 0, 100
		if out["cost"], err = svgOf(p, 18*vg.Centimeter, 10*vg.Centimeter); err != nil {
			return nil, err
		}
	}
	// 4. Latency distribution.
	{
		p := plot.New()
		p.Title.Text = "Latency of the contenders' calls"
		p.Y.Label.Text = "ms"
		for i, c := range r.Contenders {
			vals := plotter.Values(c.latencies)
			if len(vals) == 0 {
				vals = plotter.Values{0}
			}
			bp, err := plotter.NewBoxPlot(vg.Points(20), float64(i), vals)
			if err != nil {
				return nil, err
			}
			bp.FillColor = palette[i%len(palette)]
			p.Add(bp)
		}
		p.NominalX(names...)
		var err error
		if out["latency"], err = svgOf(p, 18*vg.Centimeter, 10*vg.Centimeter); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var page = template.Must(template.New("compare").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>swarm compare: {{.R.Mission}}</title>
<style>
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;color:#1d2433;background:#fff;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem} .meta{color:#5b6475;font-size:.9rem}
table{border-collapse:collapse;width:100%;margin:1rem 0;font-size:.88rem} th,td{padding:.35rem .5rem;border-bottom:1px solid #e3e6ec;text-align:right} th:nth-child(2),td:nth-child(2){text-align:left}
th{background:#f4f6fa} .good{color:#1a7f37;font-weight:600} .tie{color:#9a6700} .adv{color:#cf222e}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:1rem} .card{border:1px solid #e3e6ec;border-radius:8px;padding:.5rem;background:#fbfcfe} svg{width:100%;height:auto}
code{background:#f4f6fa;padding:0 .25rem;border-radius:3px}
</style></head><body>
<h1>Which model should run the {{.R.Roles}}?</h1>
<p class="meta">Mission <b>{{.R.Mission}}</b> · scale {{.R.Scale}} · {{.R.Repeats}} repeats · one sealed envelope <code>{{.R.SealedHash}}</code> · judge <code>{{.R.Judge}}</code> · seal author <code>{{.R.SealAuthor}}</code></p>
<p>Lower Shadow Score is better: the share of sealed criteria a contender's bundles failed before hardening. Intervals are 95% bootstrap intervals over repeats.</p>
<table><tr><th>rank</th><th>contender</th><th>median</th><th>mean</th><th>95% CI</th><th>velocity</th><th>review</th><th>toxicity</th><th>tokens</th><th>cost</th><th>p50 / p95 ms</th><th>judge D</th><th></th></tr>
{{range .R.Contenders}}<tr><td>{{.Rank}}</td><td><code>{{.Model}}</code></td><td>{{printf "%.1f" .Median}}</td><td>{{printf "%.1f" .Mean}}</td><td>[{{printf "%.1f" .CI95.Lo}}, {{printf "%.1f" .CI95.Hi}}]</td><td>{{printf "%.1f" .Velocity}}</td><td>{{printf "%.2f" .ReviewScore}}</td><td>{{printf "%.3f" .Toxicity}}</td><td>{{.InputTokens}}+{{.OutputTokens}}</td><td>${{printf "%.4f" .CostUSD}}</td><td>{{printf "%.2f" .LatencyP50MS}} / {{printf "%.2f" .LatencyP95MS}}</td><td>{{printf "%.3f" .JudgeDisagreement}}</td><td>{{if .TiedWithNext}}<span class="tie">≈ next</span>{{end}} {{if .Advisory}}<span class="adv" title="{{.AdvisoryReason}}">advisory</span>{{end}}</td></tr>
{{end}}</table>
<div class="grid">
<div class="card">{{.C.score}}</div>
<div class="card">{{.C.categories}}</div>
<div class="card">{{.C.cost}}</div>
<div class="card">{{.C.latency}}</div>
</div>
<h2>Pairwise</h2>
<table><tr><th>a</th><th>b</th><th>paired verdicts</th><th>a only passed</th><th>b only passed</th><th>McNemar p</th><th>mean diff</th><th>95% CI</th><th>verdict</th></tr>
{{range .R.Pairwise}}<tr><td><code>{{.First}}</code></td><td><code>{{.Second}}</code></td><td>{{.Paired}}</td><td>{{.McNemar.B}}</td><td>{{.McNemar.C}}</td><td>{{printf "%.4f" .McNemar.P}}</td><td>{{printf "%.1f" .MeanDiff}}</td><td>[{{printf "%.1f" .DiffCI95.Lo}}, {{printf "%.1f" .DiffCI95.Hi}}]</td><td>{{if .Distinguishable}}<span class="good">{{.Better}} is better</span>{{else}}<span class="tie">not distinguishable</span>{{end}}</td></tr>
{{end}}</table>
<p class="meta">Run directories and Shadow Reports: <code>runs/&lt;contender&gt;/rep-&lt;i&gt;/</code>. Machine-readable: <code>compare.json</code>.</p>
</body></html>
`))

// HTML renders the self-contained compare.html (inline CSS and SVG; no network).
func (r *Report) HTML() (string, error) {
	c, err := r.charts()
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := page.Execute(&b, map[string]any{"R": r, "C": c}); err != nil {
		return "", err
	}
	return b.String(), nil
}
