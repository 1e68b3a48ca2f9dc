package nexus

import (
	"embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
)

//go:embed templates/report.md.tmpl
var reportTemplateFS embed.FS

// reportTemplate renders report.md from a reportView; it holds the layout,
// reportView the computations.
var reportTemplate = template.Must(template.ParseFS(reportTemplateFS, "templates/report.md.tmpl"))

// actionReport renders report.md. The sandbox part is the sandbox bridge's
// own Markdown, when the run had a sandbox.
func (r *deps) actionReport(res *Result) string {
	var sandbox string
	if s := res.Sandbox; s != nil {
		sandbox = s.Markdown()
	}
	return renderActionReport(r.plan, res, reportInputs{Sandbox: sandbox, MajorityThreshold: r.cfg.Consensus.MajorityThreshold})
}

// reportInputs is what report.md needs besides the plan and the result.
type reportInputs struct {
	// Sandbox is the sandbox bridge's Markdown ("" for none), shown before
	// the agent tally.
	Sandbox string
	// MajorityThreshold is the consensus majority threshold (0-1): it
	// splits a CONFLICT-tier bundle's reviewers into its two sides.
	MajorityThreshold float64
}

// renderActionReport renders report.md of plan p and result res. Much of
// what it shows is not ours (model names, models' text, a previous run's id
// and directory read from a run directory someone may have handed over):
// every line goes through textsafe.PrintableLines, so no control character,
// bidi override or invalid byte reaches a reader's terminal or viewer.
func renderActionReport(p Plan, res *Result, in reportInputs) string {
	var b strings.Builder
	if err := reportTemplate.Execute(&b, newReportView(p, res, in)); err != nil {
		// The view holds only strings, numbers and slices of them: a
		// failure here is a bug in the template, which the tests render.
		panic(fmt.Sprintf("report.md template: %v", err))
	}
	return textsafe.PrintableLines(b.String())
}

// reportView is what templates/report.md.tmpl shows: every number and
// level formatted, every optional part nil or empty when absent.
type reportView struct {
	Title, RunID, Scale, Personality string
	Seed                             int64
	Banner                           *bannerView // nil for a complete run
	// Advisory says why the scores are advisory (Plan.ScoresAdvisory): the
	// judge or seal author shares a model family with the commanders. ""
	// when they are independent, or when no bundle was scored.
	Advisory string

	Launched, Planned         runfiles.AgentTally
	Calls                     int
	InputTokens, OutputTokens int
	TokenDetail               string // cache and reasoning parts of the tokens; "" when none was reported
	PromptCache               string // the prompt cache's hits; "" when none
	Cost, CostCeiling         string
	Usage                     *usageView // nil when telemetry has no calls by role
	Wall                      string
	Score                     *scoreView // nil unless scoring was valid and judged a bundle
	NoScore                   string     // why there is no score ("" when Score is set or the run is invalid)
	SealedHash                string

	Synthesis *synthesisView // nil when none was produced
	// NoRecommendation says that no bundle passed the gate; nil when one did.
	NoRecommendation *noRecommendationView
	Risks            []riskView // one per bundle, computed (domainRisk)
	Conflicts        conflictsView
	CardSections     []cardSection
	Domains          []domainView
	Safety           *safetyView // nil without a workspace and without a leak

	ShadowInvalid bool // shadow scoring invalid or advisory: say why above the table
	ShadowOff     bool // ... because the config turned it off (ShadowReason is ShadowOff)
	ShadowReason  string
	Bundles       []bundleRow
	Warnings      []gateWarning
	FormulaNote   string           // why the consensus formula lacks its evidence term ("" when it has it)
	Evidence      *evidenceView    // nil without a workspace
	GroundTruth   *groundTruthView // nil without a ground truth
	FollowUp      *followUpView    // nil unless the run follows up another
	Sandbox       string
	Failures      []classCount
}

// bannerView is the line under the title of a run that did not complete;
// Status is one of the Status* constants the template names.
type bannerView struct {
	Status       string
	Phase        string
	FailureClass providers.Class
	Error        string // on one line for a failed run
	Counts       string // what was scored, in words
	ShadowReason string
	Planned      int
}

type scoreView struct {
	Median, Mean    string
	Indicator       string
	Scored, Planned int
}

type synthesisView struct {
	TopAction, Summary  string
	QuickWins, DeepWork listView
	Gaps                listView
}

// listView is a titled bullet list; its items are on one line each.
type listView struct {
	Title string
	Items []string
}

// bundleRow is one row of the Shadow results table.
type bundleRow struct {
	ID, Model    string
	Failed       bool
	FailureClass providers.Class
	Salvaged     bool
	Degraded     bool // its assembly or verdict ended on the recovery ladder's degrade step
	// "–" when not measured.
	Initial, Final, Level, Cycles, Velocity, Gate string
	Review, Tier, Formula, InSynthesis            string
}

type gateWarning struct {
	ID, Score, Level string
}

type classCount struct {
	Class string
	Count int
}

