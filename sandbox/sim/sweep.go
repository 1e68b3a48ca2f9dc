package sim

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/internal/yamlx"
)

// Sweep is a sweep YAML file.
type Sweep struct {
	Scenario   string           `yaml:"scenario"` // path, relative to the sweep file
	Seeds      []int64          `yaml:"seeds"`
	Epochs     int              `yaml:"epochs"`
	Parameters map[string][]any `yaml:"parameters"` // dotted key -> values
}

// SweepRow is one (parameter point, seed) result.
type SweepRow struct {
	Point        map[string]any
	Seed         int64
	Toxicity     float64
	QualityGap   float64
	Welfare      float64
	Interactions int
}

// LoadSweep reads a sweep file and its scenario (strictly).
func LoadSweep(path string) (Sweep, []byte, error) {
	var sw Sweep
	doc, err := yamlx.DecodeFile(path, &sw, yamlx.DefaultLimits)
	if err != nil {
		return sw, nil, err
	}
	if sw.Scenario == "" || len(sw.Parameters) == 0 {
		return sw, nil, fmt.Errorf("%s: scenario and parameters are required", textsafe.Printable(path))
	}
	// Bounds, before anything is built: the points are the cartesian
	// product of the parameters' values (30 parameters of 2 values are
	// 10^9 maps).
	at := func(key, msg string) error {
		e := &yamlx.Error{File: path, Key: key, Msg: msg}
		if p, k, ok := doc.PosOrParent(key); ok {
			e.Line, e.Col, e.Key = p.Line, p.Col, k
		}
		return e
	}
	if sw.Epochs < 0 || sw.Epochs > MaxEpochs {
		return sw, nil, at("epochs", fmt.Sprintf("%d is out of range 0..%d (0: the scenario's)", sw.Epochs, MaxEpochs))
	}
	runs := max(len(sw.Seeds), 1)
	for _, k := range sw.Keys() {
		n := len(sw.Parameters[k])
		if n == 0 {
			return sw, nil, at("parameters."+k, "give at least one value")
		}
		if runs > MaxSweepRuns/n {
			return sw, nil, at("parameters", fmt.Sprintf("more than %d runs (points × seeds): sweep fewer values or seeds", MaxSweepRuns))
		}
		runs *= n
	}
	if len(sw.Seeds) == 0 {
		sw.Seeds = []int64{1}
	}
	sp := sw.Scenario
	if !filepath.IsAbs(sp) {
		sp = filepath.Join(filepath.Dir(path), sp)
	}
	sb, err := yamlx.ReadFile(sp, yamlx.DefaultLimits)
	if err != nil {
		return sw, nil, fmt.Errorf("%s: scenario: %w", textsafe.Printable(path), err)
	}
	// Each point decodes the scenario into a map first: check it now.
	if _, err := yamlx.Check(sp, sb, yamlx.DefaultLimits); err != nil {
		return sw, nil, err
	}
	return sw, sb, nil
}

// Points is the cartesian product of the parameters, keys sorted.
func (sw Sweep) Points() []map[string]any {
	keys := sw.Keys()
	points := []map[string]any{{}}
	for _, k := range keys {
		var next []map[string]any
		for _, p := range points {
			for _, v := range sw.Parameters[k] {
				q := map[string]any{}
				for kk, vv := range p {
					q[kk] = vv
				}
				q[k] = v
				next = append(next, q)
			}
		}
		points = next
	}
	return points
}

// Keys are the swept keys, sorted.
func (sw Sweep) Keys() []string {
	var keys []string
	for k := range sw.Parameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// applyPoint sets dotted keys in the scenario YAML document base (named
// name in errors).
func applyPoint(name string, base []byte, point map[string]any) ([]byte, error) {
	var doc map[string]any
	if _, err := yamlx.Decode(name, base, &doc, yamlx.DefaultLimits); err != nil {
		return nil, err
	}
	for k, v := range point {
		parts := strings.Split(k, ".")
		m := doc
		for _, p := range parts[:len(parts)-1] {
			sub, ok := m[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[p] = sub
			}
			m = sub
		}
		m[parts[len(parts)-1]] = v
	}
	return yaml.Marshal(doc)
}

// RunSweep runs every point with every seed; progress is called after each run.
func RunSweep(ctx context.Context, sw Sweep, base []byte, name string, progress func(done, total int)) ([]SweepRow, error) {
	points := sw.Points()
	total := len(points) * len(sw.Seeds)
	var rows []SweepRow
	for _, pt := range points {
		doc, err := applyPoint(name, base, pt)
		if err != nil {
			return rows, err
		}
		s, err := ParseScenario(fmt.Sprintf("%s with %v", name, pt), doc)
		if err != nil {
			return rows, err
		}
		for _, seed := range sw.Seeds {
			seed := seed
			res, err := Run(ctx, s, Options{Seed: &seed, Epochs: sw.Epochs})
			if err != nil {
				return rows, err
			}
			rows = append(rows, SweepRow{Point: pt, Seed: seed, Toxicity: res.Summary.Toxicity, QualityGap: res.Summary.QualityGap, Welfare: res.Summary.TotalWelfare, Interactions: res.Interactions})
			if progress != nil {
				progress(len(rows), total)
			}
		}
	}
	return rows, nil
}

// Replays runs a scenario n times with seeds seed, seed+1, …, seed+n−1.
func Replays(ctx context.Context, s Scenario, n int, o Options) ([]*Result, error) {
	base := s.Simulation.Seed
	if o.Seed != nil {
		base = *o.Seed
	}
	var out []*Result
	for i := 0; i < n; i++ {
		seed := base + int64(i)
		oo := o
		oo.Seed = &seed
		oo.OnEpoch, oo.OnEvent, oo.OnInteraction = nil, nil, nil
		r, err := Run(ctx, s, oo)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}
