package nexus

import (
	"fmt"
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
}

// Roles lists the roles --model accepts.
var Roles = []string{commanders.RoleNexus, commanders.RoleSealAuthor, commanders.RoleJudge, commanders.RoleCommander,
	commanders.RoleSquadLead, commanders.RoleWorker, commanders.RoleReviewer, commanders.RoleSynthesizer}

// ResolveRoster applies --provider and --model overrides to the config's models.
func ResolveRoster(cfg *Config, provider string, overrides map[string]string) (Roster, error) {
	m := cfg.Models
	pick := func(role, v string) string {
		if o, ok := overrides[role]; ok {
			return o
		}
		if provider != "" {
			return provider
		}
		return v
	}
	var errs []string
	parse := func(role, s string) providers.Ref {
		r, err := providers.ParseRef(s)
		if err != nil {
			errs = append(errs, fmt.Sprintf("model for %s: %v", role, err))
		}
		return r
	}
	for role := range overrides {
		if indexOf(Roles, role) < 0 {
			errs = append(errs, fmt.Sprintf("--model %s=...: unknown role (roles: %s)", role, strings.Join(Roles, ", ")))
		}
	}
	var r Roster
	r.Nexus = parse("nexus", pick(commanders.RoleNexus, m.Nexus))
	r.SealAuthor = parse("seal_author", pick(commanders.RoleSealAuthor, m.SealAuthor))
	r.Judge = parse("judge", pick(commanders.RoleJudge, m.Judge))
	r.SquadLead = parse("squad_lead", pick(commanders.RoleSquadLead, m.SquadLead))
	r.Synthesizer = parse("synthesizer", pick(commanders.RoleSynthesizer, m.Synthesizer))
	pool := func(role string, xs []string) []providers.Ref {
		if o, ok := overrides[role]; ok {
			xs = strings.Split(o, ",")
		} else if provider != "" {
			xs = []string{provider}
		}
		var out []providers.Ref
		for _, x := range xs {
			out = append(out, parse(role, x))
		}
		if len(out) == 0 {
			errs = append(errs, "models."+role+"s is empty")
		}
		return out
	}
	r.Commanders = pool(commanders.RoleCommander, m.Commanders)
	r.Workers = pool(commanders.RoleWorker, m.Workers)
	var pairs [][]string
	if o, ok := overrides[commanders.RoleReviewer]; ok {
		pairs = [][]string{strings.SplitN(o+","+o, ",", 3)[:2]}
		if strings.Contains(o, ",") {
			pairs = [][]string{strings.SplitN(o, ",", 2)}
		}
	} else if provider != "" {
		pairs = [][]string{{provider, provider}}
	} else {
		pairs = m.Reviewers
	}
	for _, p := range pairs {
		if len(p) != 2 {
			errs = append(errs, "reviewer pairs need exactly two models")
			continue
		}
		r.Reviewers = append(r.Reviewers, [2]providers.Ref{parse("reviewer", p[0]), parse("reviewer", p[1])})
	}
	if len(r.Reviewers) == 0 {
		errs = append(errs, "no reviewer pairs configured")
	}
	if len(errs) > 0 {
		return r, fmt.Errorf("%w: %s", ErrBadInput, strings.Join(errs, "; "))
	}
	return r, nil
}

// Refs lists every distinct model of the roster.
func (r Roster) Refs() []providers.Ref {
	seen := map[string]bool{}
	var out []providers.Ref
	add := func(x providers.Ref) {
		if !seen[x.String()] {
			seen[x.String()] = true
			out = append(out, x)
		}
	}
	add(r.Nexus)
	add(r.SealAuthor)
	add(r.Judge)
	for _, c := range r.Commanders {
		add(c)
	}
	add(r.SquadLead)
	for _, w := range r.Workers {
		add(w)
	}
	for _, p := range r.Reviewers {
		add(p[0])
		add(p[1])
	}
	add(r.Synthesizer)
	return out
}
