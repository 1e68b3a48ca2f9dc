// Package compare runs one mission against several contender models under ONE
// sealed envelope and ONE judge, repeated, and says which contender is
// better with numbers that hold up: bootstrap intervals over repeats, paired
// per-criterion tests, cost, latency and tokens.
package compare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/internal/slug"
	"github.com/swarm-dev/swarm/internal/stats"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/cache"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// Roles being compared.
const (
	RolesCommanders = "commanders" // default: contenders run the commanders
	RolesAll        = "all"        // contenders run every agent role
)

// Defaults of a comparison left unset (Options, Request and the command's
// flags).
const (
	DefaultScale   = "ss-50"
	DefaultRepeats = 3
)

// Options configure a comparison.
type Options struct {
	Config      *config.Config
	Registry    *providers.Registry
	Mission     string
	MissionName string
	// MissionDir is the directory the mission's front-matter paths are
	// relative to (nexus.Options.MissionDir): the mission file's.
	MissionDir   string
	Models       []string // contenders, kind:model
	Judge        string   // default: config models.judge
	SealAuthor   string   // default: config models.seal_author
	Repeats      int      // default DefaultRepeats
	Scale        string   // default DefaultScale
	Roles        string   // commanders (default) or all
	JudgeSamples int
	Seed         int64
	Out          string
	// CacheDir enables the content-addressed call cache (Resume turns it on
	// under Out/cache when empty).
	CacheDir string
	Resume   bool
	// Parallel bounds how many contender runs of one repeat go on at once
	// (default: all of them; 1 runs them one after another). Each provider
	// kind's rate limit and concurrency cap hold across all of them.
	Parallel int
	// Workspace is the directory every contender's run reads through the
	// read-only tools ("" = none); the seal author gets it too. GroundTruth
	// is the planted-defects file each run's findings are matched against
	// (needs Workspace).
	Workspace   string
	GroundTruth string
	// AllowHomeWorkspace is nexus.Options.AllowHomeWorkspace for every run.
	AllowHomeWorkspace bool
	// Progress receives one line per finished run (called one at a time).
	Progress func(Progress)
}

// Progress reports one finished contender run.
type Progress struct {
	Done, Total int
	Contender   string
	Repeat      int
	// Score is the run's Shadow Score over every planned bundle, a bundle
	// that failed or was not judged counting as 100 (RunSummary.Score).
	Score float64
	// Judged of Planned bundles were judged; the rest failed.
	Judged, Planned int
	Cached          bool
}

// RunSummary is what compare keeps of one contender run (run-summary.json).
// Calls, tokens, cost, latencies and failure classes are the contender's
// own calls in the roles compared; Run* are the whole run's totals.
//
// Every planned bundle is either in Bundles (judged) or in Unscored (it
// failed, or was produced but not judged). Score counts an unscored bundle
// as 100: every sealed criterion failed, since nothing was delivered that
// could pass one.
type RunSummary struct {
	Contender  string `json:"contender"`
	Repeat     int    `json:"repeat"`
	Seed       int64  `json:"seed"`
	Dir        string `json:"dir"`
	SealedHash string `json:"sealed_hash"`
	// Score is the mean initial Shadow Score over the planned bundles, an
	// unscored bundle counting as 100 (see Summarise).
	Score float64 `json:"score"`
	// Planned lists the bundle domains the run planned.
	Planned  []string                  `json:"planned_bundles"`
	Bundles  map[string]BundleSummary  `json:"bundles"` // judged bundles
	Unscored map[string]UnscoredBundle `json:"unscored_bundles,omitempty"`
	// Criteria are the sealed criteria (id -> category) every bundle is
	// judged against; an unscored bundle failed each of them.
	Criteria     map[string]string `json:"criteria,omitempty"`
	Velocity     float64           `json:"hardening_velocity"` // mean over the hardened bundles
	Hardened     int               `json:"bundles_hardened"`
	ReviewScore  float64           `json:"review_score"`
	Toxicity     float64           `json:"toxicity"`
	QualityGap   float64           `json:"quality_gap"`
	Calls        int               `json:"calls"`
	InputTokens  int               `json:"input_tokens"`
	OutputTokens int               `json:"output_tokens"`
	CostUSD      float64           `json:"cost_usd"`
	TokenParts
	// Unpriced are the contender's models whose calls had no known price
	// (CostUSD leaves them out: a lower bound); RunUnpriced the whole run's.
	Unpriced        []string       `json:"unpriced_models,omitempty"`
	RunUnpriced     []string       `json:"run_unpriced_models,omitempty"`
	LatenciesMS     []float64      `json:"latencies_ms"`
	Failures        map[string]int `json:"failure_classes"`
	RunInputTokens  int            `json:"run_input_tokens"`
	RunOutputTokens int            `json:"run_output_tokens"`
	RunCostUSD      float64        `json:"run_cost_usd"`
	RunFailures     map[string]int `json:"run_failure_classes"`
	Disagreement    float64        `json:"judge_disagreement"`
	Advisory        bool           `json:"advisory"`
	AdvisoryWhy     string         `json:"advisory_reason,omitempty"`
	// Evidence tallies the contender's own citations (the run's
	// EvidenceByModel of its model; zero when it cited nothing) and
	// RunEvidence the whole run's; both nil when the run had no workspace.
	Evidence    *workspace.Counts `json:"evidence,omitempty"`
	RunEvidence *workspace.Counts `json:"run_evidence,omitempty"`
	// GroundTruth is the run's findings matched against the planted
	// defects; nil without a ground truth.
	GroundTruth *workspace.Match `json:"ground_truth,omitempty"`
}

