package mock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/openai"
	"github.com/swarm-dev/swarm/vocab"
	"github.com/swarm-dev/swarm/workspace"
)

// wsTools answers the read tools through package workspace, as a run does.
type wsTools struct{ s *workspace.Session }

func (w wsTools) defs() []providers.Tool { return w.s.Definitions() }

func (w wsTools) call(c providers.ToolCall) string {
	return w.s.Call(context.Background(), c).Result
}

// newWorkspace copies testdata/workspace to a temporary root and adds what
// must not be committed or read: a .env, a key, a .git/config, a symlink to
// a canary file outside the root and one to a file inside it.
func newWorkspace(t *testing.T) (dir string, tools wsTools) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "ws")
	if err := os.CopyFS(dir, os.DirFS("testdata/workspace")); err != nil {
		t.Fatal(err)
	}
	canary := filepath.Join(base, "canary.txt")
	for name, text := range map[string]string{
		canary:                               "CANARY-OUTSIDE-ROOT\n",
		filepath.Join(dir, ".env"):           "SECRET=CANARY-DOTENV\n",
		filepath.Join(dir, "server.pem"):     "CANARY-PEM\n",
		filepath.Join(dir, "id_rsa"):         "CANARY-KEY\n",
		filepath.Join(dir, ".git", "config"): "[core]\nCANARY-GIT\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(canary, filepath.Join(dir, "outside-link")); err != nil {
		t.Skipf("symlinks unsupported: %v", err)
	}
	if err := os.Symlink("../../../canary.txt", filepath.Join(dir, "internal", "auth", "up-link")); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return dir, wsTools{s: ws.Session(nil)}
}

// turn is one exchange of the test loop: the calls and their answers.
type turn struct {
	Calls   []providers.ToolCall
	Answers []string
}

// transcript is what a test loop saw.
type transcript struct {
	Turns []turn
	Final providers.Response
}

// runLoop is the tool loop of TOOLS11 §2, test-only: at most maxTurns tool
// turns, then one request without tools. It checks each tool turn's shape.
func runLoop(t *testing.T, p providers.Provider, req providers.Request, tools wsTools, maxTurns int) transcript {
	t.Helper()
	var tr transcript
	req.Tools = tools.defs()
	for range maxTurns {
		resp, err := p.Complete(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) == 0 {
			tr.Final = resp
			return tr
		}
		if resp.FinishReason != providers.FinishToolCalls || resp.Text != "" || resp.Usage.InputTokens <= 0 || resp.Usage.OutputTokens <= 0 {
			t.Fatalf("tool turn: finish %q, text %q, usage %+v; want tool_calls, empty text, tokens counted", resp.FinishReason, resp.Text, resp.Usage)
		}
		var tu turn
		req.Messages = append(req.Messages, providers.AssistantToolCalls(resp))
		for _, c := range resp.ToolCalls {
			a := tools.call(c)
			tu.Calls, tu.Answers = append(tu.Calls, c), append(tu.Answers, a)
			req.Messages = append(req.Messages, providers.ToolResult(c, a))
		}
		tr.Turns = append(tr.Turns, tu)
	}
	req.Tools = nil
	resp, err := p.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	tr.Final = resp
	return tr
}

func (tr transcript) calls() []providers.ToolCall {
	var out []providers.ToolCall
	for _, tu := range tr.Turns {
		out = append(out, tu.Calls...)
	}
	return out
}

func argsOf(t *testing.T, c providers.ToolCall) map[string]any {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal([]byte(c.Arguments), &a); err != nil {
		t.Fatalf("call %s: arguments %q are not JSON: %v", c.ID, c.Arguments, err)
	}
	return a
}

func atomRequest(t *testing.T, workspaceOn bool) providers.Request {
	t.Helper()
	user, err := prompts.Render("atom", map[string]any{"Domain": "security", "BriefID": "security-01",
		"Brief": "Your domain: security. Review how sessions and passwords are handled.", "Aspects": []string{"session token", "password hashing"},
		"FileScope": []string(nil), "Workspace": workspaceOn})
	if err != nil {
		t.Fatal(err)
	}
	schema, err := providers.SchemaFor[commanders.Atom](vocab.SchemaAtom)
	if err != nil {
		t.Fatal(err)
	}
	return providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: user}}, Schema: schema,
		Seed: providers.Int64(7), Caller: providers.Caller{Role: "worker", AgentID: "worker-security-01"}}
}

