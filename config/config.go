package config

import (
	"os"
	"slices"
	"time"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// Config is the whole configuration (config.yml). The embedded default is
// the repository's config.yml; a user file is decoded on top of it.
type Config struct {
	DefaultScale   string                          `yaml:"default_scale" json:"default_scale"`
	Scales         map[string]Scale                `yaml:"scales" json:"scales"`
	Personalities  map[string]Personality          `yaml:"personalities" json:"personalities"`
	Run            Run                             `yaml:"run" json:"run"`
	ShadowScoring  Shadow                          `yaml:"shadow_scoring" json:"shadow_scoring"`
	Consensus      Consensus                       `yaml:"consensus" json:"consensus"`
	CircuitBreaker CircuitBreaker                  `yaml:"circuit_breaker" json:"circuit_breaker"`
	Sandbox        Sandbox                         `yaml:"sandbox" json:"sandbox"`
	Models         Models                          `yaml:"models" json:"models"`
	Providers      map[string]providers.KindConfig `yaml:"providers" json:"providers"`
	Workspace      Workspace                       `yaml:"workspace" json:"workspace"`
	Recovery       Recovery                        `yaml:"recovery" json:"recovery"`
	// Completeness is how much of its planned work a bundle must rest on
	// for the run to be complete.
	Completeness Completeness `yaml:"completeness" json:"completeness"`
	// Fallbacks are the models a role falls back to, in order, when its
	// primary model keeps failing (the recovery ladder's model swap; a
	// breaker open on the primary routes the role to them). Role -> models;
	// --fallback ROLE=KIND:MODEL adds to them.
	Fallbacks map[string][]providers.Ref `yaml:"fallbacks" json:"fallbacks,omitempty"`
	// Compare is how `swarm compare` ranks (compare.* keys).
	Compare Compare `yaml:"compare" json:"compare"`
	// Pricing is the price of models (kind:model -> USD per million tokens
	// per kind of token), over the built-in table and the kinds' prices;
	// see Config.PriceOf.
	Pricing map[string]ModelPrice `yaml:"pricing" json:"pricing,omitempty"`
}

// Compare is the compare section: what `swarm compare` ranks by
// beyond the Shadow Score.
type Compare struct {
	// MaxFabricationRate is the share of fabricated citations (0..1) above
	// which a contender is untrusted: when its fabrication rate's whole 95%
	// Wilson interval lies above it, it is ranked after every trusted
	// contender, with the reason. 1 turns the rule off.
	MaxFabricationRate float64 `yaml:"max_fabrication_rate" json:"max_fabrication_rate"`
}

// Recovery is the recovery section: the ladder a unit of work that
// keeps failing climbs (see docs/recovery-ladder.md). Retry, the first
// step, is the providers' own and always on.
type Recovery struct {
	Enabled        bool `yaml:"enabled" json:"enabled"`
	Simplify       bool `yaml:"simplify" json:"simplify"`
	ModelSwap      bool `yaml:"model_swap" json:"model_swap"`
	ScopeReduction bool `yaml:"scope_reduction" json:"scope_reduction"`
	Degrade        bool `yaml:"degrade" json:"degrade"`
	// MaxAttemptsPerStep bounds each step: simplifications (each halves
	// again), fallback models tried, re-plans (each halves the shards).
	MaxAttemptsPerStep int `yaml:"max_attempts_per_step" json:"max_attempts_per_step"`
}

// Completeness is the completeness section: what a bundle must rest
// on. A bundle none of whose atoms finished is always failed (class
// no_finished_atoms), whatever this says.
type Completeness struct {
	// MinAtomShare is the share (0..1) of a bundle's planned atoms that
	// must have finished; a bundle resting on fewer is judged but counts as
	// below its atom share, and the run is not complete. 0 turns the check
	// off (only a bundle with no finished atom fails).
	MinAtomShare float64 `yaml:"min_atom_share" json:"min_atom_share"`
}

// MaxRecoveryAttempts bounds recovery.max_attempts_per_step.
const MaxRecoveryAttempts = 8

// Ladder is the commanders' view of the section (the zero value when the
// ladder is off).
func (c Recovery) Ladder() commanders.Recovery {
	if !c.Enabled {
		return commanders.Recovery{}
	}
	return commanders.Recovery{Enabled: true, Simplify: c.Simplify, ModelSwap: c.ModelSwap, ScopeReduction: c.ScopeReduction,
		Degrade: c.Degrade, Attempts: c.MaxAttemptsPerStep}
}

// Workspace is how a mission's agents read the workspace it is about
// (see package workspace and docs/workspace.md).
type Workspace struct {
	// Dir is the workspace directory ("" = none). --workspace and the
	// mission's front matter override it.
	Dir string `yaml:"dir" json:"dir"`
	// Roles get the read tools: worker and commander by default; squad_lead,
	// judge (to check claims against the code) and seal_author (so criteria
	// can name real files) may be added.
	Roles []string `yaml:"roles" json:"roles"`
	// Deny adds patterns (gitignore syntax) to the default deny list.
	Deny []string `yaml:"deny" json:"deny"`
	// Allow lifts the default deny list (workspace.DefaultDeny) for the
	// paths its patterns (gitignore syntax) match, e.g. ".env.example":
	// the only way to lower that floor. Nothing inside the workspace (its
	// .swarmignore, its .gitignore files) can.
	Allow  []string         `yaml:"allow" json:"allow"`
	Limits workspace.Limits `yaml:"limits" json:"limits"`
}

// workspaceRoles are the roles that may be given the read tools.
var workspaceRoles = []string{"worker", "commander", "squad_lead", "judge", "seal_author"}

// Reads reports whether role gets the read tools.
func (w Workspace) Reads(role string) bool { return slices.Contains(w.Roles, role) }

// Scale is one mission scale (ss-50, ss-100, ss-250).
type Scale struct {
	Description            string   `yaml:"description" json:"description"`
	MinCommanders          int      `yaml:"min_commanders" json:"min_commanders"`
	Commanders             int      `yaml:"commanders" json:"commanders"`
	SquadLeadsPerCommander int      `yaml:"squad_leads_per_commander" json:"squad_leads_per_commander"`
	WorkersPerCommander    int      `yaml:"workers_per_commander" json:"workers_per_commander"`
	WorkersPerSquadLead    int      `yaml:"workers_per_squad_lead" json:"workers_per_squad_lead"`
	Reviewers              int      `yaml:"reviewers" json:"reviewers"`
	MaxDepth               int      `yaml:"max_depth" json:"max_depth"`
	SealedCriteria         int      `yaml:"sealed_criteria" json:"sealed_criteria"`
	CostCeilingUSD         float64  `yaml:"cost_ceiling_usd" json:"cost_ceiling_usd"`
	Timeouts               Timeouts `yaml:"timeouts" json:"timeouts"`
	Concurrency            int      `yaml:"concurrency" json:"concurrency"`
	// Waves is how the commanders are deployed: a canary, a probe, then the
	// rest in adaptive waves (waves.go, docs/waves.md). Off when the scale
	// sets none.
	Waves Waves `yaml:"waves" json:"waves"`
}

// Timeouts cascade down the layers: a child's timeout never exceeds its parent's.
type Timeouts struct {
	Mission   time.Duration `yaml:"mission" json:"mission"`
	Commander time.Duration `yaml:"commander" json:"commander"`
	SquadLead time.Duration `yaml:"squad_lead" json:"squad_lead"`
	Worker    time.Duration `yaml:"worker" json:"worker"`
	Call      time.Duration `yaml:"call" json:"call"`
}

// Personality adjusts a run: worker count, timeouts and retries.
type Personality struct {
	WorkerFactor  float64 `yaml:"worker_factor" json:"worker_factor"`
	TimeoutFactor float64 `yaml:"timeout_factor" json:"timeout_factor"`
	ExtraRetries  int     `yaml:"extra_retries" json:"extra_retries"`
	Temperature   float64 `yaml:"temperature" json:"temperature"`
}

// Run holds run-wide settings.
type Run struct {
	OutDir      string `yaml:"out_dir" json:"out_dir"`
	Seed        int64  `yaml:"seed" json:"seed"`
	Personality string `yaml:"personality" json:"personality"`
	// MaxTokens per LLM call by role; 0 leaves it to the provider.
	MaxTokens map[string]int `yaml:"max_tokens" json:"max_tokens"`
	// MaxMissionBytes caps the mission text (0: DefaultMaxMissionBytes).
	MaxMissionBytes int `yaml:"max_mission_bytes" json:"max_mission_bytes,omitempty"`
	// MemoryBudgetMB is the memory a run may be estimated to need before it
	// is refused (0: DefaultMemoryBudgetMB).
	MemoryBudgetMB int `yaml:"memory_budget_mb" json:"memory_budget_mb,omitempty"`
}

// Upper bounds of the size-like settings (docs/config.md lists them). They
// are far above the shipped scales and keep a typo (reviewers: 100000000)
// from reaching an allocation.
const (
	MaxSquadLeadsPerCommander = 100
	MaxWorkersPerCommander    = 1000
	MaxWorkersPerSquadLead    = 100
	MaxReviewers              = 1000
	MaxSealedCriteria         = 200
	MaxScaleDepth             = 10
	MaxConcurrency            = 100_000 // above any widest layer the default memory budget admits (about 32 000 agents): never what holds a large scale back
	MaxJudgeSamples           = 25
	MaxHardeningCycles        = 10
	MaxWorkerFactor           = 10
	MaxTimeoutFactor          = 100
	MaxExtraRetries           = 10
	MaxProviderRetries        = 20
	MaxProviderConcurrency    = 10000
	MaxTokensPerCall          = 1_000_000
	MaxBreakerWindow          = 100_000
	MaxBreakerProbes          = 10_000

	// DefaultMaxMissionBytes is run.max_mission_bytes when unset;
	// MaxMissionBytesLimit is the most it may be raised to.
	DefaultMaxMissionBytes = 64 << 10
	MaxMissionBytesLimit   = 16 << 20
	// DefaultMemoryBudgetMB is run.memory_budget_mb when unset.
	DefaultMemoryBudgetMB = 2048
)

// MissionLimit is the effective mission size cap in bytes.
func (r Run) MissionLimit() int {
	if r.MaxMissionBytes > 0 {
		return r.MaxMissionBytes
	}
	return DefaultMaxMissionBytes
}

// MemoryBudget is the effective memory budget in bytes.
func (r Run) MemoryBudget() int64 {
	if r.MemoryBudgetMB > 0 {
		return int64(r.MemoryBudgetMB) << 20
	}
	return DefaultMemoryBudgetMB << 20
}

// Shadow is the shadow_scoring section.
type Shadow struct {
	Enabled      bool     `yaml:"enabled" json:"enabled"`
	SpecVersion  string   `yaml:"spec_version" json:"spec_version"`
	Categories   []string `yaml:"categories" json:"categories"`
	JudgeMode    string   `yaml:"judge_mode" json:"judge_mode"` // per_bundle | per_criterion
	JudgeSamples int      `yaml:"judge_samples" json:"judge_samples"`
	// Hardening is shadow_scoring.hardening: shadow's own settings of
	// Harden, one type for both.
	Hardening      shadow.HardeningConfig    `yaml:"hardening" json:"hardening"`
	ScaleOverrides map[string]ShadowOverride `yaml:"scale_overrides" json:"scale_overrides"`
	Gate           Gate                      `yaml:"gate" json:"gate"`
	// ConformanceLevel is the highest Shadow Score Spec conformance level
	// (1..4) the run's reports may claim; they claim the lower of it and
	// what the run reaches (shadow.ConformanceLevel with hardening, 2
	// without). 0 (unset): what the run reaches.
	ConformanceLevel int `yaml:"conformance_level" json:"conformance_level,omitempty"`
	// SealedCriteriaCount, when set (1..MaxSealedCriteria), is the number
	// of sealed criteria at every scale, instead of the scale's
	// sealed_criteria.
	SealedCriteriaCount int `yaml:"sealed_criteria_count" json:"sealed_criteria_count,omitempty"`
}

// Gate is shadow_scoring.gate.
type Gate struct {
	// OnCriticalLeak is what the Shadow Gate does with a bundle carrying a
	// critical leak (redacted from it or its workers' results): quarantine
	// (default when empty), block or warn.
	OnCriticalLeak string `yaml:"on_critical_leak" json:"on_critical_leak"`
}

// ShadowOverride overrides shadow settings for one scale. Nil fields keep
// the section's value.
type ShadowOverride struct {
	HardeningEnabled *bool    `yaml:"hardening_enabled" json:"hardening_enabled,omitempty"`
	MaxCycles        *int     `yaml:"max_cycles" json:"max_cycles,omitempty"`
	Threshold        *float64 `yaml:"threshold" json:"threshold,omitempty"`
}

// Consensus is the consensus section.
type Consensus struct {
	ConsensusThreshold float64          `yaml:"consensus_threshold" json:"consensus_threshold"` // 0.70
	MajorityThreshold  float64          `yaml:"majority_threshold" json:"majority_threshold"`   // 0.50
	Weights            ConsensusWeights `yaml:"weights" json:"weights"`
	ConflictCap        float64          `yaml:"conflict_cap" json:"conflict_cap"` // 0.30
	UnanimityBoost     float64          `yaml:"unanimity_boost" json:"unanimity_boost"`
}

// ConsensusWeights are the bundle-level consensus formula weights.
type ConsensusWeights struct {
	Confidence float64 `yaml:"confidence" json:"confidence"` // 0.40
	Evidence   float64 `yaml:"evidence" json:"evidence"`     // 0.30
	Scope      float64 `yaml:"scope" json:"scope"`           // 0.15
	Coverage   float64 `yaml:"coverage" json:"coverage"`     // 0.15
}

// CircuitBreaker is the circuit_breaker section: the provider
// breakers, one per model and layer (docs/recovery-breaker.md), and the
// sandbox's toxicity breaker (ToxicityThreshold, Window).
type CircuitBreaker struct {
	Enabled bool `yaml:"enabled" json:"enabled"`
	// FailureRate opens a closed breaker when the share of failed calls in
	// its window reaches it (0..1], judged once the window holds MinCalls
	// calls; CallWindow is how many of a breaker's latest calls the window
	// holds.
	FailureRate float64 `yaml:"failure_rate" json:"failure_rate"`
	CallWindow  int     `yaml:"call_window" json:"call_window"`
	MinCalls    int     `yaml:"min_calls" json:"min_calls"`
	// Cooldown is how long an open breaker stays open before it lets
	// HalfOpenProbes probe calls through (half-open): all of them must
	// succeed to close it, one failure opens it again.
	Cooldown       time.Duration `yaml:"cooldown" json:"cooldown"`
	HalfOpenProbes int           `yaml:"half_open_probes" json:"half_open_probes"`
	// ToxicityThreshold trips the sandbox breaker on an agent or model whose
	// rolling toxicity crosses it within a run.
	ToxicityThreshold float64 `yaml:"toxicity_threshold" json:"toxicity_threshold"`
	Window            int     `yaml:"window" json:"window"`
}

// Sandbox is the sandbox section: the bridge from missions.
type Sandbox struct {
	Enabled   bool    `yaml:"enabled" json:"enabled"`
	AuditRate float64 `yaml:"audit_rate" json:"audit_rate"`
	// Bridge weights: how mission signals map to observables.
	Proxy  map[string]float64 `yaml:"proxy" json:"proxy"`
	Payoff map[string]float64 `yaml:"payoff" json:"payoff"`
}

// Models says which provider:model serves each role. A zero Ref is
// unset.
type Models struct {
	Nexus      providers.Ref   `yaml:"nexus" json:"nexus"`
	SealAuthor providers.Ref   `yaml:"seal_author" json:"seal_author"`
	Judge      providers.Ref   `yaml:"judge" json:"judge"`
	Commanders []providers.Ref `yaml:"commanders" json:"commanders"` // pool, assigned round robin
	SquadLead  providers.Ref   `yaml:"squad_lead" json:"squad_lead"`
	Workers    []providers.Ref `yaml:"workers" json:"workers"` // pool
	// Reviewers are pairs; a list, not [2]providers.Ref, so that a pair of
	// the wrong length is an error naming it rather than a decoder panic.
	Reviewers   [][]providers.Ref `yaml:"reviewers" json:"reviewers"`
	Synthesizer providers.Ref     `yaml:"synthesizer" json:"synthesizer"`
	// Reference is an optional benchmark judge used for incoherence E.
	Reference providers.Ref `yaml:"reference" json:"reference,omitzero"`
}

// Waves is scales.NAME.waves.
type Waves struct {
	// Enabled turns waves on; off, every commander launches at once.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// Canary is the number of commanders launched first (at least 1).
	Canary int `yaml:"canary" json:"canary"`
	// ProbeCalls is the size of the probe: the first llm_call outcomes of
	// the canary's team the verdict is made on.
	ProbeCalls int `yaml:"probe_calls" json:"probe_calls"`
	// MaxErrorRate is the largest share of failed probe calls that passes
	// (0..1). A probe whose every call failed never passes.
	MaxErrorRate float64 `yaml:"max_error_rate" json:"max_error_rate"`
	// Initial is the size of the first wave after the canary; 0 sizes it
	// from the run's concurrency (commanders whose teams' widest layer
	// fits in it at once).
	Initial int `yaml:"initial" json:"initial"`
	// Min and Max bound every wave after the canary (Max 0: no bound).
	Min int `yaml:"min" json:"min"`
	Max int `yaml:"max" json:"max"`
}

// MaxProbeCalls bounds scales.NAME.waves.probe_calls.
const MaxProbeCalls = 1000

// validate reports what makes no sense in an enabled waves block; key is
// its config key (scales.NAME.waves).
func (w Waves) validate(key string, commanders int, add func(key, format string, args ...any)) {
	if !w.Enabled {
		return
	}
	if w.Canary < 1 || w.Canary > max(1, commanders) {
		add(key+".canary", "%d is out of range 1..commanders (%d)", w.Canary, commanders)
	}
	if w.ProbeCalls < 1 || w.ProbeCalls > MaxProbeCalls {
		add(key+".probe_calls", "%d is out of range 1..%d", w.ProbeCalls, MaxProbeCalls)
	}
	if !(w.MaxErrorRate >= 0 && w.MaxErrorRate <= 1) {
		add(key+".max_error_rate", "%v is out of range 0..1", w.MaxErrorRate)
	}
	if w.Min < 1 {
		add(key+".min", "%d is out of range: a wave has at least 1 commander", w.Min)
	}
	if w.Max < 0 {
		add(key+".max", "%d is out of range: 0 (no bound) or at least min", w.Max)
	} else if w.Max > 0 && w.Max < w.Min {
		add(key+".max", "%d is below min (%d)", w.Max, w.Min)
	}
	if w.Initial < 0 {
		add(key+".initial", "%d is out of range: 0 (from the concurrency) or a number of commanders", w.Initial)
	} else if w.Initial > 0 && (w.Initial < w.Min || (w.Max > 0 && w.Initial > w.Max)) {
		add(key+".initial", "%d is outside min..max (%d..%d)", w.Initial, w.Min, w.Max)
	}
}

// KeyValues returns the values, from the environment, of every API-key
// variable c names (providers.*.api_key_env) and of every kind's default
// key variable reg knows: the secrets a run or a command scrubs from
// everything it writes. c and reg may be nil.
func (c *Config) KeyValues(reg *providers.Registry) []string {
	var names []string
	if c != nil {
		for _, kc := range c.Providers {
			names = append(names, kc.APIKeyEnv)
		}
	}
	if reg != nil {
		for _, k := range reg.Kinds() {
			names = append(names, k.DefaultKeyEnv)
		}
	}
	var out []string
	for _, n := range names {
		if v := os.Getenv(n); n != "" && v != "" {
			out = append(out, v)
		}
	}
	return out
}
