package nexus_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

func TestSplitFrontMatter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mission  string
		wantWS   string
		wantBody string
		wantErr  string // substring; "" = no error
	}{
		{"no front matter: all body", "# Title\n\nDo it.\n", "", "# Title\n\nDo it.\n", ""},
		{"a --- later in the text is not front matter", "# Title\n---\nworkspace: x\n---\n", "", "# Title\n---\nworkspace: x\n---\n", ""},
		{"workspace key, body after the closing fence", "---\nworkspace: ../workspaces/svc\n---\n# Title\nDo it.\n", "../workspaces/svc", "# Title\nDo it.\n", ""},
		{"CRLF fences", "---\r\nworkspace: ws\r\n---\r\nbody\r\n", "ws", "body\r\n", ""},
		{"an empty front matter", "---\n---\nbody", "", "body", ""},
		{"an unknown key names its line (line 3 of the file)", "---\nworkspace: ws\ncolour: blue\n---\nbody", "", "", "m.md (front matter):3:1"},
		{"a wrong type", "---\nworkspace: [a, b]\n---\nbody", "", "", "m.md (front matter):2"},
		{"never closed", "---\nworkspace: ws\nbody\n", "", "", "never closed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fm, body, err := nexus.SplitFrontMatter("m.md", tc.mission)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, config.ErrBadInput) {
					t.Fatalf("err = %v, want bad input containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fm.Workspace != tc.wantWS || body != tc.wantBody {
				t.Errorf("got workspace %q body %q, want %q and %q", fm.Workspace, body, tc.wantWS, tc.wantBody)
			}
		})
	}
}

