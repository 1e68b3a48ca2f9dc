package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/shadow"
)

func testApp() (*App, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return newApp(strings.NewReader(""), &out, &errb), &out, &errb
}

func code(err error) int { return exitCodeOf(err) }

// smallTeams is a --config body for tests that look at what a run does,
// not at how many agents it has: at every scale at most three workers per
// commander, two squad leads of two workers and two reviewers (the
// commanders, depth and criteria stay), a fifth of the calls or fewer.
const smallTeams = "scales:\n" +
	"  ss-50: {workers_per_commander: 3, reviewers: 2}\n" +
	"  ss-100: {workers_per_commander: 3, reviewers: 2}\n" +
	"  ss-250: {squad_leads_per_commander: 2, workers_per_squad_lead: 2, reviewers: 2}\n"

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// execCLI runs the swarm command line with args, as main does, and returns
// the exit code and what it printed.

func execCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	app, out, errb := testApp()
	err := execute(t.Context(), app, args)
	return code(err), out.String(), errb.String()
}

func specTests(n, failed int, category string) string {
	var tests []string
	for i := 0; i < n; i++ {
		st := "passed"
		if i < failed {
			st = "failed"
		}
		tests = append(tests, fmt.Sprintf(`{"name":"t%02d","status":%q,"category":%q,"message":"m%d"}`, i, st, category, i))
	}
	return `{"tests":[` + strings.Join(tests, ",") + `]}`
}

func TestShadowScoreExitCodes(t *testing.T) {
	t.Parallel()
	at15 := writeFile(t, "s.json", specTests(20, 3, "edge_case")) // 3 of 20 failed = 15.0
	all := writeFile(t, "all.json", specTests(4, 4, "security"))  // 100.0
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"score equal to threshold passes", []string{"--sealed", at15, "--threshold", "15"}, 0},
		{"score above threshold fails", []string{"--sealed", at15, "--threshold", "14.9", "--format", "summary"}, 1},
		{"threshold 0 fails any failure", []string{"--sealed", at15, "--threshold", "0"}, 1},
		{"no threshold exits 0 even at 100", []string{"--sealed", all}, 0},
		{"missing --sealed is bad usage", []string{}, 2},
		{"unknown format is bad usage", []string{"--sealed", at15, "--format", "xml"}, 2},
		{"non-numeric threshold is bad usage", []string{"--sealed", at15, "--threshold", "high"}, 2},
		{"unreadable input is bad usage", []string{"--sealed", "/nonexistent.json"}, 2},
		{"unreadable open input is bad usage", []string{"--sealed", at15, "--open", "/nonexistent.json"}, 2},
		{"not JSON is bad usage", []string{"--sealed", writeFile(t, "x.json", "nope")}, 2},
		{"missing tests is an empty suite: refused, never perfect", []string{"--sealed", writeFile(t, "e.json", "{}"), "--threshold", "0"}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, out, errb := execCLI(t, append([]string{"shadow", "score"}, tc.args...)...)
			if got != tc.want {
				t.Errorf("exit %d, want %d\n%s%s", got, tc.want, out, errb)
			}
		})
	}
}