// BundleSummary is one bundle of a run.
type BundleSummary struct {
	Initial  float64           `json:"initial_shadow_score"`
	Final    float64           `json:"final_shadow_score"`
	Level    string            `json:"level"`
	Gate     string            `json:"gate"`
	Verdicts map[string]bool   `json:"verdicts"`   // criterion id -> passed (initial judgement)
	Category map[string]string `json:"categories"` // criterion id -> category
}

// Bundle states of an unscored bundle.
const (
	StatusFailed   = "failed"   // no bundle: the commander's calls failed, or it never started
	StatusUnjudged = "unjudged" // a bundle exists but the judge returned no verdicts for it
	// StatusSalvaged: the recovery ladder (or the cost ceiling) built the
	// bundle from the workers' finished atoms because the commander did not
	// deliver one, or the bundle's own assembly ended on the degrade step.
	// The contender did not produce it, so it counts as failed like any
	// bundle the contender did not deliver, whatever the judge said of the
	// salvage (kept in JudgedScore for the record).
	StatusSalvaged = "salvaged"
)

// UnscoredBundle is a planned bundle that has no Shadow Score.
type UnscoredBundle struct {
	Status       string `json:"status"` // StatusFailed, StatusUnjudged or StatusSalvaged
	FailureClass string `json:"failure_class,omitempty"`
	Error        string `json:"error,omitempty"`
	// JudgedScore is the Shadow Score the judge gave a salvaged bundle:
	// for the record only, never counted for the contender.
	JudgedScore *float64 `json:"judged_shadow_score,omitempty"`
}

// Class is the bundle's failure class for counting: its provider failure
// class, else its status.
func (u UnscoredBundle) Class() string {
	if u.FailureClass != "" {
		return u.FailureClass
	}
	if u.Status != "" {
		return u.Status
	}
	return StatusFailed
}

// ErrNoContenders is returned without models.
var ErrNoContenders = errors.New("at least one contender model is required")

