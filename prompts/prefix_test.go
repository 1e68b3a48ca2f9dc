package prompts_test

import (
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/prompts"
)

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestSharedPrefixIsStable: two agents of a role, in different domains with
// different briefs, get prompts whose first bytes are equal up to where
// their own data starts: the role's instructions come first and name no
// domain, so OpenAI-style automatic prefix caching serves them to every
// agent of the role after the first (issue 21).
func TestSharedPrefixIsStable(t *testing.T) {
	t.Parallel()
	capsule := func(domain, brief string) map[string]any {
		return map[string]any{"Domain": domain, "Brief": brief, "Aspects": []string{"a " + domain}, "Constraints": map[string]any{"FileScope": []string(nil)}}
	}
	tests := []struct {
		name     string
		template string
		a, b     map[string]any
		// sharedUpTo is the text that starts the per-agent part: everything
		// before it must be byte-identical.
		sharedUpTo string
	}{
		{"workers of two domains, with read tools", "atom",
			map[string]any{"Domain": "architecture", "BriefID": "architecture-01", "Brief": "Design the token flow.", "Aspects": []string{"tokens"}, "FileScope": []string(nil), "Workspace": true},
			map[string]any{"Domain": "testing", "BriefID": "testing-07", "Brief": "Test clock skew.", "Aspects": []string{"skew"}, "FileScope": []string(nil), "Workspace": true},
			"Your brief, in the "},
		{"commanders of two domains assembling bundles", "bundle",
			map[string]any{"Capsule": capsule("architecture", "Plan it."), "Atoms": nil, "Feedback": "", "Previous": "", "Workspace": true},
			map[string]any{"Capsule": capsule("testing", "Test it."), "Atoms": nil, "Feedback": "", "Previous": "", "Workspace": true},
			"You are the "},
		{"commanders of two domains planning shards", "shard_plan",
			map[string]any{"Capsule": capsule("architecture", "Plan it."), "Children": 15, "ChildRole": "worker", "CountLine": "Count: 15"},
			map[string]any{"Capsule": capsule("testing", "Test it."), "Children": 15, "ChildRole": "worker", "CountLine": "Count: 15"},
			"You are the "},
		{"judges of two bundles under one envelope: the criteria are shared too", "judge",
			map[string]any{"Criteria": []string{"sc-1: tokens rotate", "sc-2: skew handled"}, "Bundle": "A bundle.", "Domain": "architecture", "Ledger": false},
			map[string]any{"Criteria": []string{"sc-1: tokens rotate", "sc-2: skew handled"}, "Bundle": "Another.", "Domain": "testing", "Ledger": false},
			"Deliverable ("},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := prompts.Render(tc.template, tc.a)
			if err != nil {
				t.Fatal(err)
			}
			b, err := prompts.Render(tc.template, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Index(a, tc.sharedUpTo)
			if want < 0 {
				t.Fatalf("%q not in the prompt:\n%s", tc.sharedUpTo, a)
			}
			if got := commonPrefix(a, b); got < want {
				t.Errorf("the prompts share their first %d bytes, want at least %d (up to %q); they part at %q", got, want, tc.sharedUpTo, a[got:min(len(a), got+40)])
			}
		})
	}
}
