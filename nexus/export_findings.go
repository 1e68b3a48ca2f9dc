package nexus

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report"
	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/swarm-dev/swarm/internal/slug"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/workspace"
)

// This file writes the finding cards (findings.go) beside report.md:
// findings.csv, one row per card of every group, and findings.sarif, SARIF
// 2.1.0 for code-scanning tools (github.com/owenrumney/go-sarif/v3), with
// the recommended cards' verified locations only.

// writeExports writes findings.csv (when a bundle exists) and
// findings.sarif (when the run checked its evidence: without a workspace
// no location is verified). A write error is kept by the run directory
// (rundir.Dir.Err) and fails the run at its end (ErrWrite), like report.md's.
func (r *deps) writeExports(res *Result) {
	if len(res.Bundles) == 0 {
		return
	}
	cards := findingCards(res)
	if b, err := findingsCSV(cards); err == nil {
		_ = r.dir.WriteFile(runfiles.FindingsCSV, b, 0o644)
	}
	if res.Evidence == nil {
		return
	}
	if b, err := findingsSARIF(cards); err == nil {
		_ = r.dir.WriteFile(runfiles.FindingsSARIF, b, 0o644)
	}
}

// csvHeader is findings.csv's first row.
var csvHeader = []string{"group", "title", "priority", "effort", "domains", "gates", "cited", "verified", "unverifiable", "fabricated",
	"locations", "defects", "explanation"}

// findingsCSV renders one row per card. Counts are empty when the run did
// not check its evidence (not measured, never 0). A cell a spreadsheet
// would read as a formula (=, +, -, @ first) is prefixed with '.
func findingsCSV(cards []findingCard) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write(csvHeader); err != nil {
		return nil, err
	}
	for _, c := range cards {
		var gates, details, locs []string
		for _, s := range c.Sources {
			gates = append(gates, s.Domain+"="+orDash(s.Gate))
			if d := oneLine(s.Detail); d != "" {
				details = append(details, s.Domain+": "+d)
			}
		}
		for _, k := range c.Cites {
			locs = append(locs, k.Ref()+" ("+string(k.State)+")")
		}
		counts := []string{"", "", "", ""}
		if c.measured {
			counts = []string{fmt.Sprint(c.Support.Cited), fmt.Sprint(c.Support.Verified), fmt.Sprint(c.Support.Unverifiable), fmt.Sprint(c.Support.Fabricated)}
		}
		row := append([]string{c.Group, c.Title, c.Priority, strings.Join(c.Efforts, "/"), strings.Join(c.Domains, ";"), strings.Join(gates, ";")},
			counts...)
		row = append(row, strings.Join(locs, ";"), strings.Join(c.Defects, ";"), strings.Join(details, " | "))
		for i := range row {
			row[i] = csvSafe(row[i])
		}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// csvSafe keeps a cell from being read as a formula by a spreadsheet.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return "'" + s
	}
	return s
}

// sarifLevel maps a finding's priority to a SARIF level.
func sarifLevel(priority string) string {
	switch priority {
	case "high":
		return "error"
	case "medium":
		return "warning"
	}
	return "note"
}

// findingsSARIF renders the recommended cards (bundles that passed the
// gate, at least one verified citation) as SARIF 2.1.0: one rule and one
// result per card, the result's locations its verified citations with the
// quoted lines as the region's snippet. Fabricated and unverifiable
// citations, unsupported findings and work that did not pass the gate are
// left out: a code-scanning tool shows every location as real.
func findingsSARIF(cards []findingCard) ([]byte, error) {
	rep := report.NewV210Report()
	run := sarif.NewRunWithInformationURI("swarm", "https://github.com/swarm-dev/swarm")
	ids := map[string]int{}
	for _, c := range cards {
		if c.Group != groupRecommended {
			continue
		}
		var verified []workspace.Check
		for _, k := range c.Cites {
			if k.State == workspace.Verified {
				verified = append(verified, k)
			}
		}
		if len(verified) == 0 {
			continue
		}
		id := "swarm/" + cmpOrSlug(c.Title)
		ids[id]++
		if n := ids[id]; n > 1 {
			id = fmt.Sprintf("%s-%d", id, n)
		}
		var details []string
		gates := map[string]string{}
		for _, s := range c.Sources {
			if d := oneLine(s.Detail); d != "" {
				details = append(details, s.Domain+": "+d)
			}
			gates[s.Domain] = orDash(s.Gate)
		}
		run.AddRule(id).WithDescription(c.Title).WithName(slug.Make(c.Title))
		msg := c.Title
		if len(details) > 0 {
			msg += "\n" + strings.Join(details, "\n")
		}
		props := sarif.NewPropertyBag().Add("priority", c.Priority).Add("effort", strings.Join(c.Efforts, "/")).
			Add("domains", c.Domains).Add("gates", gates).
			Add("support", map[string]int{"cited": c.Support.Cited, "verified": c.Support.Verified,
				"unverifiable": c.Support.Unverifiable, "fabricated": c.Support.Fabricated})
		if len(c.Defects) > 0 {
			props.Add("defects", c.Defects)
		}
		res := run.CreateResultForRule(id).WithLevel(sarifLevel(c.Priority)).WithMessage(sarif.NewTextMessage(msg)).WithProperties(props)
		for _, k := range verified {
			region := sarif.NewSimpleRegion(k.StartLine, k.EndLine)
			if q := strings.TrimSpace(k.Quote); q != "" {
				region.WithSnippet(sarif.NewArtifactContent().WithText(k.Quote))
			}
			res.AddLocation(sarif.NewLocationWithPhysicalLocation(sarif.NewPhysicalLocation().
				WithArtifactLocation(sarif.NewSimpleArtifactLocation(k.Path).WithURIBaseID("%SRCROOT%")).
				WithRegion(region)))
		}
	}
	rep.AddRun(run)
	var b bytes.Buffer
	if err := rep.PrettyWrite(&b); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// cmpOrSlug is the slug of title, or "finding" when it has none.
func cmpOrSlug(title string) string {
	if s := slug.Make(title); s != "" {
		return s
	}
	return "finding"
}
