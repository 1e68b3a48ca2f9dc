package nexus

import (
	"fmt"
	"strings"
	"time"

	"github.com/swarm-dev/swarm/shadow"
)

func (r *runState) actionReport(res *Result) string {
	var b strings.Builder
	p := r.plan
	fmt.Fprintf(&b, "# Action report: %s\n\n", p.MissionTitle)
	fmt.Fprintf(&b, "Run `%s` · scale %s · personality %s · seed %d\n\n", p.RunID, p.Scale, p.Personality, p.Seed)
	a := res.Aggregate
	switch res.Status {
	case StatusInterrupted:
		fmt.Fprintf(&b, "> **Partial run**: the run was interrupted in phase %s; this report covers what existed (%s).\n\n", res.Phase, a.counts())
	case StatusFailed:
		fmt.Fprintf(&b, "> **Run failed** in phase %s (%s): %s\n\n", res.Phase, res.FailureClass, oneLine(res.Error))
	case StatusInvalid:
		fmt.Fprintf(&b, "> **Shadow scoring INVALID**: %s. No bundle was judged (0 of %d scored).\n\n", res.ShadowReason, a.Planned)
	case StatusPartial:
		fmt.Fprintf(&b, "> **Partial run**: %s; bundles marked *salvaged* were built from the workers' finished results without the commander's assembly.\n\n", res.Error)
	case StatusIncomplete:
		fmt.Fprintf(&b, "> **Incomplete run**: %s.\n\n", res.Error)
	}
	t := res.Telemetry
	b.WriteString("## Metrics\n\n| metric | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| agents (launched / planned) | %d / %d |\n| LLM calls | %d |\n| tokens (in/out) | %d / %d |\n| cost | $%.4f of $%.2f |\n| wall time | %s |\n",
		t.AgentsLaunched.Total, t.Agents.Total, t.Calls, t.InputTokens, t.OutputTokens, t.CostUSD, p.CostCeilingUSD, time.Duration(t.WallMS)*time.Millisecond)
	switch {
	case res.ShadowValid && a.Median != nil && a.Mean != nil:
		fmt.Fprintf(&b, "| Shadow Score (median / mean) | %.1f%% %s / %.1f%% (%d of %d scored) |\n", *a.Median, shadow.Level(a.Level).Indicator(), *a.Mean, a.Scored, a.Planned)
	case res.Status != StatusInvalid:
		fmt.Fprintf(&b, "| Shadow Score | none: %s |\n", a.counts())
	}
	fmt.Fprintf(&b, "| sealed hash | `%s` |\n\n", res.SealedHash)

	if s := res.Synthesis; s != nil {
		fmt.Fprintf(&b, "## The #1 action\n\n%s\n\n", s.TopAction)
		if s.Summary != "" {
			fmt.Fprintf(&b, "%s\n\n", s.Summary)
		}
		b.WriteString("## Risk per domain\n\n| domain | risk | note |\n|---|---|---|\n")
		for _, k := range s.Risks {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", k.Domain, k.Level, oneLine(k.Note))
		}
		b.WriteString("\n")
		list(&b, "Quick wins", s.QuickWins)
		list(&b, "Deep work", s.DeepWork)
		b.WriteString("## Conflicts and resolutions\n\n")
		if len(s.Conflicts) == 0 {
			b.WriteString("None reported.\n\n")
		}
		for _, c := range s.Conflicts {
			fmt.Fprintf(&b, "- **%s**: %s\n", c.Topic, c.Resolution)
		}
		if len(s.Conflicts) > 0 {
			b.WriteString("\n")
		}
		list(&b, "Gaps", s.Gaps)
	} else {
		b.WriteString("## Synthesis\n\nNo synthesis was produced (see events.jsonl for the reason).\n\n")
	}

	b.WriteString("## Shadow results\n\n")
	if !res.ShadowValid {
		fmt.Fprintf(&b, "> **Shadow scoring invalid/advisory**: %s\n\n", res.ShadowReason)
	}
	b.WriteString("| bundle | model | initial | final | level | hardening | velocity | gate | review | tier | formula | in synthesis |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, o := range res.Bundles {
		if o.Failed {
			fmt.Fprintf(&b, "| %s | %s | – | – | – | – | – | failed (%s) | – | – | – | no |\n", o.ID, o.Model, o.FailureClass)
			continue
		}
		initial, final, level, gate, cycles, vel := "–", "–", "–", "–", "–", "–"
		if o.Initial != nil {
			initial = fmt.Sprintf("%.1f", o.Initial.Score)
		}
		if o.ShadowScore != nil {
			final = fmt.Sprintf("%.1f", *o.ShadowScore)
			level = shadow.Level(o.Level).Indicator() + " " + o.Level
		}
		if o.Gate != nil {
			gate = o.Gate.Action
		}
		if o.Hardening != nil {
			cycles = fmt.Sprint(o.Hardening.Cycles)
			vel = fmt.Sprintf("%.1f", o.Hardening.Velocity)
		}
		partial := ""
		if o.Salvaged {
			partial = " (salvaged)"
		}
		fmt.Fprintf(&b, "| %s%s | %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %.2f | %v |\n",
			o.ID, partial, o.Model, initial, final, level, cycles, vel, gate, o.Review.Score, o.Tier, o.FormulaScore, yesNo(o.InSynthesis))
	}
	b.WriteString("\n")
	// The gate lets moderate bundles proceed only with their report attached
	// and a warning.
	for _, o := range res.Bundles {
		if o.Gate != nil && o.Gate.Action == shadow.ActionWarn && o.ShadowScore != nil {
			fmt.Fprintf(&b, "> ⚠️ **Shadow Gate warning**: `%s` proceeds with Shadow Score %.1f%% (%s); its report is attached: `reports/%s.json`.\n\n", o.ID, *o.ShadowScore, o.Level, o.ID)
		}
	}
	if r.opts.Config != nil && res.Sandbox != nil {
		if s, ok := res.Sandbox.(interface{ Markdown() string }); ok {
			b.WriteString(s.Markdown())
		}
	}
	b.WriteString("## Agent tally\n\n| role | launched | planned |\n|---|---|---|\n")
	pl, la := t.Agents, t.AgentsLaunched
	fmt.Fprintf(&b, "| nexus | %d | %d |\n| commanders | %d | %d |\n| squad leads | %d | %d |\n| workers | %d | %d |\n| reviewers | %d | %d |\n| **total** | **%d** | **%d** |\n\n",
		la.Nexus, pl.Nexus, la.Commanders, pl.Commanders, la.SquadLeads, pl.SquadLeads, la.Workers, pl.Workers, la.Reviewers, pl.Reviewers, la.Total, pl.Total)
	if len(t.FailureClasses) > 0 {
		b.WriteString("## Failures\n\n| class | count |\n|---|---|\n")
		for _, k := range sortedKeys(t.FailureClasses) {
			fmt.Fprintf(&b, "| %s | %d |\n", k, t.FailureClasses[k])
		}
		b.WriteString("\n")
	}
	return b.String()
}

func list(b *strings.Builder, title string, xs []string) {
	fmt.Fprintf(b, "## %s\n\n", title)
	if len(xs) == 0 {
		b.WriteString("None.\n\n")
		return
	}
	for _, x := range xs {
		fmt.Fprintf(b, "- %s\n", oneLine(x))
	}
	b.WriteString("\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}
