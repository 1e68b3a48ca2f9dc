package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/sandbox/sim"
)

// TestSandboxImport: the command's exit codes, where warnings and the
// scenario go, and that -o never loses an existing file.
func TestSandboxImport(t *testing.T) {
	t.Parallel()
	ref := "../../examples/reference/collusion.yaml"

	t.Run("stdout", func(t *testing.T) {
		c, out, errOut := execCLI(t, "sandbox", "import", ref)
		if c != 0 {
			t.Fatalf("exit %d, stderr %s", c, errOut)
		}
		// Warnings name file:line:col on stderr; the scenario alone is on stdout.
		if !strings.Contains(errOut, "warning: "+ref+":46:3: success_criteria.min_flagged_pairs:") {
			t.Errorf("stderr lacks the file:line warning:\n%s", errOut)
		}
		if _, err := sim.ParseScenario("stdout", []byte(out)); err != nil {
			t.Errorf("stdout does not load as a scenario: %v\n%s", err, out)
		}
	})

	t.Run("-o writes a scenario that runs", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "ref.yaml")
		if c, _, errOut := execCLI(t, "sandbox", "import", ref, "-o", dst); c != 0 {
			t.Fatalf("exit %d: %s", c, errOut)
		}
		s, err := sim.LoadScenario(dst)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(sim.Network{Topology: "small_world", K: 2, P: 0.2}, s.Network); d != "" {
			t.Errorf("network (-want +got):\n%s", d)
		}
		if c, _, errOut := execCLI(t, "sandbox", "run", dst, "--out", filepath.Join(t.TempDir(), "run")); c != 0 {
			t.Errorf("swarm sandbox run on the import: exit %d: %s", c, errOut)
		}
	})

	t.Run("-o refuses to overwrite", func(t *testing.T) {
		dst := writeFile(t, "keep.yaml", "precious\n")
		c, _, errOut := execCLI(t, "sandbox", "import", ref, "-o", dst)
		if b, _ := os.ReadFile(dst); c != 2 || string(b) != "precious\n" {
			t.Errorf("exit %d, file %q (want 2, untouched); stderr %s", c, b, errOut)
		}
		if c, _, errOut := execCLI(t, "sandbox", "import", ref, "-o", dst, "--force"); c != 0 {
			t.Errorf("--force: exit %d: %s", c, errOut)
		}
	})

	for _, tc := range []struct{ name, body, want string }{
		{"not YAML", "agents: [1\n", "bad.yaml:"},
		{"not a reference scenario", "providers: {}\n", "not a reference scenario"},
		{"ours already", "scenario_id: x\nagents: [{type: honest, count: 2}]\nsimulation: {epochs: 3}\n", "swarm's own format"},
		{"nothing valid", "agents: [{type: llm, count: 4}]\n", "not valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "out.yaml")
			app, out, _ := testApp()
			err := runSandboxImport(app, SandboxImportOptions{File: writeFile(t, "bad.yaml", tc.body), Out: dst})
			if code(err) != 2 || !strings.Contains(err.Error(), tc.want) || out.Len() != 0 {
				t.Errorf("exit %d, err %v, stdout %q; want 2 and %q", code(err), err, out, tc.want)
			}
			if _, err := os.Stat(dst); !os.IsNotExist(err) {
				t.Errorf("%s was written for a refused input", dst)
			}
		})
	}
}

// TestSandboxImportBoundsSizes: a size of the reference file is read as
// written (1e11 is a whole number, not "got 0") and refused with the key,
// the value as written and swarm's bound, exit 2 — never left out for a
// default that would run a different scenario without a word.
func TestSandboxImportBoundsSizes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		why, yaml, want string
	}{
		{"1e11 epochs: reported as got 0 and left out before issue 22", "agents: [{type: honest, count: 3}]\nsimulation:\n  n_epochs: 1e11\n",
			"r.yaml:3:3: simulation.n_epochs: 1e11 is over the maximum of 100000"},
		{"an integer too large for 32 bits", "agents: [{type: honest, count: 3}]\nsimulation:\n  steps_per_epoch: 5000000000\n",
			"r.yaml:3:3: simulation.steps_per_epoch: 5000000000 is over the maximum of 100000"},
		{"zero epochs would read as swarm's default of 20", "agents: [{type: honest, count: 3}]\nsimulation: {n_epochs: 0}\n",
			"r.yaml:2:14: simulation.n_epochs: 0 is below the minimum of 1"},
		{"an agent group over the bound", "agents:\n  - {type: honest, count: 2e6}\n",
			"r.yaml:2:20: agents[0].count: 2e6 is over the maximum of 1000000"},
	} {
		t.Run(c.why, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.yaml")
			if err := os.WriteFile(path, []byte(c.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := execCLIWithError(t, "sandbox", "import", path)
			want := filepath.Join(filepath.Dir(path), c.want)
			if code != 2 || out != "" || !strings.Contains(errOut, want) {
				t.Errorf("exit %d, stdout %.200q, stderr %q; want 2, nothing on stdout and %q", code, out, errOut, want)
			}
		})
	}
}

// TestSandboxRunBoundsReplays: --replays is a size like --epochs: outside
// 0..sim.MaxReplays it is an error naming the flag and the bound, exit 2,
// before anything runs (before issue 22, -1 ran once and said nothing, and
// any number ran).
func TestSandboxRunBoundsReplays(t *testing.T) {
	t.Parallel()
	scenario := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(scenario, []byte("scenario_id: x\nagents:\n  - {type: honest, count: 2}\nsimulation: {epochs: 1, steps_per_epoch: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"-1", "10001"} {
		out := filepath.Join(t.TempDir(), "run")
		code, _, errOut := execCLIWithError(t, "sandbox", "run", scenario, "--replays", n, "--out", out)
		if want := "--replays " + n + ": want 0..10000"; code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("--replays %s: exit %d, stderr %q; want 2 and %q", n, code, errOut, want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--replays %s: %s was created", n, out)
		}
	}
}
