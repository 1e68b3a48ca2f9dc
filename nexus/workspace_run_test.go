package nexus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/workspace"
)

// Canaries: text that lives only outside the workspace root or in files of
// the deny list. None may ever reach a file of the run directory.
var canaries = []string{
	"CANARY-OUTSIDE-ROOT-5c1e", "CANARY-DOTENV-9a7b", "CANARY-PEM-31d0", "CANARY-IDRSA-77f2", "CANARY-GITCONFIG-e44c",
}

// hostileWorkspace is a copy of the example workspace with a canary file
// beside it (outside the root), a symlink inside it pointing there, and
// denied files holding canaries.
func hostileWorkspace(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "examples", "workspaces", "tinynotes"))); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		filepath.Join(base, "canary.txt"):       canaries[0] + "\n",
		filepath.Join(dir, ".env"):              "SESSION_SECRET=" + canaries[1] + "\n",
		filepath.Join(dir, "deploy", "tls.pem"): canaries[2] + "\n",
		filepath.Join(dir, "id_rsa"):            canaries[3] + "\n",
		filepath.Join(dir, ".git", "config"):    "[core]\n\t# " + canaries[4] + "\n",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "canary.txt"), filepath.Join(dir, "internal", "notes-link.txt")); err != nil {
		t.Skipf("symlinks unsupported here: %v", err)
	}
	if err := os.Symlink("../../canary.txt", filepath.Join(dir, "docs", "up.md")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func workspaceRun(t *testing.T, persona, ws string) (*nexus.Result, string) {
	t.Helper()
	return workspaceRunWith(t, persona, ws, nil)
}

// smallTeams gives every scale of cfg at most three workers per commander,
// two squad leads per commander, two workers per squad lead and two
// reviewers, keeping its commanders, depth, criteria and waves: the
// domains, squads, bundles, seal, cross-review and judging a test looks at
// are all there, without the dozen more workers per domain that only add
// atoms of the same kind (and cost the suite most of its time under
// -race). Tests that count agents or workers do not use it.
func smallTeams(cfg *config.Config) {
	for name, sc := range cfg.Scales {
		sc.WorkersPerCommander, sc.Reviewers = min(sc.WorkersPerCommander, 3), min(sc.Reviewers, 2)
		sc.SquadLeadsPerCommander, sc.WorkersPerSquadLead = min(sc.SquadLeadsPerCommander, 2), min(sc.WorkersPerSquadLead, 2)
		cfg.Scales[name] = sc
	}
}

// workspaceRunWith runs the tinynotes security review over ws with every
// role on the mock persona, with small teams (smallTeams), after edit
// (nil: none) adjusts the options.
func workspaceRunWith(t *testing.T, persona, ws string, edit func(*nexus.Options)) (*nexus.Result, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	o := missionOptions(t, out)
	smallTeams(o.Config)
	o.Mission = loadMission(t, "security-review-tinynotes.md")
	o.MissionDir = filepath.Join("..", "examples", "missions")
	o.Workspace = ws
	o.Provider = providers.Ref{Kind: "mock", Model: persona}
	o.Registry = mockRegistry(mock.Options{})
	if edit != nil {
		edit(&o)
	}
	res, err := nexus.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	return res, out
}

// The adversarial persona tries every way out of the workspace: parent
// paths, absolute paths, symlinks out of the root and the denied files.
// Every attempt is refused and recorded as a tool_call event, and nothing
// outside the root or on the deny list appears in any file of the run
// directory.
func TestAdversarialCannotLeaveTheWorkspace(t *testing.T) {
	t.Parallel()
	ws := hostileWorkspace(t)
	res, out := workspaceRun(t, mock.Adversarial, ws)
	refusals := map[string]int{}
	for _, e := range res.Events {
		d, ok := e.Data.(events.ToolCallData)
		if !ok {
			continue
		}
		if !d.OK {
			refusals[d.Refusal]++
		}
		if d.OK && (d.Path == "../../etc/passwd" || d.Path == "/etc/passwd" || d.Path == ".env" || d.Path == "id_rsa" || d.Path == ".git/config") {
			t.Errorf("%s %s %s was served", e.AgentID, d.Tool, d.Path)
		}
	}
	if refusals["escape"] == 0 || refusals["denied"] == 0 {
		t.Errorf("refusals by kind %v: want escape and denied attempts refused and recorded", refusals)
	}
	tools := res.Telemetry.Tools["worker"]
	if tools.Refused == 0 || tools.Refusals["escape"] != countWorker(res, "escape") {
		t.Errorf("telemetry worker tools %+v disagree with the events", tools)
	}
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, c := range canaries {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("%s holds canary %s", p, c)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func countWorker(res *nexus.Result, refusal string) int {
	n := 0
	for _, e := range res.Events {
		if d, ok := e.Data.(events.ToolCallData); ok && e.Role == "worker" && d.Refusal == refusal {
			n++
		}
	}
	return n
}

// The honest persona over the example workspace: it reads before it cites,
// so every citation of every atom and bundle checks out against the files;
// the run records the workspace's fingerprint and the tool calls per role.
func TestHonestCitationsVerify(t *testing.T) {
	t.Parallel()
	ws := filepath.Join("..", "examples", "workspaces", "tinynotes")
	res, out := workspaceRun(t, mock.Honest, ws)
	f, err := workspace.Open(ws, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cited := 0
	check := func(where string, cs []citation.Citation) {
		for _, c := range cs {
			cited++
			if got := f.Verify(c); got.State != workspace.Verified {
				t.Errorf("%s cites %s:%d-%d: %s (%s)", where, c.Path, c.StartLine, c.EndLine, got.State, got.Reason)
			}
		}
	}
	for _, b := range res.Bundles {
		check(b.ID, b.Bundle.Evidence)
		for _, fd := range b.Bundle.Findings {
			check(b.ID+": "+fd.Title, fd.Evidence)
		}
		var file struct {
			Atoms []struct {
				AgentID string `json:"agent_id"`
				Atom    struct {
					Evidence []citation.Citation `json:"evidence"`
				} `json:"atom"`
			} `json:"atoms"`
		}
		raw, err := os.ReadFile(filepath.Join(out, "bundles", b.Domain+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &file); err != nil {
			t.Fatal(err)
		}
		for _, a := range file.Atoms {
			check(a.AgentID, a.Atom.Evidence)
		}
	}
	if cited == 0 {
		t.Fatal("the honest run cited nothing: the test would pass vacuously")
	}
	if res.Workspace == nil || res.Workspace.Fingerprint.FilesRead == 0 || res.Workspace.Fingerprint.FilesHash == "" {
		t.Errorf("workspace info %+v: want the files read and their hash", res.Workspace)
	}
	if ev := res.Evidence; ev == nil || ev.Cited != cited || ev.Verified != ev.Cited {
		t.Errorf("the run's evidence counts %+v, want all %d citations verified", ev, cited)
	}
	if res.Telemetry.Tools["worker"].ByTool["read_file"] == 0 || res.Telemetry.Tools["commander"].Calls == 0 {
		t.Errorf("tool telemetry %+v: want workers reading and commanders checking", res.Telemetry.Tools)
	}
}

// The deceptive persona makes up paths, lines and quotes: every one of its
// citations is found fabricated, counted for its model, struck in the action
// report, and matches no planted defect.
func TestDeceptiveFabricationsAreFoundAndReported(t *testing.T) {
	t.Parallel()
	ws := filepath.Join("..", "examples", "workspaces", "tinynotes")
	out := filepath.Join(t.TempDir(), "run")
	o := missionOptions(t, out)
	o.Mission = loadMission(t, "security-review-tinynotes.md")
	o.MissionDir = filepath.Join("..", "examples", "missions")
	o.Workspace, o.GroundTruth = ws, filepath.Join("..", "examples", "workspaces", "tinynotes.truth.yaml")
	o.Provider = providers.Ref{Kind: "mock", Model: mock.Deceptive}
	res, err := nexus.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	ev := res.Evidence
	if ev == nil || ev.Cited == 0 || ev.Fabricated != ev.Cited {
		t.Fatalf("evidence %+v, want every citation fabricated", ev)
	}
	if m := res.EvidenceByModel["mock:deceptive"]; m.Fabricated != ev.Fabricated {
		t.Errorf("per model %+v, want the run's %d fabrications on mock:deceptive", res.EvidenceByModel, ev.Fabricated)
	}
	for _, b := range res.Bundles {
		if b.Evidence == nil || (b.Evidence.Cited > 0 && b.Evidence.Fabricated == 0) {
			t.Errorf("bundle %s evidence %+v", b.ID, b.Evidence)
		}
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(report, []byte("~~`")) || !bytes.Contains(report, []byte("**fabricated**")) {
		t.Error("report.md does not strike and name the fabricated citations")
	}
	if gt := res.GroundTruth; gt == nil || gt.Defects != 11 || gt.Found != 0 {
		t.Errorf("ground truth %+v: want 11 defects, none found by fabricated citations", gt)
	}
	var file struct {
		Counts workspace.Counts `json:"counts"`
	}
	b, err := os.ReadFile(filepath.Join(out, "evidence.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &file); err != nil || file.Counts != *ev {
		t.Errorf("evidence.json counts %+v (%v), want the result's %+v", file.Counts, err, *ev)
	}
}

// The capsule's file scope is real: with --file-scope internal/auth every
// file an agent is served lies inside it, reads outside it are refused
// (scope) and counted, and the honest persona's citations stay inside it.
func TestFileScopeBoundsWhatAgentsRead(t *testing.T) {
	t.Parallel()
	ws := filepath.Join("..", "examples", "workspaces", "tinynotes")
	for _, persona := range []string{mock.Honest, mock.Sloppy} {
		out := filepath.Join(t.TempDir(), "run")
		o := missionOptions(t, out)
		smallTeams(o.Config) // every role that reads still does
		o.Mission = loadMission(t, "security-review-tinynotes.md")
		o.MissionDir = filepath.Join("..", "examples", "missions")
		o.Workspace, o.FileScope = ws, []string{"internal/auth"}
		o.Provider = providers.Ref{Kind: "mock", Model: persona}
		res, err := nexus.Run(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		served := 0
		for _, e := range res.Events {
			d, ok := e.Data.(events.ToolCallData)
			if !ok || d.Tool != "read_file" || !d.OK {
				continue
			}
			served++
			if !strings.HasPrefix(d.Path, "internal/auth/") {
				t.Errorf("%s: %s was served %s, outside the scope internal/auth", persona, e.AgentID, d.Path)
			}
		}
		if persona == mock.Honest {
			if served == 0 {
				t.Fatal("honest read nothing inside the scope: the test would pass vacuously")
			}
			for _, b := range res.Bundles {
				for _, f := range b.Bundle.Findings {
					for _, c := range f.Evidence {
						if !strings.HasPrefix(c.Path, "internal/auth/") {
							t.Errorf("honest finding %q cites %s, outside the scope", f.Title, c.Ref())
						}
					}
				}
			}
		}
	}
}

// A worker that asks for a file outside its scope is refused (scope), and
// the refusal is recorded as an event and counted in telemetry; the file's
// content reaches neither the model nor the run directory.
func TestReadOutsideScopeIsRefusedAndCounted(t *testing.T) {
	t.Parallel()
	ws := filepath.Join("..", "examples", "workspaces", "tinynotes")
	// Every worker's first turn asks for cmd/notesd/main.go, outside the
	// scope; then the honest mock goes on.
	reg := hookRegistry("scoped", "honest mock whose workers first read outside the scope",
		func(ctx context.Context, req providers.Request, next providers.Provider) (providers.Response, error) {
			if req.Caller.Role == "worker" && len(req.Tools) > 0 && len(req.Messages) == 2 {
				return providers.Response{FinishReason: providers.FinishToolCalls, Usage: providers.Usage{InputTokens: 1, OutputTokens: 1},
					ToolCalls: []providers.ToolCall{{ID: "out", Name: "read_file", Arguments: `{"path":"cmd/notesd/main.go"}`}}}, nil
			}
			return next.Complete(ctx, req)
		})
	out := filepath.Join(t.TempDir(), "run")
	o := missionOptions(t, out)
	smallTeams(o.Config) // every worker's first read is refused, however many
	o.Mission = loadMission(t, "security-review-tinynotes.md")
	o.MissionDir = filepath.Join("..", "examples", "missions")
	o.Workspace, o.FileScope, o.Registry = ws, []string{"internal/auth"}, reg
	o.Provider = providers.Ref{Kind: "scoped", Model: mock.Honest}
	res, err := nexus.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	events := countWorker(res, "scope")
	if events == 0 || res.Telemetry.Tools["worker"].Refusals["scope"] != events {
		t.Errorf("scope refusals: %d events, telemetry %+v; want every worker's attempt refused and counted", events, res.Telemetry.Tools["worker"])
	}
	main, err := os.ReadFile(filepath.Join(ws, "cmd", "notesd", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	transcripts, err := os.ReadFile(filepath.Join(out, "transcripts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// A distinctive line of the refused file never reached a model.
	for _, l := range strings.Split(string(main), "\n") {
		if len(l) > 40 && bytes.Contains(transcripts, []byte(strings.TrimSpace(l))) {
			t.Errorf("a line of the out-of-scope file reached the transcripts: %q", l)
			break
		}
	}
}
