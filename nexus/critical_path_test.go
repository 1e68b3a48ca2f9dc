package nexus

import (
	"testing"
)

func TestCriticalPathCountsWhatIsSerial(t *testing.T) {
	t.Parallel()
	flat := Plan{Commanders: 5, Reviewers: 8}
	squads := Plan{Commanders: 5, Reviewers: 10, WorkersPerLead: 5}
	tests := []struct {
		name  string
		why   string
		plan  Plan
		shape pathShape
		want  int
	}{
		{"flat", "decompose, seal, plan, worker, bundle, judge (the last review beside it), synthesis",
			flat, pathShape{JudgeCalls: 1}, 7},
		{"squad leads", "the squad lead's micro briefs come between plan and worker",
			squads, pathShape{JudgeCalls: 1}, 8},
		{"hardening", "each cycle revises and re-judges after the first judgement",
			flat, pathShape{JudgeCalls: 1, HardeningCycles: 2}, 11},
		{"per-criterion judge", "a judgement of 8 criteria one by one is 8 calls in a row",
			flat, pathShape{JudgeCalls: 8}, 14},
		{"shadow scoring off", "without a judge the last review pair is what Phase 7 waits for",
			flat, pathShape{}, 7},
		{"one commander, no judge", "one bundle has nothing to be compared with: nothing follows it but the synthesis",
			Plan{Commanders: 1, Reviewers: 3}, pathShape{}, 6},
		{"preset envelope", "compare reuses the decomposition and the seal: no call in Phases 1 and 1.5",
			flat, pathShape{JudgeCalls: 1, Preset: true}, 5},
		{"quarantine", "the re-review follows the gate",
			flat, pathShape{JudgeCalls: 1, Quarantine: true}, 8},
		{"waves", "the last wave of commanders launched after the canary's probe call and one wave's first calls",
			squads, pathShape{JudgeCalls: 1, WaveChain: 2}, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := criticalPathCalls(tc.plan, tc.shape); got != tc.want {
				t.Errorf("%s: got %d, want %d", tc.why, got, tc.want)
			}
		})
	}
}
