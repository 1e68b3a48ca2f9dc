package redact

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// digitGroup is the test that decides whether the PII number rules run
// at all: a number they would find must never be in a smaller group than
// their minDigits, and prose full of scattered digits must not pass.
func TestDigitGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       int
	}{
		{"no digits", "a runbook with no numbers", 0},
		{"scattered digits are separate groups", "ss-250 ran 328 calls in 1.8 s on 2 cores", 3},
		{"phone with country code and parentheses: ') ' and ' (' between digits", "call +1 (555) 123-4567 now", 11},
		{"phone with dots", "555.123.4567", 10},
		{"social security number", "ssn 123-45-6789.", 9},
		{"card with blanks", "4111 1111 1111 1111", 16},
		{"card with dashes", "4111-1111-1111-1111", 16},
		{"three separators apart is another group", "123 - 4567", 4},
		{"a letter ends a group", "12345a67890", 5},
		{"separators before the first digit do not count", " (-123", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if d := cmp.Diff(tc.want, digitGroup(tc.text)); d != "" {
				t.Errorf("digitGroup(%q) (-want +got):\n%s", tc.text, d)
			}
		})
	}
}

// Whatever the number rules find, its digits form a group at least as
// large as the rule's minDigits: the gate never hides a match.
func TestDigitGroupNeverHidesANumber(t *testing.T) {
	t.Parallel()
	texts := []string{
		"call +44 (020) 7946-0958 or (555) 123-4567 or 555 123 4567 or +1-555-123-4567",
		"ssn 078-05-1120 card 4111 1111 1111 1111 card 5500-0000-0000-0004 card 340000000000009",
		"(555)123-4567 and 555-1234567 and +1 555.123.4567",
	}
	rs := rules()
	for _, text := range texts {
		for i := range rs.rules {
			r := &rs.rules[i]
			if r.minDigits == 0 {
				continue
			}
			for _, loc := range r.regexp().FindAllStringIndex(text, -1) {
				if got := digitGroup(text[loc[0]:loc[1]]); got < r.minDigits {
					t.Errorf("%s found %q, a group of %d digits, below its minDigits %d", r.id, text[loc[0]:loc[1]], got, r.minDigits)
				}
			}
		}
		if got, want := len(Find(text, true)), 0; got == want {
			t.Errorf("nothing found in %q", text)
		}
	}
}
