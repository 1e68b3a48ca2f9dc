package nexus_test

import (
	"context"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
)

// A run whose models have no known price does not sum their calls as $0:
// telemetry, the events and report.md mark the cost as a lower bound and
// name the unpriced models, and the plan lists them for the briefing.
func TestUnpricedModelsAreNeverSummedAsZero(t *testing.T) {
	t.Parallel()
	in, out := 1.0, 2.0
	res, err := runMission(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
		cfg := *o.Config
		cfg.Providers = map[string]providers.KindConfig{}
		for k, v := range o.Config.Providers {
			cfg.Providers[k] = v
		}
		mk := cfg.Providers["mock"]
		mk.InputPerMTok, mk.OutputPerMTok = 0, 0 // a kind without a list price, like openai-compatible
		cfg.Providers["mock"] = mk
		cfg.Pricing = map[string]config.ModelPrice{"mock:sloppy": {InputPerMTok: &in, OutputPerMTok: &out}}
		o.Config = &cfg
		o.Models = map[string][]providers.Ref{"judge": {ref(t, "mock:sloppy")}}
	})
	if err != nil {
		t.Fatal(err)
	}
	tel := res.Telemetry
	if d := cmp.Diff([]string{"mock:honest"}, res.Plan.Unpriced); d != "" {
		t.Errorf("plan's unpriced models (-want +got)\n%s", d)
	}
	if d := cmp.Diff([]string{"mock:honest"}, tel.UnpricedModels); d != "" {
		t.Errorf("telemetry's unpriced models (-want +got)\n%s", d)
	}
	honest, judge := tel.ByModel["mock:honest"], tel.ByModel["mock:sloppy"]
	// The unpriced model's cost is absent, not $0.
	if tel.UnpricedCalls == 0 || honest.UnpricedCalls != tel.UnpricedCalls || honest.CostUSD != nil || judge.UnpricedCalls != 0 {
		t.Errorf("unpriced calls %d; honest %+v; judge %+v", tel.UnpricedCalls, honest, judge)
	}
	if judge.CostUSD == nil || *judge.CostUSD <= 0 || math.Abs(tel.CostUSD-*judge.CostUSD) > 1e-12 {
		t.Errorf("run cost %v: want the priced judge's calls only (%v)", tel.CostUSD, judge.CostUSD)
	}
	unpricedEvents := 0
	for _, e := range res.Events {
		if c, ok := e.Data.(events.CallData); ok && c.Unpriced {
			unpricedEvents++
			if e.Model != "mock:honest" {
				t.Errorf("a call of %s marked unpriced", e.Model)
			}
		}
	}
	if unpricedEvents != tel.UnpricedCalls {
		t.Errorf("%d llm_call events marked unpriced, telemetry counts %d", unpricedEvents, tel.UnpricedCalls)
	}
	// In events.jsonl an unpriced call has no cost at all (not 0), a
	// priced one has its cost.
	raw, err := os.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var unpricedLines, pricedLines int
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.Contains(line, `"kind":"llm_call"`) {
			continue
		}
		switch unpriced, costed := strings.Contains(line, `"unpriced":true`), strings.Contains(line, `"cost_usd":`); {
		case unpriced && costed:
			t.Fatalf("an unpriced call's event has a cost: %s", line)
		case unpriced:
			unpricedLines++
		case costed:
			pricedLines++
		default:
			t.Fatalf("a priced call's event has no cost: %s", line)
		}
	}
	if unpricedLines != tel.UnpricedCalls || pricedLines == 0 {
		t.Errorf("events.jsonl: %d unpriced calls (telemetry: %d), %d priced", unpricedLines, tel.UnpricedCalls, pricedLines)
	}
	md, err := os.ReadFile(filepath.Join(res.Dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "| cost | " + config.FormatCost(tel.CostUSD, tel.UnpricedModels) + " of $"; !strings.Contains(string(md), want) || !strings.Contains(want, "≥ $") {
		t.Errorf("report.md lacks %q", want)
	}
}

// withTokenKinds makes the workers' answers report half their input as read
// from the prompt cache and a quarter of their output as reasoning, and the
// judge's a tenth of its input as written to the cache, as a provider that
// caches and reasons would.
func withTokenKinds(_ providers.Ref, p providers.Provider) providers.Provider {
	return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		resp, err := p.Complete(ctx, req)
		switch req.Caller.Role {
		case "worker":
			resp.Usage.CacheReadTokens = resp.Usage.InputTokens / 2
			resp.Usage.ReasoningTokens = resp.Usage.OutputTokens / 4
		case "judge":
			resp.Usage.CacheWriteTokens = resp.Usage.InputTokens / 10
		}
		return resp, err
	})
}

