package config_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/providers"
)

func TestResolveRoster(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	honest, sloppy, gpt := ref(t, "mock:honest"), ref(t, "mock:sloppy"), ref(t, "openai:gpt-4.1")
	tests := []struct {
		name      string
		why       string
		provider  providers.Ref
		overrides map[string][]providers.Ref
		want      config.Roster
		wantErr   string
	}{
		{name: "config only", why: "a zero provider means none was given: the config's models serve",
			want: config.Roster{Nexus: honest, SealAuthor: honest, Judge: honest, Commanders: []providers.Ref{honest}, SquadLead: honest,
				Workers: []providers.Ref{honest}, Reviewers: [][2]providers.Ref{{honest, honest}}, Synthesizer: honest}},
		{name: "provider everywhere, overrides win", why: "--model beats --provider for its role; a pool stays a pool, one reviewer pairs with itself",
			provider:  gpt,
			overrides: map[string][]providers.Ref{"judge": {sloppy}, "commander": {honest, sloppy}, "reviewer": {sloppy}},
			want: config.Roster{Nexus: gpt, SealAuthor: gpt, Judge: sloppy, Commanders: []providers.Ref{honest, sloppy}, SquadLead: gpt,
				Workers: []providers.Ref{gpt}, Reviewers: [][2]providers.Ref{{sloppy, sloppy}}, Synthesizer: gpt}},
		{name: "a reviewer pair", why: "two models for reviewer are one mixed pair",
			overrides: map[string][]providers.Ref{"reviewer": {honest, gpt}},
			want: config.Roster{Nexus: honest, SealAuthor: honest, Judge: honest, Commanders: []providers.Ref{honest}, SquadLead: honest,
				Workers: []providers.Ref{honest}, Reviewers: [][2]providers.Ref{{honest, gpt}}, Synthesizer: honest}},
		{name: "unknown role", why: "a typo in --model must not be ignored", overrides: map[string][]providers.Ref{"jduge": {gpt}}, wantErr: "unknown role"},
		{name: "a pool for a single role", why: "the judge is one model", overrides: map[string][]providers.Ref{"judge": {gpt, honest}}, wantErr: "model for judge: want one model, got 2"},
		{name: "three reviewers", why: "a pair is two", overrides: map[string][]providers.Ref{"reviewer": {gpt, honest, sloppy}}, wantErr: "exactly two models"},
		{name: "an unset override", why: "a zero Ref is not a model", overrides: map[string][]providers.Ref{"worker": {{}}}, wantErr: "model for worker: not set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := config.ResolveRoster(cfg, tc.provider, tc.overrides)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// Refs lists each model once, in roster order, from the one walk Seats.
func TestRosterRefsAndSeats(t *testing.T) {
	t.Parallel()
	a, b, c := ref(t, "mock:a"), ref(t, "mock:b"), ref(t, "openai:c")
	r := config.Roster{Nexus: a, SealAuthor: b, Judge: a, Commanders: []providers.Ref{c, a}, SquadLead: b, Workers: []providers.Ref{c},
		Reviewers: [][2]providers.Ref{{b, c}}, Synthesizer: a}
	if d := cmp.Diff([]providers.Ref{a, b, c}, r.Refs()); d != "" {
		t.Errorf("Refs (-want +got)\n%s", d)
	}
	var seats []string
	for role, x := range r.Seats {
		seats = append(seats, role+"="+x.String())
	}
	want := []string{"nexus=mock:a", "seal_author=mock:b", "judge=mock:a", "commander=openai:c", "commander=mock:a", "squad_lead=mock:b",
		"worker=openai:c", "reviewer=mock:b", "reviewer=openai:c", "synthesizer=mock:a"}
	if d := cmp.Diff(want, seats); d != "" {
		t.Errorf("Seats (-want +got)\n%s", d)
	}
}

// Roles and commanders.Domains were exported mutable slices: a caller could
// rewrite the roles --model accepts or the canonical domain order for every
// run in the process. Each call now returns the caller's own copy.
func TestRolesAndDomainsCannotBeChangedByACaller(t *testing.T) {
	t.Parallel()
	r := config.Roles()
	r[0] = "hacked"
	if config.Roles()[0] != "nexus" {
		t.Errorf("Roles() = %v after a caller wrote to its slice", config.Roles())
	}
	d := commanders.Domains()
	d[0] = "hacked"
	if d := commanders.Domains(); d[0] != "architecture" || len(d) != 5 {
		t.Errorf("Domains() = %v after a caller wrote to its slice", d)
	}
}