func TestShadowScoreOutput(t *testing.T) {
	t.Parallel()
	sealed := writeFile(t, "s.json", `{"tests":[
		{"name":"login ok","status":"passed","category":"happy_path"},
		{"name":"expired token","status":"failed","category":"edge_case","expected":"401","actual":"500","message":"wrong status"},
		{"status":"failed"},
		{"name":"skipped one","status":"skipped","category":"security"}]}`)
	open := writeFile(t, "o.json", specTests(3, 1, "happy_path"))
	code, out, errb := execCLI(t, "shadow", "score", "--sealed", sealed, "--open", open)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := map[string]any{
		"shadow_score_spec_version": "2.0.0",
		"report":                    map[string]any{"shadow_score": 50.0, "level": "significant"},
		"sealed_tests":              map[string]any{"total": 4.0, "passed": 2.0, "failed": 2.0},
		"open_tests":                map[string]any{"total": 3.0, "passed": 2.0, "failed": 1.0},
		"failures": []any{
			map[string]any{"test_name": "expired token", "category": "edge_case", "expected": "401", "actual": "500", "message": "wrong status"},
			map[string]any{"test_name": "unknown", "category": "unknown", "expected": "", "actual": "", "message": ""},
		},
		"coverage_comparison": map[string]any{
			"happy_path":     map[string]any{"sealed": 1.0, "open": 3.0, "delta": -2.0},
			"edge_case":      map[string]any{"sealed": 1.0, "open": 0.0, "delta": 1.0},
			"error_handling": map[string]any{"sealed": 0.0, "open": 0.0, "delta": 0.0},
			"security":       map[string]any{"sealed": 1.0, "open": 0.0, "delta": 1.0},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("json output (-want +got)\n%s", d)
	}
	_, out, _ = execCLI(t, "shadow", "score", "--sealed", sealed, "--open", open, "--format", "summary")
	wantSummary := "Shadow Score: 50.0% 🟠 (significant)\nSealed: 2/4 passed\nOpen:   2/3 passed\n\nFailures (2):\n  ❌ expired token: wrong status\n  ❌ unknown: \n"
	if d := cmp.Diff(wantSummary, out); d != "" {
		t.Errorf("summary (-want +got)\n%s", d)
	}
	// Without --open there is neither open_tests nor coverage_comparison,
	// and failures is an empty list, never null.
	_, out, _ = execCLI(t, "shadow", "score", "--sealed", writeFile(t, "p.json", specTests(3, 0, "security")))
	if strings.Contains(out, "open_tests") || strings.Contains(out, "coverage_comparison") || !strings.Contains(out, `"failures": []`) {
		t.Errorf("sealed-only output:\n%s", out)
	}
}

func TestRunCommandOfflineAndBadInput(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	app, out, errb := testApp()
	app.ConfigPath = writeFile(t, "config.yml", smallTeams) // serial: the smaller, the shorter the package's serial part
	dir := filepath.Join(t.TempDir(), "run")
	err := runRun(t.Context(), app, RunOptions{MissionArg: "../../examples/missions/api-design.md", Scale: "ss-50", Out: dir, Quiet: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	if !strings.Contains(out.String(), "Run complete") {
		t.Errorf("no summary: %s", out)
	}
	if code(runShadowVerify(app, ShadowVerifyOptions{Target: dir})) != 0 {
		t.Error("fresh run does not verify")
	}
	env := filepath.Join(dir, "sealed", "envelope.json")
	b, _ := os.ReadFile(env)
	tampered := strings.Replace(string(b), `"sc-01"`, `"sc-1"`, 1)
	if tampered == string(b) {
		t.Fatal("fixture: nothing to tamper with")
	}
	os.WriteFile(env, []byte(tampered), 0o600)
	if got := code(runShadowVerify(app, ShadowVerifyOptions{Target: dir})); got != 4 {
		t.Errorf("tampered envelope: exit %d, want 4", got)
	}
	// A forger who rewrites a criterion and the envelope's own sealed_hash
	// is caught by the hash the run committed in events.jsonl.
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var crit []shadow.Criterion
	cb, _ := json.Marshal(doc["criteria"])
	_ = json.Unmarshal(cb, &crit)
	crit[0].Expected = "anything at all"
	doc["criteria"] = crit
	doc["sealed_hash"], _ = shadow.HashCriteria(crit)
	forged, _ := json.Marshal(doc)
	os.WriteFile(env, forged, 0o600)
	if loaded, err := shadow.LoadSealed(env); err != nil || loaded.Verify() != nil {
		t.Fatalf("fixture: the forged envelope should be self-consistent: %v", err)
	}
	if got := code(runShadowVerify(app, ShadowVerifyOptions{Target: dir})); got != 4 {
		t.Errorf("self-consistent forged envelope in a run directory: exit %d, want 4", got)
	}
	if got := code(runShadowVerify(app, ShadowVerifyOptions{Target: env})); got != 0 {
		t.Errorf("the forged envelope file alone is self-consistent: exit %d, want 0", got)
	}
	for _, tc := range []struct {
		name string
		o    RunOptions
	}{
		{"no mission", RunOptions{}},
		{"empty mission", RunOptions{MissionText: "   "}},
		{"unreadable mission", RunOptions{MissionArg: "/nonexistent.md"}},
		{"unknown scale", RunOptions{MissionText: "x", Scale: "ss-999"}},
		{"bad model flag", RunOptions{MissionText: "x", Models: []string{"judge"}}},
		{"unknown spec version", RunOptions{MissionText: "x", Spec: "3.0.0"}},
		{"unknown provider kind", RunOptions{MissionText: "x", Provider: "nope:x"}},
		{"missing API key", RunOptions{MissionText: "x", Provider: "openai:gpt-4.1"}},
		{"binary mission (was accepted and sent to every agent)", RunOptions{MissionText: "Audit\x00\x7fELF", Provider: "mock:honest"}},
		{"escape sequences in the mission", RunOptions{MissionText: "Audit\x1b[2J", Provider: "mock:honest"}},
		{"mission over the default 64 KiB cap (a 10 MB one ran up cost)", RunOptions{MissionText: strings.Repeat("word ", 14000), Provider: "mock:honest"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", "")
			app, _, _ := testApp()
			tc.o.Out = filepath.Join(t.TempDir(), "r")
			if got := code(runRun(t.Context(), app, tc.o)); got != 2 {
				t.Errorf("exit %d, want 2", got)
			}
			if _, err := os.Stat(tc.o.Out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("bad input left a run directory behind (stat: %v)", err)
			}
		})
	}
}

func TestRunRefusesNonTextMissionFile(t *testing.T) {
	t.Parallel()
	app, _, _ := testApp()
	path := writeFile(t, "m.md", "# Title\nline two\x00binary")
	out := filepath.Join(t.TempDir(), "r")
	err := runRun(t.Context(), app, RunOptions{MissionArg: path, Provider: "mock:honest", Out: out, Quiet: true})
	if code(err) != 2 || !strings.Contains(err.Error(), "mission "+path+": byte 16 (line 2, column 9): a NUL byte") {
		t.Fatalf("err = %v, want exit 2 naming the byte", err)
	}
}

func TestRunSpecV1AndShadowReport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, spec, wantVersion, wantTitle string
	}{
		{"default is the v2 Shadow Report", "", "2.0.0", "# Shadow Report: "},
		{"--spec 1.0.0 gives the v1 Gap Report", "1.0.0", "1.0.0", "# Gap Report: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, _, errb := testApp()
			dir := filepath.Join(t.TempDir(), "run")
			if err := runRun(t.Context(), app, RunOptions{MissionArg: "../../examples/missions/incident-runbook.md", Scale: "ss-50", Out: dir, Quiet: true, Spec: tc.spec}); err != nil {
				t.Fatalf("%v\n%s", err, errb)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "reports", "*.json"))
			if len(files) == 0 {
				t.Fatal("no reports written")
			}
			for _, f := range files {
				b, _ := os.ReadFile(f)
				if err := shadow.ValidateReport(b); err != nil {
					t.Errorf("%s: %v", f, err)
				}
				var r map[string]any
				_ = json.Unmarshal(b, &r)
				if r["shadow_score_spec_version"] != tc.wantVersion {
					t.Errorf("%s: spec version %v, want %s", f, r["shadow_score_spec_version"], tc.wantVersion)
				}
				_, hasHardening := r["hardening"]
				if !hasHardening { // v1 Gap Reports keep their hardening block too
					t.Errorf("%s: hardening block present = %v in a %s report", f, hasHardening, tc.wantVersion)
				}
			}
			code, out, errs := execCLI(t, "shadow", "report", dir)
			var reps []map[string]any
			if code != 0 || json.Unmarshal([]byte(out), &reps) != nil || len(reps) != len(files) {
				t.Fatalf("shadow report --format json: exit %d, %d reports for %d files\n%s%s", code, len(reps), len(files), out, errs)
			}
			code, out, _ = execCLI(t, "shadow", "report", dir, "--format", "md")
			if code != 0 || strings.Count(out, tc.wantTitle) != len(files) || !strings.Contains(out, "Shadow Score: ") {
				t.Errorf("shadow report --format md: exit %d\n%s", code, out)
			}
			if code, _, _ := execCLI(t, "shadow", "report", dir, "--format", "html"); code != 2 {
				t.Errorf("bad --format: exit %d, want 2", code)
			}
		})
	}
	if code, _, _ := execCLI(t, "shadow", "report", t.TempDir()); code != 2 {
		t.Errorf("a directory without reports: exit %d, want 2", code)
	}
}

