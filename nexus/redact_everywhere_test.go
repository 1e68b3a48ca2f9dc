package nexus_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/internal/redact/redacttest"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
)

// prose are the answer fields that carry free text: the planted credentials
// are appended to each (ids, statuses, paths and enums are left alone, so
// the answer still fits its schema).
var prose = map[string]bool{"content": true, "summary": true, "detail": true, "description": true, "assertion": true,
	"expected": true, "rationale": true, "reason": true, "feedback": true, "title": true, "brief": true, "text": true,
	"message": true, "notes": true, "synthesis": true, "recommendation": true, "evidence": true, "quote": true}

// echo appends doc to every free-text string of a JSON answer.
func echo(v any, doc string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && prose[k] && len(s) >= 8 {
				x[k] = s + "\n" + doc
				continue
			}
			x[k] = echo(e, doc)
		}
	case []any:
		for i := range x {
			x[i] = echo(x[i], doc)
		}
	}
	return v
}

// leakyProvider is the mock, echoing the planted credentials: in every
// structured answer's free text (decomposition, criteria, shard plans,
// atoms, bundles, reviews, verdicts), and in the pattern of every grep it
// asks for (a tool call's arguments). kinds collects "role schema" (or "role grep") of every answer it changed.
func leakyProvider(doc, token string, echoed *atomic.Int64, kinds *sync.Map) func(providers.Ref, providers.Provider) providers.Provider {
	return func(_ providers.Ref, p providers.Provider) providers.Provider {
		return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
			resp, err := p.Complete(ctx, req)
			if err != nil {
				return resp, err
			}
			for i, c := range resp.ToolCalls {
				var args map[string]any
				if c.Name != "grep" || json.Unmarshal([]byte(c.Arguments), &args) != nil {
					continue
				}
				if pat, ok := args["pattern"].(string); ok {
					args["pattern"] = pat + "|" + regexp.QuoteMeta(token)
					b, _ := json.Marshal(args)
					resp.ToolCalls = append([]providers.ToolCall(nil), resp.ToolCalls...)
					resp.ToolCalls[i].Arguments = string(b)
					echoed.Add(1)
					kinds.Store(req.Caller.Role+" grep", true)
				}
			}
			var v any
			if len(resp.ToolCalls) == 0 && json.Unmarshal([]byte(resp.Text), &v) == nil {
				if b, err := json.Marshal(echo(v, doc)); err == nil && string(b) != resp.Text {
					resp.Text = string(b)
					echoed.Add(1)
					kinds.Store(req.Caller.Role+" "+req.Schema.Name, true)
				}
			}
			return resp, nil
		})
	}
}

// Every credential format, planted through every path a run takes in text
// (a workspace file the agents read with their tools, the mission, every
// answer's free text, tool-call arguments, the decomposition and the seal
// author's criteria, a configured key the provider echoes), reaches no file
// of the run directory; the sealed envelope still verifies.
func TestNoCredentialReachesAnyFileOfTheRun(t *testing.T) {
	t.Parallel()
	doc := redacttest.Document()

	// A workspace whose files hold every format (read_file, grep).
	ws := t.TempDir()
	if err := os.CopyFS(ws, os.DirFS(tinynotes)); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"docs/deploy-notes.md":    "# Deploy notes\n\n" + doc,
		"internal/config/keys.go": "package config\n\n// Deploy credentials (do not commit):\n/*\n" + doc + "*/\n",
	} {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	var echoed atomic.Int64
	var kinds sync.Map
	out := filepath.Join(t.TempDir(), "run")
	o := missionOptions(t, out)
	// A configured key: the run registers it. Its variable holds
	// redacttest.Secret for the whole test binary (TestMain), so the test
	// needs no t.Setenv and runs in parallel.
	kc := o.Config.Providers["openai"]
	kc.APIKeyEnv = envConfiguredKey
	o.Config.Providers["openai"] = kc
	o.Mission = loadMission(t, "security-review-tinynotes.md") + "\nContext from the team:\n\n" + doc
	o.MissionDir = filepath.Join("..", "examples", "missions")
	o.Workspace = ws
	o.Provider = providers.Ref{Kind: "mock", Model: "honest"}
	// The smallest team that still takes every path the scan is about:
	// two commanders (the scale's minimum) so there are two bundles and a
	// cross-review, two workers each, two reviewers. Every kind of answer
	// (decomposition, criteria, plans, atoms, bundles, reviews, verdicts,
	// synthesis) and every file still exists; what the full ss-50 team
	// adds is more of the same answers, and each costs the redaction pass
	// (slow under -race) its whole echoed document again.
	sc := o.Config.Scales["ss-50"]
	sc.Commanders, sc.WorkersPerCommander, sc.Reviewers = 2, 2, 2
	o.Config.Scales["ss-50"] = sc
	m, err := nexus.Prepare(o, nexus.WithProviderWrap(leakyProvider(doc, "sk_live_51Hx9Kq2eZvKYlo2C8a7b6c5d4", &echoed, &kinds)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if echoed.Load() == 0 {
		t.Fatal("the provider echoed nothing: the test exercises nothing")
	}

	// Every file of the run directory, whatever it is.
	files := 0
	err = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(out, path)
		for _, p := range redacttest.All() {
			for _, raw := range p.Raw {
				if strings.Contains(string(b), raw) {
					t.Errorf("%s holds the raw %s (%q)", rel, p.Name, raw)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The files this test is about exist (a run that wrote nothing passes
	// the scan above).
	for _, name := range []string{"transcripts.jsonl", "journal.jsonl", "events.jsonl", "decomposition.json", "result.json", "report.md",
		"telemetry.json", "mission.md", filepath.Join("sealed", "envelope.json")} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, dir := range []string{"bundles", "capsules", "reviews"} {
		if ents, _ := os.ReadDir(filepath.Join(out, dir)); len(ents) == 0 {
			t.Errorf("%s/ is empty", dir)
		}
	}
	// Redacted before it was sealed: the envelope verifies, and is the one
	// the result names.
	env, err := shadow.LoadSealed(runfiles.EnvelopePath(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Verify(); err != nil {
		t.Errorf("envelope: %v", err)
	}
	if env.SealedHash != res.SealedHash {
		t.Errorf("envelope %s, result %s", env.SealedHash, res.SealedHash)
	}
	// Every kind of answer carried the credentials (role and schema, or a
	// grep's arguments): the smaller team above still takes every path.
	var ks []string
	kinds.Range(func(k, _ any) bool { ks = append(ks, k.(string)); return true })
	slices.Sort(ks)
	wantKinds := []string{"commander bundle", "commander shard_plan", "judge verdicts", "nexus decomposition", "reviewer review",
		"seal_author sealed_criteria", "worker atom", "worker grep"}
	if diff := cmp.Diff(wantKinds, ks); diff != "" {
		t.Errorf("answers that echoed the credentials, by role and schema (-want +got):\n%s", diff)
	}
	t.Logf("%d files scanned, %d answers echoed the credentials", files, echoed.Load())
}
