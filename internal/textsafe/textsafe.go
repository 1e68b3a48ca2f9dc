// Package textsafe makes user- or model-written text safe to print on a
// terminal, in a log line or in a text report. It imports nothing of ours.
package textsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable makes user- or model-written text safe to print on a terminal or
// in a text report: every control character (C0 but tab, DEL, C1), every
// invisible format character (bidirectional overrides, zero-width marks)
// and every invalid UTF-8 byte is replaced by a visible escape such as
// \x1b or \u202e, so nothing written by a test file or a model can move the
// cursor, recolour the screen, retitle the window or reorder what a reader
// sees. Line breaks become \n: one record stays one line. JSON output does
// not need it (the encoder escapes controls) and keeps the text faithful.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// PrintableLines is Printable for text of several lines that we wrote (an
// error with a hint below it, a summary, a report): each line is made
// Printable and the line breaks (\n) between them stay. A carriage return
// is still escaped, so no line can overwrite another.
func PrintableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Printable(l)
	}
	return strings.Join(lines, "\n")
}

func unsafeRune(r rune) bool {
	if r == '\t' {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// Truncate returns s cut to at most max bytes at a rune boundary, with a
// note of how many bytes were cut; s itself when it fits.
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" [... %d bytes cut]", len(s)-cut)
}
