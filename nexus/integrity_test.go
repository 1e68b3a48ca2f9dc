package nexus_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/vocab"
)

// withScript serves every role with the mock persona and a script (YAML).
func withScript(t *testing.T, script string) runOpt {
	t.Helper()
	s := loadScript(t, script)
	return func(o *nexus.Options) { o.Registry = mockRegistry(mock.Options{Script: s}) }
}

// loadScript loads a mock script from its text (YAML, or JSON).
func loadScript(t *testing.T, script string) *mock.Script {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := mock.LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// resultFile is what a test reads back from result.json.
type resultFile struct {
	OK           bool   `json:"ok"`
	Status       string `json:"status"`
	Error        string `json:"error"`
	FailureClass string `json:"failure_class"`
	Phase        string `json:"phase"`
	Aggregate    struct {
		Median  *float64 `json:"median"`
		Level   string   `json:"level"`
		Planned int      `json:"planned"`
		Scored  int      `json:"scored"`
		Failed  int      `json:"failed"`
	} `json:"shadow_aggregate"`
	Telemetry struct {
		Calls          int                 `json:"calls"`
		Planned        runfiles.AgentTally `json:"agents_planned"`
		Launched       runfiles.AgentTally `json:"agents_launched"`
		BundlesPlanned int                 `json:"bundles_planned"`
		BundlesScored  int                 `json:"bundles_scored"`
	} `json:"telemetry"`
	Bundles []struct {
		ID           string `json:"id"`
		Failed       bool   `json:"failed"`
		Salvaged     bool   `json:"salvaged"`
		FailureClass string `json:"failure_class"`
	} `json:"bundles"`
}

func readResult(t *testing.T, dir string) resultFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatalf("no result.json: %v", err)
	}
	var r resultFile
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Point 1 and 3 of issue 9: zero judged bundles never read as a level, the
// counts say k of n, and result.json carries the run's real telemetry.
func TestRunStatusSaysHowManyBundlesWereJudged(t *testing.T) {
	t.Parallel()
	type want struct {
		status  string
		ok      bool
		level   string
		planned int
		scored  int
		failed  int
		median  bool // a median exists
		report  string
	}
	tests := []struct {
		name   string
		why    string
		script string
		want   want
	}{
		{"every bundle fails", "issue 9.1: this printed 'median 0.0% (perfect) over 0 bundles' and exited 0",
			"rules: [{schema: bundle, fault: malformed_json}]\n",
			want{runfiles.StatusIncomplete, false, "none", 5, 0, 5, false, "no bundle was judged: 0 of 5 scored"}},
		{"one bundle fails", "fewer judged than planned is incomplete and says k of n",
			"rules: [{schema: bundle, match: 'You are the testing commander', fault: malformed_json}]\n",
			want{runfiles.StatusIncomplete, false, "perfect", 5, 4, 1, true, "4 of 5 scored"}},
		{"every bundle judged", "the honest run is complete: the one case with exit 0",
			"rules: []\n",
			want{runfiles.StatusComplete, true, "perfect", 5, 5, 0, true, "(5 of 5 scored)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Without the recovery ladder, which would salvage the failed
			// bundles (degraded: TestLadderDegradedBundleIsNeverASuccess).
			// Small teams: the five bundles are the point.
			res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", small, withScript(t, tc.script), withoutRecovery)
			if err != nil {
				t.Fatal(err)
			}
			a := res.Aggregate
			got := want{res.Status, res.OK, a.Level, a.Planned, a.Scored, a.Failed, a.Median != nil, tc.want.report}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("%s (-want +got)\n%s", tc.why, d)
			}
			f := readResult(t, res.Dir)
			if f.Status != tc.want.status || f.OK != tc.want.ok || f.Aggregate.Level != tc.want.level || f.Aggregate.Scored != tc.want.scored ||
				f.Aggregate.Planned != tc.want.planned || (f.Aggregate.Median != nil) != tc.want.median {
				t.Errorf("result.json: %+v", f)
			}
			// Issue 9.3: result.json was written before telemetry was computed.
			if f.Telemetry.Calls == 0 || f.Telemetry.Calls != res.Telemetry.Calls || f.Telemetry.BundlesScored != tc.want.scored {
				t.Errorf("result.json telemetry: %d calls, %d scored; the run made %d calls", f.Telemetry.Calls, f.Telemetry.BundlesScored, res.Telemetry.Calls)
			}
			md, _ := os.ReadFile(filepath.Join(res.Dir, "report.md"))
			if !strings.Contains(string(md), tc.want.report) {
				t.Errorf("report.md does not say %q", tc.want.report)
			}
			if a.Scored == 0 && strings.Contains(string(md), "✅") {
				t.Error("report.md shows a perfect mark although nothing was judged")
			}
		})
	}
}

