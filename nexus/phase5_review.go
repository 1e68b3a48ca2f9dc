package nexus

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"
)

// crossReview scores bundle pairs while the bundles arrive. The pairs
// depend only on which bundles exist, never on the order they arrived in
// (a resumed run must ask the same questions): in domain order, each
// bundle is paired with the next bundle that did not fail, and the last
// with the first, closing the ring (with three or more bundles) so every
// bundle gets two pairs. A pair is launched as soon as both bundles exist
// and every bundle between them is known to have failed. The pair starting
// at the k-th domain is scored by reviewer pair k (mod the pairs). Each
// bundle is handed to onBundle as it arrives (Phase 6 judges it
// meanwhile); reviewers score the bundle as it arrived, never a hardened
// revision.
func (r *deps) crossReview(ctx context.Context, outs []*BundleOutcome, done <-chan int, aspects []string, s commanders.Settings, onBundle func(*BundleOutcome)) []ReviewRecord {
	var (
		mu      sync.Mutex
		records []ReviewRecord
		wg      sync.WaitGroup
		started bool
		texts   = make([]string, len(outs)) // each bundle as it arrived
		ring    = newReviewRing(len(outs))
	)
	pairs := reviewerPairs(r.reviewers())
	ctx = withPhase(ctx, events.Phase5)
	launch := func(a, b int) {
		if len(pairs) == 0 || ctx.Err() != nil {
			return
		}
		pair := pairs[a%len(pairs)]
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
		ok := i >= 0 && !outs[i].Failed
		if ok {
			// Read before Phase 6 gets the bundle: hardening may replace it.
			texts[i] = outs[i].Bundle.Text()
			if onBundle != nil {
				onBundle(outs[i])
			}
		}
		if i < 0 {
			continue // never launched: the end of the run (close) settles it
		}
		ring.known(i, ok)
		if ring.arrived == 2 && !started {
			started = true
			r.rec.enter(events.Phase5, "cross-review (two bundles exist)")
		}
		for _, p := range ring.ready() {
			launch(p[0], p[1])
		}
	}
	if !started {
		r.rec.enter(events.Phase5, "cross-review (fewer than two bundles: nothing to compare)")
	}
	for _, p := range ring.close() {
		launch(p[0], p[1])
	}
	wg.Wait()
	sortReviews(records)
	return records
}

// sortReviews orders review records by bundle, then reviewer, so what
// follows (consensus) does not depend on which reviewer finished first.
func sortReviews(records []ReviewRecord) {
	sort.SliceStable(records, func(i, j int) bool {
		if records[i].BundleID != records[j].BundleID {
			return records[i].BundleID < records[j].BundleID
		}
		return records[i].Reviewer < records[j].Reviewer
	})
}

// reviewRing decides the cross-review pairs from what is known of each
// bundle (in domain order): exists, failed, or not yet known. It is used
// from one goroutine.
type reviewRing struct {
	state    []int8 // 0 unknown, 1 exists, -1 failed
	launched []bool // the pair starting at i was handed out
	arrived  int    // bundles that exist
}

func newReviewRing(n int) *reviewRing {
	return &reviewRing{state: make([]int8, n), launched: make([]bool, n)}
}

// known records bundle i's outcome.
func (g *reviewRing) known(i int, exists bool) {
	if exists {
		g.state[i] = 1
		g.arrived++
	} else {
		g.state[i] = -1
	}
}

// ready returns the pairs (i, next existing bundle after i) that can be
// launched now and were not yet, in domain order.
func (g *reviewRing) ready() [][2]int {
	var out [][2]int
	for i, st := range g.state {
		if st != 1 || g.launched[i] {
			continue
		}
		for j := i + 1; j < len(g.state); j++ {
			if g.state[j] == 0 {
				break // unknown: the pair must wait
			}
			if g.state[j] == 1 {
				g.launched[i] = true
				out = append(out, [2]int{i, j})
				break
			}
		}
	}
	return out
}

