package sim

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden from the current engine")

// TestScenariosWithoutEconomyAreUnchanged runs every example scenario that
// has no economy: block and compares what `swarm sandbox run` writes
// (summary.json, epochs.csv, agents.csv) byte for byte with testdata/golden,
// recorded before the economy was wired into the loop (commit fc84cf9) and
// re-recorded when branch econworld was merged (paper-faithful decay,
// selection_efficiency, uniform candidate draws: byte-identical to what
// econworld's engine wrote before the merge).
// Wiring the economy must not move a single byte of a scenario that does
// not declare one. A deliberate engine change re-records them with
// `go test ./sandbox/sim -run TestScenariosWithoutEconomyAreUnchanged -update`.
func TestScenariosWithoutEconomyAreUnchanged(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../examples/scenarios/*.yaml")
	n := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if strings.HasPrefix(name, "sweep") || strings.HasPrefix(name, "economy") {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			s := load(t, filepath.Base(f))
			res, err := Run(t.Context(), s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := WriteOutputs(dir, res, false); err != nil {
				t.Fatal(err)
			}
			for _, out := range []string{"summary.json", "epochs.csv", "agents.csv"} {
				got, err := os.ReadFile(filepath.Join(dir, out))
				if err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", "golden", name, out)
				if *updateGolden {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(string(want), string(got)); d != "" {
					t.Errorf("%s changed (-before +after):\n%s", out, d)
				}
			}
		})
	}
	if n < 8 {
		t.Errorf("%d scenarios compared, want the 8 examples without an economy", n)
	}
}
