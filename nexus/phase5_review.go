package nexus

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/providers"
)

// crossReview scores bundle pairs as they arrive: when bundle k (k ≥ 1 in
// arrival order) exists it is paired with the bundle before it; at the end
// the last is paired with the first, closing the ring so every bundle gets
// two pairs. Each pair is scored by one reviewer pair (two models). Each
// bundle is handed to onBundle as it arrives (Phase 6 judges it meanwhile);
// reviewers score the bundle as it arrived, never a hardened revision.
func (r *runState) crossReview(ctx context.Context, outs []*BundleOutcome, done <-chan int, aspects []string, s commanders.Settings, onBundle func(*BundleOutcome)) []ReviewRecord {
	var (
		mu      sync.Mutex
		records []ReviewRecord
		wg      sync.WaitGroup
		arrived []int
		pairN   int
		started bool
		texts   = make([]string, len(outs)) // each bundle as it arrived
	)
	pairs := reviewerPairs(r.reviewers())
	ctx = withPhase(ctx, Phase5)
	launch := func(a, b int) {
		if len(pairs) == 0 || ctx.Err() != nil {
			return
		}
		pair := pairs[pairN%len(pairs)]
		pairN++
		views := []commanders.BundleView{{ID: outs[a].ID, Text: texts[a]}, {ID: outs[b].ID, Text: texts[b]}}
		for _, rv := range pair {
			wg.Add(1)
			go func() {
				defer wg.Done()
				recs := r.review(ctx, rv, aspects, views, "")
				mu.Lock()
				records = append(records, recs...)
				mu.Unlock()
			}()
		}
	}
	for i := range done {
		if i < 0 || outs[i].Failed {
			continue
		}
		// Read before Phase 6 gets the bundle: hardening may replace it.
		texts[i] = outs[i].Bundle.Text()
		if onBundle != nil {
			onBundle(outs[i])
		}
		arrived = append(arrived, i)
		if len(arrived) == 2 && !started {
			started = true
			r.rec.enter(Phase5, "cross-review (two bundles exist)")
		}
		if len(arrived) >= 2 {
			launch(arrived[len(arrived)-2], arrived[len(arrived)-1])
		}
	}
	if !started {
		r.rec.enter(Phase5, "cross-review (fewer than two bundles: nothing to compare)")
	}
	if len(arrived) >= 3 {
		launch(arrived[len(arrived)-1], arrived[0])
	}
	wg.Wait()
	sort.SliceStable(records, func(i, j int) bool {
		if records[i].BundleID != records[j].BundleID {
			return records[i].BundleID < records[j].BundleID
		}
		return records[i].Reviewer < records[j].Reviewer
	})
	return records
}

// reviewerPairs forms the reviewer pairs that score bundle pairs (used in
// turn). Going through the reviewers in order, each one not yet paired takes
// as partner the next unpaired reviewer (in ring order) of a different model
// family, or the next unpaired one when none is of another family. An odd
// reviewer left over is paired with the next reviewer of another family
// (already paired, so it works twice). So reviewers work in pairs of
// different families wherever the roster allows, and every reviewer works.
// A single reviewer forms a pair of one.
func reviewerPairs(rs []commanders.Reviewer) [][]commanders.Reviewer {
	n := len(rs)
	if n == 0 {
		return nil
	}
	if n == 1 {
		return [][]commanders.Reviewer{{rs[0]}}
	}
	fam := make([]string, n)
	for i, rv := range rs {
		fam[i] = providers.Family(rv.Agent.Ref)
	}
	used := make([]bool, n)
	// partner finds, in ring order after i, a reviewer satisfying ok: first
	// one of another family, then any.
	partner := func(i int, ok func(j int) bool) int {
		for _, other := range []bool{true, false} {
			for d := 1; d < n; d++ {
				j := (i + d) % n
				if ok(j) && (!other || fam[j] != fam[i]) {
					return j
				}
			}
		}
		return -1
	}
	var out [][]commanders.Reviewer
	for i := range rs {
		if used[i] {
			continue
		}
		used[i] = true
		j := partner(i, func(j int) bool { return !used[j] })
		if j < 0 { // the odd one out
			j = partner(i, func(int) bool { return true })
		}
		used[j] = true
		out = append(out, []commanders.Reviewer{rs[i], rs[j]})
	}
	return out
}

func (r *runState) reviewers() []commanders.Reviewer {
	var out []commanders.Reviewer
	p := r.plan
	for i := 0; i < p.Reviewers; i++ {
		pair := p.Roster.Reviewers[(i/2)%len(p.Roster.Reviewers)]
		a, err := r.agent(commanders.RoleReviewer, fmt.Sprintf("reviewer-%02d", i+1), pair[i%2])
		if err != nil {
			continue
		}
		out = append(out, commanders.Reviewer{Agent: a, Settings: r.settings()})
	}
	return out
}

func (r *runState) review(ctx context.Context, rv commanders.Reviewer, aspects []string, views []commanders.BundleView, feedback string) []ReviewRecord {
	r.meter.noteLaunch(commanders.RoleReviewer, rv.Agent.ID)
	phase, model := r.rec.phaseOf(ctx), rv.Agent.Ref.String()
	r.rec.emit(Event{Phase: phase, Kind: EvAgentStart, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model})
	cards, _, err := rv.Review(ctx, aspects, views, feedback)
	if err != nil {
		class := string(providers.ClassOf(err))
		r.rec.emit(Event{Phase: phase, Kind: EvFailure, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model,
			Message: err.Error(), Data: FailureData{FailureClass: class}})
		r.rec.emit(Event{Phase: phase, Kind: EvAgentFinish, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model,
			Data: AgentFinishData{Status: "failed", FailureClass: class}})
		return nil
	}
	r.rec.emit(Event{Phase: phase, Kind: EvAgentFinish, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model,
		Data: AgentFinishData{Status: "complete"}})
	var out []ReviewRecord
	for _, c := range cards.Reviews {
		rec := ReviewRecord{Reviewer: rv.Agent.ID, Model: model, BundleID: c.BundleID, Card: c, Total: c.Total()}
		out = append(out, rec)
		r.rec.emit(Event{Phase: phase, Kind: EvReview, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model,
			Data: ReviewData{BundleID: c.BundleID, Total: c.Total(), Conflicts: len(c.Conflicts), Quarantine: feedback != ""}})
	}
	var name string
	if feedback != "" {
		name = fmt.Sprintf("reviews/%s-quarantine-%s.json", rv.Agent.ID, views[0].ID)
	} else {
		name = fmt.Sprintf("reviews/%s-%s.json", rv.Agent.ID, strings.Join(viewIDs(views), "-"))
	}
	_ = r.dir.WriteJSON(name, cards)
	return out
}

func viewIDs(vs []commanders.BundleView) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.ID)
	}
	return out
}