func TestConfigValidateCommand(t *testing.T) {
	t.Parallel()
	app, out, _ := testApp()
	if code(runConfigValidate(app, ConfigValidateOptions{File: "../../config.yml"})) != 0 || !strings.Contains(out.String(), "ok") {
		t.Fatal("shipped config rejected")
	}
	// The acceptance cases of `swarm config validate`: exit 2, file:line:col and key.
	tests := []struct{ name, yaml, want string }{
		{"unknown key", "run:\n  seed: 1\n  colour: blue\n", ":3:3: key run.colour: unknown key"},
		{"string where a number belongs", "scales:\n  ss-100:\n    commanders: five\n", ":3:17: key scales.ss-100.commanders: wrong type"},
		{"negative timeout", "scales:\n  ss-100:\n    timeouts:\n      call: -1m\n", ":4:7: key scales.ss-100.timeouts.call: negative timeout"},
		{"unknown scale name", "default_scale: ss-999\n", ":1:1: key default_scale: unknown scale"},
		{"model with an unknown provider kind", "models:\n  judge: foo:bar\n", ":2:3: key models.judge: unknown provider kind"},
		{"concurrency 0 serialised the whole run", "scales:\n  ss-100:\n    concurrency: 0\n", ":3:5: key scales.ss-100.concurrency: 0 is out of range 1..100000"},
		{"reviewers: 100000000 passed and then exhausted memory", "scales:\n  ss-100:\n    reviewers: 100000000\n", ":3:5: key scales.ss-100.reviewers: 100000000 is out of range 0..1000"},
		{"an alias bomb", "run: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n", ":6:8: key f[0]: more than 200000 nodes once aliases are expanded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app, out, errb := testApp()
			bad := writeFile(t, "bad.yml", tc.yaml)
			if got := code(runConfigValidate(app, ConfigValidateOptions{File: bad})); got != 2 {
				t.Errorf("exit %d, want 2", got)
			}
			if !strings.Contains(errb.String(), bad+tc.want) {
				t.Errorf("stderr %q lacks %q", errb, bad+tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout not empty: %q", out)
			}
		})
	}
}

