package sim

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WriteOutputs writes epochs.csv, agents.csv, summary.json and the plots
// (toxicity and welfare over epochs, p distribution per agent type, and the
// economy's rates when the scenario has one) as PNG and SVG into dir.
func WriteOutputs(dir string, res *Result, plots bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	econHeader, econRow := econCSV(res) // no columns without an economy
	if err := writeCSV(filepath.Join(dir, "epochs.csv"), append([]string{"epoch", "interactions", "accepted", "toxicity", "quality_gap", "welfare", "net_social_welfare", "mean_p", "frozen"}, econHeader...), func(w func([]string)) {
		for _, e := range res.Epochs {
			w(append([]string{itoa(e.Epoch), itoa(e.Interactions), itoa(e.Accepted), ftoa(e.Toxicity), ftoa(e.QualityGap), ftoa(e.Welfare), ftoa(e.NetWelfare), ftoa(e.MeanP), itoa(e.Frozen)}, econRow(e)...))
		}
	}); err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(dir, "agents.csv"), []string{"id", "type", "interactions", "accepted", "mean_p", "payoff", "reputation", "frozen_epochs"}, func(w func([]string)) {
		for _, a := range res.Agents {
			w([]string{a.ID, a.Type, itoa(a.Interactions), itoa(a.Accepted), ftoa(a.MeanP), ftoa(a.Payoff), ftoa(a.Reputation), itoa(a.FrozenEpochs)})
		}
	}); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if !plots {
		return nil
	}
	if err := plotEpochs(dir, res); err != nil {
		return err
	}
	if err := plotEconomy(dir, res); err != nil {
		return err
	}
	return plotPDist(dir, res)
}

func itoa(i int) string     { return strconv.Itoa(i) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 6, 64) }

func writeCSV(path string, header []string, rows func(func([]string))) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(header)
	rows(func(r []string) { _ = w.Write(r) })
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func save(p *plot.Plot, dir, name string) error {
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(16*vg.Centimeter, 10*vg.Centimeter, filepath.Join(dir, name+ext)); err != nil {
			return fmt.Errorf("plot %s%s: %w", name, ext, err)
		}
	}
	return nil
}

func plotEpochs(dir string, res *Result) error {
	tox, wel := make(plotter.XYs, len(res.Epochs)), make(plotter.XYs, len(res.Epochs))
	for i, e := range res.Epochs {
		tox[i] = plotter.XY{X: float64(e.Epoch), Y: e.Toxicity}
		wel[i] = plotter.XY{X: float64(e.Epoch), Y: e.Welfare}
	}
	p := plot.New()
	p.Title.Text = res.ScenarioID + ": toxicity per epoch"
	p.X.Label.Text, p.Y.Label.Text = "epoch", "toxicity E[1−p | accepted]"
	if err := plotutil.AddLinePoints(p, "toxicity", tox); err != nil {
		return err
	}
	if err := save(p, dir, "toxicity"); err != nil {
		return err
	}
	q := plot.New()
	q.Title.Text = res.ScenarioID + ": welfare per epoch"
	q.X.Label.Text, q.Y.Label.Text = "epoch", "total welfare Σ(π_a+π_b)"
	if err := plotutil.AddLinePoints(q, "welfare", wel); err != nil {
		return err
	}
	return save(q, dir, "welfare")
}

func plotPDist(dir string, res *Result) error {
	p := plot.New()
	p.Title.Text = res.ScenarioID + ": p distribution per agent type"
	p.X.Label.Text, p.Y.Label.Text = "p", "share of interactions"
	var types []string
	for t := range res.PSamples {
		types = append(types, t)
	}
	sort.Strings(types)
	var args []any
	for _, t := range types {
		const bins = 20
		counts := make([]float64, bins)
		for _, x := range res.PSamples[t] {
			counts[min(bins-1, int(x*bins))]++
		}
		xy := make(plotter.XYs, bins)
		for i := range counts {
			xy[i] = plotter.XY{X: (float64(i) + 0.5) / bins, Y: counts[i] / float64(max(1, len(res.PSamples[t])))}
		}
		args = append(args, t, xy)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	return save(p, dir, "p_distribution")
}

// WriteSweepOutputs writes sweep.csv (every point and seed) and, per swept
// parameter, a CSV and plots (PNG and SVG) of mean toxicity and welfare
// against its values.
func WriteSweepOutputs(out string, sw Sweep, rows []SweepRow) error {
	keys := sw.Keys()
	var recs [][]string
	for _, r := range rows {
		var rec []string
		for _, k := range keys {
			rec = append(rec, fmt.Sprint(r.Point[k]))
		}
		rec = append(rec, fmt.Sprint(r.Seed), ftoa(r.Toxicity), ftoa(r.QualityGap), ftoa(r.Welfare), itoa(r.Interactions))
		recs = append(recs, rec)
	}
	if err := writeCSV(filepath.Join(out, "sweep.csv"), append(append([]string{}, keys...), "seed", "toxicity", "quality_gap", "welfare", "interactions"), func(w func([]string)) {
		for _, r := range recs {
			w(r)
		}
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := sweepParam(out, k, sw.Parameters[k], rows); err != nil {
			return err
		}
	}
	return nil
}

func sweepParam(out, key string, values []any, rows []SweepRow) error {
	safe := strings.ReplaceAll(key, ".", "_")
	f, err := os.Create(filepath.Join(out, "sweep_"+safe+".csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{key, "runs", "mean_toxicity", "mean_welfare", "mean_quality_gap"})
	tox, wel := plotter.XYs{}, plotter.XYs{}
	for i, v := range values {
		var n int
		var t, we, g float64
		for _, r := range rows {
			if fmt.Sprint(r.Point[key]) == fmt.Sprint(v) {
				n++
				t += r.Toxicity
				we += r.Welfare
				g += r.QualityGap
			}
		}
		if n == 0 {
			continue
		}
		_ = w.Write([]string{fmt.Sprint(v), fmt.Sprint(n), fmt.Sprintf("%.6f", t/float64(n)), fmt.Sprintf("%.6f", we/float64(n)), fmt.Sprintf("%.6f", g/float64(n))})
		x := float64(i)
		switch xv := v.(type) {
		case float64:
			x = xv
		case int:
			x = float64(xv)
		case uint64:
			x = float64(xv)
		}
		tox = append(tox, plotter.XY{X: x, Y: t / float64(n)})
		wel = append(wel, plotter.XY{X: x, Y: we / float64(n)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, m := range []struct {
		name string
		xy   plotter.XYs
	}{{"toxicity", tox}, {"welfare", wel}} {
		p := plot.New()
		p.Title.Text = m.name + " vs " + key
		p.X.Label.Text, p.Y.Label.Text = key, "mean "+m.name
		if err := plotutil.AddLinePoints(p, m.name, m.xy); err != nil {
			return err
		}
		for _, ext := range []string{".png", ".svg"} {
			if err := p.Save(14*vg.Centimeter, 9*vg.Centimeter, filepath.Join(out, "sweep_"+safe+"_"+m.name+ext)); err != nil {
				return err
			}
		}
	}
	return nil
}
