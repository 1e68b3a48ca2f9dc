package providers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Registry.Status fills a kind's defaults into its configuration, hides a
// password in the base URL, then lets the kind's Check decide (CheckServer
// when the kind declares none).
func TestRegistryStatus(t *testing.T) {
	t.Parallel()
	reg := &Registry{}
	reg.Register(KindInfo{Kind: "cloud", DefaultKeyEnv: "CLOUD_KEY", DefaultBaseURL: "https://cloud.example/v1", Check: CheckKeyedServer}, nil)
	reg.Register(KindInfo{Kind: "local", DefaultBaseURL: "http://localhost:9/v1"}, nil)
	reg.Register(KindInfo{Kind: "bare"}, nil)
	reg.Register(KindInfo{Kind: "own", Check: func(kind string, cfg KindConfig, getenv func(string) string) Status {
		return Status{Usable: cfg.Options["ready"] == "yes", Text: kind + " checked " + cfg.BaseURL}
	}}, nil)
	tests := []struct {
		name, kind string
		cfg        KindConfig
		env        map[string]string
		want       Status
	}{
		{"a keyed kind without its key", "cloud", KindConfig{}, nil, Status{Text: "missing CLOUD_KEY"}},
		{"a keyed kind with its default key set", "cloud", KindConfig{}, map[string]string{"CLOUD_KEY": "k"}, Status{Usable: true, Text: "CLOUD_KEY is set"}},
		{"the config's key variable replaces the default", "cloud", KindConfig{APIKeyEnv: "MINE"}, map[string]string{"CLOUD_KEY": "k"}, Status{Text: "missing MINE"}},
		{"an empty base URL in the config takes the default", "cloud", KindConfig{BaseURL: ""}, map[string]string{"CLOUD_KEY": "k"}, Status{Usable: true, Text: "CLOUD_KEY is set"}},
		{"no Check: a server kind needs no key", "local", KindConfig{}, nil, Status{Usable: true, Text: "no key needed (server at http://localhost:9/v1)"}},
		{"the password of a base URL is never shown", "local", KindConfig{BaseURL: "https://u:hunter2@h.example/v1"}, nil, Status{Usable: true, Text: "no key needed (server at https://u:xxxxx@h.example/v1)"}},
		{"no base URL anywhere", "bare", KindConfig{}, nil, Status{Text: "set providers.bare.base_url"}},
		{"a kind's own Check gets the kind, its options and the filled config", "own", KindConfig{BaseURL: "http://x", Options: map[string]string{"ready": "yes"}}, nil, Status{Usable: true, Text: "own checked http://x"}},
		{"a kind nothing registers", "nope", KindConfig{}, nil, Status{Text: "not available in this build"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := reg.Status(tc.kind, tc.cfg, func(k string) string { return tc.env[k] })
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// KindConfig.Redacted hides only a base URL's password; the receiver keeps it.
func TestKindConfigRedacted(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://u:hunter2@h.example/v1": "https://u:xxxxx@h.example/v1",
		"https://u@h.example/v1":         "https://u@h.example/v1",
		"http://localhost:11434":         "http://localhost:11434",
		"":                               "",
	} {
		kc := KindConfig{BaseURL: in, APIKeyEnv: "K"}
		if got := kc.Redacted(); got.BaseURL != want || got.APIKeyEnv != "K" || kc.BaseURL != in {
			t.Errorf("Redacted(%q) = %+v (receiver %q), want base URL %q", in, got, kc.BaseURL, want)
		}
	}
}
