package compare_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/yamlx"
	"github.com/swarm-dev/swarm/nexus/compare"
)

func writeTemp(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func loadDefaultConfig() (*config.Config, error) { return config.Load("", nil) }

// cliDefaults is a Request as swarm compare's flag defaults leave it.
func cliDefaults() compare.Request {
	return compare.Request{Repeats: 3, Scale: "ss-50", Roles: compare.RolesCommanders, Seed: 42, Changed: map[string]bool{}}
}

// TestNewPlanMergesFileAndFlags: the compare file sets what the command
// line did not; a flag given explicitly wins, even at its default value.
func TestNewPlanMergesFileAndFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTemp(t, dir, "missions/a.md", "# Plan A\n")
	writeTemp(t, dir, "b.md", "# Plan B\n")
	cfg, err := loadDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	runs := cfg.Run.OutDir // SWARM_OUT_DIR or the config's
	writeTemp(t, dir, "ws/main.go", "package main\n")
	writeTemp(t, dir, "ws2/main.go", "package main\n")
	writeTemp(t, dir, "ws.truth.yaml", "workspace: ws\ndefects: []\n")
	wsFile := writeTemp(t, dir, "ws.yaml", "missions: [b.md]\nmodels: [mock:honest]\nworkspace: ws\nground_truth: ws.truth.yaml\n")
	file := writeTemp(t, dir, "cmp.yaml", "missions: [missions/a.md]\nmodels: [mock:honest, mock:sloppy]\njudge: mock:honest\nrepeats: 5\nscale: ss-100\nroles: all\nseed: 7\nparallel: 2\n")
	for _, tc := range []struct {
		why  string
		req  func(compare.Request) compare.Request
		want compare.Plan
	}{
		{"the file fills every value the flags left at their defaults; missions are relative to the file",
			func(r compare.Request) compare.Request { r.File = file; return r },
			compare.Plan{Models: []string{"mock:honest", "mock:sloppy"}, Judge: "mock:honest", Repeats: 5, Scale: "ss-100", Roles: compare.RolesAll, Seed: 7, Parallel: 2,
				Missions: []compare.PlannedMission{{Path: filepath.Join(dir, "missions/a.md"), Name: "a", Text: "# Plan A\n", Out: filepath.Join(runs, "compare-a")}}}},
		{"flags given explicitly win, even --repeats 3 (the default); a mission argument adds to the file's; --out holds one directory per mission",
			func(r compare.Request) compare.Request {
				r.File, r.Mission, r.Out = file, filepath.Join(dir, "b.md"), filepath.Join(dir, "out")
				r.Models, r.Repeats, r.Seed = []string{"mock:deceptive"}, 3, 1
				r.Changed = map[string]bool{"models": true, "repeats": true, "seed": true, "out": true}
				return r
			},
			compare.Plan{Models: []string{"mock:deceptive"}, Judge: "mock:honest", Repeats: 3, Scale: "ss-100", Roles: compare.RolesAll, Seed: 1, Parallel: 2,
				Missions: []compare.PlannedMission{
					{Path: filepath.Join(dir, "missions/a.md"), Name: "a", Text: "# Plan A\n", Out: filepath.Join(dir, "out", "a")},
					{Path: filepath.Join(dir, "b.md"), Name: "b", Text: "# Plan B\n", Out: filepath.Join(dir, "out", "b")}}}},
		{"no file: one mission, --out is its directory",
			func(r compare.Request) compare.Request {
				r.Mission, r.Models, r.Out = filepath.Join(dir, "b.md"), []string{"mock:honest"}, "o"
				return r
			},
			compare.Plan{Models: []string{"mock:honest"}, Repeats: 3, Scale: "ss-50", Roles: compare.RolesCommanders, Seed: 42,
				Missions: []compare.PlannedMission{{Path: filepath.Join(dir, "b.md"), Name: "b", Text: "# Plan B\n", Out: "o"}}}},
		{"the file's workspace and ground truth are relative to the file, like its missions",
			func(r compare.Request) compare.Request { r.File = wsFile; return r },
			compare.Plan{Models: []string{"mock:honest"}, Repeats: 3, Scale: "ss-50", Roles: compare.RolesCommanders, Seed: 42,
				Workspace: filepath.Join(dir, "ws"), GroundTruth: filepath.Join(dir, "ws.truth.yaml"),
				Missions: []compare.PlannedMission{{Path: filepath.Join(dir, "b.md"), Name: "b", Text: "# Plan B\n", Out: filepath.Join(runs, "compare-b")}}}},
		{"--workspace and --ground-truth given explicitly win over the file's",
			func(r compare.Request) compare.Request {
				r.File, r.Workspace, r.GroundTruth = wsFile, filepath.Join(dir, "ws2"), filepath.Join(dir, "b.md")
				r.Changed = map[string]bool{"workspace": true, "ground-truth": true}
				return r
			},
			compare.Plan{Models: []string{"mock:honest"}, Repeats: 3, Scale: "ss-50", Roles: compare.RolesCommanders, Seed: 42,
				Workspace: filepath.Join(dir, "ws2"), GroundTruth: filepath.Join(dir, "b.md"),
				Missions: []compare.PlannedMission{{Path: filepath.Join(dir, "b.md"), Name: "b", Text: "# Plan B\n", Out: filepath.Join(runs, "compare-b")}}}},
		{"a caller without the command line's defaults gets compare's",
			func(compare.Request) compare.Request {
				return compare.Request{Mission: filepath.Join(dir, "b.md"), Models: []string{"mock:honest"}}
			},
			compare.Plan{Models: []string{"mock:honest"}, Repeats: 3, Scale: "ss-50", Roles: compare.RolesCommanders,
				Missions: []compare.PlannedMission{{Path: filepath.Join(dir, "b.md"), Name: "b", Text: "# Plan B\n", Out: filepath.Join(runs, "compare-b")}}}},
	} {
		t.Run(tc.why, func(t *testing.T) {
			got, err := compare.NewPlan(tc.req(cliDefaults()), loadDefaultConfig)
			if err != nil {
				t.Fatal(err)
			}
			if got.Config == nil {
				t.Fatal("the plan carries no configuration")
			}
			if d := cmp.Diff(tc.want, *got, cmpopts.IgnoreFields(compare.Plan{}, "Config")); d != "" {
				t.Errorf("Plan (-want +got):\n%s", d)
			}
			o := got.Options(got.Missions[0])
			if o.Mission != got.Missions[0].Text || o.Out != got.Missions[0].Out || o.Repeats != got.Repeats || o.Config != got.Config ||
				o.Workspace != got.Workspace || o.GroundTruth != got.GroundTruth {
				t.Errorf("Options(%s) = %+v: not the plan's", got.Missions[0].Name, o)
			}
		})
	}
}