// Run executes the comparison and writes compare.json, compare.md and
// compare.html under Out. Finished contender runs are kept under
// Out/runs/<contender>/rep-<i>/ and, on resume, not run again.
func Run(ctx context.Context, o Options) (*Report, error) {
	if len(o.Models) == 0 {
		return nil, fmt.Errorf("%w: %w", config.ErrBadInput, ErrNoContenders)
	}
	if o.Repeats <= 0 {
		o.Repeats = DefaultRepeats
	}
	if o.Scale == "" {
		o.Scale = DefaultScale
	}
	if o.Roles == "" {
		o.Roles = RolesCommanders
	}
	if o.Roles != RolesCommanders && o.Roles != RolesAll {
		return nil, fmt.Errorf("%w: --roles %q: want commanders or all", config.ErrBadInput, o.Roles)
	}
	if o.Workspace == "" {
		// The mission's front matter names it: resolved once, so the seal,
		// every contender and the reports see the same directory.
		o.Workspace = frontMatterWorkspace(o.MissionName, o.Mission, o.MissionDir)
	}
	if o.GroundTruth != "" && o.Workspace == "" {
		return nil, fmt.Errorf("%w: --ground-truth %s: needs a workspace (Options.Workspace or the mission's front matter)", config.ErrBadInput, o.GroundTruth)
	}
	// A model listed twice becomes two contenders ("m" and "m#2") with their
	// own run directories; under the paired design (same seeds per repeat)
	// copies of one model must come out as not distinguishable.
	labels := make([]string, len(o.Models))
	refs := make([]providers.Ref, len(o.Models))
	seen := map[string]int{}
	for i, m := range o.Models {
		ref, err := providers.ParseRef(m)
		if err != nil {
			return nil, fmt.Errorf("%w: --models: %v", config.ErrBadInput, err)
		}
		refs[i] = ref
		seen[m]++
		labels[i] = m
		if seen[m] > 1 {
			labels[i] = fmt.Sprintf("%s#%d", m, seen[m])
		}
	}
	cfg := *o.Config
	for _, c := range []struct {
		flag, v string
		to      *providers.Ref
	}{{"--judge", o.Judge, &cfg.Models.Judge}, {"--seal-author", o.SealAuthor, &cfg.Models.SealAuthor}} {
		if c.v == "" {
			continue
		}
		ref, err := providers.ParseRef(c.v)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", config.ErrBadInput, c.flag, err)
		}
		*c.to = ref
	}
	if o.JudgeSamples > 0 {
		cfg.ShadowScoring.JudgeSamples = o.JudgeSamples
	}
	if o.Resume && o.CacheDir == "" {
		o.CacheDir = filepath.Join(o.Out, "cache")
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	wrap := func(ref providers.Ref, p providers.Provider) providers.Provider {
		if o.CacheDir == "" {
			return p
		}
		return cache.Middleware(o.CacheDir, ref, cfg.Providers[ref.Kind].BaseURL, nil)(p)
	}
	// Seal once.
	sealed, err := sealOnce(ctx, o, &cfg, wrap)
	if err != nil {
		return nil, err
	}
	hash := sealed.Hash()
	criteria := sealedCriteria(sealed)
	var planned []string
	for _, d := range sealed.Decomposition.Domains {
		planned = append(planned, d.Name)
	}
	judgeRef, sealRef := cfg.Models.Judge, cfg.Models.SealAuthor
	total := o.Repeats * len(o.Models)
	parallel := o.Parallel
	if parallel <= 0 {
		parallel = len(o.Models)
	}
	// Every run shares each provider kind's rate limit and concurrency cap,
	// however many of them go on at once.
	limits := &providers.LimitSet{}
	runs := make([]RunSummary, total)
	var (
		mu   sync.Mutex
		done int
	)
	// Repeat by repeat, the contenders run side by side (at most parallel
	// at once), so drift and rate limits hit all alike.
	for rep := 0; rep < o.Repeats; rep++ {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(parallel)
		for ci, m := range o.Models {
			label := labels[ci]
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				dir := filepath.Join(o.Out, "runs", slug.Make(label), fmt.Sprintf("rep-%d", rep))
				s, cached, err := runOne(gctx, o, &cfg, sealed, m, refs[ci], rep, dir, wrap, limits)
				if err != nil {
					return fmt.Errorf("%s repeat %d: %w", label, rep, err)
				}
				if s.SealedHash != hash {
					return fmt.Errorf("%s repeat %d was judged against %s, not the shared envelope %s", label, rep, s.SealedHash, hash)
				}
				s.Contender = label
				s.Advisory, s.AdvisoryWhy = advisory(refs[ci], judgeRef, sealRef)
				// A summary written before planned bundles were recorded
				// (resume) planned the shared decomposition's domains.
				if len(s.Planned) == 0 {
					s.Planned = append([]string(nil), planned...)
				}
				if len(s.Criteria) == 0 {
					s.Criteria = criteria
				}
				s.Score = Score(s)
				runs[rep*len(o.Models)+ci] = s
				mu.Lock()
				defer mu.Unlock()
				done++
				if o.Progress != nil {
					o.Progress(Progress{Done: done, Total: total, Contender: label, Repeat: rep, Score: s.Score,
						Judged: len(s.Bundles), Planned: len(plannedOf(s)), Cached: cached})
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			// A cancelled context is the caller's interruption, whatever
			// run noticed it first.
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			return nil, err
		}
	}
	o.Models = labels
	rep := Analyse(o, hash, judgeRef.String(), sealRef.String(), runs)
	if err := rep.Write(o.Out); err != nil {
		return rep, err
	}
	return rep, nil
}

// sealOnce seals the mission once, under Out/seal, and returns the sealed
// value every contender runs against. On resume, what an earlier
// comparison sealed there is reused.
func sealOnce(ctx context.Context, o Options, cfg *config.Config, wrap func(providers.Ref, providers.Provider) providers.Provider) (*nexus.Sealed, error) {
	dir := filepath.Join(o.Out, "seal")
	if sealed, err := nexus.LoadSealed(dir); err == nil {
		// A seal made with a workspace holds the mechanical checks, one
		// made without holds none: reused only when that still fits.
		if (sealed.Envelope.Mechanical() > 0) == (o.Workspace != "") {
			return sealed, nil
		}
	} else if errors.Is(err, shadow.ErrTampered) {
		return nil, err
	}
	os.RemoveAll(dir)
	seed := o.Seed
	m, err := nexus.Prepare(nexus.Options{Config: cfg, Registry: o.Registry, Mission: o.Mission, MissionName: o.MissionName, MissionDir: o.MissionDir,
		Scale: o.Scale, OutDir: dir, Seed: &seed, Workspace: o.Workspace, AllowHomeWorkspace: o.AllowHomeWorkspace}, nexus.WithProviderWrap(wrap))
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	sealed, err := m.Seal(ctx)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	if err := m.Close(); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return sealed, nil
}

// advisory says whether a contender shares a model family with the judge
// or the seal author, and why.
func advisory(ref, judge, sealAuthor providers.Ref) (bool, string) {
	fam := providers.Family(ref)
	var why []string
	if fam == providers.Family(judge) {
		why = append(why, "judge "+judge.String()+" is of the contender's family "+fam)
	}
	if fam == providers.Family(sealAuthor) {
		why = append(why, "seal author "+sealAuthor.String()+" is of the contender's family "+fam)
	}
	return len(why) > 0, strings.Join(why, "; ")
}

func runOne(ctx context.Context, o Options, cfg *config.Config, sealed *nexus.Sealed, model string, ref providers.Ref, rep int, dir string, wrap func(providers.Ref, providers.Provider) providers.Provider, limits *providers.LimitSet) (RunSummary, bool, error) {
	sumPath := filepath.Join(dir, "run-summary.json")
	if b, err := rundir.ReadFile(sumPath); err == nil {
		var s RunSummary
		if json.Unmarshal(b, &s) == nil && measuredAsAsked(s, o) && s.SealedHash == sealed.Hash() {
			return s, true, nil
		}
	}
	os.RemoveAll(dir) // an unfinished run (or one made without this workspace or ground truth) is redone from scratch
	seed := o.Seed + int64(rep)
	// The contender serves every role it is compared in.
	roles := comparedRoles(o.Roles)
	models := map[string][]providers.Ref{}
	for r := range roles {
		models[r] = []providers.Ref{ref}
	}
	m, err := nexus.Prepare(nexus.Options{Config: cfg, Registry: o.Registry, Mission: o.Mission, MissionName: o.MissionName, MissionDir: o.MissionDir,
		Scale: o.Scale, Models: models, OutDir: dir, Seed: &seed, Workspace: o.Workspace, AllowHomeWorkspace: o.AllowHomeWorkspace, GroundTruth: o.GroundTruth},
		nexus.WithProviderWrap(wrap), nexus.WithLimits(limits))
	if err != nil {
		return RunSummary{}, false, err
	}
	calls := newCallTally(ref, roles)
	m.Observe(calls)
	res, err := m.RunSealed(ctx, sealed)
	// A contender whose canary failed (waves) ran and failed: its bundles
	// are failed, not a reason to abandon the comparison.
	if err != nil && !(errors.Is(err, nexus.ErrCanaryFailed) && res != nil) {
		return RunSummary{}, false, err
	}
	s := summarise(res, model, rep, seed)
	evidenceOf(&s, res, ref.String()) // the model as the run's events name it
	calls.addTo(&s)
	s.Criteria = sealedCriteria(sealed)
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return s, false, err
	}
	if err := rundir.Open(dir).WriteFile(filepath.Base(sumPath), b, 0o644); err != nil {
		return s, false, fmt.Errorf("%w: %w", nexus.ErrWrite, err)
	}
	return s, false, nil
}

