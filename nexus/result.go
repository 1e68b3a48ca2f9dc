package nexus

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// BundleOutcome is everything a run learned about one domain's bundle.
type BundleOutcome struct {
	ID           string            `json:"id"`
	Domain       string            `json:"domain"`
	Commander    string            `json:"commander"`
	Model        string            `json:"model"`
	Bundle       commanders.Bundle `json:"bundle"`
	Salvaged     bool              `json:"salvaged"`
	Failed       bool              `json:"failed"`
	FailureClass providers.Class   `json:"failure_class,omitempty"`
	Error        string            `json:"error,omitempty"`
	Atoms        int               `json:"atoms"`
	AtomsFailed  int               `json:"atoms_failed"`
	// AtomsPlanned is how many atoms the plan gave the bundle's team (its
	// workers); AtomsFinished how many of its atoms finished
	// (commanders.AtomResult.Finished). BelowAtomShare says the bundle
	// rests on fewer than completeness.min_atom_share of its planned
	// atoms: it is judged, but the run is not complete. A bundle with no
	// finished atom is Failed (ClassNoFinishedAtoms), never judged.
	AtomsPlanned   int                     `json:"atoms_planned"`
	AtomsFinished  int                     `json:"atoms_finished"`
	BelowAtomShare bool                    `json:"below_atom_share,omitempty"`
	Repairs        int                     `json:"repairs"`
	SchemaFails    int                     `json:"schema_violations"`
	Refusals       int                     `json:"depth_guard_refusals"`
	Initial        *shadow.Evaluation      `json:"initial_evaluation,omitempty"`
	Final          *shadow.Evaluation      `json:"final_evaluation,omitempty"`
	Hardening      *shadow.HardeningResult `json:"hardening,omitempty"`
	ShadowScore    *float64                `json:"shadow_score,omitempty"`
	Level          string                  `json:"level,omitempty"`
	Gate           *shadow.GateDecision    `json:"gate,omitempty"`
	Review         MetaReview              `json:"review"`
	Tier           string                  `json:"tier"`
	Formula        FormulaInputs           `json:"formula_inputs"`
	FormulaScore   float64                 `json:"formula_score"`
	InSynthesis    bool                    `json:"in_synthesis"`
	Leaks          int                     `json:"leakage_hits"`
	// LeakReport lists every secret redacted from the bundle, its revisions
	// and its workers' results: kind and place, never the secret.
	LeakReport []commanders.Leak `json:"leaks,omitempty"`
	// Evidence tallies the bundle's citations (its own, its findings' and
	// its workers' atoms') by state; nil when the run had no workspace
	// (evidence was not measured).
	Evidence *workspace.Counts `json:"evidence,omitempty"`
	// Degraded lists the units of this bundle (its atoms, shards, its own
	// assembly, its verdict) that ended on the recovery ladder's degrade
	// step: salvage, marked, never a success. DroppedShards are the shards
	// scope reduction left out.
	Degraded      []commanders.Degraded `json:"degraded,omitempty"`
	DroppedShards []string              `json:"dropped_shards,omitempty"`

	result    commanders.Result
	commander *commanders.Commander
	ref       providers.Ref // the commander's model (Model is its text)
	checks    *bundleChecks // its checked citations; nil when evidence was not measured
	// judged is what the judge read of Bundle (judgeInput: with its
	// ledger in a run with a workspace); nil until Bundle is judged.
	judged *shadow.BundleInput
}

