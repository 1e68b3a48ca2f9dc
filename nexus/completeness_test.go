package nexus_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
)

// failWorkersAbove fails the calls of every worker whose number within its
// team (worker-<domain>-NN) is above n: n of each team's atoms finish.
func failWorkersAbove(n int) func(req providers.Request) bool {
	return func(req providers.Request) bool {
		id := req.Caller.AgentID
		if req.Caller.Role != "worker" {
			return false
		}
		k, err := strconv.Atoi(id[strings.LastIndex(id, "-")+1:])
		return err == nil && k > n
	}
}

// Issue 20, "Completeness": a bundle with no finished atom is failed with a
// class of its own and never judged; one resting on fewer than
// completeness.min_atom_share of its planned atoms is judged but keeps the
// run from being complete.
func TestCompletenessDecidesTheStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		why    string
		finish int     // atoms of each team of 15 that finish
		share  float64 // completeness.min_atom_share
		want   nexus.ShadowAggregate
		status string
	}{
		{name: "every atom failed", why: "behind a server that failed 54 of 54 atoms the run said complete, 0.0% (perfect)",
			finish: 0, share: 0.5, status: runfiles.StatusIncomplete,
			want: nexus.ShadowAggregate{Level: "none", Planned: 3, Failed: 3, NoFinishedAtoms: 3}},
		{name: "a third of the atoms finished", why: "a bundle resting on 5 of 15 planned atoms is judged, but the run is not complete",
			finish: 5, share: 0.5, status: runfiles.StatusIncomplete,
			want: nexus.ShadowAggregate{Level: "perfect", Planned: 3, Scored: 3, BelowAtomShare: 3}},
		{name: "two thirds finished", why: "10 of 15 is above the default share: the run is complete",
			finish: 10, share: 0.5, status: runfiles.StatusComplete,
			want: nexus.ShadowAggregate{Level: "perfect", Planned: 3, Scored: 3}},
		{name: "the share check off", why: "min_atom_share 0 keeps only the no-finished-atom rule",
			finish: 5, share: 0, status: runfiles.StatusComplete,
			want: nexus.ShadowAggregate{Level: "perfect", Planned: 3, Scored: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-50", "mock:honest",
				flaky("worker", failWorkersAbove(tc.finish)), withoutRecovery, func(o *nexus.Options) {
					o.Config.Completeness.MinAtomShare = tc.share
				})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Aggregate
			got.Median, got.Mean = nil, nil
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s: aggregate (-want +got):\n%s", tc.why, d)
			}
			if res.Status != tc.status || res.OK != (tc.status == runfiles.StatusComplete) {
				t.Errorf("%s: status %s (ok %v, %s), want %s", tc.why, res.Status, res.OK, res.Error, tc.status)
			}
			for _, b := range res.Bundles {
				if b.AtomsPlanned != 15 || b.AtomsFinished != tc.finish {
					t.Errorf("%s: bundle %s rests on %d of %d planned atoms, want %d of 15", tc.why, b.ID, b.AtomsFinished, b.AtomsPlanned, tc.finish)
				}
				if tc.finish == 0 && (!b.Failed || b.FailureClass != nexus.ClassNoFinishedAtoms || b.ShadowScore != nil || b.Initial != nil) {
					t.Errorf("%s: bundle %s failed %v (%s), score %v, judged %v; want failed no_finished_atoms, never judged",
						tc.why, b.ID, b.Failed, b.FailureClass, b.ShadowScore, b.Initial != nil)
				}
			}
			if tc.status != runfiles.StatusComplete && !strings.Contains(res.Error, "atom") {
				t.Errorf("%s: the error %q does not say which bundles lack atoms", tc.why, res.Error)
			}
		})
	}
}