// Issue 9.3: a run that fails or is interrupted before sealing still leaves
// result.json with ok false, the error, its class and the phase.
func TestEarlyEndingStillWritesResultJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		why       string
		script    string
		cancelAt  string // phase whose start cancels the run
		status    string
		phase     string
		class     string
		interrupt bool
	}{
		{"decomposition fails", "phase 1 failure left no result.json",
			"rules: [{schema: decomposition, fault: malformed_json}]\n", "", runfiles.StatusFailed, "1", "unparseable", false},
		{"seal fails", "phase 1.5 failure left no result.json",
			"rules: [{schema: sealed_criteria, fault: malformed_json}]\n", "", runfiles.StatusFailed, "1.5", "unparseable", false},
		{"interrupted before sealing", "Ctrl-C before the seal left no result.json",
			"rules: []\n", "1.5", runfiles.StatusInterrupted, "1.5", "cancelled", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			o := nexus.Options{Config: defaultConfig(t), Mission: loadMission(t, "api-design.md"), Scale: "ss-50", Provider: providers.Ref{Kind: "mock", Model: "honest"},
				OutDir: filepath.Join(t.TempDir(), "run")}
			withScript(t, tc.script)(&o)
			if tc.cancelAt != "" {
				o.Observers = []events.Observer{events.ObserverFunc(func(e events.Event) {
					if e.Kind == events.PhaseStart && string(e.Phase) == tc.cancelAt {
						cancel()
					}
				})}
			}
			res, err := nexus.Run(ctx, o)
			if err == nil || errors.Is(err, nexus.ErrInterrupted) != tc.interrupt {
				t.Fatalf("err = %v", err)
			}
			f := readResult(t, o.OutDir)
			if f.OK || f.Status != tc.status || f.Phase != tc.phase || f.FailureClass != tc.class || f.Error == "" {
				t.Errorf("%s: result.json ok=%v status=%q phase=%q class=%q error=%q", tc.why, f.OK, f.Status, f.Phase, f.FailureClass, f.Error)
			}
			if f.Aggregate.Level != "none" || f.Aggregate.Scored != 0 || f.Aggregate.Planned != res.Plan.Commanders {
				t.Errorf("aggregate of a run that judged nothing: %+v", f.Aggregate)
			}
			if f.Telemetry.Calls != res.Telemetry.Calls {
				t.Errorf("result.json telemetry %d calls, run %d", f.Telemetry.Calls, res.Telemetry.Calls)
			}
		})
	}
}

// Issue 9.4: tampering detected mid-run makes the run invalid (exit 4 in the CLI).
func TestTamperingMakesTheRunInvalid(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "incident-runbook.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
		dir := o.OutDir
		o.Observers = append(o.Observers, events.ObserverFunc(func(e events.Event) {
			if e.Kind == events.Sealed {
				path := filepath.Join(dir, "sealed", "envelope.json")
				b, _ := os.ReadFile(path)
				_ = os.WriteFile(path, []byte(strings.Replace(string(b), `"sc-01"`, `"sc-1"`, 1)), 0o600)
			}
		}))
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runfiles.StatusInvalid || res.OK || res.Aggregate.Scored != 0 || res.Aggregate.Level != "none" {
		t.Errorf("status %q ok %v aggregate %+v, want invalid, not ok, nothing scored", res.Status, res.OK, res.Aggregate)
	}
	if f := readResult(t, res.Dir); f.Status != runfiles.StatusInvalid || !strings.Contains(f.Error, "invalid") {
		t.Errorf("result.json status %q error %q", f.Status, f.Error)
	}
}

// ceilingAtBundles wraps the mock so the cost ceiling is reached at a known
// point: every commander's bundle call waits until all five commanders have
// finished their workers; then the first one answers with a usage that
// exceeds the ceiling and the others wait for the ceiling to stop them.
func ceilingAtBundles(commanders int) func(providers.Ref, providers.Provider) providers.Provider {
	var mu sync.Mutex
	waiting, first := 0, true
	all := make(chan struct{})
	return func(_ providers.Ref, p providers.Provider) providers.Provider {
		return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
			if req.Schema == nil || req.Schema.Name != vocab.SchemaBundle || req.Caller.Role != "commander" {
				return p.Complete(ctx, req)
			}
			mu.Lock()
			if waiting++; waiting == commanders {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
			case <-ctx.Done():
				return providers.Response{}, ctx.Err()
			}
			mu.Lock()
			me := first
			first = false
			mu.Unlock()
			if !me {
				<-ctx.Done() // the ceiling stops this commander
				return providers.Response{}, ctx.Err()
			}
			resp, err := p.Complete(ctx, req)
			resp.Usage.InputTokens = 1 << 40 // far past the ceiling
			return resp, err
		})
	}
}

