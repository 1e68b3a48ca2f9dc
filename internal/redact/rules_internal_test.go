package redact

import "testing"

// Every rule's expression compiles (they are compiled on first use, in a
// run: a gitleaks upgrade with an expression Go cannot compile fails here,
// not in the middle of a run), and every rule has an id.
func TestEveryRuleCompiles(t *testing.T) {
	t.Parallel()
	rs := rules()
	if len(rs.rules) < 100 {
		t.Fatalf("%d rules: gitleaks' default set did not load", len(rs.rules))
	}
	for i := range rs.rules {
		r := &rs.rules[i]
		if r.id == "" {
			t.Errorf("rule %d has no id", i)
		}
		if r.scan == nil && r.regexp() == nil {
			t.Errorf("rule %s has no expression", r.id)
		}
		for _, a := range r.allow {
			a.regexAllowed("")
		}
	}
}