func newReportView(p Plan, res *Result, in reportInputs) reportView {
	sandbox := in.Sandbox
	a, t := res.Aggregate, res.Telemetry
	v := reportView{
		Title: p.MissionTitle, RunID: p.RunID, Scale: p.Scale, Personality: p.Personality, Seed: p.Seed,
		Launched: t.AgentsLaunched, Planned: t.Agents, Calls: t.Calls, InputTokens: t.InputTokens, OutputTokens: t.OutputTokens,
		Cost: config.FormatCost(t.CostUSD, t.UnpricedModels), CostCeiling: fmt.Sprintf("%.2f", p.CostCeilingUSD),
		Wall:          (time.Duration(t.WallMS) * time.Millisecond).String(),
		SealedHash:    res.SealedHash,
		ShadowInvalid: !res.ShadowValid, ShadowReason: res.ShadowReason, ShadowOff: res.ShadowReason == ShadowOff,
		Sandbox:     sandbox,
		TokenDetail: config.TokenDetail(t.InputTokens, t.ReasoningTokens, t.CacheReadTokens, t.CacheWriteTokens),
		Usage:       newUsageView(t),
	}
	if t.PromptCacheHits > 0 {
		v.PromptCache = fmt.Sprintf("%d of %d calls read input from it", t.PromptCacheHits, t.Calls)
	}
	switch res.Status {
	case runfiles.StatusInterrupted, runfiles.StatusFailed, runfiles.StatusInvalid, runfiles.StatusPartial, runfiles.StatusIncomplete:
		v.Banner = &bannerView{Status: res.Status, Phase: string(res.Phase), FailureClass: res.FailureClass, Error: res.Error,
			Counts: a.counts(), ShadowReason: res.ShadowReason, Planned: a.Planned}
		if res.Status == runfiles.StatusFailed {
			v.Banner.Error = oneLine(res.Error)
		}
	}
	switch {
	case res.ShadowValid && a.Median != nil && a.Mean != nil:
		v.Advisory = p.advisoryReason()
		v.Score = &scoreView{Median: fmt.Sprintf("%.1f", *a.Median), Mean: fmt.Sprintf("%.1f", *a.Mean),
			Indicator: shadow.Level(a.Level).Indicator(), Scored: a.Scored, Planned: a.Planned}
	case res.Status != runfiles.StatusInvalid:
		v.NoScore = a.counts()
	}
	if s := res.Synthesis; s != nil {
		v.Synthesis = &synthesisView{TopAction: s.TopAction, Summary: s.Summary,
			QuickWins: newList("Quick wins", s.QuickWins), DeepWork: newList("Deep work", s.DeepWork), Gaps: newList("Gaps", s.Gaps)}
	}
	v.NoRecommendation = newNoRecommendation(res)
	if v.NoRecommendation != nil {
		// A synthesis of work that did not pass the gate is never shown
		// as the recommendation (none is made: synthesise needs a bundle
		// in synthesis; this guards results built otherwise).
		v.Synthesis = nil
	}
	for _, o := range res.Bundles {
		v.Risks = append(v.Risks, domainRisk(o, res.Evidence != nil))
	}
	v.Conflicts = newConflictsView(res, in.MajorityThreshold)
	v.CardSections = newCardSections(res, findingCards(res))
	v.Domains = newDomainViews(res)
	v.Safety = newSafetyView(res)
	for _, o := range res.Bundles {
		v.Bundles = append(v.Bundles, newBundleRow(o))
		// The gate lets moderate bundles proceed only with their report
		// attached and a warning.
		if o.Gate != nil && o.Gate.Action == shadow.ActionWarn && o.ShadowScore != nil {
			v.Warnings = append(v.Warnings, gateWarning{ID: o.ID, Score: fmt.Sprintf("%.1f", *o.ShadowScore), Level: o.Level})
		}
	}
	v.FormulaNote, v.Evidence, v.GroundTruth = formulaNote(res), newEvidenceView(res), newGroundTruthView(res)
	v.FollowUp = newFollowUpView(res.FollowUp)
	for _, k := range slices.Sorted(maps.Keys(t.FailureClasses)) {
		v.Failures = append(v.Failures, classCount{Class: k, Count: t.FailureClasses[k]})
	}
	return v
}

// usageView is the report's Calls and cost section: telemetry's calls by
// role and by model, and what the prices stood in for.
type usageView struct {
	Roles, Models []usageRow
	Hits          bool     // some call read from the prompt cache: the hits column is shown
	Unpriced      bool     // some call had no known price: the cost legend is shown
	Notes         []string // rates stood in for (runfiles.PriceUsed.Assumed)
}

type usageRow struct {
	Name          string
	Calls, Errors int
	Tokens, Hits  string
	Cost          string
}

