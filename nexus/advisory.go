package nexus

import (
	"fmt"
	"slices"
	"strings"

	"github.com/swarm-dev/swarm/providers"
)

// ScoresAdvisory says why the run's Shadow Scores are advisory: the judge or
// the seal author is of the same model family (providers.Family, as the
// seal author's envelope records it) as a commander whose bundles they
// write criteria for and judge, and a model may favour its own family's
// work. It names who shares which family and how to pick another judge;
// "" when the judge and the seal author are both of other families than
// every commander (the scores are independent). The briefing and the top of
// report.md show it.
func (p Plan) ScoresAdvisory() string {
	if why := p.advisoryReason(); why != "" {
		return "scores are advisory: " + why
	}
	return ""
}

// advisoryReason is ScoresAdvisory without its "scores are advisory: "
// lead: who shares which family with the commanders and how to pick
// another judge ("" when independent). report.md puts it under its own
// heading.
func (p Plan) advisoryReason() string {
	fams := map[string][]string{} // family -> the commanders' models of it
	for _, c := range p.Roster.Commanders {
		f := providers.Family(c)
		if !slices.Contains(fams[f], c.String()) {
			fams[f] = append(fams[f], c.String())
		}
	}
	type seat struct {
		name, flag string
		ref        providers.Ref
	}
	var shared []seat
	for _, s := range []seat{{"the judge", "judge", p.Roster.Judge}, {"the seal author", "seal_author", p.Roster.SealAuthor}} {
		if !s.ref.IsZero() && len(fams[providers.Family(s.ref)]) > 0 {
			shared = append(shared, s)
		}
	}
	if len(shared) == 0 {
		return ""
	}
	var who, flags []string
	if len(shared) == 2 && shared[0].ref == shared[1].ref {
		f := providers.Family(shared[0].ref)
		who = append(who, fmt.Sprintf("the judge and the seal author %s share the model family %s with the commanders (%s)", shared[0].ref, f, strings.Join(fams[f], ", ")))
	} else {
		for _, s := range shared {
			f := providers.Family(s.ref)
			who = append(who, fmt.Sprintf("%s %s shares the model family %s with the commanders (%s)", s.name, s.ref, f, strings.Join(fams[f], ", ")))
		}
	}
	for _, s := range shared {
		flags = append(flags, "--model "+s.flag+"=KIND:MODEL")
	}
	return fmt.Sprintf("%s, and a model may favour its own family's work; for independent scores give them a model of another family: %s",
		strings.Join(who, "; "), strings.Join(flags, " "))
}