func TestSandboxMetricsReproducesGoldenValuesFromJSONL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		file string
		want map[string]float64
	}{
		{"favourable selection", "../../examples/sandbox/golden.jsonl", map[string]float64{"toxicity": 0.2, "quality_gap": 0.6, "spread": -0.9, "quality_correlation": 0.9486832981, "total_welfare": 2.8, "net_social_welfare": 2.0}},
		{"adverse selection", writeFile(t, "adv.jsonl", `{"p":0.3,"accepted":true}
{"p":0.35,"accepted":true}
{"p":0.8,"accepted":false}
{"p":0.85,"accepted":false}
`), map[string]float64{"toxicity": 0.675, "quality_gap": -0.5, "spread": 0.75}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, out, _ := testApp()
			o := SandboxMetricsOptions{File: tc.file, Payoff: sandboxDefaults().Payoff, Proxy: sandboxDefaults().Proxy}
			if err := runSandboxMetrics(app, o); err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if g, _ := got[k].(float64); math.Abs(g-v) > 1e-9 {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
	t.Run("observables lines and per-interaction output", func(t *testing.T) {
		app, out, _ := testApp()
		f := writeFile(t, "obs.jsonl", `{"observables":{"task_progress":0.8,"rework":0,"verifier_rejections":0,"tool_misuse":0,"engagement":0.5},"accepted":true,"ground_truth":1}`+"\n")
		o := SandboxMetricsOptions{File: f, PerInteraction: true, Payoff: sandboxDefaults().Payoff, Proxy: sandboxDefaults().Proxy}
		if err := runSandboxMetrics(app, o); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `"p": 0.8375349374`) || !strings.Contains(out.String(), `"v_hat": 0.82`) {
			t.Errorf("per-interaction values missing:\n%s", out)
		}
	})
	t.Run("bad line names file and line", func(t *testing.T) {
		app, _, _ := testApp()
		f := writeFile(t, "bad.jsonl", "{\"p\":0.5,\"accepted\":true}\n{\"p\":2,\"accepted\":true}\n")
		err := runSandboxMetrics(app, SandboxMetricsOptions{File: f, Payoff: sandboxDefaults().Payoff, Proxy: sandboxDefaults().Proxy})
		if code(err) != 2 || !strings.Contains(err.Error(), f+":2:") {
			t.Fatalf("err = %v", err)
		}
	})
}

func sandboxDefaults() SandboxMetricsOptions {
	return SandboxMetricsOptions{Payoff: sandbox.DefaultPayoffConfig(), Proxy: sandbox.DefaultProxyConfig()}
}

// The collusion example's criteria hold for the seeded run (exit 0), whose
// summary.json records the groups flagged each epoch; they fail (exit 1)
// when the allies do not coordinate or collusion detection is off.
func TestSandboxRunCollusionCriteria(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../examples/scenarios/collusion.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run := func(name, body string) (int, string, map[string]any) {
		t.Helper()
		dir := t.TempDir()
		app, out, _ := testApp()
		got := code(runSandboxRun(t.Context(), app, SandboxRunOptions{Scenario: writeFile(t, name, body), Out: dir}))
		var sum map[string]any
		if b, err := os.ReadFile(filepath.Join(dir, "summary.json")); err == nil {
			_ = json.Unmarshal(b, &sum)
		}
		return got, out.String(), sum
	}
	got, out, sum := run("collusion.yaml", string(src))
	if got != 0 || !strings.Contains(out, "criterion collusion.min_epochs_flagged") || !strings.Contains(out, "criterion collusion.max_outsiders_flagged") {
		t.Fatalf("seeded collusion: exit %d\n%s", got, out)
	}
	epochs, _ := sum["epochs"].([]any)
	flagged := 0
	for _, e := range epochs {
		gs, _ := e.(map[string]any)["collusion_groups"].([]any)
		for _, g := range gs {
			for _, a := range g.([]any) {
				if !strings.HasPrefix(a.(string), "adversarial-") {
					t.Errorf("summary.json: %v flagged in %v", a, g)
				}
			}
		}
		if len(gs) > 0 {
			flagged++
		}
	}
	c, _ := sum["collusion"].(map[string]any)
	if flagged < 20 || c == nil || c["epochs_flagged"] != float64(flagged) {
		t.Errorf("summary.json: collusion groups in %d epochs, collusion %v", flagged, sum["collusion"])
	}
	for _, v := range []struct{ why, from, to string }{
		{"allies not coordinating", "ally_preference: 0.6", "ally_preference: 0"},
		{"collusion detection off", "collusion_detection: {enabled: true", "collusion_detection: {enabled: false"},
	} {
		if !strings.Contains(string(src), v.from) {
			t.Fatalf("collusion.yaml no longer has %q", v.from)
		}
		got, out, _ := run("variant.yaml", strings.Replace(string(src), v.from, v.to, 1))
		if got != 1 || !strings.Contains(out, "collusion.min_epochs_flagged") || !strings.Contains(out, "FAILED") {
			t.Errorf("%s: exit %d, want 1\n%s", v.why, got, out)
		}
	}
	bad := strings.Replace(string(src), "max_outsiders_flagged: 0", "max_outsider_flagged: 0", 1)
	if got, out, _ := run("bad.yaml", bad); got != 2 {
		t.Errorf("misspelt criterion: exit %d, want 2\n%s", got, out)
	}
}

func TestSandboxRunWritesOutputsAndChecksCriteria(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	app, out, _ := testApp()
	if err := runSandboxRun(t.Context(), app, SandboxRunOptions{Scenario: "../../examples/scenarios/baseline.yaml", Epochs: 3, Out: dir}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// the per-epoch table: a header and one row per epoch, all aligned
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[1], "epoch") {
		t.Fatalf("no per-epoch table:\n%s", out)
	}
	for i, l := range lines[2:5] {
		if len(l) != len(lines[1]) || !strings.HasSuffix(strings.Fields(l)[0], fmt.Sprint(i+1)) {
			t.Errorf("row %q not aligned with header %q", l, lines[1])
		}
	}
	for _, f := range []string{"epochs.csv", "agents.csv", "events.jsonl", "summary.json", "toxicity.png", "toxicity.svg", "welfare.png", "p_distribution.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s missing or empty", f)
		}
	}
	strict := writeFile(t, "strict.yaml", "scenario_id: s\nagents:\n  - {type: adversarial, count: 3}\nsimulation: {epochs: 2, steps_per_epoch: 5, seed: 1}\nsuccess_criteria:\n  max_toxicity: 0.01\n")
	app, out, _ = testApp()
	if got := code(runSandboxRun(t.Context(), app, SandboxRunOptions{Scenario: strict, Out: t.TempDir()})); got != 1 {
		t.Errorf("failed criterion exit %d, want 1\n%s", got, out)
	}
	bad := writeFile(t, "bad.yaml", "scenario_id: s\nagents: []\n")
	if got := code(runSandboxRun(t.Context(), app, SandboxRunOptions{Scenario: bad, Out: t.TempDir()})); got != 2 {
		t.Errorf("bad scenario exit %d, want 2", got)
	}
}

