package nexus

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"

	swarm "github.com/swarm-dev/swarm"
)

// LoadConfig returns the effective configuration: the embedded default,
// with the file at path (if any) merged on top of it key by key. Decoding is
// strict, and every error names the file, line and key.
func LoadConfig(path string) (*Config, error) {
	var cfg *Config
	var err error
	if path == "" {
		cfg, err = ParseConfig("config.yml (embedded)", swarm.DefaultConfig, nil)
	} else {
		data, rerr := os.ReadFile(path)
		if rerr != nil {
			return nil, fmt.Errorf("%w: read config: %v", ErrBadInput, rerr)
		}
		cfg, err = ParseConfig(path, data, swarm.DefaultConfig)
	}
	if err != nil {
		return nil, err
	}
	if err := cfg.ApplyEnv(os.Getenv); err != nil {
		return nil, err
	}
	return cfg, nil
}

// ParseConfig decodes data (named name in errors) strictly, merged on top of
// the YAML document base (nil: nothing), and validates the result.
func ParseConfig(name string, data, base []byte) (*Config, error) {
	idx := indexYAML(data)
	// Strict decoding of the file alone reports unknown keys and wrong types
	// at the file's own lines.
	if len(bytes.TrimSpace(data)) > 0 {
		if errs := checkScalars(name, data); len(errs) > 0 {
			return nil, errs
		}
		var probe Config
		dec := yaml.NewDecoder(bytes.NewReader(data), yaml.Strict(), yaml.DisallowUnknownField())
		if err := dec.Decode(&probe); err != nil {
			return nil, decodeError(name, idx, err)
		}
	}
	merged := data
	if base != nil {
		var b, u map[string]any
		if err := yaml.Unmarshal(base, &b); err != nil {
			return nil, fmt.Errorf("default config: %w", err)
		}
		if err := yaml.Unmarshal(data, &u); err != nil {
			return nil, decodeError(name, idx, err)
		}
		var err error
		if merged, err = yaml.Marshal(mergeMaps(b, u)); err != nil {
			return nil, err
		}
	}
	cfg := &Config{}
	if err := yaml.NewDecoder(bytes.NewReader(merged), yaml.Strict(), yaml.DisallowUnknownField()).Decode(cfg); err != nil {
		return nil, decodeError(name, yamlIndex{}, err)
	}
	if err := cfg.validate(name, idx); err != nil {
		return nil, err
	}
	return cfg, nil
}

// mergeMaps merges u into b: maps merge key by key, anything else replaces.
func mergeMaps(b, u map[string]any) map[string]any {
	if b == nil {
		b = map[string]any{}
	}
	for k, v := range u {
		bm, ok1 := b[k].(map[string]any)
		um, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			b[k] = mergeMaps(bm, um)
		} else {
			b[k] = v
		}
	}
	return b
}

// Validate checks values that decode fine but make no sense.
func (c *Config) Validate(name string) error { return c.validate(name, yamlIndex{}) }

func (c *Config) validate(name string, idx yamlIndex) error {
	var errs ConfigErrors
	add := func(key, format string, args ...any) {
		e := ConfigError{File: name, Key: key, Msg: fmt.Sprintf(format, args...)}
		// Point at the key, or at the closest parent the file sets.
		for k := key; k != ""; {
			if p, ok := idx.pos[k]; ok {
				e.Line, e.Col = p[0], p[1]
				break
			}
			i := strings.LastIndexAny(k, ".[")
			if i < 0 {
				break
			}
			k = k[:i]
		}
		errs = append(errs, e)
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
		if s.MinCommanders < 0 || s.MinCommanders > s.Commanders {
			add(k+".min_commanders", "%d is out of range 0..commanders (%d)", s.MinCommanders, s.Commanders)
		}
		if s.MaxDepth < 1 {
			add(k+".max_depth", "%d is out of range: must be at least 1", s.MaxDepth)
		}
		for fk, v := range map[string]float64{"squad_leads_per_commander": float64(s.SquadLeadsPerCommander), "workers_per_commander": float64(s.WorkersPerCommander),
			"workers_per_squad_lead": float64(s.WorkersPerSquadLead), "reviewers": float64(s.Reviewers), "cost_ceiling_usd": s.CostCeilingUSD, "concurrency": float64(s.Concurrency)} {
			if v < 0 || math.IsNaN(v) {
				add(k+"."+fk, "%v is out of range: must not be negative", v)
			}
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
	c.validateRanges(add)
	c.validateModels(add)
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool {
			if errs[i].Line != errs[j].Line {
				return errs[i].Line < errs[j].Line
			}
			return errs[i].Key < errs[j].Key
		})
		return errs
	}
	return nil
}

