package nexus_test

import (
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/providers"
)

// ref parses "kind:model" for a test; a bad reference fails the test.
func ref(t testing.TB, s string) providers.Ref {
	t.Helper()
	if s == "" {
		return providers.Ref{}
	}
	r, err := providers.ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// models builds Options.Models from role -> "kind:model[,kind:model...]".
func models(t testing.TB, m map[string]string) map[string][]providers.Ref {
	t.Helper()
	out := map[string][]providers.Ref{}
	for role, list := range m {
		for _, s := range strings.Split(list, ",") {
			out[role] = append(out[role], ref(t, s))
		}
	}
	return out
}
