package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	swarm "github.com/swarm-dev/swarm"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/builtin"
)

// shippedKinds is a registry of every provider kind swarm ships (the CLI's).
func shippedKinds() *providers.Registry { return builtin.Registry(mock.Options{}) }

func TestShippedConfigValidates(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../config.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse("config.yml", b, nil, shippedKinds())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DefaultScale != "ss-100" || cfg.Scales["ss-50"].SealedCriteria != 6 || cfg.Scales["ss-250"].CostCeilingUSD != 20 {
		t.Errorf("unexpected defaults: %+v", cfg.Scales)
	}
	if h := cfg.ShadowFor("ss-50"); h.Enabled {
		t.Error("ss-50 must have no hardening")
	}
	if h := cfg.ShadowFor("ss-100"); !h.Enabled || h.Threshold != 15 || h.MaxCycles != 1 {
		t.Errorf("ss-100 hardening = %+v", h)
	}
}

func TestConfigRejectsBadInputWithFileLineAndKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		yaml     string
		wantLine int
		wantKey  string
		wantMsg  string
	}{
		{"unknown key", "run:\n  seed: 1\n  colour: blue\n", 3, "run.colour", "unknown key"},
		{"string where a number belongs", "consensus:\n  consensus_threshold: high\n", 2, "consensus.consensus_threshold", "wrong type"},
		{"negative timeout", "scales:\n  ss-100:\n    timeouts:\n      worker: -5s\n", 4, "scales.ss-100.timeouts.worker", "negative timeout"},
		{"unknown default scale", "default_scale: ss-999\n", 1, "default_scale", "unknown scale"},
		{"unknown scale in overrides", "shadow_scoring:\n  scale_overrides:\n    ss-7:\n      max_cycles: 2\n", 3, "shadow_scoring.scale_overrides.ss-7", "unknown scale"},
		{"model with an unknown provider kind", "models:\n  judge: foo:bar\n", 2, "models.judge", "unknown provider kind"},
		{"model in a pool", "models:\n  commanders: [mock:honest, nope:x]\n", 2, "models.commanders[1]", "unknown provider kind"},
		{"a model that is not kind:model (decoded as a providers.Ref)", "models:\n  judge: bogus\n", 2, "models.judge", "want kind:model"},
		{"a pool member that is not kind:model", "models:\n  workers: [mock:honest, nope]\n", 2, "models.workers[1]", "want kind:model"},
		{"an empty model where one is required", "models:\n  nexus: ''\n", 2, "models.nexus", "want kind:model"},
		{"a reviewer pair of three", "models:\n  reviewers: [[mock:honest, mock:honest, mock:honest]]\n", 2, "models.reviewers[0]", "exactly two models, got 3"},
		{"weights not summing to 1", "consensus:\n  weights: {confidence: 0.5, evidence: 0.5, scope: 0.5, coverage: 0.5}\n", 2, "consensus.weights", "sum to 2"},
		{"a secret in config", "providers:\n  openai:\n    api_key: sk-123\n", 3, "providers.openai.api_key", "api_key_env"},
		{"the key itself in api_key_env", "providers:\n  openai:\n    api_key_env: sk-proj-abc123\n", 3, "providers.openai.api_key_env", "not hold the key itself"},
		{"a base URL that is not a URL", "providers:\n  vllm:\n    base_url: localhost:8000\n", 3, "providers.vllm.base_url", "absolute URL"},
		{"a fraction where an integer belongs would be truncated", "run:\n  seed: 1.5\n", 2, "run.seed", "not a whole number"},
		{"a duration that does not parse", "scales:\n  ss-100:\n    timeouts: {call: soon}\n", 3, "scales.ss-100.timeouts.call", "not a duration"},
		{"negative provider timeout", "providers:\n  openai:\n    timeout: -5s\n", 3, "providers.openai.timeout", "negative timeout"},
		{"a role that may not read the workspace", "workspace:\n  roles: [worker, reviewer]\n", 2, "workspace.roles[1]", "unknown role \"reviewer\""},
		{"a workspace limit of zero", "workspace:\n  limits:\n    max_tool_turns: 0\n", 3, "workspace.limits.max_tool_turns", "at least 1"},
		{"an unknown workspace key", "workspace:\n  directory: src\n", 2, "workspace.directory", "unknown key"},
		// Issue 22: every workspace limit has a maximum (max_file_bytes: 1e11 passed).
		{"max_file_bytes: 1e11", "workspace:\n  limits:\n    max_file_bytes: 100000000000\n", 3, "workspace.limits.max_file_bytes", "100000000000 is over the maximum of 268435456"},
		{"max_tool_calls without bound", "workspace:\n  limits:\n    max_tool_calls: 50000000\n", 3, "workspace.limits.max_tool_calls", "over the maximum of 1000000"},
		{"max_files_per_call of zero", "workspace:\n  limits:\n    max_files_per_call: 0\n", 3, "workspace.limits.max_files_per_call", "at least 1"},
		// Issue 22: only workspace.allow lowers the default deny list.
		{"a deny negation cannot lift the default deny list", "workspace:\n  deny: [vendor/, '!.env']\n", 2, "workspace.deny[1]", "list \".env\" under workspace.allow"},
		{"an allow pattern the default list does not deny lifts nothing", "workspace:\n  allow: [src/]\n", 2, "workspace.allow[0]", "lifts nothing"},
		{"a negation in allow", "workspace:\n  allow: ['!.env']\n", 2, "workspace.allow[0]", "a negation means nothing here"},
		{"negative provider retries", "providers:\n  openai:\n    retries: -1\n", 3, "providers.openai.retries", "out of range"},
		{"badly named scale", "scales:\n  big:\n    commanders: 3\n    sealed_criteria: 4\n    max_depth: 2\n", 2, "scales.big", "ss-<agents>"},
		{"rate out of range", "sandbox:\n  audit_rate: 7\n", 2, "sandbox.audit_rate", "out of range 0..1"},
		{"conflict cap out of range", "consensus:\n  conflict_cap: 1.5\n", 2, "consensus.conflict_cap", "out of range 0..1"},
		// Issue 20: the share of its planned atoms a bundle must rest on.
		{"an atom share above 1", "completeness:\n  min_atom_share: 1.5\n", 2, "completeness.min_atom_share", "out of range 0..1"},
		{"a negative atom share", "completeness:\n  min_atom_share: -0.1\n", 2, "completeness.min_atom_share", "out of range 0..1"},
		// Issue 20: the seed system's shadow_scoring keys.
		{"a conformance level the spec does not define", "shadow_scoring:\n  conformance_level: 5\n", 2, "shadow_scoring.conformance_level", "want 1..4"},
		{"a negative criteria count", "shadow_scoring:\n  sealed_criteria_count: -2\n", 2, "shadow_scoring.sealed_criteria_count", "out of range 1..200"},
		{"a criteria count above the bound", "shadow_scoring:\n  sealed_criteria_count: 500\n", 2, "shadow_scoring.sealed_criteria_count", "out of range 1..200"},
		{"negative breaker cooldown", "circuit_breaker:\n  cooldown: -3s\n", 2, "circuit_breaker.cooldown", "negative"},
		// Issue 12: the provider breaker's keys.
		{"the removed consecutive-failure key names its replacement", "circuit_breaker:\n  failure_threshold: 5\n", 2, "circuit_breaker.failure_threshold", "use circuit_breaker.failure_rate"},
		{"a zero cooldown would probe on every call", "circuit_breaker:\n  cooldown: 0s\n", 2, "circuit_breaker.cooldown", "greater than 0"},
		{"a failure rate of 0 opens on a success", "circuit_breaker:\n  failure_rate: 0\n", 2, "circuit_breaker.failure_rate", "greater than 0 and at most 1"},
		{"a failure rate above 1 never opens", "circuit_breaker:\n  failure_rate: 1.5\n", 2, "circuit_breaker.failure_rate", "greater than 0 and at most 1"},
		{"an empty window", "circuit_breaker:\n  call_window: 0\n", 2, "circuit_breaker.call_window", "out of range 1..100000"},
		{"min_calls above the window could never be reached", "circuit_breaker:\n  call_window: 10\n  min_calls: 11\n", 3, "circuit_breaker.min_calls", "out of range 1..call_window (10)"},
		{"min_calls 0", "circuit_breaker:\n  min_calls: 0\n", 2, "circuit_breaker.min_calls", "out of range"},
		{"no probe could ever close it", "circuit_breaker:\n  half_open_probes: 0\n", 2, "circuit_breaker.half_open_probes", "out of range 1..10000"},
		{"unknown sandbox proxy key (was only caught when a run started)", "sandbox:\n  proxy: {bogus: 3}\n", 2, "sandbox.proxy.bogus", "unknown key"},
		{"personality factor out of range", "personalities:\n  fast: {worker_factor: 0, timeout_factor: 1}\n", 2, "personalities.fast.worker_factor", "greater than 0"},
		{"min commanders above commanders", "scales:\n  ss-50:\n    min_commanders: 4\n", 3, "scales.ss-50.min_commanders", "out of range"},
		// Syntax errors stop the parser before the tree is known: file, line,
		// what is wrong and the top-level key it sits under, and no "key ?".
		{"a duplicate key", "run:\n  seed: 1\n  seed: 2\n", 3, "run", "already defined"},
		{"an option the kind does not read (was silently ignored)", "providers:\n  mock:\n    options: {colour: red}\n", 3, "providers.mock.options.colour", "unknown option"},
		{"a tab for indentation", "run:\n\tseed: 1\n", 2, "run", "cannot start any token"},
		{"a syntax error above every key", "[run\n", 1, "", "not found"},
		// Sizes that passed validation and then exhausted memory (issue 9).
		{"reviewers: 100000000", "scales:\n  ss-100:\n    reviewers: 100000000\n", 3, "scales.ss-100.reviewers", "out of range 0..1000"},
		{"workers_per_commander: 1e9", "scales:\n  ss-50:\n    workers_per_commander: 1e9\n", 3, "scales.ss-50.workers_per_commander", "out of range 0..1000"},
		{"sealed_criteria: 1e8", "scales:\n  ss-50:\n    sealed_criteria: 1e8\n", 3, "scales.ss-50.sealed_criteria", "out of range 1..200"},
		{"squad leads without bound", "scales:\n  ss-250:\n    squad_leads_per_commander: 5000\n", 3, "scales.ss-250.squad_leads_per_commander", "out of range 0..100"},
		{"concurrency 0 serialised the run", "scales:\n  ss-100:\n    concurrency: 0\n", 3, "scales.ss-100.concurrency", "out of range 1..100000"},
		{"concurrency above its bound", "scales:\n  ss-100:\n    concurrency: 100001\n", 3, "scales.ss-100.concurrency", "out of range 1..100000"},
		{"judge samples without bound", "shadow_scoring:\n  judge_samples: 100000\n", 2, "shadow_scoring.judge_samples", "out of range 0..25"},
		{"each size in bounds, the product too big for memory",
			"personalities:\n  wide: {worker_factor: 10, timeout_factor: 1}\nscales:\n  ss-100:\n    workers_per_commander: 1000\n", 4, "scales.ss-100", "above the budget of 2048 MB"},
		{"recovery: no attempt per step", "recovery:\n  max_attempts_per_step: 0\n", 2, "recovery.max_attempts_per_step", "out of range 1..8"},
		{"recovery: too many attempts per step", "recovery:\n  enabled: true\n  max_attempts_per_step: 9\n", 3, "recovery.max_attempts_per_step", "out of range 1..8"},
		{"recovery: a misspelt switch", "recovery:\n  simplfy: false\n", 2, "recovery.simplfy", "unknown"},
		{"mission cap above its limit", "run:\n  max_mission_bytes: 1000000000\n", 2, "run.max_mission_bytes", "out of range 0..16777216"},
		// Inputs that cost the YAML library minutes or gigabytes: refused
		// before decoding, with a position where there is one.
		{"billion laughs", "run:\n  seed: 1\nlol:\n" + billionLaughs(), 9, "lol.a5[8]", "aliases are expanded"},
		{"64 KB of [", "run: " + strings.Repeat("[", 64<<10), 1, "", "nested more than 64 levels deep"},
		{"a file over the size cap", strings.Repeat("# padding\n", 30000), 0, "", "file too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.yml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, shippedKinds())
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("not ErrBadInput: %v", err)
			}
			var ce Errors
			if !errors.As(err, &ce) || len(ce) == 0 {
				t.Fatalf("not ConfigErrors: %v", err)
			}
			if strings.Contains(err.Error(), "sk-proj-abc123") {
				t.Errorf("the error repeats the secret: %v", err)
			}
			found := false
			for _, e := range ce {
				if e.File == path && e.Line == tc.wantLine && e.Key == tc.wantKey && strings.Contains(e.Msg, tc.wantMsg) {
					found = true
				}
			}
			if !found {
				t.Errorf("want %s:%d key %s (%q) in\n%v", path, tc.wantLine, tc.wantKey, tc.wantMsg, err)
			}
			if strings.Contains(err.Error(), "key ?") || (tc.wantKey != "" && !strings.Contains(err.Error(), "key "+tc.wantKey)) {
				t.Errorf("error does not read well: %v", err)
			}
		})
	}
}

