package nexus

import (
	"context"
	"fmt"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/shadow"
)

// replayIncoherence runs the mission K−1 more times against the same
// decomposition and sealed envelope with seeds seed+1..seed+K−1 (under
// replays/<i>/) and measures how consistently each (bundle domain,
// criterion) is judged: D per decision point. E needs a benchmark: the
// reference judge (models.reference) judging the first run's bundles; without
// one E is reported as unavailable.
//
// dec and bundles are the first run's (this one's) decomposition and
// bundles.
func (r *deps) replayIncoherence(ctx context.Context, dec Decomposition, bundles []*BundleOutcome, k int) (*sandbox.IncoherenceReport, string, error) {
	env, err := shadow.LoadSealed(r.dir.EnvelopePath())
	if err != nil {
		return nil, "", err
	}
	var ds []sandbox.Decision
	add := func(rep int, bundles []*BundleOutcome, bench map[[2]string]string) {
		for _, b := range bundles {
			if b.Final == nil {
				continue
			}
			p := float64(b.Final.Passed) / float64(max(1, b.Final.Total))
			for _, v := range b.Final.Verdicts {
				ds = append(ds, sandbox.Decision{TaskFamily: b.Domain, DecisionID: v.ID, Replay: rep, Action: v.Status,
					Benchmark: bench[[2]string{b.Domain, v.ID}], P: p, Accepted: b.InSynthesis})
			}
		}
	}
	bench, reason := r.benchmark(ctx, env, bundles)
	add(0, bundles, bench)
	for i := 1; i < k; i++ {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		sub := r.opts
		seed := r.plan.Seed + int64(i)
		sub.Seed = &seed
		sub.OutDir = r.dir.Join(runfiles.ReplaysDir, fmt.Sprint(i))
		sub.Replays, sub.Observers, sub.KeepPrompts = 0, nil, false
		r.rec.emit(events.Event{Phase: events.Phase8, Kind: events.Replay, Message: fmt.Sprintf("replay %d of %d (seed %d)", i, k-1, seed)})
		rr, err := r.runSealed(ctx, sub, &Sealed{Decomposition: dec, Envelope: env})
		if err != nil {
			return nil, "", fmt.Errorf("replay %d: %w", i, err)
		}
		add(i, rr.Bundles, bench)
	}
	rep := sandbox.Incoherence(ds)
	return &rep, reason, nil
}

// benchmark judges the first run's bundles with the reference judge.
func (r *deps) benchmark(ctx context.Context, env *shadow.Envelope, bundles []*BundleOutcome) (map[[2]string]string, string) {
	ref := r.cfg.Models.Reference
	if ref.IsZero() {
		return nil, "no benchmark: set models.reference to a reference judge model"
	}
	p, err := r.pool.provider(ref)
	if err != nil {
		return nil, err.Error()
	}
	j := shadow.NewJudge(shadow.JudgeConfig{Provider: p, Ref: ref, Seed: providers.Int64(commanders.SeedFor(r.plan.Seed, "reference"))})
	out := map[[2]string]string{}
	for _, b := range bundles {
		if b.Failed {
			continue
		}
		in := r.finalInput(b)
		in.Implementer = providers.Ref{}
		ev, err := j.Evaluate(ctx, env, in)
		if err != nil {
			return nil, "reference judge failed: " + err.Error()
		}
		for _, v := range ev.Verdicts {
			out[[2]string{b.Domain, v.ID}] = v.Status
		}
	}
	return out, ""
}
