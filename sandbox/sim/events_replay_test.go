package sim

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/swarm-dev/swarm/sandbox"
)

// replayRun runs s with its events.jsonl written as `swarm sandbox run`
// writes it and returns the result and the file's path.
func replayRun(t *testing.T, s Scenario, o Options) (*Result, string) {
	t.Helper()
	dir := t.TempDir()
	log, err := CreateEventLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	seed := s.Simulation.Seed
	if o.Seed != nil {
		seed = *o.Seed
	}
	epochs := s.Simulation.Epochs
	if o.Epochs > 0 {
		epochs = o.Epochs
	}
	log.Header(s.ScenarioID, seed, epochs, s.Payoff)
	log.Hook(&o, true)
	res, err := Run(t.Context(), s, o)
	if cerr := log.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return res, filepath.Join(dir, "events.jsonl")
}

// replayMetrics recomputes a run's summary and per-epoch rows from its
// events.jsonl, as `swarm sandbox metrics` reads it (the run's payoff from
// its header).
func replayMetrics(t *testing.T, path string) (sandbox.Report, []EpochRow) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	proxy, err := sandbox.NewProxy(sandbox.DefaultProxyConfig())
	if err != nil {
		t.Fatal(err)
	}
	var pay sandbox.PayoffConfig
	var epochs []*sandbox.Metrics
	onRun := func(_ int, h sandbox.RunHeader) error { pay = h.Payoff; return nil }
	err = sandbox.ReadRunInteractions(path, f, proxy, onRun, func(_ int, in sandbox.Interaction) error {
		for len(epochs) <= in.Epoch {
			epochs = append(epochs, sandbox.NewMetrics(pay))
		}
		epochs[in.Epoch].Add(in)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	mf, err := sandbox.ReadRunMetricsFile(path, f, proxy, sandbox.DefaultPayoffConfig(), func(run sandbox.PayoffConfig) sandbox.PayoffConfig { return run }, false)
	if err != nil {
		t.Fatal(err)
	}
	var rows []EpochRow
	for e, m := range epochs {
		r := m.Report()
		if r.N == 0 {
			continue // as epochMetrics
		}
		rows = append(rows, EpochRow{Epoch: e + 1, Interactions: r.N, Accepted: r.Accepted, Toxicity: r.Toxicity, QualityGap: r.QualityGap,
			Welfare: r.TotalWelfare, NetWelfare: r.NetSocialWelfare, MeanP: r.MeanP})
	}
	return mf.Report, rows
}

// epochMetrics is the part of a run's epoch rows its interactions define.
// (frozen: with the frozen count, which ReplayEvents recomputes).
func epochMetrics(rows []EpochRow, frozen bool) []EpochRow {
	var out []EpochRow
	for _, r := range rows {
		if r.Interactions == 0 {
			continue // an epoch without interactions writes no line
		}
		row := EpochRow{Epoch: r.Epoch, Interactions: r.Interactions, Accepted: r.Accepted, Toxicity: r.Toxicity,
			QualityGap: r.QualityGap, Welfare: r.Welfare, NetWelfare: r.NetWelfare, MeanP: r.MeanP}
		if frozen {
			row.Frozen = r.Frozen
		}
		out = append(out, row)
	}
	return out
}

// TestEventsReproduceEveryShippedScenario: for every shipped scenario (and
// every point of the shipped sweep, whose tax the base scenario lacks), the
// metrics recomputed from the run's own events.jsonl equal the run's
// summary, per-epoch metrics and frozen counts, and agents' rows exactly
// (reputations to 1e-12, see ReplayEvents), not to a tolerance: the file
// holds each interaction's p, transfer, costs and reputation changes as
// float64s that JSON round-trips exactly, and they are summed in the run's
// order. Before, the file lacked the costs and reputation changes and the
// run's payoff (baseline: welfare 1 662 recomputed, 1 336 reported).
func TestEventsReproduceEveryShippedScenario(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../examples/scenarios/*.yaml")
	type run struct {
		name string
		s    Scenario
		o    Options
	}
	var runs []run
	for _, f := range files {
		if !strings.HasPrefix(filepath.Base(f), "sweep") {
			runs = append(runs, run{filepath.Base(f), load(t, filepath.Base(f)), Options{}})
			continue
		}
		sw, base, err := LoadSweep(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, pt := range sw.Points() {
			doc, err := applyPoint(f, base, pt)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ParseScenario(f, doc)
			if err != nil {
				t.Fatal(err)
			}
			seed := sw.Seeds[0]
			runs = append(runs, run{fmt.Sprintf("%s %v", filepath.Base(f), pt), s, Options{Seed: &seed, Epochs: sw.Epochs}})
		}
	}
	if len(runs) < 12 {
		t.Fatalf("%d runs, want every shipped scenario and sweep point", len(runs))
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			res, path := replayRun(t, r.s, r.o)
			if res.Interactions == 0 {
				t.Fatal("no interactions: nothing to check")
			}
			sum, rows := replayMetrics(t, path)
			if d := cmp.Diff(res.Summary, sum); d != "" {
				t.Errorf("summary recomputed from events.jsonl (-run +events):\n%s", d)
			}
			if d := cmp.Diff(epochMetrics(res.Epochs, false), rows); d != "" {
				t.Errorf("epoch metrics recomputed from events.jsonl (-run +events):\n%s", d)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rp, err := ReplayEvents(path, f)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(res.Summary, rp.Summary); d != "" {
				t.Errorf("ReplayEvents summary (-run +events):\n%s", d)
			}
			if d := cmp.Diff(epochMetrics(res.Epochs, true), rp.Epochs); d != "" {
				t.Errorf("ReplayEvents epochs (-run +events):\n%s", d)
			}
			// Reputations to 1e-12: the file holds each change as new −
			// old, which added back to old may differ from new in the
			// last bit. Everything else exactly.
			if d := cmp.Diff(res.Agents, rp.Agents, cmpopts.EquateApprox(0, 1e-12)); d != "" {
				t.Errorf("ReplayEvents agents, reputations to 1e-12 (-run +events):\n%s", d)
			}
			if d := cmp.Diff(res.Agents, rp.Agents, cmpopts.IgnoreFields(AgentRow{}, "Reputation")); d != "" {
				t.Errorf("ReplayEvents agents but reputations, exactly (-run +events):\n%s", d)
			}
		})
	}
}

// TestSameSeedWritesTheSameEvents: a run's events.jsonl is its history, so
// two runs of a scenario with the same seed write the same bytes. Effects
// a lever applies to many agents at once (reputation decay at an epoch's
// start, freezes, audit costs) come from maps; before they were written in
// the agents' id order, their lines came out in map order, different from
// one run to the next.
func TestSameSeedWritesTheSameEvents(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../examples/scenarios/*.yaml")
	var effects int
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasPrefix(name, "sweep") {
			continue
		}
		s := load(t, name)
		_, p1 := replayRun(t, s, Options{})
		_, p2 := replayRun(t, s, Options{})
		b1, err := os.ReadFile(p1)
		if err != nil {
			t.Fatal(err)
		}
		b2, err := os.ReadFile(p2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1, b2) {
			l1, l2 := strings.Split(string(b1), "\n"), strings.Split(string(b2), "\n")
			for i := range min(len(l1), len(l2)) {
				if l1[i] != l2[i] {
					t.Errorf("%s: events.jsonl differs between two runs with the same seed at line %d:\n%s\n%s", name, i+1, l1[i], l2[i])
					break
				}
			}
			continue
		}
		effects += bytes.Count(b1, []byte(`"type":"effect"`))
	}
	if effects == 0 {
		t.Fatal("no effect lines in any shipped scenario's events: nothing was checked")
	}
}
