package nexus

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// These tests call one phase function with fixed inputs and check what it
// returns: no mission runs, no model answers.

// phaseDeps are the shared parts a phase function needs in a test: the
// embedded configuration, a recorder whose events are kept (events) and
// a run directory in a temporary directory.
type phaseDeps struct {
	*deps
	mu     sync.Mutex
	events []events.Event
}

func newPhaseDeps(t *testing.T, in runInputs) *phaseDeps {
	t.Helper()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := rundir.Create(filepath.Join(t.TempDir(), "run"), false)
	if err != nil {
		t.Fatal(err)
	}
	pd := &phaseDeps{}
	rec := testRecorder(t, func(e events.Event) {
		pd.mu.Lock()
		defer pd.mu.Unlock()
		pd.events = append(pd.events, events.Event{Phase: e.Phase, Kind: e.Kind, AgentID: e.AgentID, Data: e.Data})
	})
	pd.deps = &deps{runInputs: in, cfg: cfg, dir: dir, rec: rec, factor: 1}
	return pd
}

// kinds lists the phase and kind of every event so far ("2 phase_start").
func (pd *phaseDeps) kinds() []string {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	var out []string
	for _, e := range pd.events {
		out = append(out, string(e.Phase)+" "+string(e.Kind))
	}
	return out
}

