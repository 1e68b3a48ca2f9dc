package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A lever outside the paper's range (§8) is refused with exit 2, naming
// the file, the field and the range, by `sandbox run` and by `sandbox
// sweep` (for the point that sets it); --allow-out-of-range runs it with a
// warning. A scenario within the ranges runs without one.
func TestSandboxLeverRanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scen := func(name, tax string) string {
		p := filepath.Join(dir, name)
		body := "scenario_id: tax\nagents:\n  - {type: honest, count: 3}\nsimulation: {epochs: 2, steps_per_epoch: 2}\ngovernance:\n  transaction_tax: {enabled: true, rate: " + tax + "}\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	high, ok := scen("high.yaml", "0.7"), scen("ok.yaml", "0.1")
	sweep := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(sweep, []byte("scenario: ok.yaml\nseeds: [1]\nparameters:\n  governance.transaction_tax.rate: [0.1, 0.9]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const refused = "governance.transaction_tax.rate: 0.7 is outside the paper's range 0..0.5 (§8)"
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		stderr   string // in the error or on stderr
		noStderr bool   // nothing said about ranges
	}{
		{"run: out of range is exit 2 naming file, field and range", []string{"run", high}, 2, high + ": " + refused, false},
		{"run: the refusal says how to run it anyway", []string{"run", high}, 2, "--allow-out-of-range", false},
		{"run: --allow-out-of-range warns and runs", []string{"run", high, "--allow-out-of-range"}, 0, "warning: " + high + ": " + refused + "; running it anyway", false},
		{"run: in range says nothing", []string{"run", ok}, 0, "", true},
		{"sweep: a point out of range is exit 2", []string{"sweep", sweep}, 2, sweep + " (sweep point map[governance.transaction_tax.rate:0.9]): governance.transaction_tax.rate: 0.9 is outside the paper's range 0..0.5", false},
		{"sweep: --allow-out-of-range runs every point", []string{"sweep", sweep, "--allow-out-of-range"}, 0, "warning: " + sweep, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			app, _, errb := testApp()
			root := newRootCmd(app)
			root.SetArgs(append([]string{"sandbox", tc.args[0], tc.args[1], "--out", t.TempDir()}, tc.args[2:]...))
			err := root.ExecuteContext(t.Context())
			said := errb.String()
			if err != nil {
				said += err.Error()
			}
			if got := code(err); got != tc.code {
				t.Fatalf("exit %d, want %d: %v\n%s", got, tc.code, err, errb)
			}
			if tc.noStderr {
				if strings.Contains(said, "range") {
					t.Errorf("a scenario in range was warned about:\n%s", said)
				}
				return
			}
			if !strings.Contains(said, tc.stderr) {
				t.Errorf("output does not contain %q:\n%s", tc.stderr, said)
			}
		})
	}
}
