package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

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
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, _, _ := testApp()
			tc.o.Out = filepath.Join(t.TempDir(), "r")
			if got := code(runRun(t.Context(), app, tc.o)); got != 2 {
				t.Errorf("exit %d, want 2", got)
			}
		})
	}
}

func TestEveryCommandHasAnExample(t *testing.T) {
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

func TestConfigValidateCommand(t *testing.T) {
	app, out, _ := testApp()
	if code(runConfigValidate(app, "../../config.yml")) != 0 || !strings.Contains(out.String(), "ok") {
		t.Fatal("shipped config rejected")
	}
	// The acceptance cases of `swarm config validate`: exit 2, file:line:col and key.
	tests := []struct{ name, yaml, want string }{
		{"unknown key", "run:\n  seed: 1\n  colour: blue\n", ":3:3: key run.colour: unknown key"},
		{"string where a number belongs", "scales:\n  ss-100:\n    commanders: five\n", ":3:17: key scales.ss-100.commanders: wrong type"},
		{"negative timeout", "scales:\n  ss-100:\n    timeouts:\n      call: -1m\n", ":4:7: key scales.ss-100.timeouts.call: negative timeout"},
		{"unknown scale name", "default_scale: ss-999\n", ":1:1: key default_scale: unknown scale"},
		{"model with an unknown provider kind", "models:\n  judge: foo:bar\n", ":2:3: key models.judge: unknown provider kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app, out, errb := testApp()
			bad := writeFile(t, "bad.yml", tc.yaml)
			if got := code(runConfigValidate(app, bad)); got != 2 {
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

func TestConfigShowMasksSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-very-secret")
	cfgPath := writeFile(t, "c.yml", "providers:\n  vllm:\n    base_url: https://bob:hunter2@vllm.example/v1\n")
	for _, format := range []string{"yaml", "json"} {
		app, out, errb := testApp()
		app.ConfigPath = cfgPath
		if err := runConfigShow(app, format); err != nil {
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
	if err := runProvidersList(app, "table"); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "hunter2") || strings.Contains(s, "sk-test-very-secret") {
		t.Errorf("providers list shows a secret:\n%s", s)
	}
}

func TestLogFormatJSONAndLevel(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-very-secret")
	for _, tc := range []struct {
		level    string
		wantCall bool // LLM calls are logged at debug
	}{{"debug", true}, {"info", false}} {
		t.Run(tc.level, func(t *testing.T) {
			app, _, errb := testApp()
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