func TestCapsulesFromAFixedDecomposition(t *testing.T) {
	t.Parallel()
	dec := Decomposition{
		MissionSummary: "Move sessions to tokens.",
		Aspects:        []string{"token expiry", "rollback"},
		Domains: []Domain{
			{Name: "architecture", Summary: "Design the token service.", Aspects: []string{"key rotation", "token expiry"},
				SubTasks: []commanders.SubTask{{BriefID: "architecture-01", Title: "Service", Description: "Sketch it."}}},
			{Name: "testing", Summary: "Test the migration.", FileScope: []string{"src/auth/tests"}},
		},
	}
	scale := config.Scale{Timeouts: config.Timeouts{Commander: 90 * time.Second}}
	tests := []struct {
		name   string
		why    string
		factor float64
		scope  []string
		dec    Decomposition
		want   []commanders.Capsule
		err    string
	}{
		{
			name: "one capsule per domain", why: "the capsule is the only context a commander gets: its brief, the domain's aspects before the mission's, its sub-tasks",
			factor: 1, dec: dec,
			want: []commanders.Capsule{
				{ID: "capsule-architecture", Domain: "architecture",
					Brief:   "Mission: Move sessions to tokens.\nYour domain: architecture. Design the token service.\nSub-tasks:\n- architecture-01 Service: Sketch it.\n",
					Aspects: []string{"key rotation", "token expiry", "rollback"}, SubTasks: dec.Domains[0].SubTasks,
					Constraints: commanders.Constraints{Timeout: 90 * time.Second}},
				{ID: "capsule-testing", Domain: "testing",
					Brief:   "Mission: Move sessions to tokens.\nYour domain: testing. Test the migration.\n",
					Aspects: []string{"token expiry", "rollback"}, Constraints: commanders.Constraints{Timeout: 90 * time.Second, FileScope: []string{"src/auth/tests"}}},
			},
		},
		{
			name: "personality and file scope", why: "the timeout is scaled by the personality's factor; the options' file scope narrows to a domain's own",
			factor: 2, scope: []string{"src/auth"}, dec: Decomposition{MissionSummary: "m", Aspects: []string{"a"}, Domains: []Domain{dec.Domains[1]}},
			want: []commanders.Capsule{
				{ID: "capsule-testing", Domain: "testing", Brief: "Mission: m\nYour domain: testing. Test the migration.\n",
					Aspects: []string{"a"}, Constraints: commanders.Constraints{Timeout: 180 * time.Second, FileScope: []string{"src/auth/tests"}}},
			},
		},
		{
			name: "an unknown domain is refused", why: "Phase 2 validates every capsule before any commander starts",
			factor: 1, dec: Decomposition{MissionSummary: "m", Aspects: []string{"a"}, Domains: []Domain{{Name: "marketing", Summary: "s"}}},
			err: `phase 2: capsule capsule-marketing: domain "marketing" is not one of`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pd := newPhaseDeps(t, runInputs{opts: Options{FileScope: tc.scope}})
			pd.factor = tc.factor
			got, err := pd.capsules(tc.dec, scale)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("capsules error = %v, want one containing %q (%s)", err, tc.err, tc.why)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("capsules (-want +got) (%s):\n%s", tc.why, diff)
			}
			for _, c := range got {
				if _, err := os.Stat(pd.dir.Join("capsules", c.Domain+".json")); err != nil {
					t.Errorf("capsule %s not written: %v", c.ID, err)
				}
			}
			if diff := cmp.Diff([]string{"2 phase_start", "2 phase_end"}, pd.kinds()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConsensusOverFixedBundlesAndReviews(t *testing.T) {
	t.Parallel()
	proceed, quarantine := &shadow.GateDecision{Action: shadow.ActionProceed}, &shadow.GateDecision{Action: shadow.ActionQuarantine}
	card := func(bundle string, total float64) commanders.ScoreCard {
		return commanders.ScoreCard{BundleID: bundle, Correctness: total, Completeness: total, Clarity: total, ConsensusAlignment: total}
	}
	review := func(reviewer, bundle string, total float64) ReviewRecord {
		return ReviewRecord{Reviewer: reviewer, BundleID: bundle, Card: card(bundle, total)}
	}
	// per bundle: tier, meta-review score and reviews, in synthesis
	type scored struct {
		Tier        string
		Score       float64
		Reviews     int
		InSynthesis bool
	}
	tests := []struct {
		name        string
		why         string
		reviews     []ReviewRecord
		want        map[string]scored
		corrections []string // kind and reviewer of each correction, as its events say too
	}{
		{
			name: "two reviews of a bundle", why: "the meta-review score is the median of the corrected totals; 0.70 with two reviews is consensus; a single review is unique",
			reviews: []ReviewRecord{review("reviewer-01", "architecture", 8), review("reviewer-02", "architecture", 6), review("reviewer-01", "testing", 4)},
			want: map[string]scored{
				"architecture":  {Tier: tierConsensus, Score: 0.7, Reviews: 2, InSynthesis: true},
				"testing":       {Tier: tierUnique, Score: 0.4, Reviews: 1},
				"documentation": {Tier: tierUnique},
			},
		},
		{
			name: "a rubber stamp", why: "a reviewer giving every bundle the same high total weighs half: the other reviewer's total decides the median",
			reviews: []ReviewRecord{review("reviewer-01", "architecture", 9), review("reviewer-02", "architecture", 5), review("reviewer-01", "testing", 9)},
			want: map[string]scored{
				"architecture":  {Tier: tierMajority, Score: 0.5, Reviews: 2, InSynthesis: true},
				"testing":       {Tier: tierUnique, Score: 0.9, Reviews: 1},
				"documentation": {Tier: tierUnique},
			},
			corrections: []string{"rubber_stamp reviewer-01"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pd := newPhaseDeps(t, runInputs{})
			bundles := []*BundleOutcome{
				{ID: "architecture", Domain: "architecture", Gate: proceed, Bundle: commanders.Bundle{Domain: "architecture", Content: "token expiry"}},
				{ID: "testing", Domain: "testing", Gate: quarantine, Bundle: commanders.Bundle{Domain: "testing", Content: "rollback"}},
				{ID: "documentation", Domain: "documentation", Failed: true},
			}
			out := pd.consensus(bundles, tc.reviews, Decomposition{Aspects: []string{"token expiry", "rollback"}}, nil)
			got := map[string]scored{}
			for _, o := range bundles {
				got[o.ID] = scored{Tier: o.Tier, Score: o.Review.Score, Reviews: o.Review.Reviews, InSynthesis: o.InSynthesis}
				if !o.Failed && o.FormulaScore != formula(o.Formula, pd.cfg.Consensus) {
					t.Errorf("%s: formula score %v is not the formula of its inputs", o.ID, o.FormulaScore)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("scored bundles (-want +got) (%s):\n%s", tc.why, diff)
			}
			var corr, emitted []string
			for _, c := range out.corrections {
				corr = append(corr, c.Kind+" "+c.Reviewer)
			}
			for _, e := range pd.events {
				if d, ok := e.Data.(events.ScoreCorrectionData); ok && e.Kind == events.ScoreCorrection {
					emitted = append(emitted, d.Kind+" "+e.AgentID)
				}
			}
			if diff := cmp.Diff(tc.corrections, corr); diff != "" {
				t.Errorf("corrections (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.corrections, emitted); diff != "" {
				t.Errorf("score_correction events (-want +got):\n%s", diff)
			}
			if len(out.reviews) != len(tc.reviews) || out.evidence != nil {
				t.Errorf("consensus returned %d review records and evidence %v, want %d and none (no workspace)", len(out.reviews), out.evidence, len(tc.reviews))
			}
		})
	}
}

func TestSynthesiseWithNothingToRecommend(t *testing.T) {
	t.Parallel()
	finding := commanders.Finding{Title: "rotate keys"}
	tests := []struct {
		name    string
		why     string
		bundles []*BundleOutcome
		want    synthesisResult
		err     error
	}{
		{
			name: "no bundle passed the gate", why: "only bundles that passed the Shadow Gate feed the synthesis",
			bundles: []*BundleOutcome{{ID: "testing"}, {ID: "architecture", Failed: true}},
			want:    synthesisResult{none: NoRecommendationUngated}, err: errNothingPassed,
		},
		{
			name: "no verified finding", why: "in a run that checked its evidence, a finding nobody can check is never recommended",
			bundles: []*BundleOutcome{{ID: "testing", InSynthesis: true, Bundle: commanders.Bundle{Findings: []commanders.Finding{finding}},
				checks: &bundleChecks{findings: [][]workspace.Check{{{State: workspace.Fabricated}}}}}},
			want: synthesisResult{none: NoRecommendationUnverified}, err: errNothingVerified,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// No model is asked: the deps have no provider pool.
			got, err := (&deps{}).synthesise(t.Context(), tc.bundles, commanders.Settings{})
			if !errors.Is(err, tc.err) {
				t.Errorf("synthesise error = %v, want %v (%s)", err, tc.err, tc.why)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(synthesisResult{})); diff != "" {
				t.Errorf("synthesise (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssembleFromFixedPhaseOutputs(t *testing.T) {
	t.Parallel()
	plan := Plan{RunID: "20261127-run", Scale: "ss-5", Commanders: 2}
	dec := Decomposition{MissionSummary: "m", Aspects: []string{"a"}, Domains: []Domain{{Name: "testing"}}}
	env := &shadow.Envelope{SealedHash: "sha256:sealed", TaskHash: "sha256:task"}
	bundles := []*BundleOutcome{{ID: "testing", Domain: "testing"}}
	syn := &Synthesis{Summary: "s"}
	counts := &workspace.Counts{Verified: 3}
	tests := []struct {
		name string
		why  string
		out  phaseOutputs
		want Result
	}{
		{
			name: "nothing returned", why: "a run that failed before Phase 1 returned still has its plan and directory, and valid (not yet invalid) scoring",
			want: Result{Plan: plan, Dir: "/runs/r", ShadowValid: true},
		},
		{
			name: "sealed", why: "Phase 1.5's envelope gives the hashes; its criteria never reach the Result",
			out:  phaseOutputs{decomposition: &dec, sealed: &Sealed{Decomposition: dec, Envelope: env}},
			want: Result{Plan: plan, Dir: "/runs/r", ShadowValid: true, Decomposition: dec, SealedHash: env.SealedHash, TaskHash: env.TaskHash},
		},
		{
			name: "every phase returned", why: "each field comes from the phase that returned it",
			out: phaseOutputs{decomposition: &dec, sealed: &Sealed{Decomposition: dec, Envelope: env},
				deployed:  deployment{bundles: bundles},
				judgement: judgement{invalid: "envelope tampered"},
				consensus: consensusResult{reviews: []ReviewRecord{{Reviewer: "reviewer-01", BundleID: "testing"}}, corrections: []Correction{{Kind: "herding"}},
					evidence: &evidenceTally{counts: counts, byModel: map[string]workspace.Counts{"mock:honest": *counts}}},
				synthesis: synthesisResult{synthesis: syn, none: ""}},
			want: Result{Plan: plan, Dir: "/runs/r", Decomposition: dec, SealedHash: env.SealedHash, TaskHash: env.TaskHash,
				Bundles: bundles, ShadowValid: false, ShadowReason: "envelope tampered",
				Reviews: []ReviewRecord{{Reviewer: "reviewer-01", BundleID: "testing"}}, Corrections: []Correction{{Kind: "herding"}},
				Evidence: counts, EvidenceByModel: map[string]workspace.Counts{"mock:honest": *counts}, Synthesis: syn},
		},
		{
			name: "no recommendation", why: "why Phase 7 made none is the Result's NoRecommendation",
			out:  phaseOutputs{synthesis: synthesisResult{none: NoRecommendationUngated}},
			want: Result{Plan: plan, Dir: "/runs/r", ShadowValid: true, NoRecommendation: NoRecommendationUngated},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &deps{runInputs: runInputs{plan: plan}, dir: rundir.Dir{Path: "/runs/r"}}
			got := r.assemble(tc.out)
			if diff := cmp.Diff(&tc.want, got, cmpopts.IgnoreUnexported(BundleOutcome{})); diff != "" {
				t.Errorf("assemble (-want +got) (%s):\n%s", tc.why, diff)
			}
		})
	}
}

func TestPathShapeOfPhaseOutputs(t *testing.T) {
	t.Parallel()
	waves := &runfiles.WavesTelemetry{ChainCalls: 2}
	tests := []struct {
		name string
		out  phaseOutputs
		want runShape
	}{
		{"a run that sealed its own envelope, all commanders at once", phaseOutputs{}, runShape{}},
		{"a preset envelope (compare, replays) and waves", phaseOutputs{preset: true, deployed: deployment{waves: waves}}, runShape{preset: true, waves: waves}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, pathShapeOf(tc.out), cmp.AllowUnexported(runShape{})); diff != "" {
				t.Errorf("pathShapeOf (-want +got):\n%s", diff)
			}
		})
	}
}