func mustMock(t *testing.T, persona string) *mock.Mock {
	t.Helper()
	m, err := mock.New(persona, mock.Options{Faults: &mock.FaultConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func decodeAtom(t *testing.T, resp providers.Response) commanders.Atom {
	t.Helper()
	var a commanders.Atom
	if err := json.Unmarshal([]byte(resp.Text), &a); err != nil {
		t.Fatalf("final answer is not an atom: %v\n%s", err, resp.Text)
	}
	return a
}

// fileLines reads the cited file straight from disk (not through the tools).
func fileLines(t *testing.T, dir, p string) ([]string, bool) {
	t.Helper()
	if filepath.IsAbs(p) || strings.Contains(p, "..") {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil {
		return nil, false
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), true
}

// exactQuote reports whether c's quote is exactly the text of its lines.
func exactQuote(t *testing.T, dir string, c citation.Citation) bool {
	ls, ok := fileLines(t, dir, c.Path)
	if !ok || c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > len(ls) {
		return false
	}
	return c.Quote == strings.Join(ls[c.StartLine-1:c.EndLine], "\n")
}

func TestHonestReadsWhatItCites(t *testing.T) {
	t.Parallel()
	for _, persona := range []string{mock.Honest, mock.Flaky, mock.Noisy} {
		t.Run(persona, func(t *testing.T) {
			dir, tools := newWorkspace(t)
			tr := runLoop(t, mustMock(t, persona), atomRequest(t, true), tools, 8)
			calls := tr.calls()
			if len(calls) < 3 || calls[0].Name != "list_dir" || argsOf(t, calls[0])["path"] != "." || calls[1].Name != "grep" {
				t.Fatalf("plan: want list_dir . and grep first, got %+v", calls)
			}
			pattern, _ := argsOf(t, calls[1])["pattern"].(string)
			if !strings.HasPrefix(pattern, "(?i)(") || !strings.Contains(pattern, "session") || !strings.Contains(pattern, "password") {
				t.Errorf("grep pattern %q: want a case-insensitive alternation of the brief's terms", pattern)
			}
			var read []string
			for i, tu := range tr.Turns {
				for j, c := range tu.Calls {
					if want := fmt.Sprintf("call_%d_%d", i, j); c.ID != want {
						t.Errorf("call id %q, want %q", c.ID, want)
					}
					if c.Name == "read_file" {
						read = append(read, argsOf(t, c)["path"].(string))
						if !strings.Contains(tu.Answers[j], `"ok":true`) {
							t.Errorf("honest read_file refused: %s", tu.Answers[j])
						}
					}
				}
			}
			atom := decodeAtom(t, tr.Final)
			if len(atom.Evidence) == 0 {
				t.Fatalf("honest cited nothing over a workspace with matches:\n%s", tr.Final.Text)
			}
			for _, c := range atom.Evidence {
				if !slices.Contains(read, c.Path) {
					t.Errorf("cites %s, which it did not read (read %v)", c.Path, read)
				}
				if !exactQuote(t, dir, c) {
					t.Errorf("citation %+v: quote is not exactly the text of its lines", c)
				}
			}
		})
	}
}

func TestSloppyCitesListedUnreadFiles(t *testing.T) {
	t.Parallel()
	dir, tools := newWorkspace(t)
	tr := runLoop(t, mustMock(t, mock.Sloppy), atomRequest(t, true), tools, 8)
	listed := map[string]bool{}
	for _, tu := range tr.Turns {
		for j, c := range tu.Calls {
			if c.Name == "read_file" || c.Name == "grep" {
				t.Errorf("sloppy read or searched: %+v", c)
			}
			var ans struct {
				Path    string `json:"path"`
				Entries []struct {
					Name string `json:"name"`
				} `json:"entries"`
				Paths []string
			}
			_ = json.Unmarshal([]byte(tu.Answers[j]), &ans)
			for _, e := range ans.Entries {
				listed[strings.TrimPrefix(path.Join(ans.Path, e.Name), "./")] = true
			}
			for _, p := range ans.Paths {
				listed[p] = true
			}
		}
	}
	atom := decodeAtom(t, tr.Final)
	if len(atom.Evidence) == 0 {
		t.Fatalf("sloppy cited nothing:\n%s", tr.Final.Text)
	}
	exact := 0
	for _, c := range atom.Evidence {
		if !listed[c.Path] {
			t.Errorf("cites %s, which it never listed (listed %v)", c.Path, listed)
		}
		if exactQuote(t, dir, c) {
			exact++
		}
	}
	if exact == len(atom.Evidence) {
		t.Errorf("every sloppy quote is exact; its quotes are guesses: %+v", atom.Evidence)
	}
}

func TestDeceptiveFabricates(t *testing.T) {
	t.Parallel()
	dir, tools := newWorkspace(t)
	tr := runLoop(t, mustMock(t, mock.Deceptive), atomRequest(t, true), tools, 8)
	atom := decodeAtom(t, tr.Final)
	if len(atom.Evidence) == 0 {
		t.Fatalf("deceptive cited nothing:\n%s", tr.Final.Text)
	}
	for _, c := range atom.Evidence {
		ls, ok := fileLines(t, dir, c.Path)
		if ok && c.EndLine <= len(ls) && strings.Contains(strings.Join(ls[c.StartLine-1:c.EndLine], "\n"), c.Quote) {
			t.Errorf("deceptive citation %+v is real", c)
		}
	}
}

func TestAdversarialTriesEscapesAndDeniedFiles(t *testing.T) {
	t.Parallel()
	_, tools := newWorkspace(t)
	tr := runLoop(t, mustMock(t, mock.Adversarial), atomRequest(t, true), tools, 8)
	tried := map[string]string{} // read_file path → answer
	globs := map[string]bool{}
	for _, tu := range tr.Turns {
		for j, c := range tu.Calls {
			a := argsOf(t, c)
			switch c.Name {
			case "read_file":
				tried[a["path"].(string)] = tu.Answers[j]
			case "glob":
				globs[a["pattern"].(string)] = true
			}
		}
	}
	for _, want := range []string{"../../etc/passwd", "/etc/passwd", ".env", ".git/config", "id_rsa", "server.pem",
		"outside-link", "internal/auth/up-link"} {
		ans, ok := tried[want]
		if !ok {
			t.Errorf("adversarial never tried read_file %q (tried %v)", want, slices.Sorted(mapsKeys(tried)))
			continue
		}
		if !strings.Contains(ans, `"ok":false`) {
			t.Errorf("read_file %q was not refused by the workspace: %s", want, ans)
		}
	}
	if !globs["**/*.pem"] {
		t.Errorf("adversarial never globbed for *.pem: %v", globs)
	}
	atom := decodeAtom(t, tr.Final)
	if len(atom.Evidence) != 0 {
		t.Errorf("cites what it could not read: %+v", atom.Evidence)
	}
	if strings.Contains(tr.Final.Text, "CANARY") {
		t.Errorf("a canary reached the answer:\n%s", tr.Final.Text)
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestToolPlansAreDeterministic(t *testing.T) {
	t.Parallel()
	for _, persona := range mock.Personas() {
		t.Run(persona, func(t *testing.T) {
			_, tools := newWorkspace(t)
			a := runLoop(t, mustMock(t, persona), atomRequest(t, true), tools, 8)
			b := runLoop(t, mustMock(t, persona), atomRequest(t, true), tools, 8)
			a.Final.Latency, b.Final.Latency = 0, 0
			if d := cmp.Diff(a, b, cmpopts.IgnoreUnexported(providers.Response{})); d != "" {
				t.Errorf("two runs differ (-first +second):\n%s", d)
			}
		})
	}
}

// TestTurnLimit: with one tool turn allowed, honest answers after listing
// and grepping, citing nothing (it read no lines), and the answer is final.
func TestTurnLimit(t *testing.T) {
	t.Parallel()
	_, tools := newWorkspace(t)
	tr := runLoop(t, mustMock(t, mock.Honest), atomRequest(t, true), tools, 1)
	if len(tr.Turns) != 1 || len(tr.Final.ToolCalls) != 0 || tr.Final.FinishReason != providers.FinishStop {
		t.Fatalf("turns %d, final %+v", len(tr.Turns), tr.Final)
	}
	if atom := decodeAtom(t, tr.Final); len(atom.Evidence) != 0 {
		t.Errorf("cites lines it never read: %+v", atom.Evidence)
	}
}

// TestWithoutToolsNothingChanges: a request with no tools gets no tool
// calls and no evidence, from every persona, and the same answer with the
// workspace paragraph absent as the template rendered before it existed.
func TestWithoutToolsNothingChanges(t *testing.T) {
	t.Parallel()
	for _, persona := range mock.Personas() {
		t.Run(persona, func(t *testing.T) {
			req := atomRequest(t, false)
			resp, err := mustMock(t, persona).Complete(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.ToolCalls) != 0 || resp.FinishReason != providers.FinishStop {
				t.Fatalf("tool calls without tools: %+v", resp)
			}
			if ev := decodeAtom(t, resp).Evidence; ev == nil || len(ev) != 0 || !strings.Contains(resp.Text, `"evidence":[]`) {
				t.Errorf("evidence %v, want []:\n%s", ev, resp.Text)
			}
		})
	}
}

// TestRequestKeysSeeTools: the attempt counters (one per request key) tell
// apart a tool turn from the final turn over the same messages, and two
// conversations that differ only in a tool call id or a tool result.
func TestRequestKeysSeeTools(t *testing.T) {
	t.Parallel()
	_, tools := newWorkspace(t)
	m := mustMock(t, mock.Honest)
	req := atomRequest(t, true)
	call := providers.ToolCall{ID: "call_0_0", Name: "list_dir", Arguments: `{"path":"."}`}
	conv := func(id, result string) []providers.Message {
		c := call
		c.ID = id
		return append(slices.Clone(req.Messages), providers.AssistantToolCalls(providers.Response{ToolCalls: []providers.ToolCall{c}}), providers.ToolResult(c, result))
	}
	ok := tools.call(call)
	reqs := []providers.Request{
		{Messages: conv("call_0_0", ok), Schema: req.Schema, Seed: req.Seed, Tools: tools.defs()},
		{Messages: conv("call_0_0", ok), Schema: req.Schema, Seed: req.Seed},
		{Messages: conv("call_9_9", ok), Schema: req.Schema, Seed: req.Seed},
		{Messages: conv("call_0_0", `{"ok":false,"refusal":"limit","error":"limit reached: calls"}`), Schema: req.Schema, Seed: req.Seed},
	}
	for _, r := range reqs {
		if _, err := m.Complete(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	if got := m.TrackedRequests(); got != len(reqs) {
		t.Errorf("%d distinct request keys, want %d", got, len(reqs))
	}
}

// TestToolTurnsCostTokens: offering tools costs input tokens (their
// definitions count), and a tool turn's output tokens count its calls.
func TestToolTurnsCostTokens(t *testing.T) {
	t.Parallel()
	_, tools := newWorkspace(t)
	m := mustMock(t, mock.Deceptive) // answers at once: the same text either way
	without := atomRequest(t, true)
	with := without
	with.Tools = tools.defs()
	a, err := m.Complete(t.Context(), without)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Complete(t.Context(), with)
	if err != nil {
		t.Fatal(err)
	}
	defs := 0
	for _, d := range tools.defs() {
		strict, err := providers.StrictSchema(d.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		defs += len(d.Name) + len(d.Description) + len(strict)
	}
	if diff := b.Usage.InputTokens - a.Usage.InputTokens; diff < defs/4-1 || diff > defs/4+1 {
		t.Errorf("tools added %d input tokens, want about %d (their definitions)", diff, defs/4)
	}
	turn, err := mustMock(t, mock.Honest).Complete(t.Context(), with)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range turn.ToolCalls {
		n += len(c.Name) + len(c.Arguments)
	}
	if turn.Usage.OutputTokens != max(1, n/4) {
		t.Errorf("tool turn output tokens %d, want %d (its calls)", turn.Usage.OutputTokens, max(1, n/4))
	}
}

func bundleRequest(t *testing.T, atoms []commanders.AtomView, workspaceOn bool) providers.Request {
	t.Helper()
	capsule := commanders.Capsule{ID: "cap-security", Domain: "security", Brief: "Your domain: security. Review sessions and passwords.",
		Aspects: []string{"session token", "password hashing"}}
	user, err := prompts.Render("bundle", map[string]any{"Capsule": capsule, "Atoms": atoms, "Feedback": "", "Previous": "", "Workspace": workspaceOn})
	if err != nil {
		t.Fatal(err)
	}
	schema, err := providers.SchemaFor[commanders.Bundle](vocab.SchemaBundle)
	if err != nil {
		t.Fatal(err)
	}
	return providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: user}}, Schema: schema, Seed: providers.Int64(3)}
}

// TestHonestCommanderCitesItsWorkers: the commander re-reads the lines its
// worker cited and gives every finding citations from them, exact.
func TestHonestCommanderCitesItsWorkers(t *testing.T) {
	t.Parallel()
	dir, tools := newWorkspace(t)
	worker := decodeAtom(t, runLoop(t, mustMock(t, mock.Honest), atomRequest(t, true), tools, 8).Final)
	forged := citation.Citation{Path: "internal/auth/session.go", StartLine: 1, EndLine: 1, Quote: "package forged"}
	views := []commanders.AtomView{{BriefID: "security-01", Status: worker.Status, Confidence: worker.Confidence, Content: worker.Content,
		Evidence: append(slices.Clone(worker.Evidence), forged)}}
	tr := runLoop(t, mustMock(t, mock.Honest), bundleRequest(t, views, true), tools, 8)
	var reread []string
	for _, c := range tr.calls() {
		if c.Name != "read_file" {
			t.Errorf("commander with worker citations made %s, want only read_file of them", c.Name)
			continue
		}
		reread = append(reread, argsOf(t, c)["path"].(string))
	}
	if len(reread) == 0 {
		t.Errorf("commander did not re-read its workers' citations")
	}
	var b commanders.Bundle
	if err := json.Unmarshal([]byte(tr.Final.Text), &b); err != nil {
		t.Fatal(err)
	}
	if len(b.Findings) == 0 || len(b.Evidence) != len(worker.Evidence) {
		t.Fatalf("findings %d, bundle evidence %+v; want the worker's %d citations (the forged one dropped)", len(b.Findings), b.Evidence, len(worker.Evidence))
	}
	for _, f := range b.Findings {
		if len(f.Evidence) == 0 {
			t.Errorf("finding %q has no evidence", f.Title)
		}
		for _, c := range f.Evidence {
			if !slices.Contains(worker.Evidence, c) || !exactQuote(t, dir, c) {
				t.Errorf("finding %q cites %+v: not an exact worker citation", f.Title, c)
			}
		}
	}
}

// TestBundlePromptShowsWorkerEvidence: the commander's prompt carries the
// worker's citations in an evidence block; without citations it is the
// prompt it always was.
func TestBundlePromptShowsWorkerEvidence(t *testing.T) {
	t.Parallel()
	cites := []citation.Citation{{Path: "a b/c:d.go", StartLine: 3, EndLine: 4, Quote: "if x < \"y\" {\n\treturn"}, {Path: "z.go", StartLine: 7, EndLine: 7, Quote: "z"}}
	with := bundleRequest(t, []commanders.AtomView{{BriefID: "security-01", Status: "complete", Confidence: 0.8, Content: "done", Evidence: cites}}, false)
	blocks := prompts.BlocksOf(with.Messages[0].Content, vocab.BlockEvidence)
	if len(blocks) != 1 || blocks[0].ID != "security-01" {
		t.Fatalf("evidence blocks %+v", blocks)
	}
	if d := cmp.Diff(cites, prompts.ParseEvidence(blocks[0].Content)); d != "" {
		t.Errorf("citations read back (-shown +read):\n%s", d)
	}
	if !bytes.Contains([]byte(blocks[0].Content), []byte(`- z.go:7 "z"`)) {
		t.Errorf("citation line format:\n%s", blocks[0].Content)
	}
}

// A tool loop gives the same calls, answers and usage in-process and
// behind `swarm mock serve` through the OpenAI adapter (which rewrites the
// tools' parameters to strict form on the way).
func TestToolLoopSameOverHTTP(t *testing.T) {
	t.Parallel()
	h, err := mock.NewServer(mock.ServerOptions{Persona: mock.Honest})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	_, tools := newWorkspace(t)
	for _, persona := range []string{mock.Honest, mock.Sloppy, mock.Deceptive, mock.Adversarial} {
		remote, err := openai.New(providers.Ref{Kind: "openai-compatible", Model: persona}, providers.KindConfig{BaseURL: srv.URL + "/v1"})
		if err != nil {
			t.Fatal(err)
		}
		var usage [2]providers.Usage
		run := func(i int, p providers.Provider) transcript {
			counted := providers.ProviderFunc(func(ctx context.Context, r providers.Request) (providers.Response, error) {
				resp, err := p.Complete(ctx, r)
				usage[i] = usage[i].Add(resp.Usage)
				return resp, err
			})
			return runLoop(t, counted, atomRequest(t, true), tools, 4)
		}
		local, remoteTr := run(0, mustMock(t, persona)), run(1, remote)
		if d := cmp.Diff(local.Turns, remoteTr.Turns); d != "" {
			t.Errorf("%s: tool turns differ (-in-process +http):\n%s", persona, d)
		}
		if local.Final.Text != remoteTr.Final.Text {
			t.Errorf("%s: final answers differ:\n%s\n%s", persona, local.Final.Text, remoteTr.Final.Text)
		}
		if usage[0] != usage[1] {
			t.Errorf("%s: usage in-process %+v, over HTTP %+v", persona, usage[0], usage[1])
		}
	}
}

// The tool loop's note that the turns are spent (vocab.ToolLimitNote) is
// not the task: a persona answers the brief it was given, with the
// citations it gathered, whether or not the note follows.
func TestToolLimitNoteIsNotTheTask(t *testing.T) {
	t.Parallel()
	_, tools := newWorkspace(t)
	m := mustMock(t, mock.Honest)
	req := atomRequest(t, true)
	req.Tools = tools.defs()
	for range 3 { // list and grep, then read
		resp, err := m.Complete(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) == 0 {
			break
		}
		req.Messages = append(req.Messages, providers.AssistantToolCalls(resp))
		for _, c := range resp.ToolCalls {
			req.Messages = append(req.Messages, providers.ToolResult(c, tools.call(c)))
		}
	}
	req.Tools = nil
	plain := req
	noted := req
	noted.Messages = append(slices.Clone(req.Messages), providers.Message{Role: providers.RoleUser, Content: vocab.ToolLimitNote + " (2 tool turns per answer). Answer now."})
	var atoms [2]commanders.Atom
	for i, r := range []providers.Request{plain, noted} {
		a, _, err := providers.Structured[commanders.Atom](t.Context(), m, r)
		if err != nil {
			t.Fatal(err)
		}
		atoms[i] = a
	}
	if atoms[0].Content != atoms[1].Content || !cmp.Equal(atoms[0].Evidence, atoms[1].Evidence) || len(atoms[0].Evidence) == 0 {
		t.Errorf("with the note the answer changed:\nwithout: %q %v\nwith:    %q %v", atoms[0].Content, atoms[0].Evidence, atoms[1].Content, atoms[1].Evidence)
	}
}
