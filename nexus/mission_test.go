package nexus_test

import (
	"context"
	"net/http/httptest"

	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/providers/openai"
	"github.com/swarm-dev/swarm/vocab"

	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/builtin"
	"github.com/swarm-dev/swarm/shadow"
)

func loadMission(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", "missions", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func defaultConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func mockRegistry(opts mock.Options) *providers.Registry {
	reg := &providers.Registry{}
	mock.Register(reg, opts)
	return reg
}

// hookRegistry is mockRegistry plus kind (described by desc): the mock
// personas with every call passing through hook, which lets the persona
// (next) answer, or not, as the test needs.
func hookRegistry(kind, desc string, hook func(ctx context.Context, req providers.Request, next providers.Provider) (providers.Response, error)) *providers.Registry {
	reg := mockRegistry(mock.Options{})
	reg.Register(providers.KindInfo{Kind: kind, Description: desc}, func(ref providers.Ref, _ providers.KindConfig) (providers.Provider, error) {
		m, err := mock.New(ref.Model, mock.Options{})
		if err != nil {
			return nil, err
		}
		return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
			return hook(ctx, req, m)
		}), nil
	})
	return reg
}

type runOpt func(*nexus.Options)

// small is a runOpt for tests that look at what a run does, not at how
// many agents it has: small teams (smallTeams) at every scale.
func small(o *nexus.Options) { smallTeams(o.Config) }

func runMission(t *testing.T, mission, scale, provider string, opts ...runOpt) (*nexus.Result, error) {
	t.Helper()
	return runMissionWith(t, mission, scale, provider, nil, opts...)
}

// runMissionWith prepares the mission with popts (provider wrapping,
// shared limits) and runs it.
func runMissionWith(t *testing.T, mission, scale, provider string, popts []nexus.Option, opts ...runOpt) (*nexus.Result, error) {
	t.Helper()
	o := nexus.Options{Config: defaultConfig(t), Registry: mockRegistry(mock.Options{}), Mission: mission, MissionName: "test",
		Scale: scale, Provider: ref(t, provider), OutDir: filepath.Join(t.TempDir(), "run"), KeepPrompts: true, KeepEvents: true}
	for _, f := range opts {
		f(&o)
	}
	m, err := nexus.Prepare(o, popts...)
	if err != nil {
		return nil, err
	}
	return m.Run(t.Context())
}

func phasesInOrder(evs []events.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Kind == events.PhaseStart {
			out = append(out, string(e.Phase))
		}
	}
	return out
}

