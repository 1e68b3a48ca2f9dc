package commanders

import "fmt"

// Leak is one secret (a credential, personal data) found in an agent's
// output and redacted before the output was stored or shown to any other
// agent: what it was and where, never the secret itself.
type Leak struct {
	Source   string `json:"source"`   // "atom:<brief id>" or "bundle"
	Agent    string `json:"agent"`    // the agent that wrote it
	Field    string `json:"field"`    // content, summary, evidence[2], findings[0].detail, ...
	Name     string `json:"name"`     // detector pattern, e.g. aws_access_key_id
	Kind     string `json:"kind"`     // credential, pii or custom
	Severity string `json:"severity"` // low, medium, high or critical
	Offset   int    `json:"offset"`   // byte offset in the field as the agent wrote it
}

// SeverityCritical is the severity that feeds the Shadow Gate.
const SeverityCritical = "critical"

// Redactor returns text with every secret replaced by a placeholder
// ("[REDACTED:<name>]") and what it replaced (Name, Kind, Severity, Offset
// set; the caller fills in where).
type Redactor func(text string) (string, []Leak)

// RedactAtom redacts an atom's content, evidence and error in place and
// records what it replaced in a.Leaks. A nil redactor does nothing.
func RedactAtom(a *AtomResult, redact Redactor) {
	if redact == nil {
		return
	}
	var leaks []Leak
	field := fieldRedactor(redact, "atom:"+a.BriefID, a.AgentID, &leaks)
	field("content", &a.Atom.Content)
	for i := range a.Atom.Evidence {
		field(fmt.Sprintf("evidence[%d].quote", i), &a.Atom.Evidence[i].Quote)
	}
	field("error", &a.Error)
	a.Leaks = append(a.Leaks, leaks...)
}

// RedactBundle redacts every model-written field of a bundle in place and
// returns what it replaced. A nil redactor does nothing.
func RedactBundle(b *Bundle, agent string, redact Redactor) []Leak {
	if redact == nil {
		return nil
	}
	var leaks []Leak
	field := fieldRedactor(redact, "bundle", agent, &leaks)
	field("summary", &b.Summary)
	field("content", &b.Content)
	for i := range b.Findings {
		field(fmt.Sprintf("findings[%d].title", i), &b.Findings[i].Title)
		field(fmt.Sprintf("findings[%d].detail", i), &b.Findings[i].Detail)
		for j := range b.Findings[i].Evidence {
			field(fmt.Sprintf("findings[%d].evidence[%d].quote", i, j), &b.Findings[i].Evidence[j].Quote)
		}
	}
	for i := range b.Evidence {
		field(fmt.Sprintf("evidence[%d].quote", i), &b.Evidence[i].Quote)
	}
	for i := range b.CoveredAspects {
		field(fmt.Sprintf("covered_aspects[%d]", i), &b.CoveredAspects[i])
	}
	return leaks
}

// fieldRedactor returns a function that redacts one field in place and adds
// what it replaced to *leaks, as written by agent in source.
func fieldRedactor(redact Redactor, source, agent string, leaks *[]Leak) func(field string, s *string) {
	return func(field string, s *string) {
		var ls []Leak
		*s, ls = redact(*s)
		for _, l := range ls {
			l.Source, l.Agent, l.Field = source, agent, field
			*leaks = append(*leaks, l)
		}
	}
}

// Critical counts the critical leaks.
func Critical(leaks []Leak) int {
	n := 0
	for _, l := range leaks {
		if l.Severity == SeverityCritical {
			n++
		}
	}
	return n
}