// measuredAsAsked reports whether a finished run's summary measured what
// o asks for: evidence exactly when o has a workspace, a ground-truth match
// exactly when o has a ground truth. A run finished before --workspace or
// --ground-truth was added (or dropped) is not reused on --resume: its
// missing evidence would read as a contender that cited nothing.
func measuredAsAsked(s RunSummary, o Options) bool {
	return (s.RunEvidence != nil) == (o.Workspace != "") && (s.GroundTruth != nil) == (o.GroundTruth != "")
}

// sealedCriteria is the sealed envelope's criteria, id -> category.
func sealedCriteria(sealed *nexus.Sealed) map[string]string {
	return sealed.Envelope.Categories()
}

// comparedRoles are the roles a contender plays.
func comparedRoles(roles string) map[string]bool {
	if roles == RolesAll {
		return map[string]bool{"commander": true, "squad_lead": true, "worker": true, "reviewer": true, "synthesizer": true}
	}
	return map[string]bool{"commander": true}
}

func summarise(res *nexus.Result, model string, rep int, seed int64) RunSummary {
	s := RunSummary{Contender: model, Repeat: rep, Seed: seed, Dir: res.Dir, SealedHash: res.SealedHash, Bundles: map[string]BundleSummary{},
		Unscored:       map[string]UnscoredBundle{},
		RunInputTokens: res.Telemetry.InputTokens, RunOutputTokens: res.Telemetry.OutputTokens, RunCostUSD: res.Telemetry.CostUSD,
		RunUnpriced: res.Telemetry.UnpricedModels,
		RunFailures: res.Telemetry.FailureClasses, Failures: map[string]int{}}
	planned := map[string]bool{}
	for _, d := range res.Decomposition.Domains {
		planned[d.Name] = true
	}
	for _, b := range res.Bundles {
		planned[b.Domain] = true
	}
	s.Planned = slices.Sorted(maps.Keys(planned))
	var vel, rev, dis []float64
	for _, b := range res.Bundles {
		if why := salvagedBy(b); why != "" {
			u := UnscoredBundle{Status: StatusSalvaged, Error: why}
			if b.Initial != nil {
				score := b.Initial.Score
				u.JudgedScore = &score
			}
			s.Unscored[b.Domain] = u
			continue
		}
		if b.Initial == nil || b.Final == nil {
			u := UnscoredBundle{Status: StatusUnjudged, FailureClass: string(b.FailureClass), Error: b.Error}
			if b.Failed {
				u.Status = StatusFailed
			}
			s.Unscored[b.Domain] = u
			continue
		}
		bs := BundleSummary{Initial: b.Initial.Score, Final: b.Final.Score, Level: string(b.Initial.Level), Verdicts: map[string]bool{}, Category: map[string]string{}}
		if b.Gate != nil {
			bs.Gate = b.Gate.Action
		}
		for _, v := range b.Initial.Verdicts {
			bs.Verdicts[v.ID] = v.Status == "pass"
			bs.Category[v.ID] = v.Category
		}
		s.Bundles[b.Domain] = bs
		if b.Hardening != nil && b.Hardening.Cycles > 0 {
			vel = append(vel, b.Hardening.Velocity)
		}
		rev = append(rev, b.Review.Score)
		dis = append(dis, b.Initial.Disagreement)
	}
	// A planned domain without an outcome never got a commander.
	for d := range planned {
		if _, ok := s.Bundles[d]; !ok {
			if _, ok := s.Unscored[d]; !ok {
				s.Unscored[d] = UnscoredBundle{Status: StatusFailed, Error: "no bundle outcome"}
			}
		}
	}
	s.Score = Score(s)
	s.Velocity, s.Hardened, s.ReviewScore, s.Disagreement = stats.Mean(vel), len(vel), stats.Mean(rev), stats.Mean(dis)
	if sb := res.Sandbox; sb != nil {
		s.Toxicity, s.QualityGap = sb.Overall.Toxicity, sb.Overall.QualityGap
	}
	return s
}

