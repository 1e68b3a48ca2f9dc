package prompts

import (
	"fmt"
	"strings"

	"github.com/swarm-dev/swarm/vocab"
	"github.com/swarm-dev/swarm/workspace"
)

// Ledger marks are lines code writes into a bundle's text for the judge in
// a run with a workspace (inside the bundle's untrusted block): before each
// finding, whether it is supported (at least one verified citation); after
// each citation, what checking it found (verified, with the quote the
// workspace holds; unverifiable; fabricated, with the reason); after the
// findings, how many were supported. Every mark starts with vocab.LedgerTag,
// which agent-written text cannot contain (EscapeLedger), so an agent
// cannot forge a "verified" mark.

// markQuoteMax is how much of a verified quote a mark repeats, in bytes.
const markQuoteMax = 300

// EscapeLedger neutralises every ledger-tag-like sequence in agent-written
// text: each "[" that starts "[ledger" (any case, spaces allowed after the
// bracket) becomes "(". The rest is left as it is.
func EscapeLedger(s string) string {
	if !strings.Contains(s, "[") {
		return s
	}
	tag := strings.TrimSuffix(strings.TrimPrefix(vocab.LedgerTag, "["), "]")
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '[' {
			continue
		}
		rest := strings.TrimLeft(s[i+1:], " \t")
		if len(rest) < len(tag) || !strings.EqualFold(rest[:len(tag)], tag) {
			continue
		}
		b.WriteString(s[last:i])
		b.WriteByte('(')
		last = i + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// markText is agent- or workspace-written text fit for a mark: one line,
// no ledger tag.
func markText(s string) string { return EscapeLedger(strings.Join(strings.Fields(s), " ")) }

// CitationMark is the mark after one citation: what checking it found.
func CitationMark(ck workspace.Check) string {
	ref := markText(ck.Ref())
	switch ck.State {
	case workspace.Verified:
		q := markText(ck.Quote)
		if len(q) > markQuoteMax {
			q = strings.ToValidUTF8(q[:markQuoteMax], "") + "…"
		}
		return fmt.Sprintf("%s verified: the workspace holds these lines at %s: %s", vocab.LedgerTag, ref, quoteJSON(q))
	case workspace.Unverifiable:
		return fmt.Sprintf("%s unverifiable: %s could not be checked (%s)", vocab.LedgerTag, ref, markText(ck.Reason))
	default:
		return fmt.Sprintf("%s fabricated: %s does not match the workspace (%s)", vocab.LedgerTag, ref, markText(ck.Reason))
	}
}

// FindingMark is the mark before finding i (from 1) of n, from its
// checked citations: supported when at least one is verified.
func FindingMark(i, n int, checks []workspace.Check) string {
	c := workspace.CountChecks(checks)
	head := fmt.Sprintf("%s%d of %d: ", vocab.LedgerFinding, i, n)
	switch {
	case c.Cited == 0:
		return head + vocab.LedgerUnsupported + " (cites nothing)"
	case c.Verified > 0:
		return head + vocab.LedgerSupported + fmt.Sprintf(" (%d of %d citations verified)", c.Verified, c.Cited)
	}
	return head + vocab.LedgerUnsupported + fmt.Sprintf(" (0 of %d citations verified: %s)", c.Cited, c.Unverified())
}

// FindingsEnd is the mark after the findings: how many were supported.
func FindingsEnd(supported, n int) string {
	return fmt.Sprintf("%s: %d of %d supported by verified workspace lines", vocab.LedgerEnd, supported, n)
}

// DropUnsupported removes from a bundle's marked text every finding whose
// mark says it is unsupported (from its mark to the next finding's mark or
// the end of the findings): what is left is what the verified ledger
// supports. Text without marks is returned as it is. The mock judge reads
// bundles with it, so it and the marks share one definition of the format.
func DropUnsupported(text string) string {
	if !strings.Contains(text, vocab.LedgerFinding) {
		return text
	}
	lines := strings.Split(text, "\n")
	out := lines[:0:0]
	drop := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, vocab.LedgerFinding):
			_, verdict, _ := strings.Cut(t, ": ")
			drop = strings.HasPrefix(verdict, vocab.LedgerUnsupported)
		case strings.HasPrefix(t, vocab.LedgerEnd):
			drop = false
		}
		if !drop {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