// A workspace limit below 1 is one error, at its own key: it was also
// reported a second time by workspace.Limits.Validate, at workspace.limits.
func TestConfigReportsABadWorkspaceLimitOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(path, []byte("workspace:\n  limits:\n    max_tool_turns: 0\n    max_grep_matches: -2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, shippedKinds())
	var ce Errors
	if !errors.As(err, &ce) {
		t.Fatalf("not ConfigErrors: %v", err)
	}
	var keys []string
	for _, e := range ce {
		keys = append(keys, e.Key)
	}
	if want := []string{"workspace.limits.max_tool_turns", "workspace.limits.max_grep_matches"}; !slices.Equal(keys, want) {
		t.Errorf("errors at %q, want one each at %q:\n%v", keys, want, err)
	}
}

// billionLaughs is an alias chain of 9 levels of 10: 10^9 nodes expanded.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("  a0: &a0 [lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
	}
	return b.String()
}

func TestConfigSizeBudgetCanBeRaised(t *testing.T) {
	t.Parallel()
	// The estimate refuses a run that would not fit the default budget; a
	// user with the memory raises run.memory_budget_mb.
	big := "personalities:\n  wide: {worker_factor: 10, timeout_factor: 1}\nscales:\n  ss-100:\n    workers_per_commander: 1000\n"
	if _, err := Parse("c.yml", []byte(big+"run:\n  memory_budget_mb: 16384\n"), swarm.DefaultConfig, shippedKinds()); err != nil {
		t.Fatalf("raised budget: %v", err)
	}
	cfg, err := Parse("c.yml", nil, swarm.DefaultConfig, shippedKinds())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range slices.Sorted(maps.Keys(cfg.Scales)) {
		if e := cfg.EstimateRun(n); e.Bytes <= 0 || e.Bytes > 256<<20 || e.Agents < 10 {
			t.Errorf("shipped scale %s estimated at %+v: want a positive figure well under the budget", n, e)
		}
	}
}

