package nexus_test

import (
	"context"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

// An answer is validated once, the way Structured reads it, so the run's
// telemetry and the pipeline agree on it: a worker answer with a null
// member (what OpenAI's strict mode sends for an absent optional field) is
// a valid atom, not a schema violation counted in the telemetry.
func TestAnswersAreCheckedTheWayTheyAreRead(t *testing.T) {
	t.Parallel()
	reg := hookRegistry("nulls", "mock whose workers add a null member", func(ctx context.Context, req providers.Request, m providers.Provider) (providers.Response, error) {
		resp, err := m.Complete(ctx, req)
		if err == nil && req.Caller.Role == commanders.RoleWorker && strings.HasPrefix(resp.Text, "{") {
			resp.Text = `{"x_absent":null,` + resp.Text[1:]
		}
		return resp, err
	})
	res, err := runMission(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "nulls:honest", func(o *nexus.Options) { o.Registry = reg })
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Telemetry.FailureClasses[string(providers.ClassSchemaInvalid)]; n != 0 {
		t.Errorf("%d schema_invalid answers counted, want 0: %v", n, res.Telemetry.FailureClasses)
	}
	workers := 0
	for _, e := range res.Events {
		if e.Kind != events.LLMCall || e.Role != commanders.RoleWorker {
			continue
		}
		workers++
		if d := e.Data.(events.CallData); d.Outcome != "ok" {
			t.Errorf("worker call %s: outcome %v", e.AgentID, d.Outcome)
		}
	}
	if workers == 0 {
		t.Fatal("no worker calls recorded")
	}
	for _, b := range res.Bundles {
		if b.AtomsFailed != 0 || b.Repairs != 0 {
			t.Errorf("%s: %d atoms failed, %d repairs", b.ID, b.AtomsFailed, b.Repairs)
		}
	}
}
