package nexus_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/vocab"
)

// withoutRecovery turns the recovery ladder off: for tests of what happens
// to a failure before any recovery.
func withoutRecovery(o *nexus.Options) { o.Config.Recovery.Enabled = false }

var errFlaky = &providers.Error{Class: providers.ClassPermanent, Msg: "flaky model down"}

// flaky serves role with flaky:honest, whose calls fail while fails says
// so (the mock persona answers the others), and gives role the fallbacks.
func flaky(role string, fails func(req providers.Request) bool, fallbacks ...string) runOpt {
	return func(o *nexus.Options) {
		o.Registry = hookRegistry("flaky", "the mock, failing as the test says", func(ctx context.Context, req providers.Request, next providers.Provider) (providers.Response, error) {
			if fails(req) {
				return providers.Response{}, errFlaky
			}
			return next.Complete(ctx, req)
		})
		o.Models = map[string][]providers.Ref{role: {{Kind: "flaky", Model: "honest"}}}
		for _, f := range fallbacks {
			x, _ := providers.ParseRef(f)
			o.Fallbacks = map[string][]providers.Ref{role: append(o.Fallbacks[role], x)}
		}
		o.Config.Providers["flaky"] = withRetries(o.Config.Providers["mock"], 0)
		// The ladder is what these tests measure: the breaker would route
		// the failing model's calls to the fallback before the ladder saw
		// them (and make the judge wait for its cooldown). Its routing is
		// tested in breaker_run_test.go; both together in the CLI's
		// TestRunFallbackWhileTheWorkersBreakerIsOpen.
		o.Config.CircuitBreaker.Enabled = false
	}
}

// ladderOf lists a unit kind's recovery steps as "step#attempt:ok", per
// unit id, and the run's model swaps by the ladder.
func ladderOf(res *nexus.Result, unit string) (map[string][]string, []events.ModelSwapData) {
	steps := map[string][]string{}
	var swaps []events.ModelSwapData
	for _, e := range res.Events {
		switch d := e.Data.(type) {
		case events.RecoveryData:
			if d.Unit == unit {
				ok := "false"
				if d.OK {
					ok = "true"
				}
				steps[d.UnitID] = append(steps[d.UnitID], d.Step+"#"+string(rune('0'+d.Attempt))+":"+ok)
			}
		case events.ModelSwapData:
			swaps = append(swaps, d)
		}
	}
	return steps, swaps
}

func criteriaIn(req providers.Request) int {
	return strings.Count(req.Messages[len(req.Messages)-1].Content, vocab.CriterionPrefix+"sc-")
}

func TestVerdictLadder(t *testing.T) {
	t.Parallel()
	judge := func(req providers.Request) bool { return req.Caller.Role == commanders.RoleJudge }
	tests := []struct {
		name      string
		why       string
		opt       runOpt
		want      []string                      // every bundle's verdict steps
		swaps     int                           // model_swap events (reason ladder), one per bundle
		scored    bool                          // every bundle scored
		telemetry map[string]runfiles.StepStats // never retry: see meter.noteRecovery
	}{
		{name: "the judge fails on a whole bundle, one criterion a call works",
			why:       "simplify for a verdict: per-criterion calls instead of one per bundle",
			opt:       flaky(commanders.RoleJudge, func(r providers.Request) bool { return judge(r) && criteriaIn(r) > 1 }),
			want:      []string{"retry#1:false", "simplify#1:true"},
			scored:    true,
			telemetry: map[string]runfiles.StepStats{"simplify": {Used: 3, Succeeded: 3}}},
		{name: "the judge's primary is down: its fallback judges",
			why:       "model swap for a verdict: the judge's fallbacks, a model_swap event each",
			opt:       flaky(commanders.RoleJudge, judge, "mock:honest"),
			want:      []string{"retry#1:false", "simplify#1:false", "model_swap#1:true"},
			swaps:     3,
			scored:    true,
			telemetry: map[string]runfiles.StepStats{"simplify": {Used: 3}, "model_swap": {Used: 3, Succeeded: 3}}},
		{name: "one criterion can never be judged: the verdict degrades",
			why:  "scope reduction judges the others; degrade keeps them, the bundle gets no score and is not a success",
			opt:  flaky(commanders.RoleJudge, func(r providers.Request) bool { return judge(r) && strings.Contains(r.Messages[1].Content, "sc-02 |") }),
			want: []string{"retry#1:false", "simplify#1:false", "scope_reduction#1:false", "degrade#1:true"},
			telemetry: map[string]runfiles.StepStats{"simplify": {Used: 3}, "scope_reduction": {Used: 3},
				"degrade": {Used: 3, Succeeded: 3}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runMission(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "mock:honest", tc.opt, func(o *nexus.Options) {
				o.Config.Sandbox.AuditRate = 0 // the audit re-judges with the primary judge: not what is measured here
			})
			if err != nil {
				t.Fatal(err)
			}
			steps, swaps := ladderOf(res, commanders.UnitVerdict)
			if len(steps) != len(res.Bundles) {
				t.Errorf("%s: %d verdicts climbed, want every bundle's (%d)", tc.why, len(steps), len(res.Bundles))
			}
			for id, got := range steps {
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("%s: %s: steps (-want +got)\n%s", tc.why, id, d)
				}
			}
			if len(swaps) != tc.swaps {
				t.Errorf("%d model_swap events, want %d", len(swaps), tc.swaps)
			}
			for _, s := range swaps {
				if d := cmp.Diff(events.ModelSwapData{Role: "judge", AgentID: "judge", From: "flaky:honest", To: "mock:honest", Reason: "ladder"}, s); d != "" {
					t.Errorf("model swap (-want +got)\n%s", d)
				}
			}
			rec := res.Telemetry.Recovery
			if rec == nil {
				t.Fatal("telemetry has no recovery")
			}
			if d := cmp.Diff(tc.telemetry, rec.Units["verdict"]); d != "" {
				t.Errorf("telemetry recovery.units.verdict (-want +got)\n%s", d)
			}
			for _, o := range res.Bundles {
				if scored := o.ShadowScore != nil; scored != tc.scored {
					t.Errorf("%s: scored %v, want %v", o.ID, scored, tc.scored)
				}
			}
			if res.OK != tc.scored {
				t.Errorf("run ok %v (%s: %s), want %v: a degraded verdict is never a success", res.OK, res.Status, res.Error, tc.scored)
			}
			if !tc.scored {
				for _, o := range res.Bundles {
					if len(o.Degraded) != 1 || o.Degraded[0].Unit != "verdict" || !strings.Contains(o.Degraded[0].Detail, "never counted as passed: sc-02") {
						t.Errorf("%s: degraded %+v, want the verdict marked with sc-02 unjudged", o.ID, o.Degraded)
					}
				}
				if res.Aggregate.Degraded != len(res.Bundles) || res.Aggregate.Scored != 0 {
					t.Errorf("aggregate %+v, want every bundle degraded and none scored", res.Aggregate)
				}
			}
		})
	}
}

