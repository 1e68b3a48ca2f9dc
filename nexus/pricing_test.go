package nexus_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

// A run whose models have no known price does not sum their calls as $0:
// telemetry, the events and report.md mark the cost as a lower bound and
// name the unpriced models, and the plan lists them for the briefing.
func TestUnpricedModelsAreNeverSummedAsZero(t *testing.T) {
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
		cfg.Pricing = map[string]nexus.ModelPrice{"mock:sloppy": {InputPerMTok: &in, OutputPerMTok: &out}}
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
		if c, ok := e.Data.(nexus.CallData); ok && c.Unpriced {
			unpricedEvents++
			if e.Model != "mock:honest" {
				t.Errorf("a call of %s marked unpriced", e.Model)
			}
		}
	}
	if unpricedEvents != tel.UnpricedCalls {
		t.Errorf("%d llm_call events marked unpriced, telemetry counts %d", unpricedEvents, tel.UnpricedCalls)
	}
	md, err := os.ReadFile(filepath.Join(res.Dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "| cost | " + nexus.FormatCost(tel.CostUSD, tel.UnpricedModels) + " of $"; !strings.Contains(string(md), want) || !strings.Contains(want, "≥ $") {
		t.Errorf("report.md lacks %q", want)
	}
}
