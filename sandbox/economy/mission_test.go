package economy

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var missionIxs = []Interaction{{"i1", 0.9, true}, {"i2", 0.8, true}, {"i3", 0.7, false}, {"i4", 0.6, true}}

// missionSetup is the §2.4 setup: a1 proposes, a2 joins (active), a3 joins
// and never contributes; a1 contributes i1–i3, a2 contributes i4.
func missionSetup(t *testing.T) (*Missions, string) {
	t.Helper()
	e, err := NewMissions(MissionConfig{MinParticipants: 2, MaxActiveMissions: 5, RewardDistribution: RewardProportional})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Propose("a1", "m", []Objective{{"o1", MetricAvgP, 0.7, 1}, {"o2", MetricTotalCount, 4, 0.5}}, 90, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != MissionProposed {
		t.Fatalf("after propose: %s, want proposed", m.Status)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.Join("a2", m.ID))
	if m.Status != MissionActive {
		t.Fatalf("after a2 joins: %s, want active", m.Status)
	}
	must(e.Join("a3", m.ID))
	for _, ix := range []string{"i1", "i2", "i3"} {
		must(e.RecordContribution("a1", m.ID, ix))
	}
	must(e.RecordContribution("a2", m.ID, "i4"))
	return e, m.ID
}

func TestMissionWorkedExample(t *testing.T) {
	t.Parallel()
	e, id := missionSetup(t)
	if _, ok := e.FreeRiderIndex(id); !ok {
		t.Fatal("free-rider index undefined with contributions")
	}
	ev, err := e.Evaluate(id, missionIxs, 5)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "avg_p", ev.Objectives[0].Actual, 0.7500000000000001)
	near(t, "count", ev.Objectives[1].Actual, 4)
	if !ev.Objectives[0].Met || !ev.Objectives[1].Met || !ev.AllMet || ev.Status != MissionSucceeded || !ev.Scored {
		t.Errorf("evaluation %+v: want both met, succeeded", ev)
	}
	near(t, "score", ev.Score, 1)
	for _, c := range []struct {
		rule string
		want []Payout
	}{
		{RewardEqual, []Payout{{"a1", 45}, {"a2", 45}}},
		{RewardProportional, []Payout{{"a1", 72}, {"a2", 18}}},
		{RewardShapley, []Payout{{"a1", 70.434782609}, {"a2", 19.565217391}}},
	} {
		got, err := e.DistributeRewardsBy(id, missionIxs, c.rule)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.want, got, approx); d != "" {
			t.Errorf("%s payouts (-want +got):\n%s", c.rule, d)
		}
	}
	fr, ok := e.FreeRiderIndex(id)
	if !ok {
		t.Fatal("free-rider index undefined")
	}
	near(t, "free-rider index (counts [0,1,3])", fr, 0.5)
}

func TestMissionPartialScore(t *testing.T) {
	t.Parallel()
	e, err := NewMissions(MissionConfig{MinParticipants: 1, MaxActiveMissions: 5, RewardDistribution: RewardProportional})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Propose("a1", "m", []Objective{
		{"avg", MetricAvgP, 0.9, 1}, {"count", MetricTotalCount, 4, 0.5}, {"acc", MetricAcceptanceRate, 1, 1},
		{"welfare", MetricTotalWelfare, 2, 1}, {"min", MetricMinP, 0.5, 1},
	}, 90, 10, 0)
	if err != nil || m.Status != MissionActive {
		t.Fatalf("propose: %v %v, want active with min_participants 1", m, err)
	}
	for _, ix := range missionIxs {
		if err := e.RecordContribution("a1", m.ID, ix.ID); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := e.Evaluate(m.ID, missionIxs, 5)
	if err != nil {
		t.Fatal(err)
	}
	wantActual := []float64{0.75, 4, 0.75, 5.0, 0.6}
	wantMet := []bool{false, true, false, true, true}
	for i, o := range ev.Objectives {
		near(t, o.ID, o.Actual, wantActual[i])
		if o.Met != wantMet[i] {
			t.Errorf("%s met = %v, want %v", o.ID, o.Met, wantMet[i])
		}
	}
	near(t, "score", ev.Score, 0.907407407)
	if ev.Status != MissionActive {
		t.Errorf("status at epoch 5 = %s, want active", ev.Status)
	}
	ev, _ = e.Evaluate(m.ID, missionIxs, 10)
	if ev.Status != MissionFailed {
		t.Errorf("status at epoch 10 = %s, want failed", ev.Status)
	}
	if got, err := e.DistributeRewards(m.ID, missionIxs); err != nil || got != nil {
		t.Errorf("rewards of a failed mission = %v, %v; want none", got, err)
	}
}

func TestMissionOtherCases(t *testing.T) {
	t.Parallel()
	e, _ := NewMissions(MissionConfig{MinParticipants: 1, MaxActiveMissions: 2, RewardDistribution: RewardShapley})
	// Shapley with a1 {i1, i2} and a2 {i4}, pool 10.
	m, _ := e.Propose("a1", "s", nil, 10, 10, 0)
	_ = e.Join("a2", m.ID)
	_ = e.RecordContribution("a1", m.ID, "i1")
	_ = e.RecordContribution("a1", m.ID, "i2")
	_ = e.RecordContribution("a2", m.ID, "i4")
	// No objectives: score 0.0 (undefined: Scored false), status succeeded.
	ev, err := e.Evaluate(m.ID, missionIxs, 0)
	if err != nil || ev.Score != 0 || ev.Scored || ev.Status != MissionSucceeded {
		t.Errorf("no objectives: %+v %v, want score 0 (unscored), succeeded", ev, err)
	}
	got, _ := e.DistributeRewards(m.ID, missionIxs)
	if d := cmp.Diff([]Payout{{"a1", 7.142857143}, {"a2", 2.857142857}}, got, approx); d != "" {
		t.Errorf("shapley pool 10 (-want +got):\n%s", d)
	}
	// The limit is checked before the pool.
	if _, err := e.Propose("b", "x", nil, -1, 10, 0); !errors.Is(err, ErrBadPool) {
		t.Errorf("pool -1: %v, want ErrBadPool", err)
	}
	_, _ = e.Propose("b", "x", nil, 1, 3, 0)
	_, _ = e.Propose("c", "y", nil, 1, 3, 0)
	if _, err := e.Propose("d", "z", nil, -1, 10, 0); !errors.Is(err, ErrMissionLimit) {
		t.Errorf("third open mission: %v, want ErrMissionLimit first", err)
	}
	if ids := e.ExpireMissions(3); len(ids) != 2 {
		t.Errorf("expire at 3: %v, want the two deadline-3 missions", ids)
	}
	if err := e.RecordContribution("b", "mission-2", "i1"); !errors.Is(err, ErrNotActive) {
		t.Errorf("contribution to an expired mission: %v, want ErrNotActive", err)
	}
	if err := e.RecordContribution("zz", m.ID, "i1"); !errors.Is(err, ErrNotActive) {
		t.Errorf("contribution to a succeeded mission: %v, want ErrNotActive", err)
	}
	if _, ok := e.FreeRiderIndex("mission-2"); ok {
		t.Error("free-rider index of a mission without contributions is defined, want undefined")
	}
	if _, err := e.Evaluate("nope", nil, 0); !errors.Is(err, ErrUnknownMission) {
		t.Errorf("unknown mission: %v", err)
	}
}