// Issue 9.5: the cost ceiling keeps the work that finished (bundles built
// from finished atoms, marked salvaged and judged) and marks the run partial.
func TestCostCeilingSalvagesFinishedAtoms(t *testing.T) {
	t.Parallel()
	res, err := runMissionWith(t, loadMission(t, "api-design.md"), "ss-100", "mock:honest", []nexus.Option{nexus.WithProviderWrap(ceilingAtBundles(5))})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runfiles.StatusPartial || res.OK {
		t.Fatalf("status %q ok %v, want partial", res.Status, res.OK)
	}
	salvaged := 0
	for _, b := range res.Bundles {
		if b.Failed {
			t.Errorf("%s: failed (%s: %s) although its %d atoms finished", b.ID, b.FailureClass, b.Error, b.Atoms-b.AtomsFailed)
			continue
		}
		if b.ShadowScore == nil {
			t.Errorf("%s: not judged", b.ID)
		}
		if !b.Salvaged {
			continue
		}
		salvaged++
		var file struct {
			Salvaged bool `json:"salvaged"`
			Bundle   struct{ Summary string }
		}
		raw, _ := os.ReadFile(filepath.Join(res.Dir, "bundles", b.ID+".json"))
		if err := json.Unmarshal(raw, &file); err != nil || !file.Salvaged || !strings.HasPrefix(file.Bundle.Summary, "Salvaged") {
			t.Errorf("%s: bundles/%s.json does not say it was salvaged: %s", b.ID, b.ID, raw)
		}
	}
	// One commander assembled its bundle (its call crossed the ceiling); the
	// four stopped while waiting keep their workers' 15 atoms each.
	if salvaged != 4 {
		t.Errorf("%d bundles salvaged, want 4", salvaged)
	}
	a := res.Aggregate
	if a.Salvaged != salvaged || a.Scored != 5 || a.Planned != 5 {
		t.Errorf("aggregate %+v, %d salvaged", a, salvaged)
	}
	f := readResult(t, res.Dir)
	if f.Status != runfiles.StatusPartial || !strings.Contains(f.Error, "cost ceiling") || !strings.Contains(f.Error, "4 salvaged") {
		t.Errorf("result.json status %q error %q", f.Status, f.Error)
	}
	md, _ := os.ReadFile(filepath.Join(res.Dir, "report.md"))
	if !strings.Contains(string(md), "**Partial run**") || strings.Count(string(md), "(salvaged)") != 4 {
		t.Errorf("report.md does not show the partial run and its 4 salvaged bundles")
	}
}

// Issue 9.5 and 9.6: a ceiling that stops launches leaves commanders
// without bundles (cancelled, not a provider's class), and telemetry counts
// the agents that launched apart from those planned.
func TestCostCeilingStopsLaunchesAndTelemetrySaysSo(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "api-design.md"), "ss-100", "mock:honest", func(o *nexus.Options) {
		k := o.Config.Providers["mock"]
		k.InputPerMTok, k.OutputPerMTok = 1000, 4000 // the ceiling is spent before the commanders launch
		o.Config.Providers["mock"] = k
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runfiles.StatusPartial || res.Aggregate.Level != "none" || res.Aggregate.Scored != 0 {
		t.Fatalf("status %q aggregate %+v, want partial with nothing judged", res.Status, res.Aggregate)
	}
	for _, b := range res.Bundles {
		if !b.Failed || b.FailureClass != nexus.ClassCancelled {
			t.Errorf("%s: failed %v class %q, want a cancelled failure (%s)", b.ID, b.Failed, b.FailureClass, b.Error)
		}
	}
	tl := res.Telemetry
	if d := cmp.Diff(runfiles.AgentTally{Nexus: 1, Total: 1}, tl.AgentsLaunched); d != "" {
		t.Errorf("launched (-want +got)\n%s", d)
	}
	if tl.Agents.Total != 89 {
		t.Errorf("planned %d agents, want 89", tl.Agents.Total)
	}
}

// Issue 9.6: planned and launched agents are told apart, role by role.
func TestTelemetryCountsLaunchedAgentsApartFromPlanned(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest",
		withScript(t, "rules: [{schema: bundle, fault: malformed_json}]\n"), withoutRecovery) // no bundle at all: the ladder would salvage them
	if err != nil {
		t.Fatal(err)
	}
	// Every commander and worker ran; with no bundle there was nothing to
	// review, so no reviewer started although the plan has 8.
	want := runfiles.AgentTally{Nexus: 1, Commanders: 5, Workers: 75, Reviewers: 0, Total: 81}
	if d := cmp.Diff(want, res.Telemetry.AgentsLaunched); d != "" {
		t.Errorf("launched (-want +got)\n%s", d)
	}
	if d := cmp.Diff(runfiles.AgentTally{Nexus: 1, Commanders: 5, Workers: 75, Reviewers: 8, Total: 89}, res.Telemetry.Agents); d != "" {
		t.Errorf("planned (-want +got)\n%s", d)
	}
	b, _ := os.ReadFile(filepath.Join(res.Dir, "telemetry.json"))
	var tj map[string]any
	_ = json.Unmarshal(b, &tj)
	if _, ok := tj["agents_launched"]; !ok {
		t.Errorf("telemetry.json has no agents_launched: %s", b)
	}
}

