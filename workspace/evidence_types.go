package workspace

import (
	"fmt"
	"strings"
)

// Citation is one piece of evidence: lines of a file in the workspace and
// the text the citing agent says they hold. Lines are 1-based and
// inclusive; Path is slash-separated and relative to the workspace root.
type Citation struct {
	Path      string `json:"path" jsonschema:"minLength=1" jsonschema_description:"The cited file, relative to the workspace root, with forward slashes (e.g. internal/auth/session.go)."`
	StartLine int    `json:"start_line" jsonschema:"minimum=1" jsonschema_description:"First cited line, 1-based, as numbered by read_file."`
	EndLine   int    `json:"end_line" jsonschema:"minimum=1" jsonschema_description:"Last cited line, 1-based and inclusive (equal to start_line for one line)."`
	Quote     string `json:"quote" jsonschema:"minLength=1" jsonschema_description:"The cited lines' text, copied exactly from the file (without the line numbers read_file adds)."`
}

// SchemaDescription implements providers.Described.
func (Citation) SchemaDescription() string {
	return "One piece of evidence: lines of a workspace file and their exact text."
}

// Ref is where the citation points, as people write it: path:start-end,
// or path:start for one line.
func (c Citation) Ref() string {
	if c.EndLine == c.StartLine {
		return fmt.Sprintf("%s:%d", c.Path, c.StartLine)
	}
	return fmt.Sprintf("%s:%d-%d", c.Path, c.StartLine, c.EndLine)
}

// State is what checking a citation against the workspace found.
type State string

// Citation states.
const (
	// Verified: the path is a readable file inside the root, the lines
	// exist, and the quote matches them (whitespace-normalised).
	Verified State = "verified"
	// Unverifiable: the citation cannot be checked, e.g. the path is on
	// the deny list, is binary or too large, or the run had no workspace.
	Unverifiable State = "unverifiable"
	// Fabricated: the path does not exist in the root (or escapes it), the
	// lines do not exist, or the quote is not what those lines say.
	Fabricated State = "fabricated"
)

// Counts tallies citations by state. Cited is their number; the three
// states add up to it.
type Counts struct {
	Cited        int `json:"cited"`
	Verified     int `json:"verified"`
	Unverifiable int `json:"unverifiable"`
	Fabricated   int `json:"fabricated"`
}

// Add counts one citation in state s.
func (c *Counts) Add(s State) {
	c.Cited++
	switch s {
	case Verified:
		c.Verified++
	case Unverifiable:
		c.Unverifiable++
	case Fabricated:
		c.Fabricated++
	}
}

// CountChecks tallies checks by their state.
func CountChecks(cs []Check) Counts {
	var n Counts
	for _, c := range cs {
		n.Add(c.State)
	}
	return n
}

// Unverified says what of the tally is not verified, fabricated first:
// "2 fabricated, 1 unverifiable"; "" when nothing is.
func (c Counts) Unverified() string {
	var parts []string
	if c.Fabricated > 0 {
		parts = append(parts, fmt.Sprintf("%d fabricated", c.Fabricated))
	}
	if c.Unverifiable > 0 {
		parts = append(parts, fmt.Sprintf("%d unverifiable", c.Unverifiable))
	}
	return strings.Join(parts, ", ")
}

// Plus returns the sum of two tallies.
func (c Counts) Plus(o Counts) Counts {
	return Counts{Cited: c.Cited + o.Cited, Verified: c.Verified + o.Verified,
		Unverifiable: c.Unverifiable + o.Unverifiable, Fabricated: c.Fabricated + o.Fabricated}
}
