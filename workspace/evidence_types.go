package workspace

import (
	"fmt"
	"strings"
)

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
