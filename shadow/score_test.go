package shadow

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummarizeNeverReadsNothingAsALevel(t *testing.T) {
	t.Parallel()
	f := func(x float64) *float64 { return &x }
	tests := []struct {
		name    string
		why     string
		scores  []float64
		planned int
		want    Summary
		done    bool
	}{
		{"nothing judged", "every bundle failed: no median, no mean, level none, not perfect",
			nil, 5, Summary{Planned: 5, Scored: 0, Level: LevelNone}, false},
		{"nothing planned", "an empty plan judges nothing either",
			nil, 0, Summary{Level: LevelNone}, false},
		{"some judged", "two of five: the level is the median's, and the summary is incomplete",
			[]float64{10, 40}, 5, Summary{Planned: 5, Scored: 2, Median: f(25), Mean: f(25), Level: LevelModerate}, false},
		{"all judged and perfect", "a real 0.0 over every planned bundle is perfect and complete",
			[]float64{0, 0, 0}, 3, Summary{Planned: 3, Scored: 3, Median: f(0), Mean: f(0), Level: LevelPerfect}, true},
		{"odd count", "median of three is the middle one",
			[]float64{60, 5, 12}, 3, Summary{Planned: 3, Scored: 3, Median: f(12), Mean: f(77.0 / 3), Level: LevelMinor}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Summarize(tc.scores, tc.planned)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s (-want +got)\n%s", tc.why, d)
			}
			if got.Complete() != tc.done {
				t.Errorf("Complete() = %v, want %v (%s)", got.Complete(), tc.done, tc.why)
			}
		})
	}
}

// Passed and Rank are the gate's one answer to "did it pass" and "which is
// better": proceed and warn pass, nothing else does (no decision included);
// the order is proceed, warn, quarantine, reject, then no decision.
func TestGateDecisionPassedAndRank(t *testing.T) {
	t.Parallel()
	cases := []struct {
		g      *GateDecision
		passed bool
		rank   int
	}{
		{&GateDecision{Action: ActionProceed}, true, 0},
		{&GateDecision{Action: ActionWarn}, true, 1},
		{&GateDecision{Action: ActionQuarantine}, false, 2},
		{&GateDecision{Action: ActionReject}, false, 3},
		{nil, false, 4},
		{&GateDecision{Action: "maybe"}, false, 4},
	}
	for _, c := range cases {
		if got := c.g.Passed(); got != c.passed {
			t.Errorf("%+v: Passed() = %v, want %v", c.g, got, c.passed)
		}
		if got := c.g.Rank(); got != c.rank {
			t.Errorf("%+v: Rank() = %d, want %d", c.g, got, c.rank)
		}
	}
}
