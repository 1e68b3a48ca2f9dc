package nexus

import (
	"time"

	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
)

// writeFinal computes the telemetry and writes sandbox.json, report.md
// with its exports (findings.csv, findings.sarif), telemetry.json and
// result.json (safe to call on a partial or failed run): the run's ending
// calls it once. A run stopped after sealing writes only the last two.
// A write that fails is kept by r.dir (Err): the run's end reports it
// (ErrWrite) instead of claiming files it does not have.
func (r *deps) writeFinal(res *Result, shape runShape) {
	res.Workspace = r.workspaceInfo()
	res.FollowUp = r.followUpResult(res)
	res.Telemetry = r.telemetry(res, shape)
	res.Resumed, res.Telemetry.Resume = r.resumeInfo()
	defer func() {
		// A file the run could not write (report.md, a bundle, a log line)
		// makes result.json say failed, never complete: the record is not
		// whole, and a resume (which leaves a finished run alone) may
		// write it again.
		if werr := r.writeFailure(false); werr != nil && res.Status != runfiles.StatusFailed {
			res.OK, res.Status, res.Error, res.FailureClass = false, runfiles.StatusFailed, werr.Error(), providers.ClassOf(werr)
		}
		_ = r.dir.WriteJSON(runfiles.TelemetryFile, res.Telemetry)
		_ = r.dir.WriteJSON(runfiles.ResultFile, res)
	}()
	if res.Status == runfiles.StatusSealed {
		return
	}
	if r.sb != nil {
		rep := r.sb.finish(res, r.plan.Hardening.Threshold, r.rec.phase())
		res.Sandbox = &rep
		_ = r.dir.WriteJSON(runfiles.SandboxFile, rep)
	}
	r.writeEvidence(res)
	_ = r.dir.WriteFile(runfiles.ReportFile, []byte(r.actionReport(res)), 0o644)
	r.writeExports(res)
}

func (r *deps) telemetry(res *Result, shape runShape) runfiles.Telemetry {
	p := r.plan
	t := runfiles.Telemetry{RunID: p.RunID, Scale: p.Scale,
		Agents: runfiles.AgentTally{Nexus: 1, Commanders: p.Commanders, SquadLeads: p.SquadLeads, Workers: p.Workers, Reviewers: p.Reviewers, Total: p.Agents},
		ByRole: map[string]runfiles.CallStats{}, ByModel: map[string]runfiles.CallStats{}, FailureClasses: map[string]int{},
		ShadowScores: map[string]float64{}, Tiers: map[string]int{}, Gates: map[string]int{}, ShadowValid: res.ShadowValid}
	r.meter.fill(&t)
	t.Tools = r.meter.toolStats()
	t.Refusals = r.meter.refusalGroups()
	t.Breakers = r.pool.breakerStats()
	t.AdaptiveConcurrency = r.pool.adaptiveStats()
	t.Recovery = r.meter.recoveryStats()
	t.WallMS = time.Since(r.start).Milliseconds()
	for _, o := range res.Bundles {
		if o.Failed {
			t.BundlesFailed++
		}
		if o.Salvaged {
			t.Salvaged++
		}
		t.AtomsFailed += o.AtomsFailed
		if o.ShadowScore != nil {
			t.ShadowScores[o.ID] = *o.ShadowScore
		}
		if o.Tier != "" {
			t.Tiers[o.Tier]++
		}
		if o.Gate != nil {
			t.Gates[o.Gate.Action]++
		}
	}
	if res.Evidence != nil {
		e := *res.Evidence
		t.Evidence = &e
	}
	t.ShadowMedian, t.BundlesPlanned, t.BundlesScored = res.Aggregate.Median, res.Aggregate.Planned, res.Aggregate.Scored
	t.Critical = runfiles.CriticalPath{Calls: criticalPathCalls(p, r.pathShape(res, shape))}
	t.Waves = wavesTelemetry(shape.waves, res.Bundles)
	t.FollowUp = res.FollowUp
	return t
}

// pathShape is what a run's chain of dependent LLM calls depends on
// besides its plan.
type pathShape struct {
	// HardeningCycles is the number of hardening cycles on the path (each
	// a revision and a re-judgement).
	HardeningCycles int
	// JudgeCalls is the number of sequential calls of one judgement
	// (judge_samples × 1 per bundle, or × the criteria per criterion); 0
	// when shadow scoring is off.
	JudgeCalls int
	// Preset: the decomposition and envelope were reused (compare), so
	// Phases 1 and 1.5 made no call.
	Preset bool
	// Quarantine: a quarantine re-review followed the gate.
	Quarantine bool
	// WaveChain is the number of dependent calls the last wave of
	// commanders waited for before it launched (the canary's probe, then
	// one first call per wave before it); 0 without waves.
	WaveChain int
}

// criticalPathCalls is the longest chain of dependent LLM calls of a run:
// decomposition, seal, (the calls the last wave of commanders waited for:
// see waves.go), the commander's plan, (the squad lead's micro
// briefs), worker, bundle; then, beside each other, the cross-review's last
// pair (it needs the last bundle) and the judgement of the last bundle with
// its hardening cycles (revise + re-judge each); then the quarantine
// re-review when there is one (it follows the gate), and the synthesis
// (Phase 7 needs both branches). Everything else runs beside this chain.
func criticalPathCalls(p Plan, s pathShape) int {
	n := 0
	if !s.Preset {
		n += 2 // decomposition, seal
	}
	n += s.WaveChain
	n++ // the commander's plan
	if p.WorkersPerLead > 0 {
		n++ // the squad lead's micro briefs
	}
	n += 2 // worker, bundle
	review := 0
	if p.Commanders >= 2 && p.Reviewers > 0 {
		review = 1
	}
	judge := 0
	if s.JudgeCalls > 0 {
		judge = s.JudgeCalls + s.HardeningCycles*(1+s.JudgeCalls)
	}
	n += max(review, judge)
	if s.Quarantine {
		n++
	}
	return n + 1 // synthesis
}

// judgeCalls is the number of sequential calls one judgement makes.
func (r *deps) judgeCalls() int {
	sc := r.cfg.ShadowScoring
	if !sc.Enabled {
		return 0
	}
	n := max(1, sc.JudgeSamples)
	if sc.JudgeMode == "per_criterion" {
		n *= max(1, r.plan.Criteria)
	}
	return n
}

// pathShape is the shape of a finished run: its judgements, whether it was
// preset and how it deployed (shape), and what its bundles went through
// (bundleShape).
func (r *deps) pathShape(res *Result, shape runShape) pathShape {
	s := bundleShape(res.Bundles)
	s.JudgeCalls, s.Preset = r.judgeCalls(), shape.preset
	if shape.waves != nil {
		s.WaveChain = shape.waves.ChainCalls
	}
	return s
}

// bundleShape is the part of a run's pathShape its bundles decide: the most
// hardening cycles a bundle went through and whether any was quarantined.
func bundleShape(bundles []*BundleOutcome) pathShape {
	var s pathShape
	for _, o := range bundles {
		if o.Hardening != nil {
			s.HardeningCycles = max(s.HardeningCycles, o.Hardening.Cycles)
		}
		if o.Gate != nil && o.Gate.Action == shadow.ActionQuarantine {
			s.Quarantine = true
		}
	}
	return s
}

// runShape is the part of a run's critical path its phases decided
// (pathShapeOf): whether Phases 1 and 1.5 were preset, and how the
// commanders were deployed in waves (nil: all at once).
type runShape struct {
	preset bool
	waves  *runfiles.WavesTelemetry
}
