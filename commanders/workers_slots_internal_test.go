package commanders

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/semaphore"

	"github.com/swarm-dev/swarm/providers"
)

// workerGoroutines counts the goroutines runWorkers started (their stacks
// hold its closure), whatever they are doing.
func workerGoroutines(t *testing.T) (n int, waiting bool) {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	for _, g := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(g, "commanders.(*Commander).runWorkers.func") {
			n++
		}
		// runWorkers itself, waiting for a slot.
		if strings.Contains(g, "semaphore.(*Weighted).Acquire") && strings.Contains(g, "commanders.(*Commander).runWorkers(") {
			waiting = true
		}
	}
	return n, waiting
}

// A worker's goroutine starts when it holds its slot of the run's
// concurrency, not before: with every slot taken, 200 workers to run make
// no goroutine at all (they made 200, each waiting for a slot, which at
// 20 000 workers was most of a run's memory). Once slots free, every
// worker runs, never more at once than the slots, and the results keep
// the briefs' order.
//
// Not parallel: it counts goroutines by their stacks, and another test's
// workers would be counted.
func TestWorkersStartWhenASlotIsFree(t *testing.T) {
	const workers, slots = 200, 3
	var calls atomic.Int32
	inner := fake(1, &calls)
	var inFlight, peak atomic.Int32
	p := providers.ProviderFunc(func(ctx context.Context, r providers.Request) (providers.Response, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := peak.Load()
			if n <= m || peak.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		return inner.Complete(ctx, r)
	})
	sem := semaphore.NewWeighted(slots)
	if err := sem.Acquire(t.Context(), slots); err != nil { // every slot taken
		t.Fatal(err)
	}
	c := &Commander{Agent: Agent{ID: "commander-testing", Role: RoleCommander, Provider: p}, Capsule: capsule(), Sem: sem,
		Worker: func(i, j int) Agent { return Agent{ID: fmt.Sprint("w", i, j), Role: RoleWorker, Provider: p} }}
	briefs := make([]Shard, workers)
	for i := range briefs {
		briefs[i] = Shard{BriefID: fmt.Sprint("b", i), Brief: "do it", Aspects: []string{"a"}}
	}
	done := make(chan []AtomResult)
	go func() {
		done <- c.runWorkers(t.Context(), briefs, func(i int) Agent { return c.Worker(0, i) }, c.Capsule.Constraints)
	}()
	for {
		n, waiting := workerGoroutines(t)
		if n > 0 {
			t.Fatalf("%d worker goroutines started with no slot free, want 0", n)
		}
		if waiting {
			break
		}
		time.Sleep(time.Millisecond)
	}
	sem.Release(slots)
	out := <-done
	if got := int(calls.Load()); got != workers {
		t.Errorf("%d calls, want %d", got, workers)
	}
	if got := peak.Load(); got > slots {
		t.Errorf("%d calls at once, want at most %d", got, slots)
	}
	var got, want []string
	for i, r := range out {
		got = append(got, r.BriefID+"/"+r.AgentID)
		want = append(want, fmt.Sprintf("b%d/w0 %d", i, i))
		if r.Failed || r.Skipped {
			t.Errorf("%s failed (skipped %v): %s", r.BriefID, r.Skipped, r.Error)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("results out of the briefs' order (-want +got):\n%s", d)
	}
}

// A run cancelled while workers wait for slots: every worker not started
// reports the context's error at its own index, and none runs.
func TestWorkersWaitingForASlotStopOnCancel(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	p := fake(1, &calls)
	sem := semaphore.NewWeighted(1)
	if err := sem.Acquire(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	c := &Commander{Agent: Agent{ID: "commander-testing", Role: RoleCommander, Provider: p}, Capsule: capsule(), Sem: sem,
		Worker: func(i, j int) Agent { return Agent{ID: fmt.Sprint("w", i, j), Role: RoleWorker, Provider: p} }}
	briefs := []Shard{{BriefID: "b0", Brief: "x"}, {BriefID: "b1", Brief: "y"}, {BriefID: "b2", Brief: "z"}}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(10*time.Millisecond, cancel)
	out := c.runWorkers(ctx, briefs, func(i int) Agent { return c.Worker(0, i) }, c.Capsule.Constraints)
	if calls.Load() != 0 {
		t.Errorf("%d calls made without a slot", calls.Load())
	}
	for i, r := range out {
		if r.BriefID != briefs[i].BriefID || !r.Failed || !strings.Contains(r.Error, "context canceled") {
			t.Errorf("result %d: brief %s failed %v error %q, want %s failed with the context's error", i, r.BriefID, r.Failed, r.Error, briefs[i].BriefID)
		}
	}
}