// A worker model that fails every call: the ladder swaps each worker to the
// role's fallback, the run completes, and telemetry counts the swaps.
func TestLadderSwapsFailingWorkersToTheirFallback(t *testing.T) {
	t.Parallel()
	worker := func(r providers.Request) bool { return r.Caller.Role == commanders.RoleWorker }
	res, err := runMission(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "mock:honest", flaky(commanders.RoleWorker, worker, "mock:honest"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("run %s: %s, want complete on the fallback", res.Status, res.Error)
	}
	steps, swaps := ladderOf(res, commanders.UnitAtom)
	if len(steps) != res.Plan.Workers || len(swaps) != res.Plan.Workers {
		t.Errorf("%d atoms climbed, %d swaps; want every worker's (%d)", len(steps), len(swaps), res.Plan.Workers)
	}
	for id, s := range steps {
		if last := s[len(s)-1]; last != "model_swap#1:true" {
			t.Errorf("%s: steps %v, want them to end on a successful model swap", id, s)
		}
	}
	got := res.Telemetry.Recovery.Steps["model_swap"]
	if d := cmp.Diff(runfiles.StepStats{Used: res.Plan.Workers, Succeeded: res.Plan.Workers}, got); d != "" {
		t.Errorf("telemetry recovery.steps.model_swap (-want +got)\n%s", d)
	}
	for _, o := range res.Bundles {
		if o.AtomsFailed != 0 || len(o.Degraded) != 0 {
			t.Errorf("%s: %d atoms failed, degraded %+v", o.ID, o.AtomsFailed, o.Degraded)
		}
	}
}

// A bundle the commander cannot assemble on any step is salvaged from its
// atoms, marked degraded in its record, and the run is not complete. (The
// mock's atoms are short: there is no excerpt to shorten, so simplify is not
// tried; no fallback is configured, so neither is a model swap.)
func TestLadderDegradedBundleIsNeverASuccess(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", small, // the bundles are the point
		withScript(t, "rules: [{schema: bundle, match: 'You are the testing commander', fault: malformed_json}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.Status != runfiles.StatusIncomplete || res.Aggregate.Degraded != 1 || !strings.Contains(res.Error, "1 of 5 bundles degraded") {
		t.Errorf("run ok %v status %q aggregate %+v error %q: want incomplete with one bundle degraded", res.OK, res.Status, res.Aggregate, res.Error)
	}
	steps, _ := ladderOf(res, commanders.UnitBundle)
	if d := cmp.Diff(map[string][]string{"testing": {"retry#1:false", "degrade#1:true"}}, steps); d != "" {
		t.Errorf("bundle steps (-want +got)\n%s", d)
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "bundles", "testing.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Salvaged bool                  `json:"salvaged"`
		Degraded []commanders.Degraded `json:"degraded"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if !rec.Salvaged || len(rec.Degraded) != 1 || rec.Degraded[0].Unit != "bundle" {
		t.Errorf("bundles/testing.json: salvaged %v degraded %+v, want the bundle marked", rec.Salvaged, rec.Degraded)
	}
	if got := res.Telemetry.Recovery.Units["bundle"]["degrade"]; got != (runfiles.StepStats{Used: 1, Succeeded: 1}) {
		t.Errorf("telemetry recovery.units.bundle.degrade %+v, want 1 used, 1 succeeded", got)
	}
	md, err := os.ReadFile(filepath.Join(res.Dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| testing (salvaged) (degraded) |") {
		t.Error("report.md's Shadow results table does not mark the testing bundle degraded")
	}
}

// A run where nothing failed has no recovery in its telemetry: absent, not
// zeros.
func TestTelemetryRecoveryAbsentWhenTheLadderDidNothing(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "mock:honest")
	if err != nil {
		t.Fatal(err)
	}
	if res.Telemetry.Recovery != nil {
		t.Errorf("telemetry recovery %+v, want absent", res.Telemetry.Recovery)
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "telemetry.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"recovery"`) {
		t.Error("telemetry.json has a recovery key")
	}
}
