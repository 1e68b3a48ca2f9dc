package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

// hostile is what a crafted path, model name or run id may hold: an OSC
// window title (ESC ] ... BEL), a clear screen (ESC [ 2 J), a C1 CSI
// (U+009B, one byte of escape on some terminals) and a bidi override
// (U+202E, reorders what a reader sees).
const hostile = "x\x1b]0;pwned\x07\x1b[2J\u009b31m\u202eevil"

// rawControls are the characters none of which may reach a terminal or
// report.md unescaped.
var rawControls = []string{"\x1b", "\x07", "\u009b", "\u202e"}

func checkNoRawControls(t *testing.T, where, s string) {
	t.Helper()
	for _, c := range rawControls {
		if strings.Contains(s, c) {
			t.Errorf("%s prints %q raw:\n%q", where, c, s)
		}
	}
}

// Every path, model name and run id a user or a file supplies reaches the
// terminal escaped, in errors and in output alike. On main the path errors
// of run, --follow-up, --resume, --ground-truth, verify-evidence, shadow
// verify and compare printed them raw.
func TestHostileTextNeverReachesTheTerminalRaw(t *testing.T) {
	t.Parallel()
	mission, _ := filepath.Abs("../../examples/missions/api-design.md")
	ws, _ := filepath.Abs("../../examples/workspaces/tinynotes")
	evilDir := filepath.Join(t.TempDir(), hostile)
	evilMission := filepath.Join(t.TempDir(), hostile+".md")
	if err := os.WriteFile(evilMission, []byte("# Design an API\n\nDesign a small REST API for notes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := func() string { return filepath.Join(t.TempDir(), "out") }
	// A finished run in a directory named with controls, whose result.json
	// says its run id is hostile too (a run directory someone handed over).
	evilRun := filepath.Join(t.TempDir(), hostile)
	var so, se bytes.Buffer
	if c := runCLI(t.Context(), []string{"run", mission, "--scale", "ss-50", "--quiet", "--out", evilRun}, strings.NewReader(""), &so, &se); c != 0 {
		t.Fatalf("fixture run: exit %d\n%s", c, se.String())
	}
	resPath := filepath.Join(evilRun, "result.json")
	b, err := os.ReadFile(resPath)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	res["plan"].(map[string]any)["run_id"] = hostile
	if b, err = json.Marshal(res); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(resPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	followUp := out()
	for _, tc := range []struct {
		why  string
		args []string
	}{
		{"run: a mission path that does not exist", []string{"run", evilDir + ".md"}},
		{"run: a mission file named with controls (the run id and directory come from it)", []string{"run", evilMission, "--scale", "ss-50", "--quiet", "--out", filepath.Join(t.TempDir(), hostile)}},
		{"run --follow-up: a previous run that does not exist", []string{"run", mission, "--scale", "ss-50", "--follow-up", evilDir, "--out", out()}},
		{"run --resume: a run directory that does not exist", []string{"run", "--resume", evilDir}},
		{"run --ground-truth: a file that does not exist", []string{"run", mission, "--scale", "ss-50", "--workspace", ws, "--ground-truth", evilDir + ".yaml", "--out", out()}},
		{"run --workspace: a directory that does not exist", []string{"run", mission, "--scale", "ss-50", "--workspace", evilDir, "--out", out()}},
		{"run --out: a file where a directory is wanted", []string{"run", mission, "--scale", "ss-50", "--out", evilMission}},
		{"run --model: a model name from the flags", []string{"run", mission, "--scale", "ss-50", "--model", "worker=mock:" + hostile, "--out", out()}},
		{"run --provider: a provider from the flags", []string{"run", mission, "--scale", "ss-50", "--provider", hostile + ":m", "--out", out()}},
		{"verify-evidence: a run directory that does not exist", []string{"verify-evidence", evilDir, "--workspace", ws}},
		{"shadow verify: a run directory that does not exist", []string{"shadow", "verify", evilDir}},
		{"compare: a mission that does not exist", []string{"compare", evilDir + ".md", "--models", "mock:honest,mock:sloppy"}},
		{"compare: a model name from the flags", []string{"compare", mission, "--models", "mock:honest,mock:" + hostile, "--out", out()}},
		{"shadow verify: a run directory named with controls", []string{"shadow", "verify", evilRun}},
		{"verify-evidence: a run directory named with controls", []string{"verify-evidence", evilRun, "--workspace", ws}},
		{"run --follow-up: a previous run named with controls, with a hostile run id", []string{"run", mission, "--scale", "ss-50", "--follow-up", evilRun, "--out", followUp}},
		{"compare: a mission file and --out named with controls", []string{"compare", evilMission, "--models", "mock:honest,mock:sloppy", "--repeats", "1", "--scale", "ss-50", "--out", filepath.Join(t.TempDir(), hostile)}},
		{"sandbox run: --out named with controls", []string{"sandbox", "run", "../../examples/scenarios/adverse_selection.yaml", "--out", filepath.Join(t.TempDir(), hostile)}},
		{"sandbox run: a scenario that does not exist", []string{"sandbox", "run", evilDir + ".yaml"}},
		{"cobra: an unknown flag", []string{"run", "--" + hostile}},
		{"cobra: an unknown command", []string{hostile}},
		{"cobra: too many arguments", []string{"shadow", "verify", "a", hostile}},
		{"--config: a file that does not exist", []string{"--config", evilDir + ".yml", "config", "show"}},
	} {
		t.Run(tc.why, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			runCLI(t.Context(), tc.args, strings.NewReader(""), &stdout, &stderr)
			checkNoRawControls(t, "stdout", stdout.String())
			checkNoRawControls(t, "stderr", stderr.String())
		})
	}
	// report.md of the follow-up names the previous run (its id, its
	// directory): escaped. On main the id was written raw.
	rep, err := os.ReadFile(filepath.Join(followUp, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkNoRawControls(t, "report.md", string(rep))
	if !strings.Contains(string(rep), `x\x1b]0;pwned\x07`) {
		t.Errorf("report.md does not name the previous run (escaped):\n%s", rep)
	}
}

// The briefing's Models line shows model names from the config and the
// flags escaped; on main it printed them raw.
func TestBriefingEscapesModelNames(t *testing.T) {
	t.Parallel()
	evil := providers.Ref{Kind: "openai", Model: hostile}
	p := nexus.Plan{MissionTitle: "t" + hostile, Domains: []string{hostile}, Roster: config.Roster{Nexus: evil, SealAuthor: evil, Judge: evil, Commanders: []providers.Ref{evil},
		SquadLead: evil, Workers: []providers.Ref{evil}, Reviewers: [][2]providers.Ref{{evil, evil}}, Synthesizer: evil}, SquadLeads: 1}
	var b bytes.Buffer
	printBriefing(&b, p)
	checkNoRawControls(t, "the briefing", b.String())
	if !strings.Contains(b.String(), `\x1b]0;pwned\x07`) {
		t.Errorf("the briefing does not show the escaped name:\n%s", b.String())
	}
}

// The progress view shows domain names (from the model's decomposition),
// tool paths and events' messages: escaped, in a pipe and on a terminal
// (where only the view's own cursor sequences are raw). On main a pipe got
// them raw.
func TestProgressViewEscapesWhatItDidNotWrite(t *testing.T) {
	t.Parallel()
	plan := nexus.Plan{Domains: []string{hostile}, Commanders: 1, Workers: 1}
	events := []events.Event{
		{Kind: events.PhaseStart, Phase: events.Phase4, Message: "phase " + hostile},
		{Kind: events.ToolCall, AgentID: "worker-" + hostile + "-01", Data: events.ToolCallData{Tool: "read_file", Path: hostile, Refusal: "escape"}},
		{Kind: events.AgentFinish, Role: "commander", AgentID: "commander-" + hostile, Data: events.AgentFinishData{Status: "complete"}},
		{Kind: events.Failure, Message: hostile},
	}
	for _, tty := range []bool{false, true} {
		var b bytes.Buffer
		v := newProgressView(&b, plan, tty)
		for _, e := range events {
			v.Observe(e)
		}
		v.finish()
		out := b.String()
		if tty {
			// the view's own sequences: cursor up, erase line
			out = strings.NewReplacer("\x1b[2K", "", "\x1b[1A", "", "\x1b[2A", "", "\x1b[3A", "").Replace(out)
		}
		checkNoRawControls(t, map[bool]string{false: "the progress view in a pipe", true: "the live progress view"}[tty], out)
	}
}