// salvagedBy says why a bundle is not the contender's own work ("" when
// it is): it was salvaged from the workers' finished atoms (the commander's
// assembly failed, or the cost ceiling stopped it), or its assembly ended on
// the recovery ladder's degrade step.
func salvagedBy(b *nexus.BundleOutcome) string {
	for _, d := range b.Degraded {
		if d.Unit == commanders.UnitBundle {
			return d.Detail
		}
	}
	if b.Salvaged {
		return "salvaged from the workers' finished atoms: the commander did not assemble it"
	}
	return ""
}

// callTally counts the contender's own calls as the run makes them: those
// made by model in one of the roles compared. Calls of the same model in
// other roles (say, when the judge or the workers are that model too) are
// not the contender's and are left out.
type callTally struct {
	model string
	roles map[string]bool

	mu        sync.Mutex
	calls     int
	in, out   int
	parts     TokenParts
	cost      float64
	unpriced  bool // some call had no known price
	failures  map[string]int
	latencies []float64
}

// TokenParts are the parts of a contender's tokens its provider reported
// (providers.Usage: reasoning output, input read from and written to the
// prompt cache, each part of the totals) and its calls that read from the
// prompt cache; each absent when none was reported.
type TokenParts struct {
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	PromptCacheHits  int `json:"prompt_cache_hits,omitempty"`
}

