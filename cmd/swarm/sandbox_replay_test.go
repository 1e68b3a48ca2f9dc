package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// `swarm sandbox metrics RUN/events.jsonl` reads a run's own events file
// (it used to refuse it, exit 2) and prints the run's own summary: every
// metric of summary.json, to the last digit. A payoff flag given
// explicitly still wins over the run's payoff.
func TestSandboxMetricsReproducesARunFromItsEvents(t *testing.T) {
	t.Parallel()
	// A payoff other than the defaults and a tax: the header's payoff and
	// the interactions' costs both matter.
	scen := writeFile(t, "s.yaml", `scenario_id: replay
agents:
  - {type: honest, count: 4}
  - {type: adversarial, count: 2}
simulation: {epochs: 4, steps_per_epoch: 5, seed: 7}
payoff: {s_plus: 3, h: 1.5, w_rep: 2}
governance:
  transaction_tax: {enabled: true, rate: 0.1}
`)
	out := t.TempDir()
	app, _, errb := testApp()
	if err := runSandboxRun(t.Context(), app, SandboxRunOptions{Scenario: scen, Out: out}); code(err) > 1 {
		t.Fatalf("sandbox run: %v\n%s", err, errb)
	}
	var summary struct {
		Summary map[string]any `json:"summary"`
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatal(err)
	}
	metrics := func(t *testing.T, args ...string) map[string]any {
		t.Helper()
		app, stdout, errb := testApp()
		root := newRootCmd(app)
		root.SetArgs(append([]string{"sandbox", "metrics", filepath.Join(out, "events.jsonl")}, args...))
		if err := root.ExecuteContext(t.Context()); err != nil {
			t.Fatalf("exit %d: %v\n%s", code(err), err, errb)
		}
		var got map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		delete(got, "clamped_inputs") // not a figure of the run
		return got
	}
	if d := cmp.Diff(summary.Summary, metrics(t)); d != "" {
		t.Errorf("metrics of events.jsonl (-summary.json +metrics):\n%s", d)
	}
	if got := metrics(t, "--s-plus", "2"); got["total_welfare"] == summary.Summary["total_welfare"] {
		t.Errorf("--s-plus 2 given explicitly left the welfare at the run's %v", got["total_welfare"])
	}
}
