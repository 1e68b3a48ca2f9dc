package providers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// Ref is a parsed "kind:model" provider reference, e.g. "openai:gpt-4.1" or
// "mock:honest".
type Ref struct {
	Kind  string
	Model string
}

// String returns "kind:model".
func (r Ref) String() string { return r.Kind + ":" + r.Model }

// IsZero reports whether r is unset (no kind).
func (r Ref) IsZero() bool { return r.Kind == "" }

// MarshalText writes a Ref as "kind:model" (JSON, YAML), the form users
// write it in; an unset Ref as "".
func (r Ref) MarshalText() ([]byte, error) {
	if r.IsZero() {
		return []byte{}, nil
	}
	return []byte(r.String()), nil
}

// UnmarshalText parses "kind:model"; "" (or only spaces) is an unset Ref,
// which the user of the value refuses where a model is required.
func (r *Ref) UnmarshalText(b []byte) error {
	if strings.TrimSpace(string(b)) == "" {
		*r = Ref{}
		return nil
	}
	ref, err := ParseRef(string(b))
	if err != nil {
		return err
	}
	*r = ref
	return nil
}

// ParseRef parses "kind:model". The model may itself contain colons
// ("ollama:llama3.1:8b").
func ParseRef(s string) (Ref, error) {
	s = strings.TrimSpace(s)
	kind, model, ok := strings.Cut(s, ":")
	if !ok || kind == "" || model == "" {
		return Ref{}, fmt.Errorf("provider reference %q: want kind:model, e.g. openai:gpt-4.1 or mock:honest", s)
	}
	return Ref{Kind: strings.ToLower(kind), Model: model}, nil
}

// KindConfig is the configuration of one provider kind (the `providers`
// section of config.yml). Secrets never live here: APIKeyEnv names the
// environment variable that holds the key.
type KindConfig struct {
	BaseURL        string        `yaml:"base_url" json:"base_url,omitempty"`
	APIKeyEnv      string        `yaml:"api_key_env" json:"api_key_env,omitempty"`
	RequestsPerMin float64       `yaml:"requests_per_minute" json:"requests_per_minute,omitempty"`
	MaxConcurrency int           `yaml:"max_concurrency" json:"max_concurrency,omitempty"`
	Timeout        time.Duration `yaml:"timeout" json:"timeout,omitempty"`
	Retries        int           `yaml:"retries" json:"retries"`
	// AdaptiveConcurrency gives each model of the kind an adaptive
	// concurrency limit fed by the answers' rate-limit headers and 429s
	// (AdaptiveLimit); unset: on for every kind but mock (AdaptiveOn).
	AdaptiveConcurrency *bool `yaml:"adaptive_concurrency,omitempty" json:"adaptive_concurrency,omitempty"`
	// Prices in USD per million tokens.
	InputPerMTok  float64 `yaml:"input_per_mtok" json:"input_per_mtok"`
	OutputPerMTok float64 `yaml:"output_per_mtok" json:"output_per_mtok"`
	// Options holds kind-specific settings (for example Azure's api_version or
	// Bedrock's region).
	Options map[string]string `yaml:"options" json:"options,omitempty"`
	// Redactor scrubs the provider's errors (the registry's Redacting and
	// the adapters' Excerpt): the run's secret set, handed in by whoever
	// builds the provider (nexus: its run's). Nil: the registry's
	// NewRedactor builds one. Never read from or written to a file.
	Redactor Redactor `yaml:"-" json:"-"`
}

// APIKey returns the key from the environment, or "" when the kind needs none.
func (c KindConfig) APIKey() string {
	if c.APIKeyEnv == "" {
		return ""
	}
	return os.Getenv(c.APIKeyEnv)
}

// Redacted returns a copy whose base URL carries no password
// (https://user:secret@host becomes https://user:xxxxx@host).
func (c KindConfig) Redacted() KindConfig {
	if u, err := url.Parse(c.BaseURL); err == nil && u.User != nil {
		c.BaseURL = u.Redacted()
	}
	return c
}

// Factory builds a provider for a model of one kind.
type Factory func(ref Ref, cfg KindConfig) (Provider, error)

// KindInfo describes a registered kind for `swarm providers list`.
type KindInfo struct {
	Kind        string
	Description string
	// DefaultKeyEnv is the API-key variable used when the config names none;
	// empty when the kind needs no key (mock, local Ollama).
	DefaultKeyEnv string
	// DefaultBaseURL is used when the config names none.
	DefaultBaseURL string
	// Options lists the keys of providers.<kind>.options the kind reads.
	Options []string
	// Check says whether the kind can be used with cfg (its defaults
	// filled in, see Registry.Status) in the environment getenv, and why;
	// nil: CheckServer.
	Check func(kind string, cfg KindConfig, getenv func(string) string) Status
}

