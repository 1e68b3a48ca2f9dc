package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWavesConfigValidation(t *testing.T) {
	ok := Waves{Enabled: true, Canary: 1, ProbeCalls: 3, MaxErrorRate: 0.5, Min: 1}
	tests := []struct {
		name string
		mod  func(*Waves)
		want []string
	}{
		{"valid", func(*Waves) {}, nil},
		{"disabled is not checked", func(w *Waves) { *w = Waves{Canary: -1} }, nil},
		{"canary above commanders", func(w *Waves) { w.Canary = 6 }, []string{"scales.x.waves.canary"}},
		{"no probe", func(w *Waves) { w.ProbeCalls = 0 }, []string{"scales.x.waves.probe_calls"}},
		{"rate above 1", func(w *Waves) { w.MaxErrorRate = 1.5 }, []string{"scales.x.waves.max_error_rate"}},
		{"min 0", func(w *Waves) { w.Min = 0 }, []string{"scales.x.waves.min"}},
		{"max below min", func(w *Waves) { w.Min, w.Max = 3, 2 }, []string{"scales.x.waves.max"}},
		{"initial above max", func(w *Waves) { w.Max, w.Initial = 2, 3 }, []string{"scales.x.waves.initial"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := ok
			tc.mod(&w)
			var got []string
			w.validate("scales.x.waves", 5, func(key, format string, args ...any) { got = append(got, key) })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigRejectsBadWavesNamingTheKey(t *testing.T) {
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Scales["ss-100"]
	s.Waves.MaxErrorRate = 2
	cfg.Scales["ss-100"] = s
	err = cfg.Validate("c.yml", nil)
	if err == nil || !strings.Contains(err.Error(), "scales.ss-100.waves.max_error_rate") {
		t.Fatalf("err = %v, want one naming scales.ss-100.waves.max_error_rate", err)
	}
}
