package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/internal/yamlx"
)

func TestScenarioRefusesHostileInput(t *testing.T) {
	t.Parallel()
	const agents = "scenario_id: x\nagents:\n  - {type: honest, count: 3}\n"
	laughs := func() string {
		var b strings.Builder
		b.WriteString("description: &a0 [lol]\n")
		for i := 1; i <= 9; i++ {
			fmt.Fprintf(&b, "x%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
		}
		return b.String()
	}
	tests := []struct {
		name, why, yaml string
		wantErr         error
		want            string
	}{
		{"billion laughs", "a 500-byte alias chain ran for minutes", laughs(), yamlx.ErrTooManyNodes, "aliases are expanded"},
		{"64 KB of [", "quadratic parser: 5 GB", "description: " + strings.Repeat("[", 64<<10), yamlx.ErrTooDeep, "c.yaml:1:77: nested more than 64 levels deep"},
		{"unknown key", "strict decoding, file:line:col: key", agents + "simulation: {epoch: 3}\n", yamlx.ErrUnknownKey, `c.yaml:4:14: simulation.epoch: unknown key "epoch"`},
		{"type error", "a string where a number belongs", agents + "simulation: {epochs: many}\n", yamlx.ErrType, `c.yaml:4:22: simulation.epochs: wrong type: want a whole number, got "many"`},
		{"negative epochs", "ran zero epochs and passed", agents + "simulation: {epochs: -5}\n", nil, "c.yaml:4:14: simulation.epochs: -5 is out of range 0..100000"},
		{"negative steps", "ran zero steps and passed", agents + "simulation: {steps_per_epoch: -1}\n", nil, "c.yaml:4:14: simulation.steps_per_epoch: -1 is out of range 0..100000"},
		{"count 2000000", "allocated a complete network of 4·10^12 edges", "scenario_id: x\nagents:\n  - {type: honest, count: 2000000}\n", nil, "c.yaml:3:20: agents[0].count: 2000000 is out of range 1..1000000"},
		{"old decay key", "rate: 0.95 meant erase 95%; read as the paper's factor it would mean keep 95%", agents + "governance:\n  reputation_decay:\n    enabled: true\n    rate: 0.95\n", nil,
			"c.yaml:7:5: governance.reputation_decay.rate: removed: it pulled reputation toward 0.5"},
		{"decay factor 0", "an enabled decay without a factor wiped every reputation", agents + "governance: {reputation_decay: {enabled: true}}\n", nil,
			"c.yaml:4:14: governance.reputation_decay.factor: 0: want 0 < factor <= 1"},
		{"groups over the total", "each group in bounds, the sum not", "scenario_id: x\nagents:\n  - {type: honest, count: 600000}\n  - {type: opportunistic, count: 600000}\n", nil, "c.yaml:2:1: agents: 1200000 agents in all, more than 1000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScenario("c.yaml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: err = %v, want %q", tc.why, err, tc.want)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestLoadScenarioRefusesOversizeFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte("scenario_id: x\n"+strings.Repeat("# pad\n", 60000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadScenario(path); !errors.Is(err, yamlx.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestRunRefusesWhatWouldNotFitInMemory(t *testing.T) {
	t.Parallel()
	s, err := ParseScenario("c.yaml", []byte("scenario_id: x\nagents:\n  - {type: honest, count: 10000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	// A complete network is implicit: 10 000 agents store no edge and fit
	// the scale goal's 200 MB (it was 10^8 edges, 6 GB, refused).
	if e := EstimateMemory(s, 0); e.Edges != 0 || e.Pairs != 0 || e.Bytes > 200<<20 {
		t.Errorf("complete 10k estimate = %+v, want no edges, no pairs, under 200 MB", e)
	}
	if err := CheckMemory(s, 0, 0); err != nil {
		t.Errorf("complete 10k: %v", err)
	}
	// With collusion detection every pair that interacts keeps a history:
	// 10 000 agents × 1000 steps on a complete network do not fit.
	hist := s
	hist.Governance.Collusion.Enabled = true
	hist.Simulation.Epochs, hist.Simulation.StepsPerEpoch = 100, 10
	if _, err := Run(t.Context(), hist, Options{}); !errors.Is(err, ErrTooBig) || !strings.Contains(err.Error(), "10000 agents on a complete network") {
		t.Fatalf("err = %v, want ErrTooBig naming the size", err)
	}
	// The same agents on a ring store 2n edges; a budget can be lowered.
	s.Network.Topology = "ring"
	if e := EstimateMemory(s, 0); e.Edges != 20000 || e.Bytes > 100<<20 {
		t.Errorf("ring estimate = %+v", e)
	}
	if _, err := Run(t.Context(), s, Options{MemoryBudget: 1 << 20}); !errors.Is(err, ErrTooBig) {
		t.Errorf("1 MB budget: err = %v, want ErrTooBig", err)
	}
	if _, err := Run(t.Context(), s, Options{Epochs: -3}); err == nil || !strings.Contains(err.Error(), "epochs: -3 is out of range") {
		t.Errorf("--epochs -3: err = %v", err)
	}
}

func TestRunStopsWhileAllocating(t *testing.T) {
	t.Parallel()
	// Ctrl-C during the allocation of a large scenario used to wait for the
	// whole network to be built: a cancelled context stops it at once.
	s, err := ParseScenario("c.yaml", []byte("scenario_id: x\nagents:\n  - {type: honest, count: 3000}\nsimulation: {epochs: 1000, steps_per_epoch: 1000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := Run(ctx, s, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res != nil {
		t.Errorf("a result for a run stopped before its first epoch: %+v", res.Summary)
	}
}

// TestLoadSweepBoundsSizes: a sweep's epochs and its number of runs (the
// product of the parameters' values, times the seeds) are bounded before
// a single point is built; before issue 22, 30 parameters of 2 values
// built 10^9 maps and epochs had no bound.
func TestLoadSweepBoundsSizes(t *testing.T) {
	t.Parallel()
	many := "scenario: s.yaml\nparameters:\n"
	for i := range 14 { // 2^14 = 16384 points
		many += fmt.Sprintf("  governance.p%d: [1, 2]\n", i)
	}
	tests := []struct {
		why, yaml, want string
	}{
		{"epochs over the scenario bound", "scenario: s.yaml\nepochs: 100001\nparameters: {governance.x: [1]}\n",
			"w.yaml:2:1: epochs: 100001 is out of range 0..100000 (0: the scenario's)"},
		{"negative epochs", "scenario: s.yaml\nepochs: -1\nparameters: {governance.x: [1]}\n",
			"w.yaml:2:1: epochs: -1 is out of range 0..100000 (0: the scenario's)"},
		{"points × seeds over the bound", "scenario: s.yaml\nseeds: [1, 2, 3]\nparameters: {a.x: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], a.y: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], a.z: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34]}\n",
			"w.yaml:3:1: parameters: more than 10000 runs (points × seeds): sweep fewer values or seeds"},
		{"a product of many small lists", many, "w.yaml:2:1: parameters: more than 10000 runs"},
		{"a parameter without values swept nothing and passed", "scenario: s.yaml\nparameters: {a.x: []}\n",
			"w.yaml:2:14: parameters.a.x: give at least one value"},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "w.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("scenario_id: x\nagents:\n  - {type: honest, count: 3}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := LoadSweep(path)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, tc.want)) {
				t.Errorf("%s: LoadSweep: %v, want %q", tc.why, err, tc.want)
			}
		})
	}
}