// Result is a finished (or interrupted) run. Its Status says how the run
// ended; only a complete run (OK) judged every planned bundle.
type Result struct {
	// OK is true when the run completed and judged every planned bundle
	// with valid shadow scoring (or, with StopAfterSeal, sealed).
	OK bool `json:"ok"`
	// Status is one of the Status* constants.
	Status string `json:"status"`
	// Error says why the run is not OK; FailureClass classifies it and
	// Phase is the phase the run ended in.
	Error        string          `json:"error,omitempty"`
	FailureClass providers.Class `json:"failure_class,omitempty"`
	Phase        events.Phase    `json:"phase"`

	Plan          Plan             `json:"plan"`
	Dir           string           `json:"dir"`
	SealedHash    string           `json:"sealed_hash"`
	TaskHash      string           `json:"task_hash"`
	Decomposition Decomposition    `json:"decomposition"`
	Bundles       []*BundleOutcome `json:"bundles"`
	Reviews       []ReviewRecord   `json:"reviews"`
	Corrections   []Correction     `json:"corrections"`
	Synthesis     *Synthesis       `json:"synthesis,omitempty"`
	// NoRecommendation says why Phase 7 made no recommendation although
	// bundles existed (NoRecommendationUngated, NoRecommendationUnverified);
	// "" when it made one, or the run never reached Phase 7.
	NoRecommendation string             `json:"no_recommendation,omitempty"`
	ShadowValid      bool               `json:"shadow_valid"`
	ShadowReason     string             `json:"shadow_invalid_reason,omitempty"`
	Aggregate        ShadowAggregate    `json:"shadow_aggregate"`
	Telemetry        runfiles.Telemetry `json:"telemetry"`
	Interrupted      bool               `json:"interrupted"`
	// Resumed says the run was resumed (--resume) and how; nil otherwise.
	Resumed *ResumeInfo `json:"resumed,omitempty"`
	// Workspace is the directory the run read and what it looked like;
	// nil when the run had none.
	Workspace *WorkspaceInfo `json:"workspace,omitempty"`
	// Evidence tallies every citation of the run (atoms and bundles) by
	// state, and per model and per agent; nil without a workspace.
	Evidence        *workspace.Counts           `json:"evidence,omitempty"`
	EvidenceByModel map[string]workspace.Counts `json:"evidence_by_model,omitempty"`
	EvidenceByAgent map[string]workspace.Counts `json:"evidence_by_agent,omitempty"`
	// GroundTruth is how the findings matched the planted defects of
	// Options.GroundTruth; nil without one.
	GroundTruth *GroundTruthResult `json:"ground_truth,omitempty"`
	// FollowUp is the run this one follows up, the chain of runs (this one
	// last) and its Shadow Score velocity; nil without Options.FollowUp.
	FollowUp    *runfiles.FollowUp `json:"follow_up,omitempty"`
	Transcripts []Transcript       `json:"-"`
	Events      []events.Event     `json:"-"` // only with Options.KeepEvents
	// Sandbox is the sandbox's report of the mission (sandbox.json); nil
	// when the sandbox was off or the run ended before Phase 8.
	Sandbox *sandbox.MissionReport `json:"-"`
}

// WorkspaceInfo is the directory a run read and its fingerprint, so its
// evidence can be re-checked later.
type WorkspaceInfo struct {
	Dir         string                `json:"dir"`
	Fingerprint workspace.Fingerprint `json:"fingerprint"`
}

// GroundTruthResult is a run's findings matched against a ground-truth
// file of planted defects.
type GroundTruthResult struct {
	File string `json:"file"`
	workspace.Match
}

// ShadowAggregate summarises per-bundle Shadow Scores against the bundles
// planned (one per commander). Planned = Scored + Failed + Unjudged.
type ShadowAggregate struct {
	// Median and Mean are null when no bundle was judged.
	Median *float64 `json:"median"`
	Mean   *float64 `json:"mean"`
	// Level is the median's level, or "none" when no bundle was judged.
	Level    string `json:"level"`
	Planned  int    `json:"planned"`
	Scored   int    `json:"scored"`
	Failed   int    `json:"failed"`   // no bundle to judge (the commander failed or never ran)
	Unjudged int    `json:"unjudged"` // a bundle exists but was not judged
	Salvaged int    `json:"salvaged"` // of the bundles, built from finished atoms after the cost ceiling
	// Degraded counts the bundles whose own assembly or verdict ended on the
	// recovery ladder's degrade step: a run with one is never complete.
	Degraded int `json:"degraded,omitempty"`
	// NoFinishedAtoms counts the failed bundles none of whose atoms
	// finished (class no_finished_atoms; part of Failed).
	NoFinishedAtoms int `json:"no_finished_atoms,omitempty"`
	// BelowAtomShare counts the bundles resting on fewer than
	// completeness.min_atom_share of their planned atoms: a run with one
	// is never complete.
	BelowAtomShare int `json:"below_atom_share,omitempty"`
}

