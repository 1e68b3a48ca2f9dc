package nexus

import (
	"context"
	"fmt"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"
)

// seal runs Phase 1.5: the seal author writes the criteria from the mission
// and decomposition only (or preset's envelope is reused, with no LLM
// call); the envelope goes to sealed/envelope.json (0600) and only its hash
// enters the events.
func (r *deps) seal(ctx context.Context, dec Decomposition, preset *Sealed) (*shadow.Envelope, error) {
	if pre := preset; pre != nil && pre.Envelope != nil {
		if err := shadow.WriteSealed(r.dir.EnvelopePath(), pre.Envelope); err != nil {
			return nil, err
		}
		return pre.Envelope, nil
	}
	ref := r.plan.Roster.SealAuthor
	p, err := r.pool.forRole(commanders.RoleSealAuthor, ref)
	if err != nil {
		return nil, err
	}
	// With seal_author in workspace.roles the author reads the workspace,
	// so its criteria can name real files.
	p = r.withTools(p, commanders.Agent{ID: "seal-author", Role: commanders.RoleSealAuthor, Ref: ref})
	// A run with a workspace also seals the mechanical checks: code
	// evaluates them from what the run verified (judgeInput's ledger).
	var checks []string
	if r.evidenceVerifier() != nil {
		checks = shadow.Checks
	}
	env, err := shadow.Seal(ctx, shadow.SealConfig{
		Provider: p, Ref: ref, Count: r.plan.Criteria, Categories: r.cfg.ShadowScoring.Categories,
		Seed: providers.Int64(commanders.SeedFor(r.plan.Seed, "seal_author")), Checks: checks,
	}, shadow.SealInput{Mission: r.opts.Mission, Decomposition: dec, Aspects: dec.Aspects})
	if err != nil {
		return nil, err
	}
	if s := r.storedEnv; s != nil && env.SealedHash != s.SealedHash {
		// The answers were replayed, so the seal must be the same: a
		// difference means the run is not the one that was interrupted.
		// Checked before writing, so the stored envelope stays the one a
		// later resume compares against.
		return nil, fmt.Errorf("%w: the resumed run sealed %s, but the run directory's envelope is %s (also kept as sealed/envelope.attempt-%d.json)",
			ErrResumeMismatch, env.SealedHash, s.SealedHash, r.resumed.Attempt-1)
	}
	// The seal author's answers reach the disk before the envelope built
	// from them: after a machine crash a stored envelope always has its
	// answers in the journal, so a resume seals the same again.
	r.pool.journal.sync()
	if err := shadow.WriteSealed(r.dir.EnvelopePath(), env); err != nil {
		return nil, err
	}
	return env, nil
}

// sealPhase runs Phase 1.5 and commits the envelope's hash in the events.
func (r *deps) sealPhase(ctx context.Context, dec Decomposition, preset *Sealed) (*shadow.Envelope, error) {
	r.rec.enter(events.Phase15, "seal acceptance criteria")
	env, err := r.seal(ctx, dec, preset)
	if err != nil {
		return nil, fmt.Errorf("phase 1.5 seal: %w", err)
	}
	r.rec.emit(events.Event{Phase: events.Phase15, Kind: events.Sealed, Message: "criteria sealed before any commander starts",
		Data: events.SealedData{SealedHash: env.SealedHash, TaskHash: env.TaskHash, CriteriaCount: env.CriteriaCount}})
	r.rec.leave(events.Phase15, nil)
	return env, nil
}
