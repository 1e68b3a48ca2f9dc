package textsafe

import "testing"

// The cases once written for shadow's report sanitiser: every control,
// format character and invalid byte becomes a visible escape.
func TestPrintableEscapesTerminalControls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ why, in, want string }{
		{"plain text and tabs stay", "expired token\tok", "expired token\tok"},
		{"unicode letters stay", "délai ✅ 🔴", "délai ✅ 🔴"},
		{"ESC sequences (colour, clear screen) become visible", "\x1b[31mred\x1b[2J", `\x1b[31mred\x1b[2J`},
		{"OSC window title with BEL", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"C1 CSI", "a\u009bb", `a\u009bb`},
		{"line breaks cannot forge a new line", "a\nFailures (0):\rb", `a\nFailures (0):\rb`},
		{"bidi override and zero-width space", "abc\u202edef\u200b", `abc\u202edef\u200b`},
		{"DEL and NUL", "a\x7fb\x00", `a\x7fb\x00`},
		{"invalid UTF-8 bytes", "a\xffb", `a\xffb`},
	} {
		if got := Printable(tc.in); got != tc.want {
			t.Errorf("%s: Printable(%q) = %q, want %q", tc.why, tc.in, got, tc.want)
		}
	}
}

// The cases once written for the YAML error printer (the same function now).
func TestPrintable(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, why string }{
		{"plain ünïcode\ttab", "plain ünïcode\ttab", "printable text and tabs are kept"},
		{"a\x1b[31mred", `a\x1b[31mred`, "ESC starts a terminal sequence"},
		{"line\nbreak\r", `line\nbreak\r`, "a newline in a key would forge a second error line"},
		{"bad\xffbyte", `bad\xffbyte`, "invalid UTF-8 is shown as its byte"},
		{"c1\u009bcsi", `c1\u009bcsi`, "C1 CSI is a one-byte escape on some terminals"},
		{"bidi\u202eevil", `bidi\u202eevil`, "bidi overrides reorder what is shown"},
		{"del\x7f", `del\x7f`, "DEL"},
	}
	for _, tc := range tests {
		if got := Printable(tc.in); got != tc.want {
			t.Errorf("%s: Printable(%q) = %q, want %q", tc.why, tc.in, got, tc.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"fits: unchanged", "abc", 3, "abc"},
		{"cut with a note of the bytes cut", "abcdef", 4, "abcd [... 2 bytes cut]"},
		{"never splits a rune (é is two bytes)", "aé", 2, "a [... 2 bytes cut]"},
	}
	for _, tc := range tests {
		if got := Truncate(tc.in, tc.max); got != tc.want {
			t.Errorf("%s: Truncate(%q, %d) = %q, want %q", tc.name, tc.in, tc.max, got, tc.want)
		}
	}
}

// PrintableLines keeps the lines we wrote and escapes what is inside them.
func TestPrintableLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ why, in, want string }{
		{"plain lines stay", "error: x\nSee 'swarm run --help'.\n", "error: x\nSee 'swarm run --help'.\n"},
		{"controls inside a line are escaped", "open /tmp/x\x1b]0;pwned\x07: no such file\nhint", `open /tmp/x\x1b]0;pwned\x07: no such file` + "\nhint"},
		{"a carriage return cannot overwrite the line", "ok\rFAKE", `ok\rFAKE`},
		{"C1 and bidi", "a\u009bb\n\u202ec", `a\u009bb` + "\n" + `\u202ec`},
	} {
		if got := PrintableLines(tc.in); got != tc.want {
			t.Errorf("%s: PrintableLines(%q) = %q, want %q", tc.why, tc.in, got, tc.want)
		}
	}
}
