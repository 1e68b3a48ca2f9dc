package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/runfiles"
)

// TestRunFollowUpChainsThreeRuns runs a mission, follows it up, and follows
// the follow-up up: the third run's result.json holds a chain of three,
// oldest first, with the velocity over the three scores, and its report.md
// shows the chain. A --follow-up that is not a run directory is exit 2,
// naming it, with nothing written.
func TestRunFollowUpChainsThreeRuns(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mission := "../../examples/missions/auth-migration.md"
	dirs := []string{filepath.Join(root, "v1"), filepath.Join(root, "v2"), filepath.Join(root, "v3")}
	cfg := writeFile(t, "config.yml", smallTeams)
	for i, d := range dirs {
		args := []string{"--config", cfg, "run", mission, "--out", d, "-q"}
		if i == 0 {
			// The first run is weak (a deceptive implementer): the chain
			// then has scores that move.
			args = append(args, "--provider", "mock:deceptive", "--model", "seal_author=mock:honest", "--model", "judge=mock:honest")
		} else {
			args = append(args, "--follow-up", dirs[i-1])
		}
		code, out, errOut := execCLI(t, args...)
		if code != 0 {
			t.Fatalf("run %d: exit %d\n%s\n%s", i+1, code, out, errOut)
		}
	}
	var res struct {
		Plan struct {
			RunID string `json:"run_id"`
		} `json:"plan"`
		FollowUp *runfiles.FollowUp `json:"follow_up"`
	}
	b, err := os.ReadFile(filepath.Join(dirs[2], "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	fu := res.FollowUp
	if fu == nil || len(fu.Chain) != 3 {
		t.Fatalf("follow_up %+v: want a chain of three", fu)
	}
	for i, c := range fu.Chain {
		if c.Dir != dirs[i] || c.Status != runfiles.StatusComplete || c.ShadowScore == nil {
			t.Errorf("chain[%d] = %+v, want %s complete with a score", i, c, dirs[i])
		}
	}
	if fu.PreviousDir != dirs[1] {
		t.Errorf("previous_dir %s, want %s", fu.PreviousDir, dirs[1])
	}
	first, last := *fu.Chain[0].ShadowScore, *fu.Chain[2].ShadowScore
	if first <= last {
		t.Fatalf("fixture: the deceptive first run scored %.1f, the last %.1f: nothing improved", first, last)
	}
	if want := (first - last) / 2; fu.Velocity == nil || *fu.Velocity != want {
		t.Errorf("velocity %v (absent: %q), want %v", fu.Velocity, fu.VelocityAbsent, want)
	}
	report, err := os.ReadFile(filepath.Join(dirs[2], "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Follow-up", "| 1 | `", "| 3 | `" + res.Plan.RunID + "` (this run) | complete |", "(improving: scores fall)"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}

	bad := filepath.Join(root, "no-such-run")
	out := filepath.Join(root, "v4")
	app, _, _ := testApp()
	err = runRun(t.Context(), app, RunOptions{MissionArg: mission, Out: out, Quiet: true, FollowUp: bad})
	if code(err) != 2 || !strings.Contains(err.Error(), "--follow-up "+bad) {
		t.Errorf("missing --follow-up dir: exit %d, error %v", code(err), err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused follow-up left %s (stat: %v)", out, err)
	}
}

// TestRunFollowUpWarnsOfARevisedMission: following up a run of another
// mission text is allowed and says so on stderr.
func TestRunFollowUpWarnsOfARevisedMission(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	v1, v2 := filepath.Join(root, "v1"), filepath.Join(root, "v2")
	if code, _, errOut := execCLI(t, "run", "--mission", "Plan the rollout of feature flags", "--scale", "ss-50", "--out", v1, "-q"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, _, errOut := execCLI(t, "run", "--mission", "Plan the rollout of feature flags, with a kill switch", "--scale", "ss-50", "--out", v2, "-q", "--follow-up", v1)
	if code != 0 || !strings.Contains(errOut, "warning: --follow-up: the previous run's mission differs from this one") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
