package sandbox

import (
	"fmt"
	"strings"
	"testing"
)

func TestBridgeMapping(t *testing.T) {
	t.Parallel()
	p, _ := NewProxy(DefaultProxyConfig())
	// 3 of 4 sealed criteria passed → progress 0.5; rework 1 retry + 1 hardening
	// cycle = 2 → 2·0.3²−1 = −0.82; rejections 1 failed criterion + 1 conflict =
	// 2 → −0.68; misuse 1 schema violation + 1 leak = 2 → −0.5; engagement
	// 2·0.75−1 = 0.5. v̂ = 0.4·0.5 + 0.2·(−0.82) + 0.2·(−0.68−0.5)/2 + 0.2·0.5 = 0.018.
	b := BundleInteraction(p, MissionBundle{ID: "b1", Agent: "c1", Scored: true, SealedPassed: 3, SealedTotal: 4, Retries: 1, HardeningCycles: 1,
		ReviewerConflicts: 1, SchemaViolations: 1, LeakHits: 1, ReviewScore: 0.75, Accepted: true, WithinThreshold: true})
	near(t, "bundle v̂", b.VHat, 0.018, 1e-12)
	near(t, "bundle p", b.P, Sigmoid(0.018, 2, 0), 1e-12)
	if b.Initiator != "c1" || b.Counterparty != "nexus" || !b.Accepted || b.GroundTruth != 1 || b.Kind != "bundle" {
		t.Errorf("bundle %+v", b)
	}
	if f := BundleInteraction(p, MissionBundle{ID: "b2", Agent: "c2", Failed: true, Coverage: 1}); f.Observables.TaskProgress != -1 || f.GroundTruth != 0 {
		t.Errorf("a failed, unscored bundle: progress %v ground truth %d", f.Observables.TaskProgress, f.GroundTruth)
	}
	// a complete atom at confidence 0.9 with self score 7.5 is the first golden interaction
	a := AtomInteraction(p, MissionAtom{Agent: "w1", Parent: "c1", Status: "complete", Confidence: 0.9, SelfScore: 7.5})
	near(t, "atom v̂", a.VHat, 0.82, 1e-12)
	near(t, "atom p", a.P, 0.8375349374, 1e-10)
	if f := AtomInteraction(p, MissionAtom{Agent: "w2", Parent: "c1", Status: "failed"}); f.Accepted || f.Observables.TaskProgress != -1 {
		t.Errorf("failed atom %+v", f)
	}
}

func TestBridgeReportsPerModelAndPerAgent(t *testing.T) {
	t.Parallel()
	p, _ := NewProxy(DefaultProxyConfig())
	br := NewBridge(p, DefaultPayoffConfig())
	br.Add(Interaction{ID: "1", Initiator: "c1", Kind: "bundle", P: 0.8, Accepted: true}, "m:a")
	br.Add(Interaction{ID: "2", Initiator: "c1", Kind: "bundle", P: 0.3, Accepted: false}, "m:a")
	br.Add(Interaction{ID: "3", Initiator: "c2", Kind: "bundle", P: 0.4, Accepted: true}, "m:b")
	br.Add(Interaction{ID: "4", Initiator: "c2", Kind: "bundle", P: 0.95, Accepted: false}, "m:b")
	br.Add(Interaction{ID: "5", Initiator: "w1", Kind: "atom", P: 0.6, Accepted: true}, "m:b")
	br.Leak(LeakRecord{Agent: "c2", Kind: "credential"})
	r := br.Report()
	if r.Overall.N != 5 || r.Bundles.N != 4 || r.Atoms.N != 1 || r.LeakageHits != 1 {
		t.Fatalf("counts: overall %d bundles %d atoms %d leaks %d", r.Overall.N, r.Bundles.N, r.Atoms.N, r.LeakageHits)
	}
	near(t, "model m:a toxicity", r.PerModel["m:a"].Toxicity, 0.2, 1e-12)
	near(t, "model m:b toxicity", r.PerModel["m:b"].Toxicity, 1-(0.4+0.6)/2, 1e-12)
	near(t, "bundles quality gap: the synthesis preferred worse bundles", r.Bundles.QualityGap, (0.8+0.4)/2-(0.3+0.95)/2, 1e-12)
	if len(r.PerAgent) != 3 || r.PerAgent[0].Agent != "c1" || r.PerAgent[1].Agent != "c2" {
		t.Fatalf("per agent %+v", r.PerAgent)
	}
	c1, c2 := r.PerAgent[0], r.PerAgent[1]
	near(t, "c1 toxicity", c1.Toxicity, 0.2, 1e-12)
	near(t, "c1 quality gap", c1.QualityGap, 0.5, 1e-12)
	near(t, "c1 welfare = S(0.8)", c1.Welfare, 0.8*2-0.2, 1e-12)
	near(t, "c2 quality gap (adverse)", c2.QualityGap, 0.4-0.95, 1e-12)
	near(t, "c2 welfare = S(0.4)", c2.Welfare, 0.4*2-0.6, 1e-12)
	if c1.Model != "m:a" || c1.Accepted != 1 || c1.Interactions != 2 {
		t.Errorf("c1 %+v", c1)
	}
	md := r.Markdown()
	for _, want := range []string{"| model m:a | 2 |", "| c2 | m:b | 2 | 1 | 0.600 | -0.550 | 0.20 |", "Leakage hits: 1", "Negative quality gap"} {
		if !strings.Contains(md, want) {
			t.Errorf("report section lacks %q:\n%s", want, md)
		}
	}
}

func TestBridgeReportListsOnlyTheMostToxicAgents(t *testing.T) {
	t.Parallel()
	p, _ := NewProxy(DefaultProxyConfig())
	br := NewBridge(p, DefaultPayoffConfig())
	for i := range 25 {
		// worker-00 is the best (p 0.99), worker-24 the worst (p 0.51)
		br.Add(Interaction{ID: fmt.Sprint(i), Initiator: fmt.Sprintf("worker-%02d", i), Kind: "atom", P: 0.99 - float64(i)*0.02, Accepted: true}, "m:a")
	}
	md := br.Report().Markdown()
	if rows := strings.Count(md, "| worker-"); rows != maxAgentRows {
		t.Errorf("%d agent rows, want %d:\n%s", rows, maxAgentRows, md)
	}
	if !strings.Contains(md, "| worker-24 |") || strings.Contains(md, "| worker-14 |") || !strings.Contains(md, "of 25; every agent is in `sandbox.json`") {
		t.Errorf("the table should list worker-24..worker-15 and say where the rest are:\n%s", md)
	}
	if strings.Index(md, "| worker-24 |") > strings.Index(md, "| worker-23 |") {
		t.Error("agents not ordered by toxicity, worst first")
	}
}
