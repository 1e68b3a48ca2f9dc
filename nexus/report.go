package nexus

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"
)

// consensus runs the meta-review and scores every bundle (Phase 7).
func (r *runState) consensus(res *Result, reviews []ReviewRecord, dec Decomposition) {
	meta, recs, corr := MetaReviewAll(reviews)
	res.Reviews, res.Corrections = recs, corr
	for _, c := range corr {
		r.events.emit(Event{Phase: "7", Kind: EvScoreCorrection, AgentID: c.Reviewer, Message: c.Reason,
			Data: map[string]any{"kind": c.Kind, "bundle_id": c.BundleID, "delta": c.Delta}})
	}
	cc := r.cfg.Consensus
	for _, o := range res.Bundles {
		if o.Failed {
			o.Tier = TierUnique
			continue
		}
		m := meta[o.ID]
		o.Review = m
		o.Tier = Tier(m.Score, m.Reviews, cc)
		o.Formula = FormulaFromAtoms(o.result.Atoms, o.Bundle, dec.Aspects, m.Conflicts, m.Reviews, cc)
		o.FormulaScore = Formula(o.Formula, cc)
		o.InSynthesis = inSynthesis(o, cc)
	}
}

// inSynthesis applies the Shadow Gate: proceed and warn go in; quarantined
// bundles go in only when their re-review reaches the majority threshold;
// rejected bundles never do. Without a gate decision (shadow scoring off or
// invalid) the bundle goes in, flagged in the report.
func inSynthesis(o *BundleOutcome, cc ConsensusConfig) bool {
	if o.Failed {
		return false
	}
	if o.Gate == nil {
		return true
	}
	switch o.Gate.Action {
	case shadow.ActionProceed, shadow.ActionWarn:
		return true
	case shadow.ActionQuarantine:
		return o.Review.Score >= cc.MajorityThreshold
	}
	return false
}

func (r *runState) synthesise(ctx context.Context, res *Result, s commanders.Settings) error {
	var views []commanders.BundleView
	for _, o := range res.Bundles {
		if o.InSynthesis {
			views = append(views, commanders.BundleView{ID: o.ID, Text: o.Bundle.Text()})
		}
	}
	if len(views) == 0 {
		return fmt.Errorf("no bundle passed the shadow gate: nothing to synthesise")
	}
	a, err := r.agent(commanders.RoleSynthesizer, "synthesizer", r.plan.Roster.Synthesizer)
	if err != nil {
		return err
	}
	user, err := prompts.Render("synthesis", map[string]any{"Mission": r.opts.Mission, "Bundles": views})
	if err != nil {
		return err
	}
	syn, _, err := providers.StructuredRetry[Synthesis](ctx, a.Provider, agentRequest(a, s, user, "synthesis"), 3)
	if err != nil {
		return err
	}
	res.Synthesis = &syn
	return nil
}

// writeReports writes one Shadow Report per bundle.
func (r *runState) writeReports(res *Result, env *shadow.Envelope) {
	for _, o := range res.Bundles {
		if o.Failed {
			continue
		}
		impl := o.ref
		opts := shadow.ReportOptions{
			ID: r.plan.RunID + "/" + o.ID, Timestamp: time.Now().UTC(), SpecVersion: r.cfg.ShadowScoring.SpecVersion,
			Envelope: env, Implementer: impl, Evaluation: o.Final, Hardening: o.Hardening,
			HardeningEnabled: r.plan.Hardening.Enabled, MaxCycles: r.plan.Hardening.MaxCycles,
			Invalid: !res.ShadowValid, InvalidReason: res.ShadowReason,
		}
		rep := shadow.BuildReport(opts)
		_ = r.dir.WriteJSON("reports/"+o.ID+".json", rep)
	}
}

// writeFinal computes the telemetry and writes sandbox.json, report.md,
// telemetry.json and result.json (safe to call on a partial or failed run,
// and more than once). A run stopped after sealing writes only the last two.
func (r *runState) writeFinal(res *Result) {
	res.Telemetry = r.telemetry(res)
	defer func() {
		_ = r.dir.WriteJSON("telemetry.json", res.Telemetry)
		_ = r.dir.WriteJSON("result.json", res)
	}()
	if res.Status == StatusSealed {
		return
	}
	if r.sb != nil && !r.sbDone {
		r.sbDone = true
		rep := r.sb.finish(r, res)
		res.Sandbox = rep
		_ = r.dir.WriteJSON("sandbox.json", rep)
	}
	_ = r.dir.WriteFile("report.md", []byte(r.actionReport(res)), 0o644)
}

