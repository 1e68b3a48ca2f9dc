package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/events"
)

// Done when (issue 12), through the CLI: the workers' model is a server
// that answers every call with a 500; with --fallback worker=mock:honest
// the run completes with every bundle scored, and the --json event stream
// shows the breaker of (that model, workers) open, its half-open probes
// (each failing: back to open) and the swaps to the fallback.
//
// The config makes the order of transitions independent of scheduling: the
// scale's calls one at a time, a breaker that decides after two calls, and
// a cooldown (1ns) shorter than the time between two calls.
func TestRunFallbackWhileTheWorkersBreakerIsOpen(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	srv := interceptedMock(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) bool {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"injected outage","type":"server_error"}}`)
		return true
	})
	t.Setenv("SWARM_BREAKER_E2E_KEY", "not-a-real-key")
	cfg := writeFile(t, "config.yml", "providers:\n  openai-compatible:\n    base_url: "+srv.URL+"/v1\n    api_key_env: SWARM_BREAKER_E2E_KEY\n    retries: 0\n"+
		"scales:\n  ss-50:\n    concurrency: 1\n    workers_per_commander: 3\n    reviewers: 2\n"+ // small teams (smallTeams)
		"circuit_breaker:\n  failure_rate: 0.5\n  call_window: 4\n  min_calls: 2\n  cooldown: 1ns\n  half_open_probes: 1\n")
	dir := filepath.Join(t.TempDir(), "run")
	var stdout, stderr bytes.Buffer
	code := runCLI(t.Context(), []string{"run", "--config", cfg, "--json", "--mission", "Design a token rotation scheme for the session store.",
		"--provider", "mock:honest", "--model", "worker=openai-compatible:down", "--fallback", "worker=mock:honest", "--scale", "ss-50", "--out", dir},
		strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (every bundle scored)\nstderr: %s", code, stderr.String())
	}
	const down = "openai-compatible:down"
	transitions := map[string]int{}
	swaps := 0
	var end events.RunEndData
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e events.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("not an event: %v\n%s", err, sc.Bytes())
		}
		switch d := e.Data.(type) {
		case events.BreakerData:
			if d.Model != down || d.Layer != "workers" {
				t.Errorf("breaker of %s (%s) moved", d.Model, d.Layer)
			}
			transitions[d.From+">"+d.To]++
		case events.ModelSwapData:
			// Both mechanisms are on, as by default: the breaker routes
			// calls while it is open; the recovery ladder swaps a worker
			// whose call failed (the one that opened it, a failed probe).
			if d.From != down || d.To != "mock:honest" || d.Role != "worker" || (d.Reason != events.SwapBreakerOpen && d.Reason != events.SwapLadder) {
				t.Errorf("unexpected swap %+v", d)
			}
			if d.Reason == events.SwapBreakerOpen {
				swaps++
			}
		case events.RunEndData:
			end = d
		}
	}
	if transitions["closed>open"] != 1 || transitions["open>half_open"] == 0 || transitions["half_open>open"] != transitions["open>half_open"] {
		t.Errorf("transitions %v: want one opening, then half-open probes that each fail and open it again", transitions)
	}
	if swaps == 0 {
		t.Error("no model_swap event of the breaker (breaker_open)")
	}
	if end.BundlesScored != end.BundlesPlanned || end.BundlesPlanned == 0 {
		t.Errorf("run_end %+v: want every bundle scored", end)
	}
}
