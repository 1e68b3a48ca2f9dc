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