func TestSandboxRunRefusesTooBigAndStopsOnInterrupt(t *testing.T) {
	t.Parallel()
	// A count over the bound is refused before anything is allocated; a
	// complete network is implicit now, but with collusion detection every
	// pair that interacts keeps a history: 10 000 agents over 1000 steps
	// are within the bound on agents but not within the memory budget.
	for _, tc := range []struct{ name, yaml, want string }{
		{"count over the bound", "scenario_id: s\nagents:\n  - {type: honest, count: 2000000}\n", ":3:20: agents[0].count: 2000000 is out of range 1..1000000"},
		{"over the memory budget", "scenario_id: s\nagents:\n  - {type: honest, count: 10000}\nsimulation: {epochs: 100, steps_per_epoch: 10}\ngovernance: {collusion_detection: {enabled: true}}\n", "10000 agents on a complete network"},
		{"negative epochs", "scenario_id: s\nagents:\n  - {type: honest, count: 3}\nsimulation: {epochs: -2}\n", ":4:14: simulation.epochs: -2 is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, _, _ := testApp()
			out := filepath.Join(t.TempDir(), "out")
			err := runSandboxRun(t.Context(), app, SandboxRunOptions{Scenario: writeFile(t, "s.yaml", tc.yaml), Out: out})
			if got := code(err); got != 2 || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("exit %d, %v; want 2 and %q", got, err, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("the output directory was created for a refused scenario")
			}
		})
	}
	// --memory-budget-mb raises the budget: the refusal above is a limit, not a wall.
	app, _, _ := testApp()
	big := writeFile(t, "big.yaml", "scenario_id: s\nagents:\n  - {type: honest, count: 3000}\nsimulation: {epochs: 1, steps_per_epoch: 1}\n")
	if err := runSandboxRun(t.Context(), app, SandboxRunOptions{Scenario: big, Out: t.TempDir(), MemoryBudgetMB: 1}); code(err) != 2 {
		t.Errorf("1 MB budget: %v, want exit 2", err)
	}
	if err := runSandboxRun(t.Context(), app, SandboxRunOptions{Scenario: big, Out: t.TempDir(), Epochs: -1}); code(err) != 2 {
		t.Errorf("--epochs -1: %v, want exit 2", err)
	}
	// Ctrl-C: a cancelled context ends the run with exit 130, also while
	// the agents and the network are being allocated.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	app, _, errb := testApp()
	if got := code(runSandboxRun(ctx, app, SandboxRunOptions{Scenario: big, Out: t.TempDir()})); got != 130 {
		t.Errorf("interrupted: exit %d, want 130", got)
	}
	if !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("no interruption message: %q", errb.String())
	}
}

func TestRunJSONStreamsEveryEventInOrder(t *testing.T) {
	t.Parallel()
	app, out, errb := testApp()
	dir := filepath.Join(t.TempDir(), "run")
	if err := runRun(t.Context(), app, RunOptions{MissionArg: "../../examples/missions/test-gap-hunt.md", Scale: "ss-100", Out: dir, JSON: true}); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, l := range lines {
		var e struct {
			Seq  int    `json:"seq"`
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("stdout line %d is not an event: %v: %q", i+1, err, l)
		}
		// 89 agents run concurrently; the stream must still be in seq order.
		if e.Seq != i+1 {
			t.Fatalf("stdout line %d has seq %d", i+1, e.Seq)
		}
	}
	logged, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if n := strings.Count(string(logged), "\n"); n != len(lines) {
		t.Errorf("streamed %d events, events.jsonl holds %d", len(lines), n)
	}
}

