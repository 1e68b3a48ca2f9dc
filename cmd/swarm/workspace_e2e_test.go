package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/swarm-dev/swarm/nexus"
)

// The README's workspace mission through `swarm mock serve` and the real
// openai-compatible adapter: the mock's tool calls travel as OpenAI
// tool_calls, the workers read the workspace, and every citation of the
// honest persona verifies; the result equals the in-process run's.
func TestWorkspaceMissionThroughMockServe(t *testing.T) {
	t.Parallel()
	var toolTurns atomic.Int64 // requests carrying a tool result (handlers run concurrently)
	srv := interceptedMock(t, func(_ http.ResponseWriter, _ *http.Request, body []byte) bool {
		if bytes.Contains(body, []byte(`"role":"tool"`)) {
			toolTurns.Add(1)
		}
		return false
	})
	// Both runs at the default scale (ss-100) with three workers per
	// commander and two reviewers, not fifteen and eight: what crosses the
	// HTTP boundary (tool calls, tool results, every role's structured
	// answers) is the same, at a fifth of the calls.
	cfg := writeFile(t, "config.yml", "providers:\n  openai-compatible:\n    base_url: "+srv.URL+"/v1\n"+
		"scales:\n  ss-100:\n    workers_per_commander: 3\n    reviewers: 2\n")
	mission := filepath.Join("..", "..", "examples", "missions", "security-review-tinynotes.md")
	ws := filepath.Join("..", "..", "examples", "workspaces", "tinynotes")
	results := map[string]nexus.Result{}
	for name, args := range map[string][]string{
		"http":       {"run", "--config", cfg, mission, "--workspace", ws, "--provider", "openai-compatible:honest", "-q"},
		"in-process": {"run", "--config", cfg, mission, "--workspace", ws, "--provider", "mock:honest", "-q"},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		var stdout, stderr bytes.Buffer
		if code := runCLI(t.Context(), append(args, "--out", dir), strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, code, stderr.String())
		}
		b, err := os.ReadFile(filepath.Join(dir, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		var res nexus.Result
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		results[name] = res
		ev := res.Evidence
		if ev == nil || ev.Cited == 0 || ev.Verified != ev.Cited {
			t.Errorf("%s: evidence %+v, want every citation verified", name, ev)
		}
		if res.Telemetry.Tools["worker"].Calls == 0 {
			t.Errorf("%s: no worker tool calls in telemetry", name)
		}
	}
	if toolTurns.Load() == 0 {
		t.Error("no request to mock serve carried a tool result: tool calls did not travel over HTTP")
	}
	h, l := results["http"], results["in-process"]
	if h.SealedHash != l.SealedHash || *h.Evidence != *l.Evidence || h.Telemetry.Tools["worker"].Calls != l.Telemetry.Tools["worker"].Calls {
		t.Errorf("over HTTP: sealed %s, evidence %+v, worker tool calls %d; in-process: %s, %+v, %d",
			h.SealedHash, *h.Evidence, h.Telemetry.Tools["worker"].Calls, l.SealedHash, *l.Evidence, l.Telemetry.Tools["worker"].Calls)
	}
}