func TestMissionAtEveryScale(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scale         string
		minAgents     int
		maxAgents     int
		mission       string
		wantHardening bool
	}{
		{"ss-50", 36, 52, "test-gap-hunt.md", false},
		{"ss-100", 89, 89, "auth-migration.md", true},
		{"ss-250", 316, 316, "api-design.md", true},
	}
	for _, tc := range tests {
		t.Run(tc.scale, func(t *testing.T) {
			t.Parallel()
			res, err := runMission(t, loadMission(t, tc.mission), tc.scale, "mock:honest")
			if err != nil {
				t.Fatal(err)
			}
			if n := res.Telemetry.Agents.Total; n < tc.minAgents || n > tc.maxAgents {
				t.Errorf("agent tally = %d, want %d..%d", n, tc.minAgents, tc.maxAgents)
			}
			// Phase 6 judges each bundle as soon as it exists (the first
			// one), beside the cross-review of Phase 5 (from the second);
			// Phase 7 starts when both have ended.
			want := []string{"0", "1", "1.5", "2", "3", "4", "6", "5", "7", "8"}
			if got := phasesInOrder(res.Events); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("phases = %v, want %v", got, want)
			}
			ended, start7 := map[events.Phase]int{}, -1
			for i, e := range res.Events {
				if e.Kind == events.PhaseEnd {
					ended[e.Phase] = i
				}
				if e.Kind == events.PhaseStart && e.Phase == "7" {
					start7 = i
				}
				if (e.Kind == events.Judged || e.Kind == events.Review) && start7 >= 0 {
					t.Errorf("%s event after phase 7 started", e.Kind)
				}
			}
			if e5, ok5 := ended["5"]; !ok5 || e5 > start7 {
				t.Errorf("phase 5 ended at %d, phase 7 started at %d", e5, start7)
			}
			if e6, ok6 := ended["6"]; !ok6 || e6 > start7 {
				t.Errorf("phase 6 ended at %d, phase 7 started at %d", e6, start7)
			}
			// one report per bundle, each valid against the shipped schema
			reports, _ := filepath.Glob(filepath.Join(res.Dir, "reports", "*.json"))
			if len(reports) != len(res.Bundles) || len(reports) == 0 {
				t.Errorf("reports = %d, bundles = %d", len(reports), len(res.Bundles))
			}
			for _, p := range reports {
				b, _ := os.ReadFile(p)
				if err := shadow.ValidateReport(b); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
			for _, f := range []string{"report.md", "telemetry.json", "events.jsonl", "mission.md", "config.effective.yml", "sealed/envelope.json"} {
				if _, err := os.Stat(filepath.Join(res.Dir, f)); err != nil {
					t.Errorf("missing %s: %v", f, err)
				}
			}
			fi, err := os.Stat(filepath.Join(res.Dir, "sealed", "envelope.json"))
			if err == nil && fi.Mode().Perm() != 0o600 {
				t.Errorf("envelope mode = %v, want 0600", fi.Mode().Perm())
			}
			md, _ := os.ReadFile(filepath.Join(res.Dir, "report.md"))
			for _, section := range []string{"## Metrics", "## The #1 action", "## Risk per domain", "## Quick wins", "## Deep work", "## Conflicts and resolutions", "## Gaps", "## Shadow results", "## Agent tally"} {
				if !strings.Contains(string(md), section) {
					t.Errorf("report.md lacks %q", section)
				}
			}
			// honest commanders: most bundles pass
			passed := 0
			for _, b := range res.Bundles {
				if b.ShadowScore != nil && *b.ShadowScore <= 15 {
					passed++
				}
			}
			if passed*2 <= len(res.Bundles) {
				t.Errorf("only %d of %d honest bundles passed", passed, len(res.Bundles))
			}
			if !tc.wantHardening {
				for _, b := range res.Bundles {
					if b.Hardening != nil {
						t.Errorf("%s hardened at %s where hardening is off", b.ID, tc.scale)
					}
				}
			}
			// only the hash is committed, in the events, before any commander starts
			sealedAt, firstCommander := -1, -1
			for i, e := range res.Events {
				if e.Kind == events.Sealed && sealedAt < 0 {
					sealedAt = i
					if d, _ := e.Data.(events.SealedData); d.SealedHash != res.SealedHash {
						t.Errorf("sealed event hash %v, run %s", d.SealedHash, res.SealedHash)
					}
				}
				if e.Kind == events.AgentStart && e.Role == "commander" && firstCommander < 0 {
					firstCommander = i
				}
			}
			if sealedAt < 0 || firstCommander < 0 || sealedAt > firstCommander {
				t.Errorf("sealed event at %d, first commander at %d", sealedAt, firstCommander)
			}
			scanLeaks(t, res)
		})
	}
}

// scanLeaks fails when any prompt sent during the run, other than the seal
// author's and the judge's, or the run's events contain criterion text. It
// returns how many prompts carried hardening feedback.
func scanLeaks(t *testing.T, res *nexus.Result) (feedbackPrompts int) {
	t.Helper()
	criteria := readSealedCriteria(t, res.Dir)
	if len(res.Transcripts) == 0 {
		t.Fatal("no transcripts kept")
	}
	calls := 0
	for _, e := range res.Events {
		if e.Kind == events.LLMCall {
			calls++
		}
	}
	if calls != len(res.Transcripts) {
		t.Errorf("%d LLM calls but %d prompts kept: the scan would miss some", calls, len(res.Transcripts))
	}
	for _, tr := range res.Transcripts {
		if tr.Role == "seal_author" || tr.Role == "judge" {
			continue
		}
		for _, m := range tr.Messages {
			if strings.Contains(m.Content, vocab.FeedbackHeading) {
				feedbackPrompts++
			}
			for _, c := range criteria {
				if strings.Contains(m.Content, c.Assertion) || strings.Contains(m.Content, c.Expected) {
					t.Fatalf("criterion %s leaked into a %s prompt (%s)", c.ID, tr.Role, tr.AgentID)
				}
			}
		}
	}
	ev, _ := os.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	for _, c := range criteria {
		if strings.Contains(string(ev), c.Assertion) || strings.Contains(string(ev), c.Expected) {
			t.Fatalf("criterion %s text in events.jsonl", c.ID)
		}
	}
	return feedbackPrompts
}