// validateRanges checks the numeric settings that have a meaningful range.
func (c *Config) validateRanges(add func(key, format string, args ...any)) {
	within := func(key string, v, lo, hi float64) {
		if !(v >= lo && v <= hi) {
			add(key, "%v is out of range %v..%v", v, lo, hi)
		}
	}
	nonNeg := func(key string, v float64) {
		if !(v >= 0) {
			add(key, "%v is out of range: must not be negative", v)
		}
	}
	for _, n := range sortedKeys(c.Personalities) {
		p, k := c.Personalities[n], "personalities."+n
		if !(p.WorkerFactor > 0) {
			add(k+".worker_factor", "%v is out of range: must be greater than 0", p.WorkerFactor)
		}
		if !(p.TimeoutFactor > 0) {
			add(k+".timeout_factor", "%v is out of range: must be greater than 0", p.TimeoutFactor)
		}
		nonNeg(k+".extra_retries", float64(p.ExtraRetries))
		within(k+".temperature", p.Temperature, 0, 2)
	}
	for _, r := range sortedKeys(c.Run.MaxTokens) {
		nonNeg("run.max_tokens."+r, float64(c.Run.MaxTokens[r]))
	}
	nonNeg("shadow_scoring.judge_samples", float64(c.ShadowScoring.JudgeSamples))
	for _, n := range sortedKeys(c.ShadowScoring.ScaleOverrides) {
		o, k := c.ShadowScoring.ScaleOverrides[n], "shadow_scoring.scale_overrides."+n
		if o.MaxCycles != nil {
			nonNeg(k+".max_cycles", float64(*o.MaxCycles))
		}
		if o.Threshold != nil {
			within(k+".threshold", *o.Threshold, 0, 100)
		}
	}
	cc := c.Consensus
	within("consensus.conflict_cap", cc.ConflictCap, 0, 1)
	within("consensus.unanimity_boost", cc.UnanimityBoost, 0, 1)
	for k, v := range map[string]float64{"confidence": cc.Weights.Confidence, "evidence": cc.Weights.Evidence, "scope": cc.Weights.Scope, "coverage": cc.Weights.Coverage} {
		within("consensus.weights."+k, v, 0, 1)
	}
	cb := c.CircuitBreaker
	nonNeg("circuit_breaker.failure_threshold", float64(cb.FailureThreshold))
	if cb.Cooldown < 0 {
		add("circuit_breaker.cooldown", "negative duration %v", cb.Cooldown)
	}
	within("circuit_breaker.toxicity_threshold", cb.ToxicityThreshold, 0, 1)
	nonNeg("circuit_breaker.window", float64(cb.Window))
	within("sandbox.audit_rate", c.Sandbox.AuditRate, 0, 1)
	if _, _, key, err := sandboxSettings(c.Sandbox); err != nil {
		add(key, "%v", err)
	}
}

// KindOptions lists, per provider kind, the keys of providers.<kind>.options
// its adapter reads (each kind's providers.KindInfo.Options; a test keeps the
// two in step).
var KindOptions = map[string][]string{
	"openai": {"organization", "token_limit_param"}, "azure": {"api_version", "token_limit_param"},
	"ollama": {"organization", "token_limit_param"}, "vllm": {"organization", "token_limit_param"},
	"lmstudio": {"organization", "token_limit_param"}, "openai-compatible": {"organization", "token_limit_param"},
	"anthropic": {"max_tokens"}, "bedrock": {"region"}, "google": nil, "mistral": nil, "ollama-native": nil,
	"mock": {"faults", "latency", "script"},
}

