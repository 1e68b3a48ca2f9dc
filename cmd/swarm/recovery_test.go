package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `swarm run --fallback worker=mock:honest` with a primary worker model
// that refuses every call: the recovery ladder swaps each worker to the
// fallback and the run completes (the breaker's routing is tested with
// the breaker).
func TestRunFallbackCompletesWhenThePrimaryWorkerFails(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"message":"model down","type":"invalid_request_error"}}`, http.StatusBadRequest)
	}))
	t.Cleanup(down.Close)
	app, out, errb := testApp()
	// The ladder alone: the breaker would route the workers' calls to the
	// fallback before the ladder saw them fail (TestRunFallbackWhileTheWorkersBreakerIsOpen
	// runs both).
	app.ConfigPath = writeFile(t, "config.yml", "providers:\n  openai-compatible:\n    base_url: "+down.URL+"/v1\n    retries: 0\ncircuit_breaker:\n  enabled: false\n"+smallTeams)
	o := RunOptions{MissionArg: "../../examples/missions/auth-migration.md", Scale: "ss-50", Quiet: true,
		Out:       filepath.Join(t.TempDir(), "run"),
		Models:    []string{"worker=openai-compatible:down"},
		Fallbacks: []string{"worker=mock:honest"}}
	if err := runRun(t.Context(), app, o); code(err) != 0 {
		t.Fatalf("exit %d (%v), want 0: the fallback answers\n%s\n%s", code(err), err, out, errb)
	}
	f, err := os.Open(filepath.Join(o.Out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	swaps, recovered := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e struct {
			Kind string          `json:"kind"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		switch e.Kind {
		case "model_swap":
			var d struct{ Role, From, To, Reason string }
			_ = json.Unmarshal(e.Data, &d)
			if d.Role != "worker" || d.From != "openai-compatible:down" || d.To != "mock:honest" || d.Reason != "ladder" {
				t.Errorf("model_swap %s, want worker openai-compatible:down -> mock:honest by the ladder", e.Data)
			}
			swaps++
		case "recovery":
			if strings.Contains(string(e.Data), `"step":"model_swap"`) && strings.Contains(string(e.Data), `"ok":true`) {
				recovered++
			}
		}
	}
	if swaps == 0 || recovered != swaps {
		t.Errorf("%d model swaps, %d recovered by them: want every worker swapped and recovered", swaps, recovered)
	}
	b, err := os.ReadFile(filepath.Join(o.Out, "telemetry.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tel struct {
		Recovery struct {
			Steps map[string]struct{ Used, Succeeded int } `json:"steps"`
		} `json:"recovery"`
	}
	if err := json.Unmarshal(b, &tel); err != nil {
		t.Fatal(err)
	}
	if ms := tel.Recovery.Steps["model_swap"]; ms.Used != swaps || ms.Succeeded != swaps {
		t.Errorf("telemetry recovery.steps.model_swap %+v, want %d used and succeeded", ms, swaps)
	}
}