func newUsageView(t runfiles.Telemetry) *usageView {
	if len(t.ByRole) == 0 {
		return nil
	}
	v := &usageView{Hits: t.PromptCacheHits > 0, Unpriced: t.UnpricedCalls > 0}
	row := func(name string, c runfiles.CallStats) usageRow {
		r := usageRow{Name: mdCell(name), Calls: c.Calls, Errors: c.Errors, Cost: formatCallsCost(c),
			Tokens: fmt.Sprintf("%d / %d", c.InputTokens, c.OutputTokens), Hits: "–"}
		if c.PromptCacheHits > 0 {
			r.Hits = fmt.Sprint(c.PromptCacheHits)
		}
		if d := config.TokenDetail(c.InputTokens, c.ReasoningTokens, c.CacheReadTokens, c.CacheWriteTokens); d != "" {
			r.Tokens += " · " + d
		}
		return r
	}
	for _, k := range slices.Sorted(maps.Keys(t.ByRole)) {
		v.Roles = append(v.Roles, row(k, t.ByRole[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(t.ByModel)) {
		v.Models = append(v.Models, row(k, t.ByModel[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(t.Prices)) {
		for _, a := range t.Prices[k].Assumed {
			what := strings.ReplaceAll(a, "_", "-")
			v.Notes = append(v.Notes, fmt.Sprintf("The %s tokens of %s were priced at its input rate: its price gives no %s rate (give %s_per_mtok under pricing:, see docs/config.md).",
				what, mdText(k), what, a))
		}
	}
	return v
}

func newList(title string, xs []string) listView {
	l := listView{Title: title}
	for _, x := range xs {
		l.Items = append(l.Items, oneLine(x))
	}
	return l
}

func newBundleRow(o *BundleOutcome) bundleRow {
	row := bundleRow{ID: o.ID, Model: o.Model, Failed: o.Failed, FailureClass: o.FailureClass, Salvaged: o.Salvaged, Degraded: o.degradedWhole(),
		Initial: "–", Final: "–", Level: "–", Cycles: "–", Velocity: "–", Gate: "–",
		Review: fmt.Sprintf("%.2f", o.Review.Score), Tier: o.Tier, Formula: fmt.Sprintf("%.2f", o.FormulaScore), InSynthesis: yesNo(o.InSynthesis)}
	if o.Initial != nil {
		row.Initial = fmt.Sprintf("%.1f", o.Initial.Score)
	}
	if o.ShadowScore != nil {
		row.Final = fmt.Sprintf("%.1f", *o.ShadowScore)
		row.Level = shadow.Level(o.Level).Indicator() + " " + o.Level
	}
	if o.Gate != nil {
		row.Gate = o.Gate.Action
	}
	if o.Hardening != nil {
		row.Cycles = fmt.Sprint(o.Hardening.Cycles)
		row.Velocity = fmt.Sprintf("%.1f", o.Hardening.Velocity)
	}
	return row
}

// oneLine collapses every run of white space, newlines included, to one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

// followUpView is the report's Follow-up section: the chain of runs as a
// table, its velocity and what was passed on.
type followUpView struct {
	Previous, PreviousDir string
	Chain                 []chainRow
	Velocity              string // "12.5 points per run (improving)"; "" when absent
	VelocityAbsent        string
	Truncated             bool
	Categories            string // "security 2 criteria (5 failed verdicts), ..." or "none"
	Findings              int
	Warnings              []string
}

type chainRow struct {
	N                           int
	RunID, Status, Score, Level string
	This                        bool
}

func newFollowUpView(fu *runfiles.FollowUp) *followUpView {
	if fu == nil {
		return nil
	}
	v := &followUpView{Previous: fu.PreviousRunID, PreviousDir: fu.PreviousDir, Truncated: fu.Truncated,
		VelocityAbsent: oneLine(fu.VelocityAbsent), Findings: len(fu.Prior.Findings)}
	for i, c := range fu.Chain {
		row := chainRow{N: i + 1, RunID: c.RunID, Status: c.Status, Score: "none", Level: "–", This: i == len(fu.Chain)-1}
		if c.ShadowScore != nil {
			row.Score = fmt.Sprintf("%.1f%% (%d of %d scored)", *c.ShadowScore, c.Scored, c.Planned)
			row.Level = shadow.Level(c.Level).Indicator() + " " + c.Level
		} else if c.NoScore != "" {
			row.Score = "none: " + oneLine(c.NoScore)
		}
		v.Chain = append(v.Chain, row)
	}
	if fu.Velocity != nil {
		trend := "no change"
		switch {
		case *fu.Velocity > 0:
			trend = "improving: scores fall"
		case *fu.Velocity < 0:
			trend = "worsening: scores rise"
		}
		v.Velocity = fmt.Sprintf("%.1f points per run (%s)", *fu.Velocity, trend)
	}
	var cats []string
	for _, c := range fu.Prior.FailedCategories {
		cats = append(cats, fmt.Sprintf("%s %d criteria (%d failed verdicts)", c.Category, c.Criteria, c.Failures))
	}
	v.Categories = "none"
	if len(cats) > 0 {
		v.Categories = strings.Join(cats, ", ")
	}
	for _, w := range fu.Warnings {
		v.Warnings = append(v.Warnings, oneLine(w))
	}
	return v
}