// TestLeakScanWithHardeningAtEveryScale runs a full mission at every scale
// with sloppy commanders, so hardening feedback (ss-100, ss-250) and
// quarantine re-reviews actually happen, and scans every prompt.
func TestLeakScanWithHardeningAtEveryScale(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scale        string
		wantFeedback bool // hardening or quarantine feedback reaches an agent
	}{
		{"ss-50", true}, // hardening off; quarantined bundles are re-reviewed with the messages
		{"ss-100", true},
		{"ss-250", true},
	} {
		t.Run(tc.scale, func(t *testing.T) {
			t.Parallel()
			res, err := runMission(t, loadMission(t, "dependency-risk-scan.md"), tc.scale, "mock:honest", func(o *nexus.Options) {
				o.Models = models(t, map[string]string{"commander": "mock:sloppy"})
			})
			if err != nil {
				t.Fatal(err)
			}
			if n := scanLeaks(t, res); (n > 0) != tc.wantFeedback {
				t.Errorf("%d prompts carried feedback, want some: %v", n, tc.wantFeedback)
			}
		})
	}
}

func scoresByPersona(t *testing.T, persona string) *nexus.Result {
	t.Helper()
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", small, func(o *nexus.Options) {
		o.Models = models(t, map[string]string{"commander": "mock:" + persona})
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func validateReports(t *testing.T, res *nexus.Result) map[string]shadow.Report {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(res.Dir, "reports", "*.json"))
	if len(files) == 0 {
		t.Fatal("no reports emitted")
	}
	out := map[string]shadow.Report{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if err := shadow.ValidateReport(b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		var r shadow.Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = r
	}
	return out
}

func TestPersonasShadowAndHardening(t *testing.T) {
	t.Parallel()
	t.Run("sloppy fails some, hardening helps", func(t *testing.T) {
		res := scoresByPersona(t, "sloppy")
		reports := validateReports(t, res)
		hardened := 0
		for _, b := range res.Bundles {
			if b.Initial == nil || b.ShadowScore == nil {
				t.Fatalf("%s not scored", b.ID)
			}
			if b.Initial.Score <= 15 {
				if b.Hardening != nil {
					t.Errorf("%s hardened at %v, not above the threshold", b.ID, b.Initial.Score)
				}
				continue
			}
			if b.Hardening == nil || b.Hardening.Cycles < 1 {
				t.Errorf("%s failed (%v) but was not hardened", b.ID, b.Initial.Score)
				continue
			}
			hardened++
			h := b.Hardening
			if h.InitialScore != b.Initial.Score || h.FinalScore != *b.ShadowScore {
				t.Errorf("%s: hardening %v → %v, bundle %v → %v", b.ID, h.InitialScore, h.FinalScore, b.Initial.Score, *b.ShadowScore)
			}
			if want := (h.InitialScore - h.FinalScore) / float64(h.Cycles); h.Velocity != want || h.Velocity <= 0 {
				t.Errorf("%s: velocity %v, want (initial − final)/cycles = %v > 0", b.ID, h.Velocity, want)
			}
			rh := reports[b.ID].Hardening
			if rh == nil || rh.HardeningVelocity == nil || rh.InitialShadowScore == nil || float64(*rh.HardeningVelocity) != h.Velocity || rh.CyclesCompleted != h.Cycles || float64(*rh.InitialShadowScore) != h.InitialScore {
				t.Errorf("%s: report hardening block %+v does not match %+v", b.ID, rh, h)
			}
		}
		if hardened == 0 {
			t.Fatal("no sloppy bundle failed and was hardened")
		}
	})
	t.Run("deceptive does not improve and is quarantined or rejected", func(t *testing.T) {
		res := scoresByPersona(t, "deceptive")
		validateReports(t, res)
		held, hardened := 0, 0
		for _, b := range res.Bundles {
			if b.Hardening != nil && b.Hardening.Cycles > 0 {
				hardened++
				if b.Hardening.Velocity > 0 || b.Hardening.FinalScore < b.Hardening.InitialScore {
					t.Errorf("%s: deceptive bundle improved (velocity %v)", b.ID, b.Hardening.Velocity)
				}
			}
			if b.Gate != nil && (b.Gate.Action == shadow.ActionQuarantine || b.Gate.Action == shadow.ActionReject) {
				held++
				if b.Gate.Action == shadow.ActionReject && b.InSynthesis {
					t.Errorf("%s rejected by the gate but in synthesis", b.ID)
				}
			}
		}
		if hardened == 0 {
			t.Fatal("no deceptive bundle went through hardening: nothing shows that hardening does not help")
		}
		if held == 0 {
			t.Fatal("no deceptive bundle was quarantined or rejected")
		}
	})
}

// TestShadowGateBandsAndEvents checks every gate decision against the bands
// (≤ 15 proceed, ≤ 30 warn, ≤ 50 quarantine, > 50 reject) on sloppy ss-50
// runs, where hardening is off so all four bands occur, and that each
// decision and its reason are in the run's events.
func TestShadowGateBandsAndEvents(t *testing.T) {
	t.Parallel()
	band := func(s float64) string {
		switch {
		case s <= 15:
			return shadow.ActionProceed
		case s <= 30:
			return shadow.ActionWarn
		case s <= 50:
			return shadow.ActionQuarantine
		}
		return shadow.ActionReject
	}
	seen := map[string]int{}
	for _, m := range []string{"api-design.md", "dependency-risk-scan.md", "incident-runbook.md"} {
		res, err := runMission(t, loadMission(t, m), "ss-50", "mock:honest", small, func(o *nexus.Options) {
			o.Models = models(t, map[string]string{"commander": "mock:sloppy"})
		})
		if err != nil {
			t.Fatal(err)
		}
		validateReports(t, res)
		gateEvents := map[string]events.Event{}
		for _, e := range res.Events {
			if e.Kind == events.Gate {
				id := e.Data.(events.GateData).BundleID
				if _, dup := gateEvents[id]; dup {
					t.Errorf("%s: two gate events for %s", m, id)
				}
				gateEvents[id] = e
			}
		}
		md, _ := os.ReadFile(filepath.Join(res.Dir, "report.md"))
		for _, b := range res.Bundles {
			if b.ShadowScore == nil || b.Gate == nil {
				t.Fatalf("%s/%s not scored or gated", m, b.ID)
			}
			want := band(*b.ShadowScore)
			seen[want]++
			if b.Gate.Action != want {
				t.Errorf("%s/%s: score %v gated %s, want %s", m, b.ID, *b.ShadowScore, b.Gate.Action, want)
			}
			e, ok := gateEvents[b.ID]
			g, _ := e.Data.(events.GateData)
			if !ok || g.Action != want || g.Reason == "" || g.ShadowScore == nil || *g.ShadowScore != *b.ShadowScore {
				t.Errorf("%s/%s: gate event %+v", m, b.ID, e)
			}
			switch want {
			case shadow.ActionProceed, shadow.ActionWarn:
				if !b.InSynthesis {
					t.Errorf("%s/%s: %s but not in synthesis", m, b.ID, want)
				}
			case shadow.ActionReject:
				if b.InSynthesis {
					t.Errorf("%s/%s: rejected but in synthesis", m, b.ID)
				}
			case shadow.ActionQuarantine:
				if _, err := os.Stat(filepath.Join(res.Dir, "reviews")); err != nil {
					t.Fatal(err)
				}
				if files, _ := filepath.Glob(filepath.Join(res.Dir, "reviews", "*-quarantine-"+b.ID+".json")); len(files) == 0 {
					t.Errorf("%s/%s: quarantined but not re-reviewed", m, b.ID)
				}
				// The re-review is reported, it never releases the bundle
				// into the synthesis (inSynthesis).
				if b.InSynthesis {
					t.Errorf("%s/%s: quarantined but in synthesis", m, b.ID)
				}
			}
			if want == shadow.ActionWarn && !strings.Contains(string(md), "**Shadow Gate warning**: `"+b.ID+"`") {
				t.Errorf("%s/%s: warned bundle without a warning in report.md", m, b.ID)
			}
		}
	}
	for _, a := range []string{shadow.ActionWarn, shadow.ActionQuarantine, shadow.ActionReject} {
		if seen[a] == 0 {
			t.Errorf("no bundle in the %s band (%v): the fixture no longer covers it", a, seen)
		}
	}
}

func TestTamperedEnvelopeIsDetectedInPhase6(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "incident-runbook.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
		dir := o.OutDir
		o.Observers = append(o.Observers, events.ObserverFunc(func(e events.Event) {
			if e.Kind != events.Sealed {
				return
			}
			path := filepath.Join(dir, "sealed", "envelope.json")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
				return
			}
			var doc map[string]any
			_ = json.Unmarshal(b, &doc)
			crit := doc["criteria"].([]any)
			crit[0].(map[string]any)["expected"] = "anything at all"
			b, _ = json.Marshal(doc)
			_ = os.WriteFile(path, b, 0o600)
		}))
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ShadowValid {
		t.Fatal("tampered envelope was scored")
	}
	for _, b := range res.Bundles {
		if b.ShadowScore != nil {
			t.Errorf("%s scored despite tampering", b.ID)
		}
	}
	reports := validateReports(t, res)
	if len(reports) != len(res.Bundles) {
		t.Errorf("%d reports for %d bundles", len(reports), len(res.Bundles))
	}
	for id, r := range reports {
		if !r.Report.Advisory || r.Report.Valid || !strings.Contains(r.Report.AdvisoryReason, "invalid") || !strings.Contains(r.Report.AdvisoryReason, "hash mismatch") {
			t.Errorf("%s: not marked invalid/advisory with the reason: %+v", id, r.Report)
		}
		if r.SealedTests.Total != 0 || len(r.Failures) != 0 {
			t.Errorf("%s: scored despite tampering: %+v", id, r.SealedTests)
		}
	}
	checks := 0
	for _, e := range res.Events {
		if e.Kind == events.Judged || e.Kind == events.Hardening || e.Kind == events.Gate {
			t.Errorf("%s event after a failed envelope check", e.Kind)
		}
		if e.Kind == events.EnvelopeCheck {
			checks++
			if d, ok := e.Data.(events.EnvelopeCheckData); !ok || d.OK || !strings.Contains(d.Reason, "hash mismatch") {
				t.Errorf("envelope check event %+v", e)
			}
		}
	}
	if checks != 1 {
		t.Errorf("%d envelope_check events, want 1", checks)
	}
	if !strings.Contains(res.ShadowReason, "hash mismatch") {
		t.Errorf("shadow reason %q", res.ShadowReason)
	}
}