// ClassNoFinishedAtoms is the failure class of a bundle none of whose
// atoms finished: never assembled, judged or scored.
const ClassNoFinishedAtoms = commanders.ClassNoFinishedAtoms

// ClassCancelled is the failure class of work cut off by the run's own
// cancellation (Ctrl-C, or the cost ceiling stopping commanders): neither
// the provider's nor the agent's fault.
const ClassCancelled providers.Class = "cancelled"

// errCostCeiling is the cause of the execution context's cancellation when
// the cost ceiling stops the commanders.
var errCostCeiling = errors.New("the cost ceiling was reached")

// Complete reports whether every planned bundle was judged, none of them
// degraded (salvage is never a success).
func (a ShadowAggregate) Complete() bool {
	return a.Scored > 0 && a.Scored >= a.Planned && a.Degraded == 0 && a.BelowAtomShare == 0
}

// Describe says in words what was judged: "no bundle was judged: 0 of 5
// scored", or the median and mean with "k of n scored".
func (a ShadowAggregate) Describe() string {
	if a.Scored == 0 || a.Median == nil || a.Mean == nil {
		return fmt.Sprintf("no bundle was judged: 0 of %d scored", a.Planned)
	}
	return fmt.Sprintf("Shadow Score median %.1f%% (%s), mean %.1f%% · %d of %d scored", *a.Median, a.Level, *a.Mean, a.Scored, a.Planned)
}

// aggregate summarises the bundles' Shadow Scores against the bundles planned.
func aggregate(bundles []*BundleOutcome, planned int) ShadowAggregate {
	var scores []float64
	a := ShadowAggregate{}
	for _, o := range bundles {
		switch {
		case o.ShadowScore != nil:
			scores = append(scores, *o.ShadowScore)
		case o.Failed:
			a.Failed++
			if o.FailureClass == ClassNoFinishedAtoms {
				a.NoFinishedAtoms++
			}
		default:
			a.Unjudged++
		}
		if o.Salvaged {
			a.Salvaged++
		}
		if o.degradedWhole() {
			a.Degraded++
		}
		if o.BelowAtomShare && !o.Failed {
			a.BelowAtomShare++
		}
	}
	sum := shadow.Summarize(scores, max(planned, len(bundles)))
	a.Planned, a.Scored, a.Median, a.Mean, a.Level = sum.Planned, sum.Scored, sum.Median, sum.Mean, string(sum.Level)
	// Bundles planned but never deployed (the run stopped before Phase 3)
	// count as failed.
	a.Failed += a.Planned - len(bundles)
	return a
}

