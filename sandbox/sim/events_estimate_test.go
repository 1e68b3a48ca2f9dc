package sim

import (
	"context"
	"testing"
)

// The events.jsonl estimate bounds what a run writes: one line per
// interaction, at most one interaction per agent and step, none when the
// scenario turns events off.
func TestEstimateEventBytesBoundsTheLog(t *testing.T) {
	t.Parallel()
	on := scaleScenario(t, 200, "complete", 3, 4)
	off := on
	f := false
	off.Outputs.Events = &f
	tests := []struct {
		name   string
		s      Scenario
		epochs int
		want   int64
		agents int64 // agent lines
	}{
		{"agents × epochs × steps", on, 0, 200 * 3 * 4, 200},
		{"--epochs overrides the scenario's", on, 5, 200 * 5 * 4, 200},
		{"events off: nothing written", off, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n, b := EstimateEventBytes(tc.s, tc.epochs)
			if wb := tc.want*estBytesPerEvent + tc.agents*estBytesPerAgentLine; n != tc.want || b != wb {
				t.Errorf("got %d interactions, %d bytes; want %d, %d", n, b, tc.want, wb)
			}
		})
	}
	// The bound holds on a real run.
	res, err := Run(context.Background(), on, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := EstimateEventBytes(on, 0); int64(res.Interactions) > n || res.Interactions == 0 {
		t.Errorf("a run made %d interactions, the estimate bounds them at %d", res.Interactions, n)
	}
}