// Issue 9.7: bundles cut off by Ctrl-C are cancelled, not timed out or failed
// with a provider's class.
func TestInterruptedBundlesAreCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	n := 0 // observers are called one event at a time
	o := nexus.Options{Config: defaultConfig(t), Registry: mockRegistry(mock.Options{}), Mission: loadMission(t, "api-design.md"),
		Scale: "ss-100", Provider: providers.Ref{Kind: "mock", Model: "honest"}, OutDir: filepath.Join(t.TempDir(), "run")}
	o.Observers = []events.Observer{events.ObserverFunc(func(e events.Event) {
		if e.Kind == events.LLMCall && e.Phase == "4" {
			if n++; n == 20 {
				cancel()
			}
		}
	})}
	res, err := nexus.Run(ctx, o)
	if !errors.Is(err, nexus.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	failed := 0
	for _, b := range res.Bundles {
		if !b.Failed {
			continue
		}
		failed++
		if b.FailureClass != nexus.ClassCancelled {
			t.Errorf("%s: failure class %q, want cancelled (%s)", b.ID, b.FailureClass, b.Error)
		}
	}
	if failed == 0 {
		t.Fatal("fixture: the interruption cut off no bundle")
	}
	f := readResult(t, res.Dir)
	if f.Status != runfiles.StatusInterrupted || f.FailureClass != string(nexus.ClassCancelled) || f.Phase != "4" {
		t.Errorf("result.json status %q class %q phase %q", f.Status, f.FailureClass, f.Phase)
	}
	for _, b := range f.Bundles {
		if b.Failed && b.FailureClass != string(nexus.ClassCancelled) {
			t.Errorf("result.json %s: class %q", b.ID, b.FailureClass)
		}
	}
}

// --out: a file or a non-empty directory is refused (bad input, nothing
// written); --force reuses a directory without following a symbolic link
// planted in it.
func TestOutDirIsNewOrEmptyAndLinksAreNeverFollowed(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	target := filepath.Join(tmp, "outside.txt")
	const secret = "must stay as it is\n"
	if err := os.WriteFile(target, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(tmp, "a-file")
	if err := os.WriteFile(file, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(tmp, "planted")
	if err := os.Mkdir(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(planted, "transcripts.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(planted, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		why     string
		out     string
		force   bool
		wantErr bool
	}{
		{"existing file", "--out FILE exited 1 after a failed mkdir; it is bad input", file, false, true},
		{"non-empty directory", "a directory with files in it was silently overwritten", planted, false, true},
		{"forced", "--force reuses the directory: the planted link is replaced, its target untouched", planted, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runMission(t, loadMission(t, "api-design.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
				o.OutDir, o.Force = tc.out, tc.force
			})
			if tc.wantErr != (err != nil) || (err != nil && !errors.Is(err, config.ErrBadInput)) {
				t.Fatalf("%s: err = %v", tc.why, err)
			}
			if b, _ := os.ReadFile(target); string(b) != secret {
				t.Errorf("%s: the link's target was written: %q", tc.why, b)
			}
			if b, _ := os.ReadFile(file); string(b) != secret {
				t.Errorf("%s: the --out file was changed: %q", tc.why, b)
			}
			if tc.wantErr {
				if _, err := os.Lstat(filepath.Join(planted, "events.jsonl")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s: a refused run wrote into the directory", tc.why)
				}
				return
			}
			fi, err := os.Lstat(filepath.Join(res.Dir, "transcripts.jsonl"))
			if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
				t.Errorf("transcripts.jsonl is not the run's own regular file: %v %v", fi, err)
			}
			if b, _ := os.ReadFile(filepath.Join(planted, "notes.txt")); string(b) != "mine" {
				t.Error("--force removed a file that is not a run's")
			}
		})
	}
}

func TestNegativeReplaysIsBadInput(t *testing.T) {
	t.Parallel()
	_, err := runMission(t, "# m\n\nplan it", "ss-50", "mock:honest", func(o *nexus.Options) { o.Replays = -3 })
	if !errors.Is(err, config.ErrBadInput) || !strings.Contains(err.Error(), "-3") {
		t.Fatalf("err = %v, want ErrBadInput naming -3", err)
	}
}
