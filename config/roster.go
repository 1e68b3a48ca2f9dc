package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/providers"
)

// Roster is the model of every role after config, --provider and --model.
type Roster struct {
	Nexus       providers.Ref      `json:"nexus"`
	SealAuthor  providers.Ref      `json:"seal_author"`
	Judge       providers.Ref      `json:"judge"`
	Commanders  []providers.Ref    `json:"commanders"`
	SquadLead   providers.Ref      `json:"squad_lead"`
	Workers     []providers.Ref    `json:"workers"`
	Reviewers   [][2]providers.Ref `json:"reviewers"`
	Synthesizer providers.Ref      `json:"synthesizer"`
	// Fallbacks are each role's fallback models, in the order they are
	// tried (config fallbacks, then --fallback); absent for a role without.
	Fallbacks map[string][]providers.Ref `json:"fallbacks,omitempty"`
}

// roles lists the roles --model accepts (Roles returns a copy).
var roles = []string{commanders.RoleNexus, commanders.RoleSealAuthor, commanders.RoleJudge, commanders.RoleCommander,
	commanders.RoleSquadLead, commanders.RoleWorker, commanders.RoleReviewer, commanders.RoleSynthesizer}

// Roles lists the roles --model accepts, in roster order. The slice is the
// caller's.
func Roles() []string { return slices.Clone(roles) }

// Seats calls yield with every model of the roster and the role it serves,
// in roster order (nexus, seal author, judge, commanders, squad lead,
// workers, reviewer pairs, synthesizer), a model once per seat it holds.
// It is the one walk over the roster's shape: Refs and the kinds a run needs
// are built from it.
func (r Roster) Seats(yield func(role string, ref providers.Ref) bool) {
	one := func(role string, refs ...providers.Ref) bool {
		for _, x := range refs {
			if !yield(role, x) {
				return false
			}
		}
		return true
	}
	_ = one(commanders.RoleNexus, r.Nexus) &&
		one(commanders.RoleSealAuthor, r.SealAuthor) &&
		one(commanders.RoleJudge, r.Judge) &&
		one(commanders.RoleCommander, r.Commanders...) &&
		one(commanders.RoleSquadLead, r.SquadLead) &&
		one(commanders.RoleWorker, r.Workers...) &&
		func() bool {
			for _, p := range r.Reviewers {
				if !one(commanders.RoleReviewer, p[0], p[1]) {
					return false
				}
			}
			return true
		}() &&
		one(commanders.RoleSynthesizer, r.Synthesizer)
}

// ResolveRoster applies a provider serving every role and per-role
// overrides to the config's models. A zero provider (Kind == "") means none
// was given. overrides maps a role (one of Roles()) to its model: a pool for
// commander and worker, one or two models (a pair) for reviewer, exactly one
// for every other role.
func ResolveRoster(cfg *Config, provider providers.Ref, overrides map[string][]providers.Ref) (Roster, error) {
	m := cfg.Models
	var errs []string
	for _, role := range slices.Sorted(maps.Keys(overrides)) {
		if slices.Index(roles, role) < 0 {
			errs = append(errs, fmt.Sprintf("--model %s=...: unknown role (roles: %s)", role, strings.Join(roles, ", ")))
		}
	}
	// models lists the models role takes: its override, else the provider,
	// else the config's.
	models := func(role string, config ...providers.Ref) []providers.Ref {
		if o, ok := overrides[role]; ok {
			return o
		}
		if !provider.IsZero() {
			return []providers.Ref{provider}
		}
		return config
	}
	single := func(role string, config providers.Ref) providers.Ref {
		xs := models(role, config)
		switch {
		case len(xs) != 1:
			errs = append(errs, fmt.Sprintf("model for %s: want one model, got %d", role, len(xs)))
		case xs[0].IsZero():
			errs = append(errs, fmt.Sprintf("model for %s: not set", role))
		default:
			return xs[0]
		}
		return providers.Ref{}
	}
	pool := func(role string, config []providers.Ref) []providers.Ref {
		xs := models(role, config...)
		if len(xs) == 0 {
			errs = append(errs, "models."+role+"s is empty")
		}
		for _, x := range xs {
			if x.IsZero() {
				errs = append(errs, fmt.Sprintf("model for %s: not set", role))
			}
		}
		return xs
	}
	var r Roster
	r.Nexus = single(commanders.RoleNexus, m.Nexus)
	r.SealAuthor = single(commanders.RoleSealAuthor, m.SealAuthor)
	r.Judge = single(commanders.RoleJudge, m.Judge)
	r.Commanders = pool(commanders.RoleCommander, m.Commanders)
	r.SquadLead = single(commanders.RoleSquadLead, m.SquadLead)
	r.Workers = pool(commanders.RoleWorker, m.Workers)
	r.Synthesizer = single(commanders.RoleSynthesizer, m.Synthesizer)
	var pairs [][]providers.Ref
	if o, ok := overrides[commanders.RoleReviewer]; ok {
		if len(o) == 1 {
			o = []providers.Ref{o[0], o[0]} // one model reviews in pairs with itself
		}
		pairs = [][]providers.Ref{o}
	} else if !provider.IsZero() {
		pairs = [][]providers.Ref{{provider, provider}}
	} else {
		pairs = m.Reviewers
	}
	for _, p := range pairs {
		if len(p) != 2 {
			errs = append(errs, "reviewer pairs need exactly two models")
			continue
		}
		if p[0].IsZero() || p[1].IsZero() {
			errs = append(errs, "model for reviewer: not set")
		}
		r.Reviewers = append(r.Reviewers, [2]providers.Ref{p[0], p[1]})
	}
	if len(r.Reviewers) == 0 {
		errs = append(errs, "no reviewer pairs configured")
	}
	if len(errs) > 0 {
		return r, fmt.Errorf("%w: %s", ErrBadInput, strings.Join(errs, "; "))
	}
	return r, nil
}

// Refs lists every distinct model of the roster, in roster order, then
// the fallback models (by role name, in each role's order), so a run
// builds (and checks) every model it may call before it starts.
func (r Roster) Refs() []providers.Ref {
	seen := map[providers.Ref]bool{}
	var out []providers.Ref
	add := func(x providers.Ref) {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	for _, x := range r.Seats {
		add(x)
	}
	for _, role := range slices.Sorted(maps.Keys(r.Fallbacks)) {
		for _, x := range r.Fallbacks[role] {
			add(x)
		}
	}
	return out
}

// FallbacksFor returns role's fallback models, in the order they are tried
// (nil: none).
func (r Roster) FallbacksFor(role string) []providers.Ref { return r.Fallbacks[role] }

// ResolveFallbacks joins the config's fallbacks and the options' (added
// after them, a model once per role) and checks the roles.
func ResolveFallbacks(config, extra map[string][]providers.Ref) (map[string][]providers.Ref, error) {
	var errs []string
	out := map[string][]providers.Ref{}
	for _, src := range []struct {
		m    map[string][]providers.Ref
		name string
	}{{config, "fallbacks"}, {extra, "--fallback"}} {
		for _, role := range slices.Sorted(maps.Keys(src.m)) {
			if slices.Index(roles, role) < 0 {
				errs = append(errs, fmt.Sprintf("%s %s: unknown role (roles: %s)", src.name, role, strings.Join(roles, ", ")))
				continue
			}
			for _, x := range src.m[role] {
				if x.IsZero() {
					errs = append(errs, fmt.Sprintf("%s %s: model not set", src.name, role))
					continue
				}
				if !slices.Contains(out[role], x) {
					out[role] = append(out[role], x)
				}
			}
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrBadInput, strings.Join(errs, "; "))
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
