package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/sandbox"
)

// errCaptured stops a command after its options were captured: nothing runs.
var errCaptured = errors.New("captured")

// capture returns a run function that records the options it is given and
// runs nothing.
func capture[O any](got *O) func(context.Context, *O) error {
	return func(_ context.Context, o *O) error { *got = *o; return errCaptured }
}

// parse runs cmd on args and fails the test unless it reached the run
// function (the options were parsed and nothing else happened).
func parse(t *testing.T, cmd *cobra.Command, args ...string) {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SetOut(&strings.Builder{})
	cmd.SetErr(&strings.Builder{})
	if err := cmd.ExecuteContext(t.Context()); !errors.Is(err, errCaptured) {
		t.Fatalf("%v: err = %v, want the run function called", args, err)
	}
}

func ptr[T any](v T) *T { return &v }

// checkParse builds a command with newCmd around a capturing run function,
// parses args with it and compares the options captured with want.
func checkParse[O any](t *testing.T, newCmd func(*App, func(context.Context, *O) error) *cobra.Command, want O, args ...string) {
	t.Helper()
	app, _, _ := testApp()
	var got O
	parse(t, newCmd(app, capture(&got)), args...)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%T (-want +got):\n%s", got, d)
	}
}

// TestRunFlagsParse: `swarm run` flags land in RunOptions, and nothing runs.
func TestRunFlagsParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		why  string
		args []string
		want RunOptions
	}{
		{"no flags: the defaults (seed not set, so the config's applies)", []string{"m.md"},
			RunOptions{MissionArg: "m.md"}},
		{"--seed 0 given explicitly is set, unlike no --seed", []string{"m.md", "--seed", "0"},
			RunOptions{MissionArg: "m.md", SeedSet: true}},
		{"every flag", []string{"-", "--scale", "ss-250", "--provider", "openai:gpt-4.1", "--model", "judge=mock:honest", "--model", "nexus=mock:sloppy",
			"--personality", "fast", "--out", "/tmp/r", "--force", "--seed", "7", "--json", "--interactive", "-q", "--replays", "3",
			"--file-scope", "a/", "--file-scope", "b.go", "--spec", "1.0.0"},
			RunOptions{MissionArg: "-", Scale: "ss-250", Provider: "openai:gpt-4.1", Models: []string{"judge=mock:honest", "nexus=mock:sloppy"},
				Personality: "fast", Out: "/tmp/r", Force: true, Seed: 7, SeedSet: true, JSON: true, Interactive: true, Quiet: true, Replays: 3,
				FileScope: []string{"a/", "b.go"}, Spec: "1.0.0"}},
		{"--mission instead of a file", []string{"--mission", "Plan the rollout"},
			RunOptions{MissionText: "Plan the rollout"}},
	} {
		t.Run(tc.why, func(t *testing.T) { checkParse(t, newRunCmd, tc.want, tc.args...) })
	}
}

// TestCompareFlagsParse: `swarm compare` flags land in CompareOptions with
// their defaults, and Changed names exactly the flags given (they win over
// the compare file).
func TestCompareFlagsParse(t *testing.T) {
	t.Parallel()
	defaults := CompareOptions{Repeats: 3, Scale: "ss-50", Roles: "commanders", Seed: 42}
	for _, tc := range []struct {
		why  string
		args []string
		want func(CompareOptions) CompareOptions
	}{
		{"defaults; nothing changed", []string{"m.md"}, func(o CompareOptions) CompareOptions {
			o.Mission, o.Changed = "m.md", map[string]bool{}
			return o
		}},
		{"--models splits on commas; a flag equal to its default still counts as given", []string{"m.md", "--models", "mock:honest,mock:sloppy", "--repeats", "3"},
			func(o CompareOptions) CompareOptions {
				o.Mission, o.Models = "m.md", []string{"mock:honest", "mock:sloppy"}
				o.Changed = map[string]bool{"models": true, "repeats": true}
				return o
			}},
		{"every flag, no mission argument", []string{"--file", "c.yaml", "--models", "a:b", "--models", "c:d", "--judge", "mock:honest", "--seal-author", "mock:sloppy",
			"--repeats", "5", "--scale", "ss-100", "--roles", "all", "--judge-samples", "3", "--out", "o", "--cache-dir", "c", "--resume", "--seed", "9", "--parallel", "2"},
			func(o CompareOptions) CompareOptions {
				return CompareOptions{File: "c.yaml", Models: []string{"a:b", "c:d"}, Judge: "mock:honest", SealAuthor: "mock:sloppy", Repeats: 5, Scale: "ss-100",
					Roles: "all", JudgeSamples: 3, Out: "o", CacheDir: "c", Resume: true, Seed: 9, Parallel: 2,
					Changed: map[string]bool{"file": true, "models": true, "judge": true, "seal-author": true, "repeats": true, "scale": true, "roles": true,
						"judge-samples": true, "out": true, "cache-dir": true, "resume": true, "seed": true, "parallel": true}}
			}},
		{"--workspace and --ground-truth", []string{"m.md", "--models", "mock:honest", "--workspace", "ws", "--ground-truth", "ws.truth.yaml"},
			func(o CompareOptions) CompareOptions {
				o.Mission, o.Models, o.Workspace, o.GroundTruth = "m.md", []string{"mock:honest"}, "ws", "ws.truth.yaml"
				o.Changed = map[string]bool{"models": true, "workspace": true, "ground-truth": true}
				return o
			}},
	} {
		t.Run(tc.why, func(t *testing.T) { checkParse(t, newCompareCmd, tc.want(defaults), tc.args...) })
	}
}