func TestConfigErrorsAreTerminalSafe(t *testing.T) {
	t.Parallel()
	// Keys come from the user's file: an escape sequence in one must not be
	// printed raw (it could clear the screen or forge output).
	path := filepath.Join(t.TempDir(), "evil\x1b[2J.yml")
	for _, data := range []string{"run:\n  \"col\\e[31mour\\a\": 1\n", "providers:\n  \"op\\e]0;x\\aenai\": {}\n"} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, shippedKinds())
		if err == nil {
			t.Fatalf("%q accepted", data)
		}
		if msg := err.Error(); strings.ContainsAny(msg, "\x1b\a") || !strings.Contains(msg, `\x1b`) {
			t.Errorf("error not escaped for a terminal: %q", msg)
		}
	}
}

func TestUserConfigOverridesOnlyWhatItSets(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.yml")
	os.WriteFile(path, []byte("run:\n  seed: 7\nscales:\n  ss-50:\n    reviewers: 4\n"), 0o644)
	cfg, err := Load(path, shippedKinds())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Run.Seed != 7 || cfg.Run.OutDir != "runs" || cfg.Scales["ss-50"].Reviewers != 4 || cfg.Scales["ss-100"].Reviewers != 8 {
		t.Errorf("merge wrong: run %+v", cfg.Run)
	}
}