// KnownKinds lists the provider kinds swarm ships.
var KnownKinds = []string{"anthropic", "azure", "bedrock", "google", "lmstudio", "mistral", "mock", "ollama", "ollama-native", "openai", "openai-compatible", "vllm"}

var scaleNameRe = regexp.MustCompile(`^ss-\d+$`)

func (c *Config) validateModels(add func(key, format string, args ...any)) {
	known := map[string]bool{}
	for _, k := range KnownKinds {
		known[k] = true
	}
	check := func(key, s string) {
		ref, err := providers.ParseRef(s)
		if err != nil {
			add(key, "%v", err)
			return
		}
		if !known[ref.Kind] {
			add(key, "unknown provider kind %q in %q (known: %s)", ref.Kind, s, strings.Join(KnownKinds, ", "))
		}
	}
	m := c.Models
	for k, v := range map[string]string{"models.nexus": m.Nexus, "models.seal_author": m.SealAuthor, "models.judge": m.Judge, "models.squad_lead": m.SquadLead, "models.synthesizer": m.Synthesizer} {
		check(k, v)
	}
	if m.Reference != "" {
		check("models.reference", m.Reference)
	}
	for i, v := range m.Commanders {
		check(fmt.Sprintf("models.commanders[%d]", i), v)
	}
	for i, v := range m.Workers {
		check(fmt.Sprintf("models.workers[%d]", i), v)
	}
	for i, p := range m.Reviewers {
		if len(p) != 2 {
			add(fmt.Sprintf("models.reviewers[%d]", i), "a reviewer pair needs exactly two models, got %d", len(p))
		}
		for j, v := range p {
			check(fmt.Sprintf("models.reviewers[%d][%d]", i, j), v)
		}
	}
	for k, p := range c.Providers {
		key := "providers." + k
		if !known[k] {
			add(key, "unknown provider kind %q (known: %s)", k, strings.Join(KnownKinds, ", "))
		}
		if p.Timeout < 0 {
			add(key+".timeout", "negative timeout %v", p.Timeout)
		}
		for fk, v := range map[string]float64{"retries": float64(p.Retries), "max_concurrency": float64(p.MaxConcurrency), "requests_per_minute": p.RequestsPerMin,
			"input_per_mtok": p.InputPerMTok, "output_per_mtok": p.OutputPerMTok} {
			if !(v >= 0) {
				add(key+"."+fk, "%v is out of range: must not be negative", v)
			}
		}
		if p.APIKeyEnv != "" && !envNameRe.MatchString(p.APIKeyEnv) {
			// Never echo the value: it is often the key itself.
			add(key+".api_key_env", "must name an environment variable (letters, digits and _), not hold the key itself")
		}
		if u, err := url.Parse(p.BaseURL); p.BaseURL != "" && (err != nil || u.Scheme == "" || u.Host == "") {
			add(key+".base_url", "not an absolute URL (e.g. http://localhost:8000/v1)")
		}
		for ok := range p.Options {
			switch {
			case secretKeyRe.MatchString(ok):
				add(key+".options."+ok, "secrets never live in config: put the key in an environment variable and name it in api_key_env")
			case known[k] && !slices.Contains(KindOptions[k], ok):
				valid := "none"
				if len(KindOptions[k]) > 0 {
					valid = strings.Join(KindOptions[k], ", ")
				}
				add(key+".options."+ok, "unknown option %q for %s (known: %s)", ok, k, valid)
			}
		}
	}
	for n := range c.Scales {
		if !scaleNameRe.MatchString(n) {
			add("scales."+n, "scale names look like ss-<agents>, e.g. ss-100")
		}
	}
	if c.ShadowScoring.SpecVersion != "1.0.0" && c.ShadowScoring.SpecVersion != "2.0.0" {
		add("shadow_scoring.spec_version", "%q: want 1.0.0 or 2.0.0", c.ShadowScoring.SpecVersion)
	}
	if jm := c.ShadowScoring.JudgeMode; jm != "per_bundle" && jm != "per_criterion" {
		add("shadow_scoring.judge_mode", "%q: want per_bundle or per_criterion", jm)
	}
	if c.ShadowScoring.Hardening.MaxCycles < 0 {
		add("shadow_scoring.hardening.max_cycles", "must not be negative")
	}
	if p := c.ShadowScoring.Gate.OnCriticalLeak; p != "" && !slices.Contains(shadow.LeakPolicies, p) {
		add("shadow_scoring.gate.on_critical_leak", "%q: want %s", p, strings.Join(shadow.LeakPolicies, ", "))
	}
	cc := c.Consensus
	if cc.ConsensusThreshold < 0 || cc.ConsensusThreshold > 1 || cc.MajorityThreshold < 0 || cc.MajorityThreshold > cc.ConsensusThreshold {
		add("consensus", "thresholds must satisfy 0 ≤ majority_threshold ≤ consensus_threshold ≤ 1")
	}
	if c.Run.Personality != "" {
		if _, ok := c.Personalities[c.Run.Personality]; !ok {
			add("run.personality", "unknown personality %q", c.Run.Personality)
		}
	}
}