// TestShadowScoreFlagsParse: --threshold is nil unless given (then even 0
// is a threshold).
func TestShadowScoreFlagsParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		why  string
		args []string
		want ShadowScoreOptions
	}{
		{"no --threshold: none, whatever the score", []string{"--sealed", "s.json"},
			ShadowScoreOptions{Sealed: "s.json", Format: "json"}},
		{"--threshold 0 is a threshold", []string{"--sealed", "s.json", "--threshold", "0"},
			ShadowScoreOptions{Sealed: "s.json", Format: "json", Threshold: ptr(0.0)}},
		{"every flag", []string{"--sealed", "s.json", "--open", "o.json", "--threshold", "15.5", "--format", "summary", "--allow-empty"},
			ShadowScoreOptions{Sealed: "s.json", Open: "o.json", Threshold: ptr(15.5), Format: "summary", AllowEmpty: true}},
	} {
		t.Run(tc.why, func(t *testing.T) { checkParse(t, newShadowScoreCmd, tc.want, tc.args...) })
	}
}

// TestSandboxRunFlagsParse: the scenario argument and flags land in
// SandboxRunOptions; --seed 0 given is not the same as no --seed.
func TestSandboxRunFlagsParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		why  string
		args []string
		want SandboxRunOptions
	}{
		{"defaults: the scenario's seed and epochs", []string{"s.yaml"}, SandboxRunOptions{Scenario: "s.yaml"}},
		{"--seed 0 overrides the scenario's seed", []string{"s.yaml", "--seed", "0"}, SandboxRunOptions{Scenario: "s.yaml", SeedSet: true}},
		{"every flag", []string{"s.yaml", "--seed", "3", "--epochs", "50", "--out", "/tmp/x", "--replays", "4", "--memory-budget-mb", "8192"},
			SandboxRunOptions{Scenario: "s.yaml", Seed: 3, SeedSet: true, Epochs: 50, Out: "/tmp/x", Replays: 4, MemoryBudgetMB: 8192}},
	} {
		t.Run(tc.why, func(t *testing.T) { checkParse(t, newSandboxRunCmd, tc.want, tc.args...) })
	}
}

// TestSandboxMetricsFlagsParse: payoff and proxy flags start from the
// sandbox defaults, and Set names the flags given (they win over --config).
func TestSandboxMetricsFlagsParse(t *testing.T) {
	t.Parallel()
	want := SandboxMetricsOptions{File: "f.jsonl", PerInteraction: true, ConfigFile: "p.yaml", Payoff: sandbox.DefaultPayoffConfig(), Proxy: sandbox.DefaultProxyConfig(),
		Set: map[string]bool{"s-plus": true, "k": true, "config": true, "per-interaction": true}}
	want.Payoff.SPlus, want.Proxy.K = 3, 4
	checkParse(t, newSandboxMetricsCmd, want, "f.jsonl", "--s-plus", "3", "--k", "4", "--config", "p.yaml", "--per-interaction")
}