func TestEmptyMissionIsBadInput(t *testing.T) {
	t.Parallel()
	_, err := runMission(t, "  \n", "ss-50", "mock:honest")
	if !errors.Is(err, config.ErrBadInput) {
		t.Fatalf("err = %v, want ErrBadInput", err)
	}
}

func TestCancelledRunLeavesPartialDirectory(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	o := nexus.Options{Config: defaultConfig(t), Registry: mockRegistry(mock.Options{}), Mission: loadMission(t, "api-design.md"),
		Scale: "ss-100", Provider: providers.Ref{Kind: "mock", Model: "honest"}, OutDir: filepath.Join(t.TempDir(), "run")}
	o.Observers = []events.Observer{events.ObserverFunc(func(e events.Event) {
		if e.Kind == events.PhaseStart && e.Phase == "4" {
			cancel()
		}
	})}
	res, err := nexus.Run(ctx, o)
	if !errors.Is(err, nexus.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	for _, f := range []string{"events.jsonl", "report.md", "telemetry.json", "sealed/envelope.json"} {
		if _, err := os.Stat(filepath.Join(res.Dir, f)); err != nil {
			t.Errorf("partial run lacks %s", f)
		}
	}
	if md, _ := os.ReadFile(filepath.Join(res.Dir, "report.md")); !strings.Contains(string(md), "Partial run") {
		t.Error("the partial action report does not say so")
	}
}

func TestFlakyRunCompletesAndRecordsInjectedFaultClasses(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	injected := map[string]int{}
	res, err := runMission(t, loadMission(t, "dependency-risk-scan.md"), "ss-100", "mock:flaky", func(o *nexus.Options) {
		// 20% faults in all (mock.DefaultFlakyFaults), with fast rate-limit waits.
		o.Config.Providers["mock"] = withRetries(o.Config.Providers["mock"], 4)
		o.Registry = mockRegistry(mock.Options{OnFault: func(c providers.Class) {
			mu.Lock()
			injected[string(c)]++
			mu.Unlock()
		}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(injected) < 4 {
		t.Fatalf("20%% faults injected only %v", injected)
	}
	// Every injected fault is one failed attempt in the telemetry, class for
	// class, and nothing else failed.
	if d := cmp.Diff(injected, res.Telemetry.FailureClasses); d != "" {
		t.Errorf("telemetry failure classes differ from the injected faults (-injected +telemetry)\n%s", d)
	}
	scored := 0
	for _, b := range res.Bundles {
		if b.ShadowScore != nil {
			scored++
		}
	}
	if scored == 0 || res.Synthesis == nil {
		t.Fatalf("flaky run scored %d bundles, synthesis %v", scored, res.Synthesis != nil)
	}
}

func withRetries(k providers.KindConfig, n int) providers.KindConfig {
	k.Retries = n
	return k
}

func TestRunThroughMockServerMatchesInProcess(t *testing.T) {
	t.Parallel()
	h, err := mock.NewServer(mock.ServerOptions{Persona: mock.Honest})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	mission := loadMission(t, "feature-flag-rollout.md")
	local, err := runMission(t, mission, "ss-50", "mock:sloppy")
	if err != nil {
		t.Fatal(err)
	}
	remote, err := runMission(t, mission, "ss-50", "openai-compatible:sloppy", func(o *nexus.Options) {
		reg := mockRegistry(mock.Options{})
		openai.Register(reg)
		o.Registry = reg
		k := o.Config.Providers["openai-compatible"]
		k.BaseURL = srv.URL + "/v1"
		o.Config.Providers["openai-compatible"] = k
	})
	if err != nil {
		t.Fatal(err)
	}
	if local.SealedHash != remote.SealedHash {
		t.Errorf("sealed hash differs: %s vs %s", local.SealedHash, remote.SealedHash)
	}
	scores := func(r *nexus.Result) map[string]float64 {
		m := map[string]float64{}
		for _, b := range r.Bundles {
			if b.Initial != nil {
				m[b.ID+"/initial"] = b.Initial.Score
			}
			if b.ShadowScore != nil {
				m[b.ID] = *b.ShadowScore
			}
		}
		return m
	}
	if d := cmp.Diff(scores(local), scores(remote)); d != "" {
		t.Errorf("scores differ (-in-process +http)\n%s", d)
	}
}

func sandboxReport(t *testing.T, res *nexus.Result) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(res.Dir, "sandbox.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAdversarialMissionShowsLeakageAndHigherToxicity(t *testing.T) {
	t.Parallel()
	mission := loadMission(t, "auth-migration.md")
	honest, err := runMission(t, mission, "ss-50", "mock:honest", small)
	if err != nil {
		t.Fatal(err)
	}
	adv, err := runMission(t, mission, "ss-50", "mock:adversarial", small)
	if err != nil {
		t.Fatal(err)
	}
	h, a := sandboxReport(t, honest), sandboxReport(t, adv)
	if h["leakage_hits"].(float64) != 0 || a["leakage_hits"].(float64) == 0 {
		t.Errorf("leakage hits honest %v adversarial %v", h["leakage_hits"], a["leakage_hits"])
	}
	ht := h["overall"].(map[string]any)["toxicity"].(float64)
	at := a["overall"].(map[string]any)["toxicity"].(float64)
	if at <= ht {
		t.Errorf("adversarial toxicity %.4f not above honest %.4f", at, ht)
	}
	md, _ := os.ReadFile(filepath.Join(adv.Dir, "report.md"))
	if !strings.Contains(string(md), "## Distributional safety (sandbox)") {
		t.Error("action report lacks the sandbox section")
	}
	for _, l := range a["leaks"].([]any) {
		if ex := l.(map[string]any)["excerpt"].(string); strings.Contains(ex, "AKIAIOSFODNN7EXAMPLE") || strings.Contains(ex, "hunter2") {
			t.Fatalf("sandbox.json holds an unredacted secret: %q", ex)
		}
	}
}

func TestSandboxBreakerStopsWorkForAToxicModel(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "api-design.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
		o.Models = models(t, map[string]string{"worker": "mock:adversarial"})
		o.Config.CircuitBreaker.ToxicityThreshold = 0.05
		o.Config.CircuitBreaker.Window = 5
		// The breaker stops work not yet assigned: with the run's
		// concurrency below the 45 workers, some wait for a seat.
		sc := o.Config.Scales["ss-50"]
		sc.Concurrency = 8
		o.Config.Scales["ss-50"] = sc
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Telemetry.BreakerTrips == 0 {
		t.Fatal("breaker never tripped")
	}
	skipped := 0
	for _, e := range res.Events {
		if e.Kind == events.BreakerTrip && !strings.Contains(e.Message, "mock:adversarial") {
			t.Errorf("trip for the wrong model: %s", e.Message)
		}
		if e.Kind == events.AgentStart && e.Role == "worker" {
			skipped--
		}
	}
	if skipped+res.Plan.Workers <= 0 {
		t.Errorf("every worker still ran after the breaker opened (%d workers)", res.Plan.Workers)
	}
}

// Random audits on real agents: at audit_rate 1 every scored bundle is
// re-judged and recorded in sandbox.json; at 0 none is.
func TestSandboxRandomAuditsRejudgeBundles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rate float64
	}{{"every scored bundle", 1}, {"off", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runMission(t, loadMission(t, "api-design.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
				o.Config.Sandbox.AuditRate = tc.rate
			})
			if err != nil {
				t.Fatal(err)
			}
			scored := 0
			for _, b := range res.Bundles {
				if b.Final != nil {
					scored++
				}
			}
			audits := sandboxReport(t, res)["audits"].([]any)
			want := 0
			if tc.rate == 1 {
				want = scored
			}
			if scored == 0 || len(audits) != want {
				t.Fatalf("%d audits for %d scored bundles at rate %v", len(audits), scored, tc.rate)
			}
			for _, a := range audits {
				// the deterministic honest judge agrees with itself
				if ag := a.(map[string]any)["verdict_agreement"].(float64); ag != 1 {
					t.Errorf("audit %v: agreement %v", a, ag)
				}
			}
		})
	}
}

func TestReplaysMeasureIncoherence(t *testing.T) {
	t.Parallel()
	mission := loadMission(t, "api-design.md")
	// Each replay is a whole run: small teams (smallTeams) keep them cheap.
	t.Run("without a benchmark E is unavailable", func(t *testing.T) {
		t.Parallel()
		res, err := runMission(t, mission, "ss-50", "mock:honest", small, func(o *nexus.Options) {
			o.Replays = 3
			o.Models = models(t, map[string]string{"commander": "mock:sloppy"})
		})
		if err != nil {
			t.Fatal(err)
		}
		sb := sandboxReport(t, res)
		inc := sb["incoherence"].(map[string]any)
		if inc["mean_d"].(float64) <= 0 || !strings.Contains(sb["incoherence_e"].(string), "models.reference") {
			t.Errorf("sloppy replays should disagree and E be unavailable: %v / %v", inc["mean_d"], sb["incoherence_e"])
		}
		if _, err := os.Stat(filepath.Join(res.Dir, "replays", "2", "report.md")); err != nil {
			t.Error("replay directories not kept")
		}
	})
	t.Run("with a reference judge E is reported", func(t *testing.T) {
		t.Parallel()
		res, err := runMission(t, mission, "ss-50", "mock:honest", small, func(o *nexus.Options) {
			o.Replays = 2
			o.Config.Models.Reference = providers.Ref{Kind: "mock", Model: "honest"}
		})
		if err != nil {
			t.Fatal(err)
		}
		sb := sandboxReport(t, res)
		if e, ok := sb["incoherence_e"]; ok && e != "" {
			t.Errorf("E unavailable despite a reference: %v", e)
		}
		// honest commanders, deterministic judge: fully coherent and matching the benchmark
		inc := sb["incoherence"].(map[string]any)
		if inc["mean_d"].(float64) != 0 || inc["mean_e"].(float64) != 0 {
			t.Errorf("honest replays: D %v E %v, want 0", inc["mean_d"], inc["mean_e"])
		}
	})
}

func TestSecretsNeverReachTheRunDirectory(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	const secret = "sk-swarm-test-secret-4f1d9a"
	t.Setenv("OPENAI_API_KEY", secret)
	// Small teams: serial, so its length is the package's.
	res, err := runMission(t, loadMission(t, "incident-runbook.md"), "ss-50", "mock:honest", small)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(res.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), secret) {
			t.Errorf("%s contains the API key", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	eff, _ := os.ReadFile(filepath.Join(res.Dir, "config.effective.yml"))
	if !strings.Contains(string(eff), "api_key_env: OPENAI_API_KEY") {
		t.Error("effective config should name the key variable")
	}
}

func TestMockFaultsFromConfigOptions(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "api-design.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
		k := o.Config.Providers["mock"]
		k.Options = map[string]string{"faults": "../examples/mock/faults-20.yaml"}
		k.Retries = 4
		o.Config.Providers["mock"] = k
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Telemetry.FailureClasses) == 0 {
		t.Fatal("providers.mock.options.faults had no effect")
	}
}

func TestCostCeilingWarnsStopsAndStillSynthesises(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "api-design.md"), "ss-100", "mock:honest", func(o *nexus.Options) {
		k := o.Config.Providers["mock"]
		k.InputPerMTok, k.OutputPerMTok = 200, 800 // an expensive mock: the run would cost about twice the $10 ceiling
		o.Config.Providers["mock"] = k
	})
	if err != nil {
		t.Fatal(err)
	}
	var warned, stopLaunch, stopAll bool
	for _, e := range res.Events {
		if e.Kind == events.CostWarning {
			warned = true
		}
		if e.Kind == events.CostStop {
			if e.Data.(events.CostStopData).Level == 0.9 {
				stopLaunch = true
			} else {
				stopAll = true
			}
		}
	}
	if !warned || !stopLaunch || !stopAll {
		t.Fatalf("warn %v stop launching %v stop %v", warned, stopLaunch, stopAll)
	}
	if res.Telemetry.Calls >= 103 {
		t.Errorf("the ceiling did not reduce the work: %d calls", res.Telemetry.Calls)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "report.md")); err != nil {
		t.Error("no action report after the ceiling")
	}
}

