package nexus

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	swarm "github.com/swarm-dev/swarm"
)

// LoadConfig returns the effective configuration: the embedded default,
// with the file at path (if any) decoded on top of it. Decoding is strict.
func LoadConfig(path string) (*Config, error) {
	cfg, err := ParseConfig("config.yml (embedded)", swarm.DefaultConfig, nil)
	if err != nil {
		return nil, fmt.Errorf("embedded default config: %w", err)
	}
	if path == "" {
		return cfg, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return ParseConfig(path, data, cfg)
}

// ParseConfig decodes data (named name in errors) strictly on top of base
// (nil: an empty config) and validates the result.
func ParseConfig(name string, data []byte, base *Config) (*Config, error) {
	cfg := &Config{}
	if base != nil {
		*cfg = *base
		cfg.Scales = cloneMap(base.Scales)
		cfg.Personalities = cloneMap(base.Personalities)
		cfg.Providers = cloneMap(base.Providers)
	}
	if len(bytes.TrimSpace(data)) > 0 {
		dec := yaml.NewDecoder(bytes.NewReader(data), yaml.Strict(), yaml.DisallowUnknownField())
		if err := dec.Decode(cfg); err != nil {
			return nil, fmt.Errorf("%s: %s", name, yaml.FormatError(err, false, true))
		}
	}
	if err := cfg.Validate(name); err != nil {
		return nil, err
	}
	return cfg, nil
}

func cloneMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Validate checks values that decode fine but make no sense.
func (c *Config) Validate(name string) error {
	var errs []string
	add := func(key, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("%s: key %s: %s", name, key, fmt.Sprintf(format, args...)))
	}
	if _, ok := c.Scales[c.DefaultScale]; !ok {
		add("default_scale", "unknown scale %q (known: %s)", c.DefaultScale, strings.Join(sortedKeys(c.Scales), ", "))
	}
	for n, s := range c.Scales {
		k := "scales." + n
		if s.Commanders < 1 || s.Commanders > 5 {
			add(k+".commanders", "%d is out of range 1..5", s.Commanders)
		}
		if s.SealedCriteria < 1 {
			add(k+".sealed_criteria", "must be at least 1")
		}
		if s.Reviewers < 0 || s.CostCeilingUSD < 0 {
			add(k, "negative reviewers or cost ceiling")
		}
		for tk, d := range map[string]time.Duration{"mission": s.Timeouts.Mission, "commander": s.Timeouts.Commander, "squad_lead": s.Timeouts.SquadLead, "worker": s.Timeouts.Worker, "call": s.Timeouts.Call} {
			if d < 0 {
				add(k+".timeouts."+tk, "negative timeout %v", d)
			}
		}
	}
	for n := range c.ShadowScoring.ScaleOverrides {
		if _, ok := c.Scales[n]; !ok {
			add("shadow_scoring.scale_overrides."+n, "unknown scale %q", n)
		}
	}
	if c.ShadowScoring.Hardening.Threshold < 0 || c.ShadowScoring.Hardening.Threshold > 100 {
		add("shadow_scoring.hardening.threshold", "%v is out of range 0..100", c.ShadowScoring.Hardening.Threshold)
	}
	w := c.Consensus.Weights
	if sum := w.Confidence + w.Evidence + w.Scope + w.Coverage; sum < 1-1e-6 || sum > 1+1e-6 {
		add("consensus.weights", "weights sum to %v, want 1", sum)
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("%w: invalid configuration:\n  %s", ErrBadInput, strings.Join(errs, "\n  "))
	}
	return nil
}

// ScaleFor returns a scale by name.
func (c *Config) ScaleFor(name string) (Scale, error) {
	s, ok := c.Scales[name]
	if !ok {
		return Scale{}, fmt.Errorf("unknown scale %q (known: %s)", name, strings.Join(sortedKeys(c.Scales), ", "))
	}
	return s, nil
}

// ShadowFor returns the hardening settings for a scale after its overrides.
func (c *Config) ShadowFor(scale string) HardeningConfig {
	h := c.ShadowScoring.Hardening
	if o, ok := c.ShadowScoring.ScaleOverrides[scale]; ok {
		if o.HardeningEnabled != nil {
			h.Enabled = *o.HardeningEnabled
		}
		if o.MaxCycles != nil {
			h.MaxCycles = *o.MaxCycles
		}
		if o.Threshold != nil {
			h.Threshold = *o.Threshold
		}
	}
	return h
}

// Effective renders the configuration as YAML. It holds no secrets: API
// keys live only in the environment, and only the variables' names appear.
func (c *Config) Effective() ([]byte, error) {
	return yaml.Marshal(c)
}
