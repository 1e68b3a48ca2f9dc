package nexus_test

import (
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

func TestScoresAdvisory(t *testing.T) {
	t.Parallel()
	r := func(s string) providers.Ref { x, _ := providers.ParseRef(s); return x }
	tests := []struct {
		name          string
		judge, seal   string
		commanders    []string
		want, wantNot []string // substrings that must (not) appear; want nil: ""
	}{
		{"one --provider serves every role: the issue's case", "openai:gpt-4.1", "openai:gpt-4.1", []string{"openai:gpt-4.1"},
			[]string{"scores are advisory", "the judge and the seal author openai:gpt-4.1 share the model family openai", "--model judge=KIND:MODEL", "--model seal_author=KIND:MODEL"}, nil},
		{"another model of the same family judges", "openai:gpt-4.1-mini", "anthropic:claude-sonnet-4", []string{"openai:gpt-4.1"},
			[]string{"the judge openai:gpt-4.1-mini", "--model judge=KIND:MODEL"}, []string{"seal author", "seal_author="}},
		{"one commander of a pool shares the seal author's family", "anthropic:claude-sonnet-4", "openai:gpt-4.1", []string{"mistral:mistral-large", "openai:gpt-4o"},
			[]string{"the seal author openai:gpt-4.1", "openai:gpt-4o"}, []string{"mistral", "the judge"}},
		{"independent judge and seal author", "anthropic:claude-sonnet-4", "anthropic:claude-sonnet-4", []string{"openai:gpt-4.1"}, nil, nil},
		{"mock personas are families of their own", "mock:honest", "mock:honest", []string{"mock:sloppy"}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := nexus.Plan{Roster: config.Roster{Judge: r(tc.judge), SealAuthor: r(tc.seal)}}
			for _, c := range tc.commanders {
				p.Roster.Commanders = append(p.Roster.Commanders, r(c))
			}
			got := p.ScoresAdvisory()
			if tc.want == nil {
				if got != "" {
					t.Errorf("independent roles read advisory: %q", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("%q names %q", got, w)
				}
			}
		})
	}
}