// TestMockServeFlagsParse: defaults and every flag of `swarm mock serve`,
// without listening.
func TestMockServeFlagsParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		why  string
		args []string
		want MockServeOptions
	}{
		{"defaults", nil, MockServeOptions{Addr: "127.0.0.1:8080", Persona: mock.Honest, MaxBody: mock.DefaultMaxBodyBytes, ReadTimeout: 30 * time.Second,
			MaxAnswerBytes: mock.DefaultMaxAnswerBytes, MaxInFlightBytes: mock.DefaultMaxInFlightAnswerBytes}},
		{"every flag", []string{"--addr", ":0", "--persona", "sloppy", "--faults", "f.yaml", "--script", "s.yaml", "--seed", "5", "--latency", "20ms",
			"--max-body", "1024", "--read-timeout", "2s", "--max-answer-bytes", "4096", "--max-inflight-bytes", "8192"},
			MockServeOptions{Addr: ":0", Persona: "sloppy", Faults: "f.yaml", Script: "s.yaml", Seed: 5, Latency: 20 * time.Millisecond, MaxBody: 1024, ReadTimeout: 2 * time.Second,
				MaxAnswerBytes: 4096, MaxInFlightBytes: 8192}},
	} {
		t.Run(tc.why, func(t *testing.T) { checkParse(t, newMockServeCmd, tc.want, tc.args...) })
	}
}

// TestUsageErrorsExitTwo: every way of misusing the command line is a typed
// usage error (exit 2) whose message is cobra's, never a failure (exit 1);
// help is not an error.
func TestUsageErrorsExitTwo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		why  string
		args []string
		code int
		msg  string // the error's text starts with this
	}{
		{"an unknown command, with cobra's suggestion", []string{"rn"}, 2, "unknown command \"rn\" for \"swarm\"\n\nDid you mean this?\n\trun\n"},
		{"an unknown flag", []string{"run", "--bogus"}, 2, "unknown flag: --bogus\nSee 'swarm run --help'."},
		{"an unknown shorthand flag", []string{"shadow", "score", "-z"}, 2, "unknown shorthand flag: 'z' in -z"},
		{"a flag value of the wrong type", []string{"sandbox", "run", "s.yaml", "--epochs", "many"}, 2, "invalid argument \"many\" for \"--epochs\""},
		{"a flag without its value", []string{"compare", "--models"}, 2, "flag needs an argument: --models"},
		{"too many arguments", []string{"run", "a.md", "b.md"}, 2, "accepts at most 1 arg(s), received 2"},
		{"a missing argument", []string{"sandbox", "metrics"}, 2, "accepts 1 arg(s), received 0"},
		{"an argument to a command that takes none", []string{"version", "x"}, 2, "unknown command \"x\" for \"swarm version\""},
		{"an argument to cobra's own completion command", []string{"completion", "bash", "x"}, 2, "unknown command \"x\" for \"swarm completion bash\""},
		{"the completion request without its arguments", []string{cobra.ShellCompRequestCmd}, 2, "requires at least 1 arg(s), only received 0"},
		{"a bad global flag value", []string{"--log-level", "loud", "version"}, 2, "--log-level \"loud\""},
		{"help is not an error", []string{"run", "--help"}, 0, ""},
		{"a group without a subcommand shows its help", []string{"sandbox"}, 0, ""},
	} {
		t.Run(tc.why, func(t *testing.T) {
			app, _, _ := testApp()
			err := execute(t.Context(), app, tc.args)
			if got := exitCodeOf(err); got != tc.code {
				t.Fatalf("%v: exit %d (%v), want %d", tc.args, got, err, tc.code)
			}
			if tc.code == 0 {
				return
			}
			var ee *exitError
			if !errors.As(err, &ee) {
				t.Fatalf("%v: %T is not a typed usage error", tc.args, err)
			}
			if !strings.HasPrefix(err.Error(), tc.msg) {
				t.Errorf("%v: error %q, want it to start with %q", tc.args, err, tc.msg)
			}
		})
	}
	t.Run("a run failure that mentions \"accepts\" is not a usage error", func(t *testing.T) {
		app, _, _ := testApp()
		cmd := newRunCmd(app, func(context.Context, *RunOptions) error { return errors.New("provider accepts no more requests") })
		cmd.SetArgs([]string{"m.md"})
		if got := exitCodeOf(cmd.ExecuteContext(t.Context())); got != 1 {
			t.Errorf("exit %d, want 1", got)
		}
	})
}