// TestNewPlanRefusesBadInputBeforeAnyRun: every bad value is refused before
// the first run, named by where it came from: the file's line and key, or
// the flag.
func TestNewPlanRefusesBadInputBeforeAnyRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeTemp(t, dir, "good.md", "# Plan\n")
	writeTemp(t, dir, "x/good.md", "# Plan again\n")
	writeTemp(t, dir, "empty.md", " \n")
	writeTemp(t, dir, "ws/a.go", "package a\n")
	truth := writeTemp(t, dir, "truth.yaml", "defects: []\n")
	badConfig := errors.New("bad config")
	for _, tc := range []struct {
		why    string
		file   string // compare YAML body, "" for none
		req    compare.Request
		config error // what loading the configuration returns
		want   string
	}{
		{"no mission", "", compare.Request{Models: []string{"mock:honest"}}, nil, "no mission: give MISSION.md or --file COMPARE.yaml"},
		{"no contender", "", compare.Request{Mission: good}, nil, "no contenders: give --models a,b,c"},
		{"a bad repeats in the file names its line and key", "missions: [good.md]\nmodels: [mock:honest]\nrepeats: -1\n", compare.Request{}, nil, "cmp.yaml:3: repeats -1: want at least 1"},
		{"a bad flag names the flag", "", compare.Request{Mission: good, Models: []string{"mock:honest"}, Parallel: -1}, nil, "--parallel -1: want 0 (all contenders at once) or more"},
		{"a bad roles in the file", "missions: [good.md]\nmodels: [mock:honest]\n\nroles: some\n", compare.Request{}, nil, `cmp.yaml:4: roles "some": want commanders or all`},
		{"a model that is not kind:model, from the file", "missions: [good.md]\nmodels: [honest]\n", compare.Request{}, nil, "cmp.yaml:2: models: "},
		{"a bad judge flag", "", compare.Request{Mission: good, Models: []string{"mock:honest"}, Judge: "nokind"}, nil, "--judge: "},
		{"negative judge samples", "", compare.Request{Mission: good, Models: []string{"mock:honest"}, JudgeSamples: -2}, nil, "--judge-samples -2: want 1 or more"},
		{"two missions that would share an output directory", "missions: [good.md, x/good.md]\nmodels: [mock:honest]\n", compare.Request{}, nil, "would share the output directory \"good\""},
		{"an empty mission", "missions: [empty.md]\nmodels: [mock:honest]\n", compare.Request{}, nil, "cmp.yaml:1: missions: mission " + filepath.Join(dir, "empty.md") + " is empty"},
		{"a missing mission", "", compare.Request{Mission: filepath.Join(dir, "nope.md"), Models: []string{"mock:honest"}}, nil, "MISSION.md: read mission: "},
		{"an unknown scale, after the configuration is loaded", "", compare.Request{Mission: good, Models: []string{"mock:honest"}, Scale: "ss-7"}, nil, `--scale "ss-7": unknown scale (known: `},
		{"a missing mission is named before a bad configuration", "", compare.Request{Mission: filepath.Join(dir, "nope.md"), Models: []string{"mock:honest"}}, badConfig, "read mission"},
		{"a bad configuration", "", compare.Request{Mission: good, Models: []string{"mock:honest"}}, badConfig, "bad config"},
		{"an unknown key in the file lists the known ones", "missions: [good.md]\nmodel: [mock:honest]\n", compare.Request{}, nil,
			`cmp.yaml:2:1: model: unknown key "model" (known: missions, models, judge, seal_author, repeats, scale, roles, judge_samples, seed, parallel, workspace, ground_truth)`},
		{"--ground-truth without a workspace: recall needs cited workspace lines", "", compare.Request{Mission: good, Models: []string{"mock:honest"}, GroundTruth: truth}, nil,
			"--ground-truth " + truth + ": needs a workspace"},
		{"--ground-truth with a mission whose front matter names no workspace", "", compare.Request{Mission: good, Models: []string{"mock:honest"}, GroundTruth: truth}, nil,
			"front matter of mission " + good},
		{"the file's ground_truth without a workspace names its line", "missions: [good.md]\nmodels: [mock:honest]\nground_truth: truth.yaml\n", compare.Request{}, nil,
			"cmp.yaml:3: ground_truth " + truth + ": needs a workspace"},
		{"a workspace that does not exist", "", compare.Request{Mission: good, Models: []string{"mock:honest"}, Workspace: filepath.Join(dir, "nope")}, nil, "--workspace: stat "},
		{"a workspace that is a file", "missions: [good.md]\nmodels: [mock:honest]\nworkspace: good.md\n", compare.Request{}, nil, "cmp.yaml:3: workspace " + good + ": not a directory"},
		{"a ground truth that does not exist", "", compare.Request{Mission: good, Models: []string{"mock:honest"}, Workspace: filepath.Join(dir, "ws"), GroundTruth: filepath.Join(dir, "nope.yaml")}, nil, "--ground-truth: stat "},
		{"a ground truth that is a directory", "", compare.Request{Mission: good, Models: []string{"mock:honest"}, Workspace: filepath.Join(dir, "ws"), GroundTruth: filepath.Join(dir, "ws")}, nil, "--ground-truth " + filepath.Join(dir, "ws") + ": not a regular file"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			r := tc.req
			if tc.file != "" {
				r.File = writeTemp(t, dir, "cmp.yaml", tc.file)
			}
			loaded := false
			_, err := compare.NewPlan(r, func() (*config.Config, error) {
				loaded = true
				if tc.config != nil {
					return nil, tc.config
				}
				return config.Load("", nil)
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(tc.why, "before a bad configuration") && loaded {
				t.Error("the configuration was loaded before the missions were checked")
			}
		})
	}
}

