package compare_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/nexus/compare"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/openai"
)

func options(t *testing.T, models ...string) compare.Options {
	t.Helper()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	mission, err := os.ReadFile("../../examples/missions/api-design.md")
	if err != nil {
		t.Fatal(err)
	}
	// Every contender's run at ss-50 with three workers per commander and
	// two reviewers, not fifteen and three: the tests compare contenders
	// (ranks, tiers, resumes, cache, evidence), which the same domains,
	// criteria and bundles decide; the other workers add more of the same
	// atoms, at a cost the whole package paid many times over.
	sc := cfg.Scales["ss-50"]
	sc.WorkersPerCommander, sc.Reviewers = 3, 2
	cfg.Scales["ss-50"] = sc
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{})
	return compare.Options{Config: cfg, Registry: reg, Mission: string(mission), MissionName: "api-design", Models: models,
		Repeats: 5, Scale: "ss-50", Seed: 42, Out: filepath.Join(t.TempDir(), "cmp")}
}

// behind serves o's openai-compatible contenders from the OpenAI-compatible
// server at url.
func behind(o *compare.Options, url string) {
	openai.Register(o.Registry)
	k := o.Config.Providers["openai-compatible"]
	k.BaseURL = url + "/v1"
	o.Config.Providers["openai-compatible"] = k
}

func stats(r *compare.Report, model string) compare.ContenderStats {
	for _, c := range r.Contenders {
		if c.Model == model {
			return c
		}
	}
	return compare.ContenderStats{}
}