// withDefaults fills the kind's default base URL and key variable into
// what cfg leaves empty.
func (k KindInfo) withDefaults(cfg KindConfig) KindConfig {
	if cfg.BaseURL == "" {
		cfg.BaseURL = k.DefaultBaseURL
	}
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = k.DefaultKeyEnv
	}
	return cfg
}

// Status says whether a kind can be used, and what is missing or found
// (`swarm providers list`).
type Status struct {
	Usable bool
	Text   string // "missing OPENAI_API_KEY", "no key needed (server at …)"
}

// CheckServer is the check of a kind that talks to a server: it needs a
// base URL; a key is used when its variable is set.
func CheckServer(kind string, cfg KindConfig, getenv func(string) string) Status {
	switch {
	case cfg.BaseURL == "":
		return Status{Text: "set providers." + kind + ".base_url"}
	case cfg.APIKeyEnv == "" || getenv(cfg.APIKeyEnv) == "":
		return Status{Usable: true, Text: "no key needed (server at " + cfg.BaseURL + ")"}
	default:
		return Status{Usable: true, Text: cfg.APIKeyEnv + " is set"}
	}
}

// CheckKeyedServer is the check of a kind that needs an API key: the key's
// variable must be set, then CheckServer applies.
func CheckKeyedServer(kind string, cfg KindConfig, getenv func(string) string) Status {
	if cfg.APIKeyEnv != "" && getenv(cfg.APIKeyEnv) == "" {
		return Status{Text: "missing " + cfg.APIKeyEnv}
	}
	return CheckServer(kind, cfg, getenv)
}

// Registry maps provider kinds to factories. The zero value is empty and
// ready to use.
type Registry struct {
	// NewRedactor builds the Redactor of a provider whose KindConfig
	// brings none, from the provider's API key (builtin.Registry sets
	// internal/redact's); nil: such a provider's errors are not scrubbed.
	NewRedactor func(values ...string) Redactor

	mu    sync.RWMutex
	kinds map[string]registered
}

type registered struct {
	info    KindInfo
	factory Factory
}

// Register adds a kind. Registering a kind twice replaces it.
func (r *Registry) Register(info KindInfo, f Factory) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kinds == nil {
		r.kinds = map[string]registered{}
	}
	r.kinds[info.Kind] = registered{info: info, factory: f}
}

// Kinds lists registered kinds, sorted by name.
func (r *Registry) Kinds() []KindInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]KindInfo, 0, len(r.kinds))
	for _, k := range r.kinds {
		out = append(out, k.info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// Has reports whether kind is registered.
func (r *Registry) Has(kind string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.kinds[kind]
	return ok
}

// Info returns a kind's description.
func (r *Registry) Info(kind string) (KindInfo, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	k, ok := r.kinds[kind]
	return k.info, ok
}

// New builds the provider for ref with the kind's configuration, filling
// the kind's default base URL and key variable when cfg leaves them empty.
func (r *Registry) New(ref Ref, cfg KindConfig) (Provider, error) {
	r.mu.RLock()
	k, ok := r.kinds[ref.Kind]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownKind, ref.Kind, strings.Join(r.kindNames(), ", "))
	}
	cfg = k.info.withDefaults(cfg)
	// Every error of the provider passes through Redacting, with the
	// run's secret set (which holds the key) or one made for the key.
	if cfg.Redactor == nil && r.NewRedactor != nil {
		cfg.Redactor = r.NewRedactor(cfg.APIKey())
	}
	p, err := k.factory(ref, cfg)
	if err != nil {
		return nil, RedactError(cfg.Redactor, err)
	}
	return Chain(p, Redacting(cfg.Redactor), answeredBy(ref)), nil
}

// answeredBy marks every response of the provider built for ref with ref,
// so that Structured's errors name the model as every adapter's do
// (kind:model, the way the user wrote it), and stamps ref on any *Error
// that names no model.
func answeredBy(ref Ref) Middleware {
	return func(p Provider) Provider {
		return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
			resp, err := p.Complete(ctx, req)
			resp.From = ref
			var pe *Error
			if errors.As(err, &pe) && pe == err && pe.Provider == "" && pe.Model == "" {
				c := *pe
				c.Provider, c.Model = ref.Kind, ref.Model
				err = &c
			}
			return resp, err
		})
	}
}

// Status says whether kind can be used with cfg in the environment getenv:
// the kind's default base URL and key variable fill what cfg leaves empty,
// the base URL loses any password, then the kind's Check decides.
func (r *Registry) Status(kind string, cfg KindConfig, getenv func(string) string) Status {
	info, ok := r.Info(kind)
	if !ok {
		return Status{Text: "not available in this build"}
	}
	check := info.Check
	if check == nil {
		check = CheckServer
	}
	return check(kind, info.withDefaults(cfg).Redacted(), getenv)
}

func (r *Registry) kindNames() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.kinds))
	for n := range r.kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
