package main

import (
	"context"
	"strings"
	"testing"
)

// A scenario whose events.jsonl would run to gigabytes is warned about
// before the run starts (the run itself is interrupted at once here); with
// events turned off there is nothing to warn about.
func TestSandboxRunWarnsBeforeAHugeEventLog(t *testing.T) {
	t.Parallel()
	const big = "scenario_id: s\nagents:\n  - {type: honest, count: 1000000}\nsimulation: {epochs: 10, steps_per_epoch: 10}\nnetwork: {topology: small_world, k: 2, p: 0.1}\n"
	for _, tc := range []struct {
		name, yaml string
		warn       bool
	}{
		{"events on: about 22 GB", big, true},
		{"events off", big + "outputs: {events: false}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, _, errb := testApp()
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			err := runSandboxRun(ctx, app, SandboxRunOptions{Scenario: writeFile(t, "s.yaml", tc.yaml), Out: t.TempDir()})
			if got := code(err); got != 130 {
				t.Errorf("exit %d (%v), want 130 (interrupted before anything ran)", got, err)
			}
			warned := strings.Contains(errb.String(), "events.jsonl may grow to about 22.4 GB") && strings.Contains(errb.String(), "outputs: {events: false}")
			if warned != tc.warn {
				t.Errorf("warned %v, want %v; stderr:\n%s", warned, tc.warn, errb.String())
			}
		})
	}
}