func TestSandboxMetricsConfigFlag(t *testing.T) {
	t.Parallel()
	golden := "../../examples/sandbox/golden.jsonl"
	metrics := func(t *testing.T, args ...string) map[string]any {
		t.Helper()
		app, out, errb := testApp()
		root := newRootCmd(app)
		root.SetArgs(append([]string{"sandbox", "metrics", golden}, args...))
		if err := root.ExecuteContext(t.Context()); err != nil {
			t.Fatalf("%v\n%s", err, errb)
		}
		var got map[string]any
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	// s⁺ 3 only: the other payoff parameters keep their defaults (s⁻ 1, h 2).
	cfg := writeFile(t, "payoff.yaml", "payoff:\n  s_plus: 3\n")
	tests := []struct {
		name        string
		args        []string
		welfare, be float64
	}{
		{"--config is this command's payoff/proxy file, not swarm's configuration", []string{"--config", cfg}, 2.6 + 1.8, 0.25},
		{"a flag given explicitly wins over the file", []string{"--config", cfg, "--s-plus", "2"}, 2.8, 1.0 / 3},
		{"an empty file means defaults", []string{"--config", writeFile(t, "empty.yaml", "")}, 2.8, 1.0 / 3},
		{"an empty section means defaults", []string{"--config", writeFile(t, "null.yaml", "payoff:\nproxy:\n")}, 2.8, 1.0 / 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := metrics(t, tc.args...)
			if w := got["total_welfare"].(float64); math.Abs(w-tc.welfare) > 1e-9 {
				t.Errorf("total_welfare = %v, want %v", w, tc.welfare)
			}
			if be := got["break_even"].(float64); math.Abs(be-tc.be) > 1e-9 {
				t.Errorf("break_even = %v, want %v", be, tc.be)
			}
		})
	}
	t.Run("an unknown key names file, line and key", func(t *testing.T) {
		bad := writeFile(t, "bad.yaml", "payoff:\n  s_plu: 3\n")
		err := runSandboxMetrics(&App{}, SandboxMetricsOptions{File: golden, ConfigFile: bad, Payoff: sandboxDefaults().Payoff, Proxy: sandboxDefaults().Proxy})
		if code(err) != 2 || !strings.Contains(err.Error(), bad+`:2:3: payoff.s_plu: unknown key "s_plu"`) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestSandboxIncoherenceCommand(t *testing.T) {
	t.Parallel()
	f := writeFile(t, "dec.jsonl", `{"task_family":"f","decision_id":"a","replay":0,"action":"x","benchmark":"x"}
{"task_family":"f","decision_id":"a","replay":1,"action":"y"}
{"task_family":"f","decision_id":"a","replay":2,"action":"x"}
{"task_family":"f","decision_id":"a","replay":3,"action":""}
{"task_family":"f","decision_id":"b","replay":0,"action":"z"}
{"task_family":"f","decision_id":"b","replay":1,"action":"z"}
`)
	app, out, _ := testApp()
	if err := runSandboxIncoherence(app, SandboxIncoherenceOptions{File: f, Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var r sandbox.IncoherenceReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	// a: x, y, x (one abstention dropped): D = 1/3, E = 1/3 against benchmark x; b: D 0, no benchmark.
	if len(r.Points) != 2 || r.Abstentions != 1 || math.Abs(r.Points[0].D-1.0/3) > 1e-12 || math.Abs(r.Points[0].E-1.0/3) > 1e-12 ||
		r.Points[1].D != 0 || r.Points[1].HasBench || math.Abs(r.MeanD-1.0/6) > 1e-12 {
		t.Errorf("report %+v", r)
	}
	app, out, _ = testApp()
	if err := runSandboxIncoherence(app, SandboxIncoherenceOptions{File: f, Format: "table"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "n/a") || !strings.Contains(out.String(), "0.333") {
		t.Errorf("table:\n%s", out)
	}
	bad := writeFile(t, "bad.jsonl", "{\"decision_id\":\"a\",\"action\":\"x\"}\nnot json\n")
	if err := runSandboxIncoherence(app, SandboxIncoherenceOptions{File: bad, Format: "json"}); code(err) != 2 || !strings.Contains(err.Error(), bad+":2:") {
		t.Errorf("bad line: %v", err)
	}
}

func TestEveryCommandHasAnExample(t *testing.T) {
	t.Parallel()
	app, _, _ := testApp()
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		n++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no example in its help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(app))
	if n < 20 {
		t.Fatalf("walked only %d commands", n)
	}
}

func TestConfigShowMasksSecrets(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	t.Setenv("OPENAI_API_KEY", "sk-test-very-secret")
	cfgPath := writeFile(t, "c.yml", "providers:\n  vllm:\n    base_url: https://bob:hunter2@vllm.example/v1\n")
	for _, format := range []string{"yaml", "json"} {
		app, out, errb := testApp()
		app.ConfigPath = cfgPath
		if err := runConfigShow(app, ConfigShowOptions{Format: format}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		all := out.String() + errb.String()
		for _, secret := range []string{"sk-test-very-secret", "hunter2"} {
			if strings.Contains(all, secret) {
				t.Errorf("%s output shows %q", format, secret)
			}
		}
		if !strings.Contains(all, "OPENAI_API_KEY") || !strings.Contains(all, "set") {
			t.Errorf("%s output does not say which key variable is set:\n%s", format, all)
		}
	}
	app, out, _ := testApp()
	app.ConfigPath = cfgPath
	if err := runProvidersList(app, ProvidersListOptions{Format: "table"}); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "hunter2") || strings.Contains(s, "sk-test-very-secret") {
		t.Errorf("providers list shows a secret:\n%s", s)
	}
}

func TestLogFormatJSONAndLevel(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	t.Setenv("OPENAI_API_KEY", "sk-test-very-secret")
	for _, tc := range []struct {
		level    string
		wantCall bool // LLM calls are logged at debug
	}{{"debug", true}, {"info", false}} {
		t.Run(tc.level, func(t *testing.T) {
			app, _, errb := testApp()
			app.ConfigPath = writeFile(t, "config.yml", smallTeams) // serial: the smaller, the shorter the package's serial part
			app.LogLevel, app.LogFormat = tc.level, "json"
			if err := app.setupLogger(); err != nil {
				t.Fatal(err)
			}
			if err := runRun(t.Context(), app, RunOptions{MissionArg: "../../examples/missions/api-design.md", Scale: "ss-50", Out: filepath.Join(t.TempDir(), "r"), Quiet: true}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
			calls := 0
			for _, l := range lines {
				var rec map[string]any
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatalf("not a JSON log line: %q", l)
				}
				if rec["level"] == nil || rec["msg"] == nil {
					t.Errorf("log line without level or msg: %q", l)
				}
				if rec["msg"] == "llm call" {
					calls++
					if rec["model"] == nil || rec["role"] == nil || rec["outcome"] == nil {
						t.Errorf("llm call log lacks model/role/outcome: %q", l)
					}
				}
			}
			if (calls > 0) != tc.wantCall {
				t.Errorf("%d llm call lines at level %s", calls, tc.level)
			}
			if len(lines) < 5 {
				t.Errorf("only %d log lines", len(lines))
			}
			if strings.Contains(errb.String(), "sk-test-very-secret") {
				t.Error("a secret reached the log")
			}
		})
	}
}

func TestCompareFlagsWinOverTheCompareFile(t *testing.T) {
	t.Parallel()
	mission, err := filepath.Abs("../../examples/missions/api-design.md")
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, "cmp.yaml", "missions: ["+mission+"]\nmodels: [mock:honest]\nrepeats: 3\nscale: ss-50\n")
	cfg := writeFile(t, "config.yml", smallTeams)
	repeats := func(t *testing.T, o CompareOptions) float64 {
		t.Helper()
		app, _, errb := testApp()
		app.ConfigPath = cfg
		o.File, o.Out = file, filepath.Join(t.TempDir(), "cmp")
		if err := runCompare(t.Context(), app, o); err != nil {
			t.Fatalf("%v\n%s", err, errb)
		}
		b, err := os.ReadFile(filepath.Join(o.Out, "compare.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		return doc["repeats"].(float64)
	}
	// --repeats has a default of 3 in cobra; the options here carry what the
	// command line would.
	if got := repeats(t, CompareOptions{Repeats: 1, Changed: map[string]bool{"repeats": true}}); got != 1 {
		t.Errorf("--repeats 1 with a file saying 3: compare ran %v repeats", got)
	}
	if got := repeats(t, CompareOptions{Repeats: 1}); got != 3 {
		t.Errorf("no --repeats, file says 3: compare ran %v repeats", got)
	}
}

func TestRunInteractiveAsksAndAbortsCleanly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		answer   string
		o        RunOptions
		wantCode int
		wantRun  bool
	}{
		{"no aborts before anything is written", "n\n", RunOptions{MissionText: "Plan a test-gap hunt for billing", Scale: "ss-50"}, 1, false},
		{"an empty answer is no", "", RunOptions{MissionText: "Plan a test-gap hunt for billing", Scale: "ss-50"}, 1, false},
		{"yes runs, and --quiet still shows the briefing being confirmed", "y\n", RunOptions{MissionText: "Plan a test-gap hunt for billing", Scale: "ss-50", Quiet: true}, 0, true},
		{"a mission on stdin leaves no stdin for the answer", "y\n", RunOptions{MissionArg: "-", Scale: "ss-50"}, 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			app := newApp(strings.NewReader(tc.answer), &out, &errb)
			tc.o.Interactive = true
			tc.o.Out = filepath.Join(t.TempDir(), "run")
			if got := code(runRun(t.Context(), app, tc.o)); got != tc.wantCode {
				t.Fatalf("exit %d, want %d\n%s", got, tc.wantCode, errb.String())
			}
			_, err := os.Stat(filepath.Join(tc.o.Out, "events.jsonl"))
			if ran := err == nil; ran != tc.wantRun {
				t.Errorf("run directory written: %v, want %v", ran, tc.wantRun)
			}
			if tc.wantCode == 2 {
				return
			}
			for _, want := range []string{"Mission:", "agents", "Criteria: 6 sealed", "Models:", "reviewers mock:honest+mock:honest", "cost ceiling $5.00", "Proceed? [y/N]"} {
				if !strings.Contains(errb.String(), want) {
					t.Errorf("briefing lacks %q:\n%s", want, errb.String())
				}
			}
			if !tc.wantRun && !strings.Contains(errb.String(), "aborted: nothing was run") {
				t.Errorf("no abort message:\n%s", errb.String())
			}
		})
	}
}

func TestBadCompareFileNamesFileLineAndKey(t *testing.T) {
	t.Parallel()
	mission, err := filepath.Abs("../../examples/missions/api-design.md")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown key", "missions: [" + mission + "]\nmodels: [mock:honest]\nrepeat: 5\n", `:3:1: repeat: unknown key "repeat" (known: missions, models,`},
		{"wrong type", "missions: [" + mission + "]\nmodels: mock:honest\n", `:2:9: models: wrong type: want a list, got "mock:honest"`},
		{"deep nesting", "missions: " + strings.Repeat("[", 64<<10), ":1:74: nested more than 64 levels deep"},
		{"bad role value", "missions: [" + mission + "]\nmodels: [mock:honest]\nroles: some\n", `:3: roles "some": want commanders or all`},
		{"bad model", "missions: [" + mission + "]\nmodels: [mock:honest, nonsense]\n", ":2: models: "},
		{"unknown scale", "missions: [" + mission + "]\nmodels: [mock:honest]\nscale: ss-9\n", `:3: scale "ss-9": unknown scale`},
		// a missing second mission is found before the first one runs
		{"missing mission", "missions: [" + mission + ", nope.md]\nmodels: [mock:honest]\n", ":1: missions: read mission"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, "cmp.yaml", tc.yaml)
			app, _, _ := testApp()
			out := filepath.Join(t.TempDir(), "cmp")
			err := runCompare(t.Context(), app, CompareOptions{File: file, Out: out, Repeats: 1, Scale: "ss-50", Roles: "commanders"})
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 2 {
				t.Fatalf("err = %v, want exit 2", err)
			}
			if !strings.Contains(err.Error(), file+tc.want) {
				t.Errorf("error %q does not name %s%s", err, file, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a bad compare file still started a comparison")
			}
		})
	}
}

func TestProvidersListBedrockNeedsCredentialsAndRegion(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load("", newRegistry())
	if err != nil {
		t.Fatal(err)
	}
	status := func(env map[string]string, region string) ProviderStatus {
		kc := cfg.Providers["bedrock"]
		kc.Options = map[string]string{"region": region}
		c := *cfg
		c.Providers = maps.Clone(cfg.Providers)
		c.Providers["bedrock"] = kc
		for _, st := range providerStatuses(&c, newRegistry(), func(k string) string { return env[k] }) {
			if st.Kind == "bedrock" {
				return st
			}
		}
		t.Fatal("no bedrock row")
		return ProviderStatus{}
	}
	if st := status(nil, "us-east-1"); st.Usable || !strings.Contains(st.Status, "credentials") {
		t.Errorf("no credentials: %+v", st)
	}
	if st := status(map[string]string{"AWS_PROFILE": "dev"}, ""); st.Usable || !strings.Contains(st.Status, "region") {
		t.Errorf("no region: %+v", st)
	}
	if st := status(map[string]string{"AWS_PROFILE": "dev", "AWS_REGION": "eu-west-1"}, ""); !st.Usable {
		t.Errorf("AWS_REGION set: %+v", st)
	}
	if st := status(map[string]string{"AWS_ACCESS_KEY_ID": "AKID"}, "us-east-1"); !st.Usable {
		t.Errorf("credentials and options.region: %+v", st)
	}
}

// What `swarm config validate` accepts under providers: is exactly what the
// adapters register: every kind and every option a kind declares
// (providers.KindInfo.Options) passes; an option its kind does not read and
// a kind nothing registers are refused at file:line:col with exit 2, the
// message listing what the registry holds. (The lists used to be copied
// into nexus and kept in step by a test.)
func TestConfigValidateKnowsEveryRegisteredKindAndItsOptions(t *testing.T) {
	t.Parallel()
	kinds := newRegistry().Kinds()
	if len(kinds) == 0 {
		t.Fatal("no kind registered")
	}
	var names []string
	for _, k := range kinds {
		names = append(names, k.Kind)
	}
	validate := func(t *testing.T, yaml string) (int, string) {
		t.Helper()
		app, _, errb := testApp()
		f := writeFile(t, "c.yml", yaml)
		return code(runConfigValidate(app, ConfigValidateOptions{File: f})), strings.ReplaceAll(errb.String(), f, "c.yml")
	}
	for _, k := range kinds {
		t.Run(k.Kind, func(t *testing.T) {
			var opts strings.Builder
			for _, o := range k.Options {
				// Option values are checked when a provider is built, not here.
				fmt.Fprintf(&opts, "      %s: x\n", o)
			}
			yaml := "providers:\n  " + k.Kind + ":\n    retries: 1\n"
			if opts.Len() > 0 {
				yaml += "    options:\n" + opts.String()
			}
			if c, errs := validate(t, yaml); c != 0 {
				t.Errorf("the kind and its declared options %v: exit %d\n%s", k.Options, c, errs)
			}
			valid := "none"
			if len(k.Options) > 0 {
				valid = strings.Join(k.Options, ", ")
			}
			want := fmt.Sprintf("c.yml:4:7: key providers.%s.options.colour: unknown option \"colour\" for %s (known: %s)\n", k.Kind, k.Kind, valid)
			c, errs := validate(t, "providers:\n  "+k.Kind+":\n    options:\n      colour: red\n")
			if c != 2 || errs != want {
				t.Errorf("an option %s does not read: exit %d, stderr (-want +got)\n%s", k.Kind, c, cmp.Diff(want, errs))
			}
		})
	}
	want := fmt.Sprintf("c.yml:2:3: key providers.nope: unknown provider kind \"nope\" (known: %s)\n", strings.Join(names, ", "))
	if c, errs := validate(t, "providers:\n  nope:\n    retries: 1\n"); c != 2 || errs != want {
		t.Errorf("an unregistered kind: exit %d, stderr (-want +got)\n%s", c, cmp.Diff(want, errs))
	}
}