// The user's file is merged onto the embedded default key by key, at every
// depth: a key inside a map entry (a scale, a provider kind) keeps the
// entry's other keys, and the map's other entries.
func TestUserConfigMergesMapEntriesKeyByKey(t *testing.T) {
	t.Parallel()
	def, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.yml")
	os.WriteFile(path, []byte("providers:\n  openai:\n    retries: 5\n    options: {organization: org-1}\nscales:\n  ss-50:\n    reviewers: 4\n"), 0o644)
	got, err := Load(path, shippedKinds())
	if err != nil {
		t.Fatal(err)
	}
	want := *def
	want.Providers = maps.Clone(def.Providers)
	oa := want.Providers["openai"]
	oa.Retries, oa.Options = 5, map[string]string{"organization": "org-1"}
	want.Providers["openai"] = oa
	want.Scales = maps.Clone(def.Scales)
	s50 := want.Scales["ss-50"]
	s50.Reviewers = 4
	want.Scales["ss-50"] = s50
	if oa.BaseURL == "" || oa.APIKeyEnv == "" || s50.Commanders == 0 {
		t.Fatalf("the default no longer sets what this test keeps: %+v %+v", oa, s50)
	}
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("merged config (-want +got)\n%s", d)
	}
}

func TestEffectiveConfigHidesBaseURLPasswords(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.yml")
	os.WriteFile(path, []byte("providers:\n  vllm:\n    base_url: https://bob:hunter2@vllm.example/v1\n"), 0o644)
	cfg, err := Load(path, shippedKinds())
	if err != nil {
		t.Fatal(err)
	}
	b, err := cfg.Effective()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), "https://bob:xxxxx@vllm.example/v1") {
		t.Errorf("effective config:\n%s", b)
	}
	if cfg.Providers["vllm"].BaseURL != "https://bob:hunter2@vllm.example/v1" {
		t.Error("Effective changed the configuration in use")
	}
}
