package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/sandbox"
)

func testApp() (*App, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return newApp(strings.NewReader(""), &out, &errb), &out, &errb
}

func code(err error) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestShadowScoreExitCodes(t *testing.T) {
	// 3 of 20 failed = 15.0: equal to the threshold passes.
	var tests []string
	for i := 0; i < 20; i++ {
		st := "passed"
		if i < 3 {
			st = "failed"
		}
		tests = append(tests, `{"name":"t`+string(rune('a'+i))+`","status":"`+st+`","category":"edge_case"}`)
	}
	at15 := writeFile(t, "s.json", `{"tests":[`+strings.Join(tests, ",")+`]}`)
	cases := []struct {
		name string
		opts ShadowScoreOptions
		want int
	}{
		{"score equal to threshold passes", ShadowScoreOptions{Sealed: at15, Threshold: 15, Format: "json"}, 0},
		{"score above threshold fails", ShadowScoreOptions{Sealed: at15, Threshold: 14.9, Format: "summary"}, 1},
		{"missing --sealed is bad usage", ShadowScoreOptions{Format: "json"}, 2},
		{"unreadable input is bad usage", ShadowScoreOptions{Sealed: "/nonexistent.json", Format: "json"}, 2},
		{"not JSON is bad usage", ShadowScoreOptions{Sealed: writeFile(t, "x.json", "nope"), Format: "json"}, 2},
		{"missing tests is empty and passes", ShadowScoreOptions{Sealed: writeFile(t, "e.json", "{}"), Threshold: 15, Format: "json"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app, out, _ := testApp()
			if got := code(runShadowScore(app, tc.opts)); got != tc.want {
				t.Errorf("exit %d, want %d (%s)", got, tc.want, out)
			}
		})
	}
}

func TestRunCommandOfflineAndBadInput(t *testing.T) {
	app, out, errb := testApp()
	dir := filepath.Join(t.TempDir(), "run")
	err := runRun(t.Context(), app, RunOptions{MissionArg: "../../examples/missions/api-design.md", Scale: "ss-50", Out: dir, Quiet: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	if !strings.Contains(out.String(), "Run complete") {
		t.Errorf("no summary: %s", out)
	}
	if code(runShadowVerify(app, dir)) != 0 {
		t.Error("fresh run does not verify")
	}
	env := filepath.Join(dir, "sealed", "envelope.json")
	b, _ := os.ReadFile(env)
	tampered := strings.Replace(string(b), `"sc-01"`, `"sc-1"`, 1)
	if tampered == string(b) {
		t.Fatal("fixture: nothing to tamper with")
	}
	os.WriteFile(env, []byte(tampered), 0o600)
	if got := code(runShadowVerify(app, dir)); got != 1 {
		t.Errorf("tampered envelope: exit %d, want 1", got)
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
		{"unknown provider kind", RunOptions{MissionText: "x", Provider: "nope:x"}},
		{"missing API key", RunOptions{MissionText: "x", Provider: "openai:gpt-4.1"}},
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

func TestConfigValidateCommand(t *testing.T) {
	app, out, _ := testApp()
	if code(runConfigValidate(app, "../../config.yml")) != 0 || !strings.Contains(out.String(), "ok") {
		t.Fatal("shipped config rejected")
	}
	app, _, errb := testApp()
	bad := writeFile(t, "bad.yml", "models:\n  judge: foo:bar\n")
	if code(runConfigValidate(app, bad)) != 2 || !strings.Contains(errb.String(), bad+":2:3: key models.judge") {
		t.Fatalf("stderr: %s", errb)
	}
}

func TestSandboxMetricsReproducesGoldenValuesFromJSONL(t *testing.T) {
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

func TestSandboxRunWritesOutputsAndChecksCriteria(t *testing.T) {
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

func TestRunJSONStreamsEveryEventInOrder(t *testing.T) {
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
		if code(err) != 2 || !strings.Contains(err.Error(), bad+":[2:3]") || !strings.Contains(err.Error(), "s_plu") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestSandboxIncoherenceCommand(t *testing.T) {
	f := writeFile(t, "dec.jsonl", `{"task_family":"f","decision_id":"a","replay":0,"action":"x","benchmark":"x"}
{"task_family":"f","decision_id":"a","replay":1,"action":"y"}
{"task_family":"f","decision_id":"a","replay":2,"action":"x"}
{"task_family":"f","decision_id":"a","replay":3,"action":""}
{"task_family":"f","decision_id":"b","replay":0,"action":"z"}
{"task_family":"f","decision_id":"b","replay":1,"action":"z"}
`)
	app, out, _ := testApp()
	if err := runSandboxIncoherence(app, f, "json"); err != nil {
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
	if err := runSandboxIncoherence(app, f, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "n/a") || !strings.Contains(out.String(), "0.333") {
		t.Errorf("table:\n%s", out)
	}
	bad := writeFile(t, "bad.jsonl", "{\"decision_id\":\"a\",\"action\":\"x\"}\nnot json\n")
	if err := runSandboxIncoherence(app, bad, "json"); code(err) != 2 || !strings.Contains(err.Error(), bad+":2:") {
		t.Errorf("bad line: %v", err)
	}
}
