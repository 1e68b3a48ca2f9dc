package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/viper"
	gitleaks "github.com/zricethezav/gitleaks/v8/config"
)

// viperRules reads gitleaks' default rule set as gitleaks itself does:
// viper's TOML decoding into its ViperConfig.
func viperRules(t testing.TB) gitleaks.ViperConfig {
	v := viper.New()
	v.SetConfigType("toml")
	var vc gitleaks.ViperConfig
	if err := v.ReadConfig(strings.NewReader(gitleaks.DefaultConfig)); err != nil {
		t.Fatal(err)
	}
	if err := v.Unmarshal(&vc); err != nil {
		t.Fatal(err)
	}
	return vc
}

// gitleaks' rule set decoded by go-toml straight into gitleaks' own
// struct is what gitleaks' viper decoding makes of it, every rule and
// allowlist, nested and embedded fields included.
func TestTOMLRulesAsViper(t *testing.T) {
	t.Parallel()
	got, err := gitleaksRules()
	if err != nil {
		t.Fatal(err)
	}
	// Compared as JSON: every exported field, those of the unexported
	// allowlist type gitleaks embeds included (cmp cannot reach them).
	want, err := json.MarshalIndent(viperRules(t), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	// gitleaks' own default config writes its global allowlist as
	// [allowlist], which decodes into the deprecated field.
	//lint:ignore SA1019 the default gitleaks.toml uses it
	global := got.AllowList
	if len(got.Rules) < 100 || global == nil || len(global.Regexes) == 0 {
		t.Fatalf("%d rules, global allowlist %+v: gitleaks' rules did not load", len(got.Rules), global)
	}
	if d := cmp.Diff(string(want), string(gotJSON)); d != "" {
		t.Errorf("(-viper +ours):\n%s", d)
	}
}

func BenchmarkRulesViper(b *testing.B) {
	for b.Loop() {
		viperRules(b)
	}
}

func BenchmarkRulesTOML(b *testing.B) {
	for b.Loop() {
		if _, err := gitleaksRules(); err != nil {
			b.Fatal(err)
		}
	}
}