func (r *runState) actionReport(res *Result) string {
	var b strings.Builder
	p := r.plan
	fmt.Fprintf(&b, "# Action report: %s\n\n", p.MissionTitle)
	fmt.Fprintf(&b, "Run `%s` · scale %s · personality %s · seed %d\n\n", p.RunID, p.Scale, p.Personality, p.Seed)
	a := res.Aggregate
	switch res.Status {
	case StatusInterrupted:
		fmt.Fprintf(&b, "> **Partial run**: the run was interrupted in phase %s; this report covers what existed (%s).\n\n", res.Phase, a.counts())
	case StatusFailed:
		fmt.Fprintf(&b, "> **Run failed** in phase %s (%s): %s\n\n", res.Phase, res.FailureClass, oneLine(res.Error))
	case StatusInvalid:
		fmt.Fprintf(&b, "> **Shadow scoring INVALID**: %s. No bundle was judged (0 of %d scored).\n\n", res.ShadowReason, a.Planned)
	case StatusPartial:
		fmt.Fprintf(&b, "> **Partial run**: %s; bundles marked *salvaged* were built from the workers' finished results without the commander's assembly.\n\n", res.Error)
	case StatusIncomplete:
		fmt.Fprintf(&b, "> **Incomplete run**: %s.\n\n", res.Error)
	}
	t := res.Telemetry
	b.WriteString("## Metrics\n\n| metric | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| agents (launched / planned) | %d / %d |\n| LLM calls | %d |\n| tokens (in/out) | %d / %d |\n| cost | $%.4f of $%.2f |\n| wall time | %s |\n",
		t.AgentsLaunched.Total, t.Agents.Total, t.Calls, t.InputTokens, t.OutputTokens, t.CostUSD, p.CostCeilingUSD, time.Duration(t.WallMS)*time.Millisecond)
	switch {
	case res.ShadowValid && a.Median != nil && a.Mean != nil:
		fmt.Fprintf(&b, "| Shadow Score (median / mean) | %.1f%% %s / %.1f%% (%d of %d scored) |\n", *a.Median, shadow.Level(a.Level).Indicator(), *a.Mean, a.Scored, a.Planned)
	case res.Status != StatusInvalid:
		fmt.Fprintf(&b, "| Shadow Score | none: %s |\n", a.counts())
	}
	fmt.Fprintf(&b, "| sealed hash | `%s` |\n\n", res.SealedHash)

	if s := res.Synthesis; s != nil {
		fmt.Fprintf(&b, "## The #1 action\n\n%s\n\n", s.TopAction)
		if s.Summary != "" {
			fmt.Fprintf(&b, "%s\n\n", s.Summary)
		}
		b.WriteString("## Risk per domain\n\n| domain | risk | note |\n|---|---|---|\n")
		for _, k := range s.Risks {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", k.Domain, k.Level, oneLine(k.Note))
		}
		b.WriteString("\n")
		list(&b, "Quick wins", s.QuickWins)
		list(&b, "Deep work", s.DeepWork)
		b.WriteString("## Conflicts and resolutions\n\n")
		if len(s.Conflicts) == 0 {
			b.WriteString("None reported.\n\n")
		}
		for _, c := range s.Conflicts {
			fmt.Fprintf(&b, "- **%s**: %s\n", c.Topic, c.Resolution)
		}
		if len(s.Conflicts) > 0 {
			b.WriteString("\n")
		}
		list(&b, "Gaps", s.Gaps)
	} else {
		b.WriteString("## Synthesis\n\nNo synthesis was produced (see events.jsonl for the reason).\n\n")
	}

	b.WriteString("## Shadow results\n\n")
	if !res.ShadowValid {
		fmt.Fprintf(&b, "> **Shadow scoring invalid/advisory**: %s\n\n", res.ShadowReason)
	}
	b.WriteString("| bundle | model | initial | final | level | hardening | velocity | gate | review | tier | formula | in synthesis |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, o := range res.Bundles {
		if o.Failed {
			fmt.Fprintf(&b, "| %s | %s | – | – | – | – | – | failed (%s) | – | – | – | no |\n", o.ID, o.Model, o.FailureClass)
			continue
		}
		initial, final, level, gate, cycles, vel := "–", "–", "–", "–", "–", "–"
		if o.Initial != nil {
			initial = fmt.Sprintf("%.1f", o.Initial.Score)
		}
		if o.ShadowScore != nil {
			final = fmt.Sprintf("%.1f", *o.ShadowScore)
			level = shadow.Level(o.Level).Indicator() + " " + o.Level
		}
		if o.Gate != nil {
			gate = o.Gate.Action
		}
		if o.Hardening != nil {
			cycles = fmt.Sprint(o.Hardening.Cycles)
			vel = fmt.Sprintf("%.1f", o.Hardening.Velocity)
		}
		partial := ""
		if o.Salvaged {
			partial = " (salvaged)"
		}
		fmt.Fprintf(&b, "| %s%s | %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %.2f | %v |\n",
			o.ID, partial, o.Model, initial, final, level, cycles, vel, gate, o.Review.Score, o.Tier, o.FormulaScore, yesNo(o.InSynthesis))
	}
	b.WriteString("\n")
	// The gate lets moderate bundles proceed only with their report attached
	// and a warning.
	for _, o := range res.Bundles {
		if o.Gate != nil && o.Gate.Action == shadow.ActionWarn && o.ShadowScore != nil {
			fmt.Fprintf(&b, "> ⚠️ **Shadow Gate warning**: `%s` proceeds with Shadow Score %.1f%% (%s); its report is attached: `reports/%s.json`.\n\n", o.ID, *o.ShadowScore, o.Level, o.ID)
		}
	}
	if r.opts.Config != nil && res.Sandbox != nil {
		if s, ok := res.Sandbox.(interface{ Markdown() string }); ok {
			b.WriteString(s.Markdown())
		}
	}
	b.WriteString("## Agent tally\n\n| role | launched | planned |\n|---|---|---|\n")
	pl, la := t.Agents, t.AgentsLaunched
	fmt.Fprintf(&b, "| nexus | %d | %d |\n| commanders | %d | %d |\n| squad leads | %d | %d |\n| workers | %d | %d |\n| reviewers | %d | %d |\n| **total** | **%d** | **%d** |\n\n",
		la.Nexus, pl.Nexus, la.Commanders, pl.Commanders, la.SquadLeads, pl.SquadLeads, la.Workers, pl.Workers, la.Reviewers, pl.Reviewers, la.Total, pl.Total)
	if len(t.FailureClasses) > 0 {
		b.WriteString("## Failures\n\n| class | count |\n|---|---|\n")
		for _, k := range sortedKeys(t.FailureClasses) {
			fmt.Fprintf(&b, "| %s | %d |\n", k, t.FailureClasses[k])
		}
		b.WriteString("\n")
	}
	return b.String()
}

