package nexus

import (
	"cmp"
	"maps"
	"slices"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/workspace"
)

// This file keeps the refused read-tool calls of a run for report.md's
// Safety section and telemetry.json "refusals": grouped by kind, counted,
// with a few examples each. Paths, patterns and reasons are redacted as in
// the tool_call events.

// maxRefusalsKept bounds the refusals a run keeps in memory; the counts
// (runfiles.ToolStats) are exact whatever the bound.
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
	m.refused = append(m.refused, runfiles.RefusalExample{Agent: a.ID, Role: a.Role, Tool: out.Tool, Path: m.rec.scrub(out.Path),
		Pattern: m.rec.scrub(out.Pattern), Reason: m.rec.scrub(out.Reason), Kind: kind})
}

// refusalGroups groups the refusals kept by kind. Examples are chosen in a
// fixed order (agent, tool, path, pattern, reason: the same run gives the
// same examples whichever agent finished first), one per distinct path or
// pattern. Nil when nothing was refused.
func (m *meter) refusalGroups() []runfiles.RefusalGroup {
	m.mu.Lock()
	rs, counts := slices.Clone(m.refused), maps.Clone(m.refusedKinds)
	m.mu.Unlock()
	return groupRefusals(rs, counts)
}

// groupRefusals groups rs by kind; counts are the exact counts per kind
// (rs may have been capped).
func groupRefusals(rs []runfiles.RefusalExample, counts map[string]int) []runfiles.RefusalGroup {
	if len(counts) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b runfiles.RefusalExample) int {
		return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Pattern, b.Pattern), cmp.Compare(a.Reason, b.Reason))
	})
	byKind := map[string]*runfiles.RefusalGroup{}
	var kinds []string
	for k, n := range counts {
		byKind[k] = &runfiles.RefusalGroup{Kind: k, Count: n, Examples: []runfiles.RefusalExample{}}
		kinds = append(kinds, k)
	}
	for _, r := range rs {
		g := byKind[r.Kind]
		if g == nil {
			continue
		}
		if len(g.Examples) < refusalExamples && !slices.ContainsFunc(g.Examples, func(x runfiles.RefusalExample) bool {
			return x.Path == r.Path && x.Pattern == r.Pattern
		}) {
			g.Examples = append(g.Examples, r)
		}
	}
	slices.SortFunc(kinds, workspace.CompareRefusalKinds)
	out := make([]runfiles.RefusalGroup, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, *byKind[k])
	}
	return out
}