var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var secretKeyRe = regexp.MustCompile(`(?i)(api_?key|secret|token|password)$`)

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
	return yaml.Marshal(c.Redacted())
}

// Redacted returns a copy whose provider base URLs carry no password
// (https://user:secret@host becomes https://user:xxxxx@host).
func (c *Config) Redacted() *Config {
	out := *c
	out.Providers = make(map[string]providers.KindConfig, len(c.Providers))
	for k, p := range c.Providers {
		if u, err := url.Parse(p.BaseURL); err == nil && u.User != nil {
			p.BaseURL = u.Redacted()
		}
		out.Providers[k] = p
	}
	return &out
}

// ConfigError is one problem in a configuration file.
type ConfigError struct {
	File string
	Line int
	Col  int
	Key  string
	Msg  string
}

func (e ConfigError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
	}
	if e.Key == "" {
		// A syntax error (a tab, a duplicate key) stops the parser before
		// any key can be named; the line and column say where.
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return fmt.Sprintf("%s: key %s: %s", loc, e.Key, e.Msg)
}

// ConfigErrors is every problem found; it wraps ErrBadInput.
type ConfigErrors []ConfigError

func (es ConfigErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return "invalid configuration:\n  " + strings.Join(lines, "\n  ")
}

// Unwrap makes errors.Is(err, ErrBadInput) hold.
func (es ConfigErrors) Unwrap() error { return ErrBadInput }

// yamlIndex maps dotted keys to their position and lines to the key there.
type yamlIndex struct {
	pos    map[string][2]int
	atLine map[int]string
}

func indexYAML(data []byte) yamlIndex {
	idx := yamlIndex{pos: map[string][2]int{}, atLine: map[int]string{}}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return idx
	}
	var walk func(n ast.Node, path string)
	walk = func(n ast.Node, path string) {
		switch t := n.(type) {
		case *ast.DocumentNode:
			walk(t.Body, path)
		case *ast.MappingNode:
			for _, v := range t.Values {
				walk(v, path)
			}
		case *ast.MappingValueNode:
			k := t.Key.GetToken()
			p := strings.TrimPrefix(path+"."+k.Value, ".")
			idx.pos[p] = [2]int{k.Position.Line, k.Position.Column}
			idx.atLine[k.Position.Line] = p
			walk(t.Value, p)
		case *ast.SequenceNode:
			for i, v := range t.Values {
				p := fmt.Sprintf("%s[%d]", path, i)
				if tok := v.GetToken(); tok != nil {
					idx.pos[p] = [2]int{tok.Position.Line, tok.Position.Column}
				}
				walk(v, p)
			}
		}
	}
	for _, d := range f.Docs {
		walk(d, "")
	}
	return idx
}

var (
	posRe     = regexp.MustCompile(`^\[(\d+):(\d+)\] (.*)$`)
	unknownRe = regexp.MustCompile(`unknown field "([^"]+)"`)
)

func decodeError(name string, idx yamlIndex, err error) error {
	msg := strings.SplitN(yaml.FormatError(err, false, false), "\n", 2)[0]
	e := ConfigError{File: name, Msg: msg}
	if m := posRe.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Col, _ = strconv.Atoi(m[2])
		e.Msg = m[3]
		if k, ok := idx.atLine[e.Line]; ok {
			e.Key = k
		}
		if u := unknownRe.FindStringSubmatch(e.Msg); u != nil {
			e.Msg = "unknown key " + strconv.Quote(u[1])
			if secretKeyRe.MatchString(u[1]) {
				e.Msg += ": secrets never live in config; export the key in an environment variable and name it in api_key_env"
			}
		} else if strings.Contains(e.Msg, "cannot unmarshal") {
			e.Msg = "wrong type: " + e.Msg
		}
	}
	return ConfigErrors{e}
}

