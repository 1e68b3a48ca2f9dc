package config

import (
	"errors"
	"fmt"
	"maps"
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

	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/internal/yamlx"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/sandbox"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"

	swarm "github.com/swarm-dev/swarm"
)

// ErrBadInput marks errors caused by the user's input (mission, flags,
// config): the CLI exits with code 2 for them.
var ErrBadInput = errors.New("bad input")

// Load returns the effective configuration: the embedded default,
// with the file at path (if any) merged on top of it key by key. Decoding is
// strict, and every error names the file, line and key. Provider kinds (in
// models and under providers) and each kind's options are checked against
// reg, whose adapters declare them (providers.KindInfo); a nil reg checks
// no kind here (Prepare still refuses a model whose kind its Registry lacks).
func Load(path string, reg *providers.Registry) (*Config, error) {
	var cfg *Config
	var err error
	if path == "" {
		cfg, err = Parse("config.yml (embedded)", swarm.DefaultConfig, nil, reg)
	} else {
		data, rerr := yamlx.ReadFile(path, yamlx.DefaultLimits)
		if rerr != nil {
			return nil, configErrors(rerr)
		}
		cfg, err = Parse(path, data, swarm.DefaultConfig, reg)
	}
	if err != nil {
		return nil, err
	}
	if err := cfg.ApplyEnv(os.Getenv); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Parse decodes data (named name in errors) strictly, merged on top of
// the YAML document base (nil: nothing), and validates the result, provider
// kinds against reg (nil: not checked, see Load). The file is refused
// before decoding when it is larger, deeper or (aliases expanded) bigger
// than yamlx.DefaultLimits allow.
func Parse(name string, data, base []byte, reg *providers.Registry) (*Config, error) {
	// Strict decoding of the file alone reports unknown keys and wrong types
	// at the file's own lines.
	doc, err := yamlx.Check(name, data, yamlx.DefaultLimits)
	if err != nil {
		return nil, configErrors(err)
	}
	if errs := checkScalars(name, doc); len(errs) > 0 {
		return nil, errs
	}
	var probe Config
	if err := doc.Decode(data, &probe); err != nil {
		return nil, configErrors(err)
	}
	merged := data
	if base != nil {
		// The base is ours (the embedded default): only its size may
		// exceed the file's cap.
		bdoc, err := yamlx.Check("default config", base, yamlx.Limits{MaxBytes: 64 << 20})
		if err != nil {
			return nil, fmt.Errorf("default config: %w", err)
		}
		if merged, err = yamlx.Merge(bdoc, base, doc, data); err != nil {
			var ye *yamlx.Error
			if errors.As(err, &ye) && ye.File == name {
				return nil, configErrors(err)
			}
			return nil, fmt.Errorf("default config: %w", err)
		}
	}
	cfg := &Config{}
	// The merged document is ours (the checked file over the defaults), so
	// only its size may exceed the file's cap.
	if _, err := yamlx.Decode(name, merged, cfg, yamlx.Limits{MaxBytes: 64 << 20}); err != nil {
		var ye *yamlx.Error
		if errors.As(err, &ye) {
			ye.Line, ye.Col = 0, 0 // positions in the merged document mean nothing to the user
		}
		return nil, configErrors(err)
	}
	if err := cfg.validate(name, doc, reg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// removedKeys are keys earlier versions read, with what replaces them: a
// config that still sets one gets an error saying so.
var removedKeys = map[string]string{
	"circuit_breaker.failure_threshold": "removed: the provider breaker now opens on a failure rate, not a count of consecutive failures; " +
		"use circuit_breaker.failure_rate (with call_window and min_calls) instead (see docs/recovery-breaker.md)",
}

// configErrors turns an error of yamlx into Errors (which wrap
// ErrBadInput).
func configErrors(err error) error {
	var ye *yamlx.Error
	if !errors.As(err, &ye) {
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	e := Error{File: ye.File, Line: ye.Line, Col: ye.Col, Key: ye.Key, Msg: ye.Msg}
	if errors.Is(err, yamlx.ErrUnknownKey) {
		if r, ok := removedKeys[ye.Key]; ok {
			e.Msg += ": " + r
		}
		k := ye.Key[strings.LastIndexAny(ye.Key, ".]")+1:]
		if secretKeyRe.MatchString(k) {
			e.Msg += ": secrets never live in config; export the key in an environment variable and name it in api_key_env"
		}
	}
	return Errors{e}
}

// Validate checks values that decode fine but make no sense, and provider
// kinds and options against reg (nil: not checked).
func (c *Config) Validate(name string, reg *providers.Registry) error {
	return c.validate(name, nil, reg)
}

func (c *Config) validate(name string, doc *yamlx.Doc, reg *providers.Registry) error {
	var errs Errors
	add := func(key, format string, args ...any) {
		e := Error{File: name, Key: key, Msg: fmt.Sprintf(format, args...)}
		// Point at the key, or at the closest parent the file sets.
		if p, _, ok := doc.PosOrParent(key); ok {
			e.Line, e.Col = p.Line, p.Col
		}
		errs = append(errs, e)
	}
	if _, ok := c.Scales[c.DefaultScale]; !ok {
		add("default_scale", "unknown scale %q (known: %s)", c.DefaultScale, strings.Join(slices.Sorted(maps.Keys(c.Scales)), ", "))
	}
	for n, s := range c.Scales {
		k := "scales." + n
		if s.Commanders < 1 || s.Commanders > 5 {
			add(k+".commanders", "%d is out of range 1..5", s.Commanders)
		}
		if s.SealedCriteria < 1 || s.SealedCriteria > MaxSealedCriteria {
			add(k+".sealed_criteria", "%d is out of range 1..%d", s.SealedCriteria, MaxSealedCriteria)
		}
		if s.MinCommanders < 0 || s.MinCommanders > s.Commanders {
			add(k+".min_commanders", "%d is out of range 0..commanders (%d)", s.MinCommanders, s.Commanders)
		}
		if s.MaxDepth < 1 || s.MaxDepth > MaxScaleDepth {
			add(k+".max_depth", "%d is out of range 1..%d", s.MaxDepth, MaxScaleDepth)
		}
		for _, b := range []struct {
			key    string
			v, max int
		}{{"squad_leads_per_commander", s.SquadLeadsPerCommander, MaxSquadLeadsPerCommander}, {"workers_per_commander", s.WorkersPerCommander, MaxWorkersPerCommander},
			{"workers_per_squad_lead", s.WorkersPerSquadLead, MaxWorkersPerSquadLead}, {"reviewers", s.Reviewers, MaxReviewers}} {
			if b.v < 0 || b.v > b.max {
				add(k+"."+b.key, "%d is out of range 0..%d", b.v, b.max)
			}
		}
		// 0 used to pass and serialise the whole run behind one seat.
		if s.Concurrency < 1 || s.Concurrency > MaxConcurrency {
			add(k+".concurrency", "%d is out of range 1..%d (LLM calls in flight for the whole run)", s.Concurrency, MaxConcurrency)
		}
		if !(s.CostCeilingUSD >= 0) || math.IsInf(s.CostCeilingUSD, 0) {
			add(k+".cost_ceiling_usd", "%v is out of range: must be a finite number, not negative", s.CostCeilingUSD)
		}
		s.Waves.validate(k+".waves", s.Commanders, add)
		for tk, d := range map[string]time.Duration{"mission": s.Timeouts.Mission, "commander": s.Timeouts.Commander, "squad_lead": s.Timeouts.SquadLead, "worker": s.Timeouts.Worker, "call": s.Timeouts.Call} {
			if d < 0 {
				add(k+".timeouts."+tk, "negative timeout %v", d)
			}
		}
	}
	if len(errs) == 0 {
		budget := c.Run.MemoryBudget()
		for _, n := range slices.Sorted(maps.Keys(c.Scales)) {
			if e := c.EstimateRun(n); e.Bytes > budget {
				add("scales."+n, "a run at this scale would hold about %d MB in memory (%d agents, about %d LLM calls), above the budget of %d MB: lower its sizes or raise run.memory_budget_mb",
					e.Bytes>>20, e.Agents, e.Calls, budget>>20)
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
	c.validateModels(add, reg)
	c.validateWorkspace(add)
	c.validatePricing(add)
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

// validateWorkspace checks the workspace section: known roles, positive
// limits.
func (c *Config) validateWorkspace(add func(key, format string, args ...any)) {
	w := c.Workspace
	for i, r := range w.Roles {
		if !slices.Contains(workspaceRoles, r) {
			add(fmt.Sprintf("workspace.roles[%d]", i), "unknown role %q (roles that may read: %s)", r, strings.Join(workspaceRoles, ", "))
		}
	}
	// Each bad limit at its own key (Limits.Validate names only the first).
	for _, bad := range w.Limits.Invalid() {
		if bad.Value <= 0 {
			add("workspace.limits."+bad.Key, "%d must be at least 1", bad.Value)
		} else {
			add("workspace.limits."+bad.Key, "%d is over the maximum of %d", bad.Value, bad.Max())
		}
	}
	// A negation in deny cannot lift the default deny list: that is what
	// allow is for, and saying so beats a pattern that silently does nothing.
	for i, d := range w.Deny {
		if neg, ok := strings.CutPrefix(d, "!"); ok && workspace.DefaultDenies(neg) {
			add(fmt.Sprintf("workspace.deny[%d]", i), "%q cannot lift the default deny list; list %q under workspace.allow instead", d, neg)
		}
	}
	for i, a := range w.Allow {
		switch {
		case strings.TrimSpace(a) == "" || strings.HasPrefix(a, "#"):
			add(fmt.Sprintf("workspace.allow[%d]", i), "%q is not a pattern (empty or a comment)", a)
		case strings.HasPrefix(a, "!"):
			add(fmt.Sprintf("workspace.allow[%d]", i), "%q: a negation means nothing here; to deny a path, list it under workspace.deny", a)
		case !workspace.DefaultDenies(a):
			add(fmt.Sprintf("workspace.allow[%d]", i), "%q lifts nothing: the default deny list does not deny it (allow only lifts that list)", a)
		}
	}
}

// validateRanges checks the numeric settings that have a meaningful range.
func (c *Config) validateRanges(add func(key, format string, args ...any)) {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	within := func(key string, v, lo, hi float64) {
		if !(v >= lo && v <= hi) {
			add(key, "%s is out of range %s..%s", num(v), num(lo), num(hi))
		}
	}
	nonNeg := func(key string, v float64) {
		if !(v >= 0) {
			add(key, "%v is out of range: must not be negative", v)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(c.Personalities)) {
		p, k := c.Personalities[n], "personalities."+n
		if !(p.WorkerFactor > 0) || p.WorkerFactor > MaxWorkerFactor {
			add(k+".worker_factor", "%v is out of range: must be greater than 0 and at most %d", p.WorkerFactor, MaxWorkerFactor)
		}
		if !(p.TimeoutFactor > 0) || p.TimeoutFactor > MaxTimeoutFactor {
			add(k+".timeout_factor", "%v is out of range: must be greater than 0 and at most %d", p.TimeoutFactor, MaxTimeoutFactor)
		}
		within(k+".extra_retries", float64(p.ExtraRetries), 0, MaxExtraRetries)
		within(k+".temperature", p.Temperature, 0, 2)
	}
	for _, r := range slices.Sorted(maps.Keys(c.Run.MaxTokens)) {
		within("run.max_tokens."+r, float64(c.Run.MaxTokens[r]), 0, MaxTokensPerCall)
	}
	within("run.max_mission_bytes", float64(c.Run.MaxMissionBytes), 0, MaxMissionBytesLimit)
	nonNeg("run.memory_budget_mb", float64(c.Run.MemoryBudgetMB))
	within("shadow_scoring.judge_samples", float64(c.ShadowScoring.JudgeSamples), 0, MaxJudgeSamples)
	if v := c.ShadowScoring.ConformanceLevel; v != 0 && (v < 1 || v > shadow.MaxConformanceLevel) {
		add("shadow_scoring.conformance_level", "%d is not a Shadow Score Spec conformance level: want 1..%d (or leave it unset)", v, shadow.MaxConformanceLevel)
	}
	if v := c.ShadowScoring.SealedCriteriaCount; v != 0 && (v < 1 || v > MaxSealedCriteria) {
		add("shadow_scoring.sealed_criteria_count", "%d is out of range 1..%d (or leave it unset: each scale's sealed_criteria)", v, MaxSealedCriteria)
	}
	within("shadow_scoring.hardening.max_cycles", float64(c.ShadowScoring.Hardening.MaxCycles), 0, MaxHardeningCycles)
	for _, n := range slices.Sorted(maps.Keys(c.ShadowScoring.ScaleOverrides)) {
		o, k := c.ShadowScoring.ScaleOverrides[n], "shadow_scoring.scale_overrides."+n
		if o.MaxCycles != nil {
			within(k+".max_cycles", float64(*o.MaxCycles), 0, MaxHardeningCycles)
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
	if !(cb.FailureRate > 0 && cb.FailureRate <= 1) {
		add("circuit_breaker.failure_rate", "%s is out of range: must be greater than 0 and at most 1 (the share of failed calls in the window that opens the breaker)", num(cb.FailureRate))
	}
	within("circuit_breaker.call_window", float64(cb.CallWindow), 1, MaxBreakerWindow)
	if cb.MinCalls < 1 || cb.MinCalls > max(cb.CallWindow, 1) {
		add("circuit_breaker.min_calls", "%d is out of range 1..call_window (%d)", cb.MinCalls, cb.CallWindow)
	}
	within("circuit_breaker.half_open_probes", float64(cb.HalfOpenProbes), 1, MaxBreakerProbes)
	switch {
	case cb.Cooldown < 0:
		add("circuit_breaker.cooldown", "negative duration %v", cb.Cooldown)
	case cb.Cooldown == 0:
		add("circuit_breaker.cooldown", "must be greater than 0 (how long an open breaker waits before letting probe calls through)")
	}
	within("circuit_breaker.toxicity_threshold", cb.ToxicityThreshold, 0, 1)
	within("circuit_breaker.window", float64(cb.Window), 0, MaxBreakerWindow)
	within("recovery.max_attempts_per_step", float64(c.Recovery.MaxAttemptsPerStep), 1, MaxRecoveryAttempts)
	within("sandbox.audit_rate", c.Sandbox.AuditRate, 0, 1)
	if v := c.Completeness.MinAtomShare; !(v >= 0 && v <= 1) {
		add("completeness.min_atom_share", "%s is out of range 0..1 (the share of a bundle's planned atoms that must have finished)", num(v))
	}
	if _, _, key, err := SandboxSettings(c.Sandbox); err != nil {
		add(key, "%v", err)
	}
}

// RunEstimate is what a run at one scale is expected to hold in memory.
type RunEstimate struct {
	Agents int64 // nexus, commanders, squad leads, workers, reviewers
	Calls  int64 // LLM calls, judge samples and hardening included
	Bytes  int64
}

// Per-agent and per-call memory of a run. Per call: the events a run keeps
// until its report (about 15 KB per call, as measured for issue 9). Per
// agent: an allowance for its brief, atoms and share of a bundle, not a
// measurement. The estimate is a guard against sizes off by orders of
// magnitude, not a forecast.
const (
	estBytesPerCall  = 16 << 10
	estBytesPerAgent = 64 << 10
)

// EstimateRun estimates the memory of a run at scale n, for the personality
// with the largest worker factor (a run may pick any with --personality).
// It saturates instead of overflowing.
func (c *Config) EstimateRun(n string) RunEstimate {
	s := c.withCriteriaCount(c.Scales[n])
	factor := 1.0
	for _, p := range c.Personalities {
		factor = max(factor, p.WorkerFactor)
	}
	const huge = float64(1 << 50)
	clamp := func(v float64) float64 { return math.Min(math.Max(v, 0), huge) }
	cmd := clamp(float64(s.Commanders))
	var leads, workers float64
	if s.SquadLeadsPerCommander > 0 {
		leads = cmd * clamp(float64(s.SquadLeadsPerCommander))
		workers = leads * math.Max(1, math.Round(clamp(float64(s.WorkersPerSquadLead))*factor))
	} else {
		workers = cmd * math.Max(1, math.Round(clamp(float64(s.WorkersPerCommander))*factor))
	}
	agents := clamp(1 + cmd + leads + workers + clamp(float64(s.Reviewers)))
	judge := cmd * math.Max(1, clamp(float64(c.ShadowScoring.JudgeSamples)))
	if c.ShadowScoring.JudgeMode == "per_criterion" {
		judge *= clamp(float64(s.SealedCriteria))
	}
	judge *= 1 + clamp(float64(c.ShadowScoring.Hardening.MaxCycles))
	calls := clamp(2*agents + judge + 2) // decompose and seal, each agent about twice
	bytes := clamp(agents*estBytesPerAgent + calls*estBytesPerCall)
	return RunEstimate{Agents: int64(agents), Calls: int64(calls), Bytes: int64(bytes)}
}

var scaleNameRe = regexp.MustCompile(`^ss-\d+$`)

// validateModels checks the models and the providers section; kind names
// and options against reg's adapters (nil reg: not checked).
func (c *Config) validateModels(add func(key, format string, args ...any), reg *providers.Registry) {
	var kinds []string
	if reg != nil {
		for _, k := range reg.Kinds() {
			kinds = append(kinds, k.Kind)
		}
	}
	known := func(kind string) bool { return reg == nil || reg.Has(kind) }
	check := func(key string, ref providers.Ref) {
		switch {
		case ref.IsZero():
			add(key, "provider reference \"\": want kind:model, e.g. openai:gpt-4.1 or mock:honest")
		case !known(ref.Kind):
			add(key, "unknown provider kind %q in %q (known: %s)", ref.Kind, ref, strings.Join(kinds, ", "))
		}
	}
	m := c.Models
	for k, v := range map[string]providers.Ref{"models.nexus": m.Nexus, "models.seal_author": m.SealAuthor, "models.judge": m.Judge, "models.squad_lead": m.SquadLead, "models.synthesizer": m.Synthesizer} {
		check(k, v)
	}
	if !m.Reference.IsZero() {
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
	for _, role := range slices.Sorted(maps.Keys(c.Fallbacks)) {
		if slices.Index(roles, role) < 0 {
			add("fallbacks."+role, "unknown role (roles: %s)", strings.Join(roles, ", "))
			continue
		}
		for i, v := range c.Fallbacks[role] {
			check(fmt.Sprintf("fallbacks.%s[%d]", role, i), v)
		}
	}
	for k, p := range c.Providers {
		key := "providers." + k
		var info providers.KindInfo
		isKind := false
		if reg != nil {
			info, isKind = reg.Info(k)
		}
		if !known(k) {
			add(key, "unknown provider kind %q (known: %s)", k, strings.Join(kinds, ", "))
		}
		if p.Timeout < 0 {
			add(key+".timeout", "negative timeout %v", p.Timeout)
		}
		for fk, v := range map[string]float64{"requests_per_minute": p.RequestsPerMin, "input_per_mtok": p.InputPerMTok, "output_per_mtok": p.OutputPerMTok} {
			if !(v >= 0) || math.IsInf(v, 0) {
				add(key+"."+fk, "%v is out of range: must be a finite number, not negative", v)
			}
		}
		if p.Retries < 0 || p.Retries > MaxProviderRetries {
			add(key+".retries", "%d is out of range 0..%d", p.Retries, MaxProviderRetries)
		}
		if p.MaxConcurrency < 0 || p.MaxConcurrency > MaxProviderConcurrency {
			add(key+".max_concurrency", "%d is out of range 0..%d", p.MaxConcurrency, MaxProviderConcurrency)
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
			case isKind && !slices.Contains(info.Options, ok):
				valid := "none"
				if len(info.Options) > 0 {
					valid = strings.Join(info.Options, ", ")
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
		return Scale{}, fmt.Errorf("unknown scale %q (known: %s)", name, strings.Join(slices.Sorted(maps.Keys(c.Scales)), ", "))
	}
	return c.withCriteriaCount(s), nil
}

// withCriteriaCount is s with shadow_scoring.sealed_criteria_count, when
// set, as its number of sealed criteria.
func (c *Config) withCriteriaCount(s Scale) Scale {
	if n := c.ShadowScoring.SealedCriteriaCount; n > 0 {
		s.SealedCriteria = n
	}
	return s
}

// ShadowFor returns the hardening settings for a scale after its overrides.
func (c *Config) ShadowFor(scale string) shadow.HardeningConfig {
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
		out.Providers[k] = p.Redacted()
	}
	return &out
}

// Error is one problem in a configuration file.
type Error struct {
	File string
	Line int
	Col  int
	Key  string
	Msg  string
}

// Error renders file:line:col: key K: message. File, key and message come
// from the user's file: control characters in them are escaped, so that an
// error printed to a terminal cannot drive it.
func (e Error) Error() string {
	loc := textsafe.Printable(e.File)
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", loc, e.Line, e.Col)
	}
	if e.Key == "" {
		// A syntax error with no top-level key above it (yamlx names the
		// one it sits under otherwise); the line and column say where.
		return fmt.Sprintf("%s: %s", loc, textsafe.Printable(e.Msg))
	}
	return fmt.Sprintf("%s: key %s: %s", loc, textsafe.Printable(e.Key), textsafe.Printable(e.Msg))
}

// Errors is every problem found; it wraps ErrBadInput.
type Errors []Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return "invalid configuration:\n  " + strings.Join(lines, "\n  ")
}

// Unwrap makes errors.Is(err, ErrBadInput) hold.
func (es Errors) Unwrap() error { return ErrBadInput }

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
			return fmt.Errorf("%w: %s=%q: unknown scale (known: %s)", ErrBadInput, EnvScale, v, strings.Join(slices.Sorted(maps.Keys(c.Scales)), ", "))
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
		ref, err := providers.ParseRef(v)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrBadInput, EnvProvider, err)
		}
		m := &c.Models
		m.Nexus, m.SealAuthor, m.Judge, m.SquadLead, m.Synthesizer = ref, ref, ref, ref, ref
		m.Commanders, m.Workers, m.Reviewers = []providers.Ref{ref}, []providers.Ref{ref}, [][]providers.Ref{{ref, ref}}
	}
	return nil
}

var durationType = reflect.TypeFor[time.Duration]()

// checkScalars reports, with line and key, two things the YAML decoder would
// let through silently or without a position: a fractional number where an
// integer belongs (it would be truncated) and a duration that does not parse.
func checkScalars(name string, doc *yamlx.Doc) Errors {
	var errs Errors
	bad := func(n ast.Node, key, format string, args ...any) {
		pos := n.GetToken().Position
		errs = append(errs, Error{File: name, Line: pos.Line, Col: pos.Column, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	_ = doc.WalkScalars(reflect.TypeFor[Config](), func(n ast.ScalarNode, t reflect.Type, path string) error {
		switch v := n.(type) {
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
		return nil // every problem is reported, not only the first
	})
	return errs
}

// SandboxSettings builds the bridge's proxy and payoff from the sandbox
// section. On error, key is the dotted configuration key at fault.
func SandboxSettings(c Sandbox) (proxy *sandbox.Proxy, pay sandbox.PayoffConfig, key string, err error) {
	pc := sandbox.DefaultProxyConfig()
	for _, k := range slices.Sorted(maps.Keys(c.Proxy)) {
		v := c.Proxy[k]
		switch k {
		case "progress":
			pc.Weights.Progress = v
		case "rework":
			pc.Weights.Rework = v
		case "verifier":
			pc.Weights.Verifier = v
		case "engagement":
			pc.Weights.Engagement = v
		case "k":
			pc.K = v
		case "b":
			pc.B = v
		default:
			return nil, pay, "sandbox.proxy." + k, fmt.Errorf("unknown key (known: progress, rework, verifier, engagement, k, b)")
		}
	}
	if proxy, err = sandbox.NewProxy(pc); err != nil {
		return nil, pay, "sandbox.proxy", err
	}
	pay = sandbox.DefaultPayoffConfig()
	for _, k := range slices.Sorted(maps.Keys(c.Payoff)) {
		v := c.Payoff[k]
		switch k {
		case "s_plus":
			pay.SPlus = v
		case "s_minus":
			pay.SMinus = v
		case "h":
			pay.H = v
		case "theta":
			pay.Theta = v
		case "rho_a":
			pay.RhoA = v
		case "rho_b":
			pay.RhoB = v
		case "w_rep":
			pay.WRep = v
		default:
			return nil, pay, "sandbox.payoff." + k, fmt.Errorf("unknown key (known: s_plus, s_minus, h, theta, rho_a, rho_b, w_rep)")
		}
	}
	return proxy, pay, "", nil
}