// Where the workspace comes from: --workspace, else the mission's front
// matter (relative to the mission file), else the config; the agents never
// see the front matter.
func TestWorkspaceResolution(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, d := range []string{"flag", "missions/fm", "cfg"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	body := "# Review the service\n\nFind the security defects of the session handling and the storage layer.\n"
	withFM := "---\nworkspace: fm\n---\n" + body
	tests := []struct {
		name      string
		flag      string
		mission   string
		cfgDir    string
		want      string
		wantErr   string
		wantInErr string
	}{
		{"none anywhere", "", body, "", "", "", ""},
		{"the flag wins over front matter and config", filepath.Join(root, "flag"), withFM, filepath.Join(root, "cfg"), filepath.Join(root, "flag"), "", ""},
		{"front matter, relative to the mission's directory, wins over config", "", withFM, filepath.Join(root, "cfg"), filepath.Join(root, "missions", "fm"), "", ""},
		{"config when nothing else says", "", body, filepath.Join(root, "cfg"), filepath.Join(root, "cfg"), "", ""},
		{"a missing directory names where it came from", "", body, filepath.Join(root, "nope"), "", "workspace.dir", "nope"},
		{"a file is not a workspace", filepath.Join(root, "file"), body, "", "", "not a directory", "--workspace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := missionOptions(t, filepath.Join(t.TempDir(), "run"))
			o.Mission, o.Workspace, o.MissionDir = tc.mission, tc.flag, filepath.Join(root, "missions")
			o.Config.Workspace.Dir = tc.cfgDir
			m, err := nexus.Prepare(o)
			if tc.wantErr != "" {
				if err == nil || !errors.Is(err, config.ErrBadInput) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), tc.wantInErr) {
					t.Fatalf("err = %v, want bad input naming %q and %q", err, tc.wantErr, tc.wantInErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Plan().Workspace; got != tc.want {
				t.Errorf("workspace = %q, want %q", got, tc.want)
			}
			if diff := cmp.Diff("Review the service", m.Plan().MissionTitle); diff != "" {
				t.Errorf("mission title (front matter must not reach it) (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHomeWorkspaceNeedsConsent: a mission's front matter (or the flag,
// or the config) may name /, the home directory or one of its ancestors:
// the agents could then read every credential store of the home. Such a
// workspace is refused (bad input, exit 2) naming the reason and the
// flag, unless AllowHomeWorkspace (--allow-home-workspace). On main it
// ran with no prompt.
func TestHomeWorkspaceNeedsConsent(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	root := t.TempDir()
	home := filepath.Join(root, "users", "alice")
	project := filepath.Join(home, "src", "app")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	body := "# Review the service\n\nFind the security defects of the session handling and the storage layer.\n"
	fm := func(ws string) string { return "---\nworkspace: " + ws + "\n---\n" + body }
	tests := []struct {
		name      string
		mission   string
		flag      string
		allow     bool
		wantInErr []string // nil: accepted
	}{
		{"front matter naming / (absolute, no prompt)", fm("/"), "", false,
			[]string{"workspace / (from the mission's front matter (workspace)) is the file system's root", "--allow-home-workspace"}},
		{"front matter naming an ancestor of the home", fm(filepath.Join(root, "users")), "", false,
			[]string{"contains your home directory (" + home + ")", "--allow-home-workspace"}},
		{"front matter naming the home by a relative path", fm("../../users/alice"), "", false,
			[]string{"is your home directory", "--allow-home-workspace"}},
		{"the flag naming the home", body, home, false, []string{"(from --workspace) is your home directory"}},
		{"the home with consent", fm(home), "", true, nil},
		{"a project inside the home needs no consent", fm(project), "", false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := missionOptions(t, filepath.Join(t.TempDir(), "run"))
			o.Mission, o.Workspace, o.MissionDir, o.AllowHomeWorkspace = tc.mission, tc.flag, filepath.Join(root, "missions", "x"), tc.allow
			_, err := nexus.Prepare(o)
			if tc.wantInErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !errors.Is(err, config.ErrBadInput) || !errors.Is(err, nexus.ErrHomeWorkspace) {
				t.Fatalf("err = %v, want bad input (ErrHomeWorkspace)", err)
			}
			for _, w := range tc.wantInErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to say %q", err, w)
				}
			}
		})
	}
}

// TestSwarmignoreWarningsInThePlan: the .swarmignore lines dropped because
// they would lower the deny list are in the plan (the briefing shows
// them); an unreadable .swarmignore is bad input before any call.
func TestSwarmignoreWarningsInThePlan(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".swarmignore"), []byte("build/\n!.env\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := missionOptions(t, filepath.Join(t.TempDir(), "run"))
	o.Workspace = ws
	m, err := nexus.Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	w := m.Plan().WorkspaceWarnings
	if len(w) != 1 || !strings.HasPrefix(w[0], `.swarmignore:2: "!.env" ignored`) {
		t.Errorf("plan warnings %q", w)
	}
	if err := os.WriteFile(filepath.Join(ws, ".swarmignore"), []byte(strings.Repeat("x\n", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := nexus.Prepare(o); err == nil || !errors.Is(err, config.ErrBadInput) || !strings.Contains(err.Error(), ".swarmignore") {
		t.Errorf("a 2 MiB .swarmignore: err = %v, want bad input naming it", err)
	}
}

// openFDs is how many files the process has open (-1 where /proc is not).
func openFDs() int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(es)
}

// A run that fails while its directory opens closes its workspace, however
// late the failure (here: the sandbox settings, after the logs opened).
func TestFailedOpenClosesTheWorkspace(t *testing.T) {
	// Serial: counts the process's open files.
	if openFDs() < 0 {
		t.Skip("no /proc/self/fd")
	}
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sandbox.Enabled, cfg.Sandbox.Proxy = true, map[string]float64{"bogus": 1}
	reg := &providers.Registry{}
	mock.Register(reg, mock.Options{})
	ws := t.TempDir()
	const runs = 10
	// No collection meanwhile: a finalizer would close what was left open.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := openFDs()
	for i := range runs {
		m, err := nexus.Prepare(nexus.Options{Config: cfg, Registry: reg, Mission: "# Review\n\nReview the code.", MissionName: "t", Scale: "ss-50",
			Provider: providers.Ref{Kind: "mock", Model: "honest"}, Workspace: ws, OutDir: filepath.Join(t.TempDir(), fmt.Sprint("run", i))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "sandbox.proxy.bogus") {
			t.Fatalf("run error %v, want the sandbox's", err)
		}
	}
	if leaked := openFDs() - before; leaked >= runs/2 {
		t.Errorf("%d files left open by %d failed runs", leaked, runs)
	}
}
