package config_test

import (
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