// Environment variables that override the configuration (flags override them).
const (
	EnvScale    = "SWARM_SCALE"    // default_scale
	EnvSeed     = "SWARM_SEED"     // run.seed
	EnvOutDir   = "SWARM_OUT_DIR"  // run.out_dir
	EnvProvider = "SWARM_PROVIDER" // every role's model
)

// ApplyEnv applies the SWARM_* environment overrides.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	if v := getenv(EnvScale); v != "" {
		if _, ok := c.Scales[v]; !ok {
			return fmt.Errorf("%w: %s=%q: unknown scale (known: %s)", ErrBadInput, EnvScale, v, strings.Join(sortedKeys(c.Scales), ", "))
		}
		c.DefaultScale = v
	}
	if v := getenv(EnvSeed); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%w: %s=%q: not an integer", ErrBadInput, EnvSeed, v)
		}
		c.Run.Seed = n
	}
	if v := getenv(EnvOutDir); v != "" {
		c.Run.OutDir = v
	}
	if v := getenv(EnvProvider); v != "" {
		if _, err := providers.ParseRef(v); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrBadInput, EnvProvider, err)
		}
		m := &c.Models
		m.Nexus, m.SealAuthor, m.Judge, m.SquadLead, m.Synthesizer = v, v, v, v, v
		m.Commanders, m.Workers, m.Reviewers = []string{v}, []string{v}, [][]string{{v, v}}
	}
	return nil
}

var durationType = reflect.TypeFor[time.Duration]()

// checkScalars reports, with line and key, two things the YAML decoder would
// let through silently or without a position: a fractional number where an
// integer belongs (it would be truncated) and a duration that does not parse.
func checkScalars(name string, data []byte) ConfigErrors {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil // the decoder reports syntax errors with their position
	}
	var errs ConfigErrors
	bad := func(n ast.Node, key, format string, args ...any) {
		pos := n.GetToken().Position
		errs = append(errs, ConfigError{File: name, Line: pos.Line, Col: pos.Column, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	var walk func(n ast.Node, t reflect.Type, path string)
	walk = func(n ast.Node, t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch v := n.(type) {
		case *ast.DocumentNode:
			walk(v.Body, t, path)
		case *ast.AnchorNode:
			walk(v.Value, t, path)
		case *ast.TagNode:
			walk(v.Value, t, path)
		case *ast.MappingNode:
			for _, mv := range v.Values {
				walk(mv, t, path)
			}
		case *ast.MappingValueNode:
			k := v.Key.GetToken().Value
			p := strings.TrimPrefix(path+"."+k, ".")
			switch t.Kind() {
			case reflect.Map:
				walk(v.Value, t.Elem(), p)
			case reflect.Struct:
				if ft, ok := yamlField(t, k); ok {
					walk(v.Value, ft, p)
				}
			}
		case *ast.SequenceNode:
			if t.Kind() == reflect.Slice {
				for i, x := range v.Values {
					walk(x, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
				}
			}
		case *ast.FloatNode:
			switch t.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				if t != durationType && v.Value != math.Trunc(v.Value) {
					bad(v, path, "wrong type: %s is not a whole number", v.GetToken().Value)
				}
			}
		case *ast.StringNode:
			if t == durationType {
				if _, err := time.ParseDuration(v.Value); err != nil {
					bad(v, path, "wrong type: %q is not a duration (e.g. 90s, 5m, 1h30m)", v.Value)
				}
			}
		}
	}
	for _, d := range f.Docs {
		walk(d, reflect.TypeFor[Config](), "")
	}
	return errs
}

// yamlField returns the type of t's field whose yaml tag (or name) is key.
func yamlField(t reflect.Type, key string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == key {
			return f.Type, true
		}
	}
	return nil, false
}