// conclude sets the run's status, ok, error, failure class and final phase
// from how it ended (runErr; sealOnly: closed after sealing) and what it
// judged.
func (r *deps) conclude(res *Result, runErr error, sealOnly bool) {
	res.Aggregate = aggregate(res.Bundles, r.plan.Commanders)
	res.Error, res.FailureClass = "", ""
	phase, interruptedIn := r.rec.ended()
	ceiling := r.meter.stoppedByCeiling()
	res.Phase = phase
	a := res.Aggregate
	switch {
	case errors.Is(runErr, ErrInterrupted):
		if interruptedIn != "" {
			res.Phase = interruptedIn
		}
		res.Status, res.FailureClass = runfiles.StatusInterrupted, ClassCancelled
		res.Error = fmt.Sprintf("interrupted in phase %s: %s", res.Phase, a.counts())
	case runErr != nil:
		res.Status, res.FailureClass, res.Error = runfiles.StatusFailed, providers.ClassOf(runErr), runErr.Error()
	case sealOnly:
		res.Status = runfiles.StatusSealed
	case !res.ShadowValid && r.cfg.ShadowScoring.Enabled:
		res.Status, res.Error = runfiles.StatusInvalid, "shadow scoring invalid: "+res.ShadowReason
	case ceiling:
		res.Status, res.Error = runfiles.StatusPartial, "stopped by the cost ceiling: "+a.counts()
		if a.Salvaged > 0 {
			res.Error += fmt.Sprintf(" (%d salvaged from finished atoms)", a.Salvaged)
		}
		res.Error += r.shortfalls(a, "the cost ceiling stopped new launches")
	case !r.cfg.ShadowScoring.Enabled:
		// Nothing was meant to be judged: the run is complete when every
		// planned bundle exists whole, and says shadow scoring is off;
		// it never shows a score.
		res.ShadowValid, res.ShadowReason = false, ShadowOff
		if short := r.shortfalls(a, ""); !a.delivered() || short != "" {
			res.Status = runfiles.StatusIncomplete
			res.Error = fmt.Sprintf("%s; %d of %d bundles delivered", ShadowOff, a.Unjudged, a.Planned) + a.degradedNote() + short
			break
		}
		res.Status = runfiles.StatusComplete
	case !a.Complete():
		res.Status = runfiles.StatusIncomplete
		res.Error = a.counts()
		if a.Scored > 0 && a.Scored < a.Planned {
			res.Error = "fewer bundles judged than planned: " + res.Error
		}
		res.Error += a.degradedNote() + r.shortfalls(a, "")
		if !res.ShadowValid {
			res.Error = res.ShadowReason + ": " + res.Error
		}
	default:
		// Every planned bundle was judged; agents a breaker (or a failure
		// below a commander) left unlaunched still make the run
		// incomplete: its bundles rest on less work than planned.
		if u := r.unlaunched(""); u != "" {
			res.Status, res.Error = runfiles.StatusIncomplete, u
			break
		}
		res.Status = runfiles.StatusComplete
	}
	res.OK = res.Status == runfiles.StatusComplete || res.Status == runfiles.StatusSealed
}

// ShadowOff is the shadow reason (Result.ShadowReason) of a run whose config
// turned shadow scoring off (shadow_scoring.enabled: false).
const ShadowOff = "shadow scoring is off: nothing was judged"

// delivered says whether every planned bundle exists whole (none failed,
// degraded or below its atom share): what a run with shadow scoring off
// must have to be complete.
func (a ShadowAggregate) delivered() bool {
	return a.Planned > 0 && a.Failed == 0 && a.Unjudged+a.Scored >= a.Planned && a.Degraded == 0 && a.BelowAtomShare == 0
}

// degradedNote says how many bundles were degraded ("; 1 of 5 bundles
// degraded (...)"), or "".
func (a ShadowAggregate) degradedNote() string {
	if a.Degraded == 0 {
		return ""
	}
	return fmt.Sprintf("; %d of %d bundles degraded (salvage after the recovery ladder, see bundles/*.json)", a.Degraded, a.Planned)
}

// shortfalls is the run's shortfalls in work: its bundles' (a.shortfalls)
// and the team agents that never launched (unlaunched, why its known
// cause), each after "; "; "" when there is none.
func (r *deps) shortfalls(a ShadowAggregate, why string) string {
	s := a.shortfalls(r.cfg.Completeness.MinAtomShare)
	if u := r.unlaunched(why); u != "" {
		s += "; " + u
	}
	return s
}