func (p *TokenParts) add(o TokenParts) {
	p.ReasoningTokens += o.ReasoningTokens
	p.CacheReadTokens += o.CacheReadTokens
	p.CacheWriteTokens += o.CacheWriteTokens
	p.PromptCacheHits += o.PromptCacheHits
}

func newCallTally(ref providers.Ref, roles map[string]bool) *callTally {
	return &callTally{model: ref.String(), roles: roles, failures: map[string]int{}} // as the events write it
}

// Observe implements events.Observer.
func (t *callTally) Observe(e events.Event) {
	c, ok := e.Data.(events.CallData)
	if !ok || e.Model != t.model || !t.roles[e.Role] {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls++
	t.in += c.InputTokens
	t.out += c.OutputTokens
	hit := 0
	if c.CacheReadTokens > 0 {
		hit = 1
	}
	t.parts.add(TokenParts{ReasoningTokens: c.ReasoningTokens, CacheReadTokens: c.CacheReadTokens, CacheWriteTokens: c.CacheWriteTokens, PromptCacheHits: hit})
	if c.CostUSD != nil {
		t.cost += *c.CostUSD
	}
	t.unpriced = t.unpriced || c.Unpriced
	if c.FailureClass != "" {
		t.failures[c.FailureClass]++
	}
	t.latencies = append(t.latencies, c.LatencyMS)
}

// addTo adds the tally to s.
func (t *callTally) addTo(s *RunSummary) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s.Calls += t.calls
	s.InputTokens += t.in
	s.OutputTokens += t.out
	s.TokenParts.add(t.parts)
	s.CostUSD += t.cost
	if t.unpriced && !slices.Contains(s.Unpriced, t.model) {
		s.Unpriced = append(s.Unpriced, t.model)
	}
	for c, n := range t.failures {
		s.Failures[c] += n
	}
	s.LatenciesMS = append(s.LatenciesMS, t.latencies...)
	sort.Float64s(s.LatenciesMS)
}

// plannedOf is every bundle domain of a run: planned, judged or unscored
// (a summary may lack Planned).
func plannedOf(s RunSummary) []string {
	set := map[string]bool{}
	for _, d := range s.Planned {
		set[d] = true
	}
	for d := range s.Bundles {
		set[d] = true
	}
	for d := range s.Unscored {
		set[d] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// Score is a run's Shadow Score over every planned bundle: the mean of the
// judged bundles' initial scores, each bundle that failed or was not judged
// counting as 100 (every sealed criterion failed). A run that planned
// nothing scores 100: it delivered nothing.
func Score(s RunSummary) float64 {
	planned := plannedOf(s)
	if len(planned) == 0 {
		return 100
	}
	var sum float64
	for _, d := range planned {
		if b, ok := s.Bundles[d]; ok {
			sum += b.Initial
		} else {
			sum += 100
		}
	}
	return sum / float64(len(planned))
}