// Every call's event carries its reasoning and cache tokens and its cost,
// each kind of token priced at its own rate; telemetry sums them per role,
// per model and in all, counts the prompt cache's hits per role with the
// share of input read from it, and names the price each model was charged.
func TestCallEventsAndTelemetryCarryTokenKinds(t *testing.T) {
	t.Parallel()
	in, out, cacheRead, reasoning := 1.0, 4.0, 0.1, 8.0
	price := config.ModelPrice{InputPerMTok: &in, OutputPerMTok: &out, CacheReadPerMTok: &cacheRead, ReasoningPerMTok: &reasoning,
		AsOf: "2026-11-27", Source: "https://example.com/prices"}
	res, err := runMissionWith(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "mock:honest", []nexus.Option{nexus.WithProviderWrap(withTokenKinds)},
		func(o *nexus.Options) {
			cfg := *o.Config
			cfg.Pricing = map[string]config.ModelPrice{"mock:honest": price}
			o.Config = &cfg
		})
	if err != nil {
		t.Fatal(err)
	}
	charged := config.Price{InputPerMTok: 1, OutputPerMTok: 4, CacheReadPerMTok: 0.1, CacheWritePerMTok: 1, ReasoningPerMTok: 8,
		CacheWriteAssumed: true, Known: true}
	type sums struct{ calls, in, out, reasoning, cacheRead, cacheWrite, hits int }
	byRole := map[string]*sums{}
	var total sums
	var cost float64
	for _, e := range res.Events {
		c, ok := e.Data.(events.CallData)
		if !ok {
			continue
		}
		u := providers.Usage{InputTokens: c.InputTokens, OutputTokens: c.OutputTokens, ReasoningTokens: c.ReasoningTokens,
			CacheReadTokens: c.CacheReadTokens, CacheWriteTokens: c.CacheWriteTokens}
		if c.CostUSD == nil || math.Abs(*c.CostUSD-charged.Cost(u)) > 1e-12 {
			t.Fatalf("%s call: cost %v, want %v for %+v", e.Role, c.CostUSD, charged.Cost(u), u)
		}
		cost += *c.CostUSD
		s := byRole[e.Role]
		if s == nil {
			s = &sums{}
			byRole[e.Role] = s
		}
		for _, x := range []*sums{s, &total} {
			x.calls++
			x.in += c.InputTokens
			x.out += c.OutputTokens
			x.reasoning += c.ReasoningTokens
			x.cacheRead += c.CacheReadTokens
			x.cacheWrite += c.CacheWriteTokens
			if c.CacheReadTokens > 0 {
				x.hits++
			}
		}
	}
	w := byRole["worker"]
	if w == nil || w.cacheRead == 0 || w.reasoning == 0 || w.hits == 0 || byRole["judge"] == nil || byRole["judge"].cacheWrite == 0 {
		t.Fatalf("the events lack the wrapped provider's token kinds: worker %+v, judge %+v", w, byRole["judge"])
	}
	tel := res.Telemetry
	gotTotal := sums{tel.Calls, tel.InputTokens, tel.OutputTokens, tel.ReasoningTokens, tel.CacheReadTokens, tel.CacheWriteTokens, tel.PromptCacheHits}
	if d := cmp.Diff(total, gotTotal, cmp.AllowUnexported(sums{})); d != "" {
		t.Errorf("telemetry's totals against the events' (-want +got)\n%s", d)
	}
	if math.Abs(tel.CostUSD-cost) > 1e-12 {
		t.Errorf("telemetry cost %v, the events' sum %v", tel.CostUSD, cost)
	}
	for role, want := range byRole {
		c := tel.ByRole[role]
		got := sums{c.Calls, c.InputTokens, c.OutputTokens, c.ReasoningTokens, c.CacheReadTokens, c.CacheWriteTokens, c.PromptCacheHits}
		if d := cmp.Diff(*want, got, cmp.AllowUnexported(sums{})); d != "" {
			t.Errorf("by_role[%s] (-want +got)\n%s", role, d)
		}
		switch {
		case want.cacheRead > 0 && (c.CacheReadShare == nil || math.Abs(*c.CacheReadShare-float64(want.cacheRead)/float64(want.in)) > 1e-12):
			t.Errorf("by_role[%s]: cache read share %v, want %d/%d", role, c.CacheReadShare, want.cacheRead, want.in)
		case want.cacheRead == 0 && c.CacheReadShare != nil:
			t.Errorf("by_role[%s]: cache read share %v without a cache read: 0 would claim a measurement", role, *c.CacheReadShare)
		}
	}
	m := tel.ByModel["mock:honest"]
	if m.CacheReadTokens != total.cacheRead || m.ReasoningTokens != total.reasoning || m.PromptCacheHits != total.hits {
		t.Errorf("by_model[mock:honest] %+v; want the run's totals %+v", m, total)
	}
	want := runfiles.PriceUsed{InputPerMTok: 1, OutputPerMTok: 4, CacheReadPerMTok: 0.1, CacheWritePerMTok: 1, ReasoningPerMTok: 8,
		Origin: config.PriceFromConfig, AsOf: "2026-11-27", Source: "https://example.com/prices", Assumed: []string{"cache_write"}}
	if d := cmp.Diff(map[string]runfiles.PriceUsed{"mock:honest": want}, tel.Prices); d != "" {
		t.Errorf("telemetry's prices (-want +got)\n%s", d)
	}
}

