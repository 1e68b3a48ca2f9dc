// Package runfixture builds a runs directory for the tests of the run
// index (history) and the viewer (view): real runs of the mock mission
// made by the engine in-process, and the directories a runs directory may
// also hold (a failed run, an unfinished one, a forged one, one whose
// bundle text plants script). It is for tests only: history and view never
// import the engine, their tests do, through this package.
package runfixture

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/journalkeytest"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

// The directories Build makes, relative to the runs directory.
const (
	// OK is a complete mock run without a workspace.
	OK = "ok"
	// Workspace is a complete mock run over examples/workspaces/tinynotes
	// with its ground truth: evidence, finding cards with code, recall.
	Workspace = "workspace"
	// Failed is a run every model call of which failed.
	Failed = "failed"
	// Unfinished holds run.json and the first events only (a run still
	// going, or killed).
	Unfinished = "unfinished"
	// Forged holds a run.json and a result.json that are not JSON.
	Forged = "forged"
	// Planted is OK with script, javascript: links, markdown and HTML
	// planted in its bundle text and finding titles (see Planted*).
	Planted = "planted"
)

// PlantedScript is what Planted's bundle text and finding titles carry:
// if it ever ran in a page, window.pwned would be set.
const PlantedScript = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2">[click](javascript:window.pwned=3) <a href="javascript:window.pwned=4">link</a>`

// Mission is the mission of OK and Planted.
const Mission = "# Test-gap hunt\n\nFind the untested error handling and edge cases in the billing service and plan the regression tests."

// Root is the module's root directory (where go.mod is).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Run runs a mock mission into dir (ss-50 unless opts says otherwise).
func Run(ctx context.Context, dir string, edit func(*nexus.Options, *mock.Options)) (*nexus.Result, error) {
	cfg, err := config.Load("", nil)
	if err != nil {
		return nil, err
	}
	mo := mock.Options{}
	o := nexus.Options{Config: cfg, Mission: Mission, Scale: "ss-50", Provider: providers.Ref{Kind: "mock", Model: "honest"}, OutDir: dir}
	if edit != nil {
		edit(&o, &mo)
	}
	reg := &providers.Registry{}
	mock.Register(reg, mo)
	o.Registry = reg
	return nexus.Run(ctx, o)
}