func TestRankingUnderOneEnvelope(t *testing.T) {
	t.Parallel()
	o := options(t, "mock:honest", "mock:sloppy", "mock:deceptive", "mock:sloppy")
	r, err := compare.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range r.Runs {
		if run.SealedHash != r.SealedHash {
			t.Fatalf("run %s/%d judged against %s, not %s", run.Contender, run.Repeat, run.SealedHash, r.SealedHash)
		}
	}
	if len(r.Runs) != 20 {
		t.Fatalf("runs = %d", len(r.Runs))
	}
	h, s, d := stats(r, "mock:honest"), stats(r, "mock:sloppy"), stats(r, "mock:deceptive")
	if !(h.Rank < s.Rank && s.Rank < d.Rank) {
		t.Errorf("ranking honest %d sloppy %d deceptive %d", h.Rank, s.Rank, d.Rank)
	}
	if h.CI95.Overlaps(s.CI95) || s.CI95.Overlaps(d.CI95) {
		t.Errorf("intervals overlap: honest %+v sloppy %+v deceptive %+v", h.CI95, s.CI95, d.CI95)
	}
	for _, p := range r.Pairwise {
		copies := (p.First == "mock:sloppy" && p.Second == "mock:sloppy#2") || (p.Second == "mock:sloppy" && p.First == "mock:sloppy#2")
		if copies && p.Distinguishable {
			t.Errorf("two copies of one persona reported distinguishable: %+v", p)
		}
		if (p.First == "mock:honest" && p.Second == "mock:deceptive") && (!p.Distinguishable || p.Better != "mock:honest") {
			t.Errorf("honest vs deceptive: %+v", p)
		}
	}
	if !h.Advisory || !strings.Contains(h.AdvisoryReason, "judge") {
		t.Errorf("a contender of the judge's family must be advisory: %+v", h.AdvisoryReason)
	}
	html, err := os.ReadFile(filepath.Join(o.Out, "compare.html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(html), "<svg") < 4 {
		t.Error("compare.html lacks its four charts")
	}
	if m := regexp.MustCompile(`(src|href)="https?://`).FindString(string(html)); m != "" {
		t.Errorf("compare.html loads from the network: %s", m)
	}
	for _, f := range []string{"compare.json", "compare.md", "runs/mock-deceptive/rep-4/reports/architecture.json", "seal/sealed/envelope.json"} {
		if _, err := os.Stat(filepath.Join(o.Out, f)); err != nil {
			matches, _ := filepath.Glob(filepath.Join(o.Out, "runs/mock-deceptive/rep-4/reports/*.json"))
			if !strings.Contains(f, "reports") || len(matches) == 0 {
				t.Errorf("missing %s", f)
			}
		}
	}
}

func TestResumeCompletesWithoutRepeatingFinishedRuns(t *testing.T) {
	t.Parallel()
	o := options(t, "mock:honest", "mock:sloppy")
	o.Repeats = 3
	o.Resume = true
	o.Parallel = 1 // one run at a time, so "half way" is exactly three runs
	ctx, cancel := context.WithCancel(t.Context())
	o.Progress = func(p compare.Progress) {
		if p.Done == 3 {
			cancel() // killed half way
		}
	}
	if _, err := compare.Run(ctx, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancellation", err)
	}
	resumed, fresh := 0, 0
	o.Progress = func(p compare.Progress) {
		if p.Cached {
			resumed++
		} else {
			fresh++
		}
	}
	r, err := compare.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if resumed != 3 || fresh != 3 || len(r.Runs) != 6 {
		t.Errorf("resumed %d fresh %d runs %d, want 3 / 3 / 6", resumed, fresh, len(r.Runs))
	}
	entries, _ := os.ReadDir(filepath.Join(o.Out, "cache"))
	if len(entries) == 0 {
		t.Error("--resume did not cache LLM calls")
	}
}

func TestContendersBehindMockServe(t *testing.T) {
	t.Parallel()
	h, err := mock.NewServer(mock.ServerOptions{Persona: mock.Honest})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	local := options(t, "mock:sloppy")
	local.Repeats = 3
	lr, err := compare.Run(t.Context(), local)
	if err != nil {
		t.Fatal(err)
	}
	remote := options(t, "openai-compatible:sloppy")
	remote.Repeats = 3
	behind(&remote, srv.URL)
	rr, err := compare.Run(t.Context(), remote)
	if err != nil {
		t.Fatal(err)
	}
	if lr.SealedHash != rr.SealedHash {
		t.Errorf("envelopes differ")
	}
	a, b := lr.Contenders[0], rr.Contenders[0]
	if a.Mean != b.Mean || a.CI95 != b.CI95 {
		t.Errorf("in-process %v %+v vs HTTP %v %+v", a.Mean, a.CI95, b.Mean, b.CI95)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	o := options(t)
	if _, err := compare.Run(t.Context(), o); !errors.Is(err, config.ErrBadInput) {
		t.Errorf("no contenders: %v", err)
	}
	o = options(t, "nonsense")
	if _, err := compare.Run(t.Context(), o); !errors.Is(err, config.ErrBadInput) {
		t.Errorf("bad model: %v", err)
	}
}

func TestJudgeSamplesReportDisagreement(t *testing.T) {
	t.Parallel()
	o := options(t, "mock:honest")
	o.Repeats = 2
	o.Judge = "mock:noisy"
	o.JudgeSamples = 3
	r, err := compare.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Contenders[0].JudgeDisagreement; d <= 0 {
		t.Errorf("a noisy judge sampled 3 times should disagree sometimes: D = %v", d)
	}
	o2 := options(t, "mock:honest")
	o2.Repeats = 2
	o2.JudgeSamples = 3
	r2, err := compare.Run(t.Context(), o2)
	if err != nil {
		t.Fatal(err)
	}
	if d := r2.Contenders[0].JudgeDisagreement; d != 0 {
		t.Errorf("a deterministic judge disagreed with itself: D = %v", d)
	}
}

func TestParallelContendersMatchSequentialAndResume(t *testing.T) {
	t.Parallel()
	models := []string{"mock:honest", "mock:sloppy", "mock:deceptive"}
	seq := options(t, models...)
	seq.Repeats, seq.Parallel = 3, 1
	want, err := compare.Run(t.Context(), seq)
	if err != nil {
		t.Fatal(err)
	}

	par := options(t, models...)
	par.Repeats, par.Resume = 3, true
	ctx, cancel := context.WithCancel(t.Context())
	par.Progress = func(p compare.Progress) {
		if p.Done == 4 {
			cancel() // killed while the second repeat's contenders run side by side
		}
	}
	if _, err := compare.Run(ctx, par); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancellation", err)
	}
	finished, _ := filepath.Glob(filepath.Join(par.Out, "runs", "*", "rep-*", "run-summary.json"))
	if len(finished) < 4 || len(finished) == 9 {
		t.Fatalf("%d runs finished before the interruption, want 4..8", len(finished))
	}
	resumed := 0
	par.Progress = func(p compare.Progress) {
		if p.Cached {
			resumed++
		}
	}
	got, err := compare.Run(t.Context(), par)
	if err != nil {
		t.Fatal(err)
	}
	if resumed != len(finished) {
		t.Errorf("resumed %d runs, %d had finished", resumed, len(finished))
	}
	// Side by side or one after another, every run is the same run.
	type key struct {
		contender string
		repeat    int
	}
	scores := func(r *compare.Report) map[key]float64 {
		m := map[key]float64{}
		for _, run := range r.Runs {
			m[key{run.Contender, run.Repeat}] = run.Score
		}
		return m
	}
	if d := cmp.Diff(scores(want), scores(got), cmp.AllowUnexported(key{})); d != "" {
		t.Errorf("parallel runs differ from sequential ones (-sequential +parallel)\n%s", d)
	}
	if want.SealedHash != got.SealedHash {
		t.Errorf("sealed hash %s vs %s", want.SealedHash, got.SealedHash)
	}
	for _, m := range models {
		if a, b := stats(want, m), stats(got, m); a.Rank != b.Rank || a.Mean != b.Mean {
			t.Errorf("%s: sequential rank %d mean %v, parallel rank %d mean %v", m, a.Rank, a.Mean, b.Rank, b.Mean)
		}
	}
}

func TestContenderCallsAreItsOwnOnly(t *testing.T) {
	t.Parallel()
	// The default config runs every other role (workers, reviewers, judge)
	// on mock:honest too; honest's calls, tokens, cost and latencies must be
	// its commander calls only, like sloppy's.
	o := options(t, "mock:honest", "mock:sloppy")
	o.Repeats = 2
	r, err := compare.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	h, s := stats(r, "mock:honest"), stats(r, "mock:sloppy")
	if h.Calls == 0 || h.Calls != s.Calls {
		t.Errorf("commander calls: honest %d, sloppy %d; want the same non-zero count", h.Calls, s.Calls)
	}
	for _, run := range r.Runs {
		if len(run.LatenciesMS) != run.Calls {
			t.Errorf("%s/%d: %d latencies for %d calls", run.Contender, run.Repeat, len(run.LatenciesMS), run.Calls)
		}
		if run.InputTokens >= run.RunInputTokens || run.CostUSD >= run.RunCostUSD {
			t.Errorf("%s/%d: contender tokens %d / cost %v not below the run's %d / %v", run.Contender, run.Repeat, run.InputTokens, run.CostUSD, run.RunInputTokens, run.RunCostUSD)
		}
	}
	all := options(t, "mock:sloppy")
	all.Repeats, all.Roles = 1, compare.RolesAll
	ra, err := compare.Run(t.Context(), all)
	if err != nil {
		t.Fatal(err)
	}
	if c := ra.Contenders[0]; c.Calls <= s.Calls/2 {
		t.Errorf("--roles all: sloppy made %d calls in one repeat, commanders only %d in two", c.Calls, s.Calls)
	}
}

func TestCachedCallsAreStillRecorded(t *testing.T) {
	t.Parallel()
	// A second compare over the same cache answers every call from it; the
	// contenders' tokens, cost and latencies must still be there, the same.
	cache := filepath.Join(t.TempDir(), "cache")
	first := options(t, "mock:sloppy")
	first.Repeats, first.CacheDir = 2, cache
	a, err := compare.Run(t.Context(), first)
	if err != nil {
		t.Fatal(err)
	}
	second := options(t, "mock:sloppy")
	second.Repeats, second.CacheDir = 2, cache
	b, err := compare.Run(t.Context(), second)
	if err != nil {
		t.Fatal(err)
	}
	x, y := a.Contenders[0], b.Contenders[0]
	if x.Calls == 0 || x.Calls != y.Calls || x.InputTokens != y.InputTokens || math.Abs(x.CostUSD-y.CostUSD) > 1e-12 || x.RunInputTokens != y.RunInputTokens {
		t.Errorf("fresh: %d calls %d tokens $%v run %d; cached: %d calls %d tokens $%v run %d",
			x.Calls, x.InputTokens, x.CostUSD, x.RunInputTokens, y.Calls, y.InputTokens, y.CostUSD, y.RunInputTokens)
	}
	if d := cmp.Diff(a.Runs[0].LatenciesMS, b.Runs[0].LatenciesMS); d != "" {
		t.Errorf("cached calls should carry the original latencies (-fresh +cached)\n%s", d)
	}
	ev, err := os.ReadFile(filepath.Join(b.Runs[0].Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ev), `"cached":true`) {
		t.Error("cached calls are not marked in events.jsonl")
	}
}

// proseServer is an OpenAI-compatible server that answers every request in
// prose, never the JSON the pipeline asks for.
func proseServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "model": "prose",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "Sure! Here is a thoughtful answer in plain prose, with no JSON at all."}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 12, "total_tokens": 22}})
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestContenderThatProducesNothingIsRankedLastAndCounted(t *testing.T) {
	t.Parallel()
	// The repro: a contender behind a server that answers prose
	// produced no bundle at all. It used to read "shadow 0.0%" and share
	// tier 1 with a working contender.
	srv := proseServer(t)
	o := options(t, "mock:sloppy", "openai-compatible:prose")
	o.Repeats = 2
	behind(&o, srv.URL)
	r, err := compare.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	s, p := stats(r, "mock:sloppy"), stats(r, "openai-compatible:prose")
	if s.BundlesPlanned == 0 || s.BundlesFailed != 0 || s.BundlesJudged != s.BundlesPlanned || s.NoResult {
		t.Fatalf("sloppy: planned %d judged %d failed %d, want every bundle judged", s.BundlesPlanned, s.BundlesJudged, s.BundlesFailed)
	}
	if p.BundlesPlanned != s.BundlesPlanned || p.BundlesFailed != p.BundlesPlanned || p.BundlesJudged != 0 || p.FailureRate != 1 || !p.NoResult {
		t.Errorf("prose: planned %d judged %d failed %d rate %v no result %v; want all %d failed, no result",
			p.BundlesPlanned, p.BundlesJudged, p.BundlesFailed, p.FailureRate, p.NoResult, s.BundlesPlanned)
	}
	// Every failed bundle failed every sealed criterion: the prose
	// contender's per-repeat scores are 100, and it passed no criterion.
	for _, sc := range p.Scores {
		if sc != 100 {
			t.Errorf("prose per-repeat scores %v, want 100 each", p.Scores)
			break
		}
	}
	for id, rate := range p.CriterionPassRate {
		if rate != 0 {
			t.Errorf("prose passed %s at rate %v", id, rate)
		}
	}
	// The canary of each repeat failed on prose (unparseable or
	// schema_invalid); with waves (docs/waves.md) the other commanders were
	// then not launched.
	invalid := p.BundleFailures["unparseable"] + p.BundleFailures["schema_invalid"]
	if len(p.CriterionPassRate) == 0 || invalid == 0 || invalid+p.BundleFailures[string(nexus.ClassNotLaunched)] != p.BundlesFailed {
		t.Errorf("prose: pass rates %v, bundle failure classes %v", p.CriterionPassRate, p.BundleFailures)
	}
	pr := r.Pairwise[0]
	if !pr.Distinguishable || pr.Better != "mock:sloppy" || !cmp.Equal(pr.NoResult, []string{"openai-compatible:prose"}) {
		t.Errorf("pair: %+v", pr)
	}
	if s.Rank != 1 || s.Tier != 1 || p.Rank != 2 || p.Tier != 0 || len(s.NotDistinguishable) != 0 || len(p.NotDistinguishable) != 0 {
		t.Errorf("sloppy rank %d tier %d ≈ %v; prose rank %d tier %d ≈ %v", s.Rank, s.Tier, s.NotDistinguishable, p.Rank, p.Tier, p.NotDistinguishable)
	}
	if r.Complete() {
		t.Error("a comparison with failed bundles reported complete")
	}
	for _, f := range []string{"compare.md", "compare.html"} {
		b, err := os.ReadFile(filepath.Join(o.Out, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "no result") || !strings.Contains(string(b), "failed") {
			t.Errorf("%s does not show the contender that produced nothing", f)
		}
	}
	var j struct {
		Contenders []struct {
			Model       string   `json:"model"`
			Failed      int      `json:"bundles_failed"`
			Planned     int      `json:"bundles_planned"`
			FailureRate float64  `json:"failure_rate"`
			NoResult    bool     `json:"no_result"`
			Mean        *float64 `json:"mean"`
		} `json:"contenders"`
	}
	b, err := os.ReadFile(filepath.Join(o.Out, "compare.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	last := j.Contenders[len(j.Contenders)-1]
	if last.Model != "openai-compatible:prose" || last.Failed != last.Planned || last.Planned == 0 || last.FailureRate != 1 || !last.NoResult || last.Mean != nil {
		t.Errorf("compare.json's last contender: %+v", last)
	}
}

// A run finished without a workspace is not reused on --resume once
// --workspace is given: it measured no evidence, and reusing it would show
// the contender as having cited nothing.
func TestResumeRedoesRunsMadeWithoutTheWorkspace(t *testing.T) {
	t.Parallel()
	o := options(t, "mock:honest")
	o.Repeats, o.Resume = 1, true
	if _, err := compare.Run(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	o.Workspace = "../../examples/workspaces/tinynotes"
	cached := 0
	o.Progress = func(p compare.Progress) {
		if p.Cached {
			cached++
		}
	}
	r, err := compare.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if cached != 0 {
		t.Errorf("%d run(s) made without the workspace were reused", cached)
	}
	e := stats(r, "mock:honest").Evidence
	if e == nil || e.Repeats != 1 || e.Cited == 0 {
		t.Errorf("evidence = %+v, want one repeat's citations", e)
	}
}

// A contender behind a server without a known price used to show $0.0000:
// its cost is unknown, shown as "—" (never summed as 0), the whole run's
// cost is a lower bound, and the reports say the ceiling cannot act on it.
// A priced pricing: entry makes it known again.
func TestUnpricedContenderCostIsNeverZero(t *testing.T) {
	t.Parallel()
	h, err := mock.NewServer(mock.ServerOptions{Persona: mock.Honest})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	o := options(t, "mock:sloppy", "openai-compatible:sloppy")
	o.Repeats = 2
	behind(&o, srv.URL)
	r, err := compare.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	local, remote := stats(r, "mock:sloppy"), stats(r, "openai-compatible:sloppy")
	if len(local.Unpriced) != 0 || local.CostUSD <= 0 {
		t.Errorf("mock:sloppy: cost %v unpriced %v; want a priced cost", local.CostUSD, local.Unpriced)
	}
	if d := cmp.Diff([]string{"openai-compatible:sloppy"}, remote.Unpriced); d != "" || remote.CostUSD != 0 {
		t.Errorf("openai-compatible:sloppy: cost %v, unpriced (-want +got)\n%s", remote.CostUSD, d)
	}
	if d := cmp.Diff([]string{"openai-compatible:sloppy"}, remote.RunUnpriced); d != "" || remote.RunCostUSD <= 0 {
		t.Errorf("its whole runs: cost %v (want the priced judge's), unpriced (-want +got)\n%s", remote.RunCostUSD, d)
	}
	md, err := os.ReadFile(filepath.Join(o.Out, "compare.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"— (no price for openai-compatible:sloppy)", "≥ $", "**Unpriced**", "cost ceiling cannot act"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("compare.md lacks %q", want)
		}
	}
	var row string
	for _, l := range strings.Split(r.Table(), "\n") {
		if strings.Contains(l, "openai-compatible:sloppy") && !strings.HasPrefix(l, "[") {
			row = l
		}
	}
	if strings.Contains(row, "0.0000") || !strings.Contains(row, "—") {
		t.Errorf("table row of the unpriced contender: %q", row)
	}

	// Priced under pricing:, the same contender has a cost again.
	in, out := 1.0, 3.0
	p := options(t, "openai-compatible:sloppy")
	p.Repeats = 1
	behind(&p, srv.URL)
	p.Config.Pricing = map[string]config.ModelPrice{"openai-compatible:sloppy": {InputPerMTok: &in, OutputPerMTok: &out}}
	pr, err := compare.Run(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if c := pr.Contenders[0]; len(c.Unpriced) != 0 || c.CostUSD <= 0 {
		t.Errorf("priced under pricing:: cost %v unpriced %v", c.CostUSD, c.Unpriced)
	}
}

// The done-when over the tinynotes workspace: honest alone in tier
// 1; sloppy and deceptive, whose citations are fabricated, flagged
// untrusted with their fabrication shown, ranked after it.
func TestTinynotesHonestAloneInTierOne(t *testing.T) {
	t.Parallel()
	o := options(t, "mock:deceptive", "mock:sloppy", "mock:honest")
	mission, err := os.ReadFile("../../examples/missions/security-review-tinynotes.md")
	if err != nil {
		t.Fatal(err)
	}
	o.Mission, o.MissionName, o.MissionDir = string(mission), "security-review-tinynotes", "../../examples/missions"
	o.Repeats = 2
	r, err := compare.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	var tier1 []string
	for _, c := range r.Contenders {
		if c.Tier == 1 {
			tier1 = append(tier1, c.Model)
		}
		if c.Evidence == nil || c.Evidence.Cited == 0 {
			t.Errorf("%s: no evidence measured over the workspace", c.Model)
		}
	}
	if d := cmp.Diff([]string{"mock:honest"}, tier1); d != "" {
		t.Errorf("tier 1 (-want +got)\n%s", d)
	}
	for _, m := range []string{"mock:sloppy", "mock:deceptive"} {
		if c := stats(r, m); !c.Untrusted || c.Evidence.FabricationRate == nil || *c.Evidence.FabricationRate < 0.5 {
			t.Errorf("%s: untrusted %v (%s)", m, c.Untrusted, c.UntrustedReason)
		}
	}
	if h := stats(r, "mock:honest"); h.Untrusted || h.Rank != 1 {
		t.Errorf("honest: rank %d untrusted %v", h.Rank, h.Untrusted)
	}
}