// The briefing's warning names every model of the roster without a known
// price, the judge's and the seal author's too: the cost ceiling cannot act
// on their calls either.
func TestCeilingWarningNamesUnpricedJudgeAndSealAuthor(t *testing.T) {
	t.Parallel()
	in, out := 1.0, 2.0
	o := nexus.Options{Config: defaultConfig(t), Registry: mockRegistry(mock.Options{}), Mission: loadMission(t, "test-gap-hunt.md"), MissionName: "test",
		Scale: "ss-50", Provider: ref(t, "mock:honest"), OutDir: filepath.Join(t.TempDir(), "run")}
	cfg := *o.Config
	cfg.Providers = maps.Clone(o.Config.Providers)
	mk := cfg.Providers["mock"]
	mk.InputPerMTok, mk.OutputPerMTok = 0, 0 // no kind-level price
	cfg.Providers["mock"] = mk
	cfg.Pricing = map[string]config.ModelPrice{"mock:honest": {InputPerMTok: &in, OutputPerMTok: &out}}
	o.Config = &cfg
	o.Models = map[string][]providers.Ref{"judge": {ref(t, "mock:sloppy")}, "seal_author": {ref(t, "mock:deceptive")}}
	m, err := nexus.Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	p := m.Plan()
	if d := cmp.Diff([]string{"mock:deceptive", "mock:sloppy"}, p.Unpriced); d != "" {
		t.Errorf("plan's unpriced models (-want +got)\n%s", d)
	}
	if w := config.CeilingWarning(p.Unpriced); !strings.Contains(w, "mock:deceptive, mock:sloppy: the cost ceiling cannot act") {
		t.Errorf("warning %q does not name the judge's and seal author's models", w)
	}
}