func list(b *strings.Builder, title string, xs []string) {
	fmt.Fprintf(b, "## %s\n\n", title)
	if len(xs) == 0 {
		b.WriteString("None.\n\n")
		return
	}
	for _, x := range xs {
		fmt.Fprintf(b, "- %s\n", oneLine(x))
	}
	b.WriteString("\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

// Telemetry is telemetry.json.
type Telemetry struct {
	RunID string `json:"run_id"`
	Scale string `json:"scale"`
	// Agents is what the plan deploys; AgentsLaunched the agents that
	// really started (fewer when the cost ceiling, a failure or an
	// interruption stopped launches).
	Agents         AgentTally           `json:"agents_planned"`
	AgentsLaunched AgentTally           `json:"agents_launched"`
	Calls          int                  `json:"calls"`
	InputTokens    int                  `json:"input_tokens"`
	OutputTokens   int                  `json:"output_tokens"`
	CostUSD        float64              `json:"cost_usd"`
	WallMS         int64                `json:"wall_ms"`
	ByRole         map[string]CallStats `json:"by_role"`
	ByModel        map[string]CallStats `json:"by_model"`
	BreakerTrips   int                  `json:"breaker_trips"`
	FailureClasses map[string]int       `json:"failure_classes"`
	ShadowScores   map[string]float64   `json:"shadow_scores"`
	ShadowMedian   *float64             `json:"shadow_median"` // null when no bundle was judged
	BundlesPlanned int                  `json:"bundles_planned"`
	BundlesScored  int                  `json:"bundles_scored"`
	ShadowValid    bool                 `json:"shadow_valid"`
	Tiers          map[string]int       `json:"tiers"`
	Gates          map[string]int       `json:"gates"`
	BundlesFailed  int                  `json:"bundles_failed"`
	AtomsFailed    int                  `json:"atoms_failed"`
	Salvaged       int                  `json:"bundles_salvaged"`
	Critical       CriticalPath         `json:"critical_path"`
}

// AgentTally counts agents by role.
type AgentTally struct {
	Nexus      int `json:"nexus"`
	Commanders int `json:"commanders"`
	SquadLeads int `json:"squad_leads"`
	Workers    int `json:"workers"`
	Reviewers  int `json:"reviewers"`
	Total      int `json:"total"`
}

// CallStats summarises calls of one role or model.
type CallStats struct {
	Calls          int            `json:"calls"`
	Errors         int            `json:"errors"`
	InputTokens    int            `json:"input_tokens"`
	OutputTokens   int            `json:"output_tokens"`
	CostUSD        float64        `json:"cost_usd"`
	LatencyP50MS   float64        `json:"latency_p50_ms"`
	LatencyP95MS   float64        `json:"latency_p95_ms"`
	FailureClasses map[string]int `json:"failure_classes,omitempty"`
}

// CriticalPath is the longest chain of dependent LLM calls the run made
// (see CriticalPathCalls).
type CriticalPath struct {
	Calls int `json:"calls"`
}

func (r *runState) telemetry(res *Result) Telemetry {
	p := r.plan
	t := Telemetry{RunID: p.RunID, Scale: p.Scale,
		Agents: AgentTally{Nexus: 1, Commanders: p.Commanders, SquadLeads: p.SquadLeads, Workers: p.Workers, Reviewers: p.Reviewers, Total: p.Agents},
		ByRole: map[string]CallStats{}, ByModel: map[string]CallStats{}, FailureClasses: map[string]int{},
		ShadowScores: map[string]float64{}, Tiers: map[string]int{}, Gates: map[string]int{}, ShadowValid: res.ShadowValid}
	r.mu.Lock()
	for k, s := range r.byRole {
		t.ByRole[k] = callStats(s)
		t.Calls += s.Calls
		t.InputTokens += s.InputTokens
		t.OutputTokens += s.OutputTokens
	}
	for k, s := range r.byModel {
		t.ByModel[k] = callStats(s)
	}
	for c, n := range r.classes {
		t.FailureClasses[string(c)] += n
	}
	l := r.launched
	t.AgentsLaunched = AgentTally{Nexus: len(l[commanders.RoleNexus]), Commanders: len(l[commanders.RoleCommander]),
		SquadLeads: len(l[commanders.RoleSquadLead]), Workers: len(l[commanders.RoleWorker]), Reviewers: len(l[commanders.RoleReviewer])}
	t.AgentsLaunched.Total = t.AgentsLaunched.Nexus + t.AgentsLaunched.Commanders + t.AgentsLaunched.SquadLeads + t.AgentsLaunched.Workers + t.AgentsLaunched.Reviewers
	t.CostUSD = r.cost
	t.BreakerTrips = r.trips
	t.WallMS = time.Since(r.start).Milliseconds()
	r.mu.Unlock()
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
	t.ShadowMedian, t.BundlesPlanned, t.BundlesScored = res.Aggregate.Median, res.Aggregate.Planned, res.Aggregate.Scored
	t.Critical = CriticalPath{Calls: CriticalPathCalls(p, r.pathShape(res))}
	return t
}

// PathShape is what a run's chain of dependent LLM calls depends on
// besides its plan.
type PathShape struct {
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
}

// CriticalPathCalls is the longest chain of dependent LLM calls of a run:
// decomposition, seal, the commander's plan, (the squad lead's micro
// briefs), worker, bundle; then, beside each other, the cross-review's last
// pair (it needs the last bundle) and the judgement of the last bundle with
// its hardening cycles (revise + re-judge each); then the quarantine
// re-review when there is one (it follows the gate), and the synthesis
// (Phase 7 needs both branches). Everything else runs beside this chain.
func CriticalPathCalls(p Plan, s PathShape) int {
	n := 0
	if !s.Preset {
		n += 2 // decomposition, seal
	}
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
func (r *runState) judgeCalls() int {
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
// preset, and what its bundles went through (bundleShape).
func (r *runState) pathShape(res *Result) PathShape {
	s := bundleShape(res.Bundles)
	s.JudgeCalls, s.Preset = r.judgeCalls(), r.opts.Preset != nil
	return s
}

// bundleShape is the part of a run's PathShape its bundles decide: the most
// hardening cycles a bundle went through and whether any was quarantined.
func bundleShape(bundles []*BundleOutcome) PathShape {
	var s PathShape
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

func callStats(s *usageStats) CallStats {
	c := CallStats{Calls: s.Calls, Errors: s.Errors, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, CostUSD: s.CostUSD}
	lat := append([]float64(nil), s.LatencyMS...)
	sort.Float64s(lat)
	c.LatencyP50MS = percentile(lat, 0.50)
	c.LatencyP95MS = percentile(lat, 0.95)
	if len(s.Classes) > 0 {
		c.FailureClasses = map[string]int{}
		for k, v := range s.Classes {
			c.FailureClasses[string(k)] = v
		}
	}
	return c
}

// percentile of sorted xs by nearest rank.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