// TestLoadFileIsStrict: the compare file is read by yamlx: a type error
// names file, line, column and key.
func TestLoadFileIsStrict(t *testing.T) {
	t.Parallel()
	p := writeTemp(t, t.TempDir(), "cmp.yaml", "models: [mock:honest]\nrepeats: many\n")
	_, err := compare.LoadFile(p)
	var ye *yamlx.Error
	if !errors.As(err, &ye) || ye.Line != 2 || ye.Key != "repeats" || !strings.HasPrefix(err.Error(), p+":2:") {
		t.Fatalf("err = %v, want a yamlx error at %s:2 naming repeats", err, p)
	}
	f, err := compare.LoadFile(writeTemp(t, t.TempDir(), "ok.yaml", "models: [mock:honest]\n\nrepeats: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Repeats != 2 || f.Line("repeats") != 3 || f.Line("judge") != 0 {
		t.Errorf("File = %+v, line of repeats %d, of judge %d; want 2, 3, 0", f, f.Line("repeats"), f.Line("judge"))
	}
}

// A mission's front-matter paths are relative to the mission file, so the
// options of a planned mission carry the file's directory.
func TestPlanOptionsCarryTheMissionDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := writeTemp(t, dir, "missions/a.md", "---\nworkspace: ../ws\n---\n# Plan A\n")
	p, err := compare.NewPlan(compare.Request{Mission: m, Models: []string{"mock:honest"}, Repeats: 1}, loadDefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Options(p.Missions[0]).MissionDir; got != filepath.Join(dir, "missions") {
		t.Errorf("MissionDir = %q, want the mission file's directory", got)
	}
}

// A mission whose front matter names its workspace needs no --workspace for
// --ground-truth.
func TestGroundTruthWithFrontMatterWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTemp(t, dir, "ws/main.go", "package main\n")
	truth := writeTemp(t, dir, "ws.truth.yaml", "workspace: ws\ndefects: []\n")
	m := writeTemp(t, dir, "missions/a.md", "---\nworkspace: ../ws\n---\n# Plan A\n")
	if _, err := compare.NewPlan(compare.Request{Mission: m, Models: []string{"mock:honest"}, Repeats: 1, GroundTruth: truth}, loadDefaultConfig); err != nil {
		t.Fatalf("plan: %v", err)
	}
}

// The models of a comparison without a known price, for the briefing's
// warning that the cost ceiling cannot act on them: contenders, an
// explicit judge or seal author, and the config's models of the roles not
// compared (here all mock, priced).
func TestPlanUnpriced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mission := writeTemp(t, dir, "m.md", "# Review the API\n")
	tests := []struct {
		name string
		edit func(*compare.Request)
		want []string
	}{
		{"priced mock contenders", func(r *compare.Request) { r.Models = []string{"mock:honest", "mock:sloppy"} }, nil},
		{"a contender behind an OpenAI-compatible server", func(r *compare.Request) { r.Models = []string{"mock:honest", "openai-compatible:qwen"} }, []string{"openai-compatible:qwen"}},
		{"a local judge", func(r *compare.Request) { r.Models = []string{"mock:honest"}; r.Judge = "ollama:llama3.1:8b" }, []string{"ollama:llama3.1:8b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := cliDefaults()
			r.Mission = mission
			tc.edit(&r)
			p, err := compare.NewPlan(r, loadDefaultConfig)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, p.Unpriced()); d != "" {
				t.Errorf("unpriced (-want +got)\n%s", d)
			}
		})
	}
}