// shortfalls says which bundles failed for want of a finished atom and
// which rest on fewer atoms than share asks: "; 2 of 5 bundles have no
// finished atom (failed, not judged); 1 of 5 bundles rests on fewer than
// 50% of its planned atoms (completeness.min_atom_share)", or "".
func (a ShadowAggregate) shortfalls(share float64) string {
	var s string
	if a.NoFinishedAtoms > 0 {
		s += fmt.Sprintf("; %d of %d bundles have no finished atom (failed: %s, not judged)", a.NoFinishedAtoms, a.Planned, ClassNoFinishedAtoms)
	}
	if a.BelowAtomShare > 0 {
		s += fmt.Sprintf("; %d of %d bundles rest on fewer than %s of their planned atoms (completeness.min_atom_share)", a.BelowAtomShare, a.Planned, percent(share))
	}
	return s
}

// percent is share (0..1) as a percentage without trailing zeros: "50%".
func percent(share float64) string {
	return strconv.FormatFloat(share*100, 'f', -1, 64) + "%"
}

// unlaunched says how many of the agents the plan gave the commanders'
// teams (commanders, squad leads, workers) never launched and why ("44 of
// 80 planned team agents never launched: sandbox circuit breaker tripped
// on mock:sloppy"), or "" when all of them launched. Reviewers are left
// out: how many review depends on how many bundles exist. why, when set,
// is the cause the caller already knows (the cost ceiling).
func (r *deps) unlaunched(why string) string {
	p := r.plan
	planned := p.Commanders + p.SquadLeads + p.Workers
	launched := r.meter.launchedOf(commanders.RoleCommander, commanders.RoleSquadLead, commanders.RoleWorker)
	if planned <= 0 || launched >= planned {
		return ""
	}
	var causes []string
	if r.sb != nil {
		if models := r.sb.trippedModels(); len(models) > 0 {
			causes = append(causes, "sandbox circuit breaker tripped on "+strings.Join(models, ", "))
		}
	}
	if why != "" {
		causes = append(causes, why)
	}
	if len(causes) == 0 {
		causes = append(causes, "their commanders failed or stopped before launching them")
	}
	return fmt.Sprintf("%d of %d planned team agents (commanders, squad leads, workers) never launched: %s", planned-launched, planned, strings.Join(causes, "; "))
}

func (a ShadowAggregate) counts() string {
	if a.Scored == 0 {
		return fmt.Sprintf("no bundle was judged: 0 of %d scored", a.Planned)
	}
	return fmt.Sprintf("%d of %d scored", a.Scored, a.Planned)
}

// ResumeInfo says a run was resumed (result.json "resumed"): which attempt
// this is, what the journal held and how many calls were replayed from it
// versus asked.
type ResumeInfo struct {
	Attempt         int  `json:"attempt"`
	JournalRecords  int  `json:"journal_records"`
	TornLineDropped bool `json:"torn_line_dropped,omitempty"`
	// UnsignedRecords is how many journal records had no MAC and were
	// replayed unverified because the user said to trust them
	// (--trust-unsigned-journal): the answers they hold are not checked.
	UnsignedRecords int      `json:"unsigned_records,omitempty"`
	ReplayedCalls   int64    `json:"replayed_calls"`
	FreshCalls      int64    `json:"fresh_calls"`
	Changed         []string `json:"changed,omitempty"` // resumed with --force despite these
}

// ErrResumeMismatch: a resumed run sealed an envelope other than the one
// its directory holds; it is never silently continued.
var ErrResumeMismatch = errors.New("resumed run does not match the stored run")

// degradedWhole says whether the bundle itself (its assembly) or its
// verdict ended on the recovery ladder's degrade step; a degraded atom or
// shard inside it leaves the bundle whole (it is listed in Degraded).
func (o *BundleOutcome) degradedWhole() bool {
	for _, d := range o.Degraded {
		if d.Unit == commanders.UnitBundle || d.Unit == commanders.UnitVerdict {
			return true
		}
	}
	return false
}
