package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/providers"
)

// KeyValues finds every key a run must scrub: the config's api_key_env
// variables and the registry's default ones, only those set, nil-safe.
func TestKeyValues(t *testing.T) {
	// Serial: t.Setenv.
	t.Setenv("SWARM_TEST_KV_CONFIGURED", "configured-value-1")
	t.Setenv("SWARM_TEST_KV_DEFAULT", "default-value-2")
	t.Setenv("SWARM_TEST_KV_EMPTY", "")
	cfg := &Config{Providers: map[string]providers.KindConfig{
		"a": {APIKeyEnv: "SWARM_TEST_KV_CONFIGURED"},
		"b": {APIKeyEnv: "SWARM_TEST_KV_EMPTY"},
		"c": {APIKeyEnv: ""},
	}}
	reg := &providers.Registry{}
	reg.Register(providers.KindInfo{Kind: "kv", DefaultKeyEnv: "SWARM_TEST_KV_DEFAULT"}, nil)
	tests := []struct {
		name string
		cfg  *Config
		reg  *providers.Registry
		want []string
	}{
		{"config and registry", cfg, reg, []string{"configured-value-1", "default-value-2"}},
		{"config alone", cfg, nil, []string{"configured-value-1"}},
		{"a nil config still has the registry's", nil, reg, []string{"default-value-2"}},
		{"nothing", nil, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.cfg.KeyValues(tc.reg)); diff != "" {
				t.Errorf("KeyValues (-want +got):\n%s", diff)
			}
		})
	}
}
