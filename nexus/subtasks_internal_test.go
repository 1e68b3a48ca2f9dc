package nexus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"
)

// A sub-task is finished for the sealed check exactly when its atom is
// finished for completeness (commanders.AtomResult.Finished), salvage
// aside: an atom whose worker reported its brief failed, or wrote nothing,
// never counts as finished work (it did before: only Failed was looked at).
func TestSubTasksFinishedAsCompletenessCounts(t *testing.T) {
	t.Parallel()
	done := commanders.Atom{Status: commanders.StatusComplete, Content: "found it"}
	res := commanders.Result{Atoms: []commanders.AtomResult{
		{BriefID: "s-01", Atom: done},
		{BriefID: "s-02", Atom: commanders.Atom{Status: commanders.StatusFailed, Content: "could not do it"}},
		{BriefID: "s-03", Atom: commanders.Atom{Status: commanders.StatusComplete, Content: "  "}},
		{BriefID: "s-04", Atom: done, Degraded: true},
		{BriefID: "s-05", Failed: true, Class: providers.ClassTimeout},
		{BriefID: "s-06", Failed: true, Skipped: true},
	}}
	want := []shadow.SubTask{
		{ID: "s-01", Finished: true},
		{ID: "s-02", Why: "its worker reported it failed"},
		{ID: "s-03", Why: "its worker wrote nothing"},
		{ID: "s-04", Why: "salvaged from an invalid answer"},
		{ID: "s-05", Why: "failed: timeout"},
		{ID: "s-06", Why: "not launched"},
	}
	if d := cmp.Diff(want, subTasksOf(res)); d != "" {
		t.Errorf("sub-tasks (-want +got):\n%s", d)
	}
	for i, a := range res.Atoms {
		if got := subTasksOf(commanders.Result{Atoms: []commanders.AtomResult{a}})[0].Finished; got != (a.Finished() && !a.Degraded) {
			t.Errorf("atom %d: sub-task finished %v, completeness says %v", i, got, a.Finished())
		}
	}
}