// Build makes the runs directory runs: every directory named above.
func Build(ctx context.Context, runs string) error {
	if _, err := Run(ctx, filepath.Join(runs, OK), nil); err != nil {
		return fmt.Errorf("ok run: %w", err)
	}
	ex := filepath.Join(Root(), "examples")
	if _, err := Run(ctx, filepath.Join(runs, Workspace), func(o *nexus.Options, _ *mock.Options) {
		b, _ := os.ReadFile(filepath.Join(ex, "missions", "security-review-tinynotes.md"))
		o.Mission, o.MissionDir = string(b), filepath.Join(ex, "missions")
		o.Workspace = filepath.Join(ex, "workspaces", "tinynotes")
		o.GroundTruth = filepath.Join(ex, "workspaces", "tinynotes.truth.yaml")
	}); err != nil {
		return fmt.Errorf("workspace run: %w", err)
	}
	// Every answer malformed: the run fails in its first phase.
	res, err := Run(ctx, filepath.Join(runs, Failed), func(_ *nexus.Options, mo *mock.Options) {
		mo.Faults = &mock.FaultConfig{MalformedJSON: 1}
	})
	if res == nil {
		return fmt.Errorf("failed run: no result: %w", err)
	}
	if _, err := Run(ctx, filepath.Join(runs, Planted), nil); err != nil {
		return fmt.Errorf("planted run: %w", err)
	}
	if err := plant(filepath.Join(runs, Planted)); err != nil {
		return err
	}
	// Unfinished: the OK run's manifest and first event, nothing else.
	if err := os.MkdirAll(filepath.Join(runs, Unfinished), 0o755); err != nil {
		return err
	}
	mf, err := os.ReadFile(filepath.Join(runs, OK, "run.json"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(runs, Unfinished, "run.json"), mf, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(runs, Unfinished, "events.jsonl"),
		[]byte(`{"seq":1,"time":"2026-11-27T16:07:03Z","phase":"0","kind":"phase_start","message":"intake"}`+"\n"), 0o644); err != nil {
		return err
	}
	// Forged: files that are not what they claim.
	if err := os.MkdirAll(filepath.Join(runs, Forged), 0o755); err != nil {
		return err
	}
	for name, body := range map[string]string{"run.json": "{\"run_id\": 12", "result.json": "<html>not json</html>", "events.jsonl": "garbage\n"} {
		if err := os.WriteFile(filepath.Join(runs, Forged, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// plant writes PlantedScript into the run's result.json: the first
// bundle's text, summary and finding titles, and its mission title.
func plant(dir string) error {
	file := filepath.Join(dir, "result.json")
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		return err
	}
	plan, _ := res["plan"].(map[string]any)
	plan["mission"] = "Planted " + PlantedScript
	bundles, _ := res["bundles"].([]any)
	if len(bundles) == 0 {
		return fmt.Errorf("%s: no bundles to plant in", file)
	}
	b0 := bundles[0].(map[string]any)
	bundle := b0["bundle"].(map[string]any)
	bundle["content"] = "# Heading\n\n" + PlantedScript + "\n**bold** <b>html</b>"
	bundle["summary"] = PlantedScript
	bundle["findings"] = []any{map[string]any{
		"title": "Finding " + PlantedScript, "detail": PlantedScript, "priority": "high", "effort": "quick",
		"evidence": []any{map[string]any{"path": "javascript:window.pwned=5", "start_line": 1, "end_line": 2, "quote": PlantedScript + "\nsecond line"}},
	}}
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, out, 0o644)
}

// JournalKey points SWARM_JOURNAL_KEY_FILE at a new key in a temporary
// directory (unless the environment names one already), so that the runs
// Build makes never touch the user's journal key; call it from TestMain
// before Build, and the returned cleanup after the tests.
func JournalKey() (cleanup func(), err error) {
	if os.Getenv(journalkeytest.EnvKeyFile) != "" {
		return func() {}, nil
	}
	dir, err := os.MkdirTemp("", "swarm-journal-key-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "journal.key")
	if err := journalkeytest.MakeKey(path); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	os.Setenv(journalkeytest.EnvKeyFile, path)
	return func() { os.RemoveAll(dir) }, nil
}

// Synthetic writes n small run directories into runs (syn-00000, ...):
// run.json, result.json (with its telemetry) and one event each, with missions,
// models, statuses, scores, evidence, recall and costs varied so that
// filters and sorts have work to do. They are what the benchmarks index
// at 10 000 runs; they are not real runs (no bundles, no envelope).
func Synthetic(runs string, n int) error {
	statuses := []string{"complete", "complete", "complete", "incomplete", "partial", "failed", "invalid", "interrupted"}
	models := []string{"mock:honest", "mock:deceptive", "openai:gpt-4.1", "anthropic:claude-sonnet-4", "ollama:llama3"}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		dir := filepath.Join(runs, fmt.Sprintf("syn-%05d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		id := fmt.Sprintf("syn-%05d", i)
		mission := fmt.Sprintf("Mission %02d: review the billing service", i%20)
		model := models[i%len(models)]
		status := statuses[i%len(statuses)]
		result := map[string]any{
			"status": status, "task_hash": fmt.Sprintf("sha256:%064x", i%20),
			"plan":      map[string]any{"mission": mission, "scale": "ss-50", "models": map[string]any{"commanders": []string{model}, "judge": "mock:honest"}},
			"telemetry": map[string]any{"cost_usd": float64(i%97) / 1000, "wall_ms": 1000 + i%5000, "by_model": map[string]any{model: map[string]any{"calls": 10}}},
		}
		if status != "failed" {
			result["shadow_aggregate"] = map[string]any{"median": float64(i%101) / 1, "planned": 5, "scored": 5}
		} else {
			result["error"] = "provider " + model + ": timeout"
		}
		if i%3 == 0 {
			result["evidence"] = map[string]any{"cited": 30, "verified": 30 - i%4, "unverifiable": 0, "fabricated": i % 4}
			result["ground_truth"] = map[string]any{"recall": float64(i%11) / 10}
		}
		manifest := map[string]any{"run_id": id, "attempts": 1, "scale": "ss-50",
			"mission": map[string]any{"name": fmt.Sprintf("mission-%02d.md", i%20), "sha256": "sha256:00"}}
		event := map[string]any{"seq": 1, "time": base.Add(time.Duration(i) * time.Minute), "phase": "0", "kind": "phase_start", "message": "intake"}
		for name, v := range map[string]any{"result.json": result, "run.json": manifest} {
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				return err
			}
		}
		b, err := json.Marshal(event)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}
