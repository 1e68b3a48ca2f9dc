package nexus

import (
	"cmp"
	"maps"
	"slices"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runs"
	"github.com/swarm-dev/swarm/workspace"
)

// This file keeps the refused read-tool calls of a run for report.md's
// Safety section and telemetry.json "refusals": grouped by kind, counted,
// with a few examples each. Paths, patterns and reasons are redacted as in
// the tool_call events.

// maxRefusalsKept bounds the refusals a run keeps in memory; the counts
// (runs.ToolStats) are exact whatever the bound.
const maxRefusalsKept = 10000

// refusalExamples is how many examples of each kind are reported.
const refusalExamples = 3

// noteRefusal keeps a refused tool call of agent a (a call that was not
// refused is ignored).
func (m *meter) noteRefusal(a commanders.Agent, out workspace.Outcome) {
	if out.OK {
		return
	}
	kind := cmp.Or(out.Refusal, "other")
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refusedKinds == nil {
		m.refusedKinds = map[string]int{}
	}
	m.refusedKinds[kind]++
	if len(m.refused) >= maxRefusalsKept {
		return
	}
	m.refused = append(m.refused, runs.RefusalExample{Agent: a.ID, Role: a.Role, Tool: out.Tool, Path: providers.Redact(out.Path),
		Pattern: providers.Redact(out.Pattern), Reason: providers.Redact(out.Reason), Kind: kind})
}

// refusalGroups groups the refusals kept by kind. Examples are chosen in a
// fixed order (agent, tool, path, pattern, reason: the same run gives the
// same examples whichever agent finished first), one per distinct path or
// pattern. Nil when nothing was refused.
func (m *meter) refusalGroups() []runs.RefusalGroup {
	m.mu.Lock()
	rs, counts := slices.Clone(m.refused), maps.Clone(m.refusedKinds)
	m.mu.Unlock()
	return groupRefusals(rs, counts)
}

// groupRefusals groups rs by kind; counts are the exact counts per kind
// (rs may have been capped).
func groupRefusals(rs []runs.RefusalExample, counts map[string]int) []runs.RefusalGroup {
	if len(counts) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b runs.RefusalExample) int {
		return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Pattern, b.Pattern), cmp.Compare(a.Reason, b.Reason))
	})
	byKind := map[string]*runs.RefusalGroup{}
	var kinds []string
	for k, n := range counts {
		byKind[k] = &runs.RefusalGroup{Kind: k, Count: n, Examples: []runs.RefusalExample{}}
		kinds = append(kinds, k)
	}
	for _, r := range rs {
		g := byKind[r.Kind]
		if g == nil {
			continue
		}
		if len(g.Examples) < refusalExamples && !slices.ContainsFunc(g.Examples, func(x runs.RefusalExample) bool {
			return x.Path == r.Path && x.Pattern == r.Pattern
		}) {
			g.Examples = append(g.Examples, r)
		}
	}
	slices.SortFunc(kinds, workspace.CompareRefusalKinds)
	out := make([]runs.RefusalGroup, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, *byKind[k])
	}
	return out
}
