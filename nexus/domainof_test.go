package nexus_test

import (
	"testing"
)

// Consumers (the CLI's progress view) learn an agent's domain from the plan
// instead of parsing agent IDs: every commander, squad lead and worker of a
// run with squad leads maps to its own domain, every other agent to none.
func TestPlanDomainOfEveryAgentOfARun(t *testing.T) {
	t.Parallel()
	// Small teams (smallTeams): squad leads of two workers each are every
	// kind of agent with a domain all the same.
	res, err := runMission(t, loadMission(t, "api-design.md"), "ss-250", "mock:honest", small)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range res.Events {
		if e.AgentID == "" {
			continue
		}
		d, ok := res.Plan.DomainOf(e.AgentID)
		switch e.Role {
		case "commander", "squad_lead", "worker":
			if !ok {
				t.Fatalf("%s %s: no domain", e.Role, e.AgentID)
			}
			seen[e.Role]++
		default:
			if ok {
				t.Errorf("%s %s: domain %q, want none", e.Role, e.AgentID, d)
			}
		}
	}
	if seen["commander"] == 0 || seen["squad_lead"] == 0 || seen["worker"] == 0 {
		t.Fatalf("fixture: agents seen per role %v", seen)
	}
	for _, c := range []struct{ id, want string }{
		{"commander-testing", "testing"},
		{"squadlead-testing-03", "testing"},
		{"worker-architecture-02-05", "architecture"},
		{"worker-testing", ""},  // a prefix without a seat number
		{"commander-other", ""}, // not a domain of this plan
		{"reviewer-01", ""},
	} {
		got, _ := res.Plan.DomainOf(c.id)
		if got != c.want {
			t.Errorf("DomainOf(%q) = %q, want %q", c.id, got, c.want)
		}
	}
}