// close settles the ring once no bundle will arrive any more: a bundle
// never reported (not launched) counts as failed, and it returns the pairs
// that were waiting on one, then the pair that closes the ring (the last
// existing bundle with the first) when three or more bundles exist.
func (g *reviewRing) close() [][2]int {
	for i, st := range g.state {
		if st == 0 {
			g.state[i] = -1
		}
	}
	out := g.ready()
	first, last := -1, -1
	for i, st := range g.state {
		if st == 1 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if g.arrived >= 3 && !g.launched[last] {
		g.launched[last] = true
		out = append(out, [2]int{last, first})
	}
	return out
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

func (r *deps) reviewers() []commanders.Reviewer {
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

func (r *deps) review(ctx context.Context, rv commanders.Reviewer, aspects []string, views []commanders.BundleView, feedback string) []ReviewRecord {
	r.meter.noteLaunch(commanders.RoleReviewer, rv.Agent.ID)
	phase, model := r.rec.phaseOf(ctx), rv.Agent.Ref.String()
	r.rec.emit(events.Event{Phase: phase, Kind: events.AgentStart, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model})
	cards, _, err := rv.Review(ctx, aspects, views, feedback)
	if err != nil {
		class := string(providers.ClassOf(err))
		r.rec.emit(events.Event{Phase: phase, Kind: events.Failure, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model,
			Message: err.Error(), Data: events.FailureData{FailureClass: class}})
		r.rec.emit(events.Event{Phase: phase, Kind: events.AgentFinish, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model,
			Data: events.AgentFinishData{Status: "failed", FailureClass: class}})
		return nil
	}
	r.rec.emit(events.Event{Phase: phase, Kind: events.AgentFinish, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model,
		Data: events.AgentFinishData{Status: "complete"}})
	var out []ReviewRecord
	for _, c := range cards.Reviews {
		rec := ReviewRecord{Reviewer: rv.Agent.ID, Model: model, BundleID: c.BundleID, Card: c, Total: c.Total()}
		out = append(out, rec)
		r.rec.emit(events.Event{Phase: phase, Kind: events.Review, Role: commanders.RoleReviewer, AgentID: rv.Agent.ID, Model: model,
			Data: events.ReviewData{BundleID: c.BundleID, Total: c.Total(), Conflicts: len(c.Conflicts), Quarantine: feedback != ""}})
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

// quarantineReviews re-reviews quarantined bundles with their failure messages.
func (r *deps) quarantineReviews(ctx context.Context, bundles []*BundleOutcome, aspects []string, s commanders.Settings) []ReviewRecord {
	ctx = withPhase(ctx, events.Phase6)
	revs := r.reviewers()
	if len(revs) == 0 {
		return nil
	}
	var out []ReviewRecord
	var mu sync.Mutex
	var wg sync.WaitGroup
	i := 0
	for _, o := range bundles {
		if o.Gate == nil || o.Gate.Action != shadow.ActionQuarantine {
			continue
		}
		feedback := leakFeedback(o.LeakReport)
		if o.Final != nil {
			feedback = shadow.FeedbackFor(*o.Final) + feedback
		}
		rv := revs[i%len(revs)]
		i++
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs := r.review(ctx, rv, aspects, []commanders.BundleView{{ID: o.ID, Text: o.Bundle.Text()}}, feedback)
			for i := range recs {
				recs[i].Quarantine = true
			}
			mu.Lock()
			out = append(out, recs...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sortReviews(out) // consensus must not depend on which reviewer finished first
	return out
}

// leakFeedback tells a quarantine re-reviewer what was redacted and where.
func leakFeedback(leaks []commanders.Leak) string {
	var b strings.Builder
	for _, l := range leaks {
		if l.Severity == commanders.SeverityCritical {
			if b.Len() == 0 {
				b.WriteString("Critical leaks redacted from this bundle or its workers' results:\n")
			}
			fmt.Fprintf(&b, "- %s (%s) in %s %s\n", l.Name, l.Kind, l.Source, l.Field)
		}
	}
	return b.String()
}
