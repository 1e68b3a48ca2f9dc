package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