func TestMissingAPIKeyIsBadInputBeforeAnyRunDirectory(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("ANTHROPIC_API_KEY", "")
	out := filepath.Join(t.TempDir(), "run")
	_, err := runMission(t, loadMission(t, "api-design.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
		o.Registry = builtin.Registry(mock.Options{})
		o.Models = models(t, map[string]string{"judge": "openai:gpt-4.1", "commander": "anthropic:claude-sonnet-4"})
		o.OutDir = out
	})
	// Both missing keys at once, so the user fixes them in one go.
	if !errors.Is(err, config.ErrBadInput) || !strings.Contains(err.Error(), "OPENAI_API_KEY") || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("err = %v, want ErrBadInput naming OPENAI_API_KEY and ANTHROPIC_API_KEY", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run directory was created for a run that could not start (stat: %v)", err)
	}
}

func TestCallsCutOffByCtrlCAreCancelledNotFailures(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(t.Context())
	reg := mockRegistry(mock.Options{})
	started := make(chan struct{}, 1)
	reg.Register(providers.KindInfo{Kind: "hang", Description: "waits for the context"}, func(providers.Ref, providers.KindConfig) (providers.Provider, error) {
		return providers.ProviderFunc(func(ctx context.Context, _ providers.Request) (providers.Response, error) {
			select {
			case started <- struct{}{}:
			default:
			}
			<-ctx.Done()
			// What net/http returns: the context's cause, not context.Canceled.
			return providers.Response{}, fmt.Errorf("Post \"https://api.example/v1\": %w", context.Cause(ctx))
		}), nil
	})
	go func() {
		<-started
		cancel(errors.New("interrupt signal received"))
	}()
	res, err := nexus.Run(ctx, nexus.Options{Config: defaultConfig(t), Registry: reg, Mission: loadMission(t, "api-design.md"),
		Scale: "ss-50", Provider: providers.Ref{Kind: "mock", Model: "honest"}, Models: map[string][]providers.Ref{"worker": {{Kind: "hang", Model: "x"}}}, OutDir: filepath.Join(t.TempDir(), "run"), KeepEvents: true})
	if !errors.Is(err, nexus.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if len(res.Telemetry.FailureClasses) != 0 {
		t.Errorf("calls cut off by the interruption counted as failures: %v", res.Telemetry.FailureClasses)
	}
	cancelled := 0
	for _, e := range res.Events {
		if e.Kind == events.LLMCall && e.Data.(events.CallData).Outcome == "cancelled" {
			cancelled++
		}
	}
	if cancelled == 0 {
		t.Error("no call recorded as cancelled")
	}
}

// readSealedCriteria reads the criteria a run sealed from its envelope file:
// outside shadow, no code can read them from an Envelope (only the judge
// and the seal author see their text), so the leak scans read the file.
func readSealedCriteria(t *testing.T, runDir string) []shadow.Criterion {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(runDir, "sealed", "envelope.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Criteria []shadow.Criterion `json:"criteria"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Criteria) == 0 {
		t.Fatalf("%s/sealed/envelope.json holds no criteria", runDir)
	}
	return f.Criteria
}
