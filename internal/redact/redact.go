// Package redact is the one redaction pass of the module: every text a run
// writes (transcripts, journal, events, bundles, capsules, decomposition,
// the sealed envelope's criteria, reviews, result, report, evidence,
// findings, telemetry) and every error a provider returns goes through it.
//
// It finds, in one pass:
//
//   - the secret values of a run (a Secrets value built per run: every API
//     key a provider was built with, every api_key_env the config names);
//   - gitleaks' default rule set (github.com/zricethezav/gitleaks/v8's
//     embedded gitleaks.toml, loaded through its own config package, so the
//     list of credential formats is the one gitleaks maintains), with each
//     rule's keywords, secret group, entropy floor and allowlists;
//   - a few rules of our own that gitleaks' set leaves out or keeps too
//     strict for text that is not a file: env-style and JSON assignments to
//     a name that says password, secret, token or key (DB_PASSWORD=...,
//     AWS_SECRET_ACCESS_KEY=...), bearer tokens, "sk-" keys of any length,
//     api-key headers and ?key= parameters, a private key block whose END
//     line is missing, and a private key's body seen without its BEGIN/END
//     lines (grep's "path:12:MIIEv..." output);
//   - optionally personal data (Find with PII): e-mail addresses, phone
//     numbers, US social security numbers, card numbers (Luhn-checked).
//
// A secret becomes "[REDACTED:<rule>]" ("[REDACTED]" for a registered value);
// only the secret is replaced, not the name or quotes around it, so JSON
// stays JSON. The pass is idempotent: a placeholder never matches again.
//
// Cost: a keyword prefilter (one Aho-Corasick walk over the lower-cased text
// with every rule's keywords) decides which rules' regular expressions run
// at all, and texts already seen clean are remembered (by a keyed hash) and
// not scanned again.
package redact

import (
	"math"
	"slices"
	"strings"
	"unsafe"
)

// Redacted replaces a registered secret value.
const Redacted = "[REDACTED]"

// placeholderPrefix starts every placeholder; a match that starts with it
// is a placeholder already, never a secret.
const placeholderPrefix = "[REDACTED"

// Placeholder is what a secret found by rule becomes.
func Placeholder(rule string) string { return "[REDACTED:" + rule + "]" }

// MinSecretLen is the shortest registered secret that is scrubbed verbatim:
// a shorter value (a placeholder such as "x") would blank out ordinary
// words. Credential-shaped strings are scrubbed whatever their source.
const MinSecretLen = 6

// Kinds of what a rule finds.
const (
	KindCredential = "credential"
	KindPII        = "pii"
)

// Severities a rule gives what it finds (the names sandbox/boundary uses).
const (
	SeverityMedium   = "medium"
	SeverityHigh     = "high"
	SeverityCritical = "critical"
)

// Match is one secret found in a text: the rule that found it and the
// byte span of the secret itself (not of the name or quotes around it).
type Match struct {
	Rule     string
	Kind     string
	Severity string
	Start    int
	End      int
}

// Secrets is a set of secret values to scrub (the API keys one run was
// given: every api_key_env its config names, every key a provider of it
// was built with) and the pass that scrubs them with every credential
// shape. A set is a value built per run and handed to whatever writes for
// that run; two runs with different sets never see each other's secrets.
// It is immutable (With makes a new set) and safe for concurrent use.
// The nil set has no values: it scrubs credential shapes only.
type Secrets struct {
	values []string // longest first
	// clean and cleanPII remember the texts this set found clean.
	clean, cleanPII *cleanSet
}

// NewSecrets returns the set of values. Values shorter than MinSecretLen
// and surrounding blanks are ignored.
func NewSecrets(values ...string) *Secrets {
	return (*Secrets)(nil).With(values...)
}

// With returns a new set: s's values and values (as NewSecrets takes
// them). It returns s itself when values add nothing.
func (s *Secrets) With(values ...string) *Secrets {
	cur := s.Values()
	next := slices.Clone(cur)
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < MinSecretLen || slices.Contains(next, v) {
			continue
		}
		next = append(next, v)
	}
	if s != nil && len(next) == len(cur) {
		return s
	}
	// Longest first, so a key that contains another is replaced whole.
	slices.SortFunc(next, func(a, b string) int { return len(b) - len(a) })
	return &Secrets{values: next, clean: newCleanSet(), cleanPII: newCleanSet()}
}

// Values are the set's values, longest first.
func (s *Secrets) Values() []string {
	if s == nil {
		return nil
	}
	return s.values
}

func (s *Secrets) cleanFor(pii bool) *cleanSet {
	if s == nil || s.clean == nil {
		return noValuesClean(pii)
	}
	if pii {
		return s.cleanPII
	}
	return s.clean
}

// String returns t with every secret of s and every credential removed
// (no personal data: see Text). It is the pass every writer uses.
func (s *Secrets) String(t string) string { return s.Text(t, false) }

// Redact is String: it makes a set a providers.Redactor.
func (s *Secrets) Redact(t string) string { return s.Text(t, false) }

// Text returns t with every secret of s and every credential removed
// and, with pii, every piece of personal data.
func (s *Secrets) Text(t string, pii bool) string {
	ms := s.Find(t, pii)
	if len(ms) == 0 {
		return t
	}
	out := Apply(t, ms)
	if len(out) >= minCached {
		s.cleanFor(pii).add(out) // the pass is idempotent: out is clean
	}
	return out
}

// Bytes is String for a file's or a line's bytes; b itself is returned when
// there is nothing to remove.
func (s *Secrets) Bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	// Scanned in place, not copied: the pass keeps nothing of the text
	// (offsets and keyed hashes only), and a text with something to
	// remove comes back as a new string.
	t := unsafe.String(unsafe.SliceData(b), len(b))
	if r := s.String(t); r != t {
		return []byte(r)
	}
	return b
}

// Find returns every secret in t (s's values, credentials and, with pii,
// personal data), ordered by start; spans may overlap.
//
// A text of minCached bytes or more found clean is remembered (a keyed
// hash, per set), and found clean again without a scan.
func (s *Secrets) Find(t string, pii bool) []Match {
	if t == "" {
		return nil
	}
	long := len(t) >= minCached
	if long && s.cleanFor(pii).has(t) {
		return nil
	}
	var ms []Match
	for _, v := range s.Values() {
		for off := 0; ; {
			i := strings.Index(t[off:], v)
			if i < 0 {
				break
			}
			ms = append(ms, Match{Rule: "", Kind: KindCredential, Severity: SeverityCritical, Start: off + i, End: off + i + len(v)})
			off += i + len(v)
		}
	}
	ms = rules().find(t, pii, ms)
	if len(ms) == 0 {
		if long {
			s.cleanFor(pii).add(t)
		}
		return nil
	}
	slices.SortStableFunc(ms, func(a, b Match) int { return a.Start - b.Start })
	return ms
}

// String returns s with every credential removed: the pass of a set with
// no values ((*Secrets)(nil).String).
func String(s string) string { return (*Secrets)(nil).String(s) }

// Text is (*Secrets)(nil).Text: credentials and, with pii, personal data.
func Text(s string, pii bool) string { return (*Secrets)(nil).Text(s, pii) }

// Bytes is (*Secrets)(nil).Bytes.
func Bytes(b []byte) []byte { return (*Secrets)(nil).Bytes(b) }

// Find is (*Secrets)(nil).Find.
func Find(s string, pii bool) []Match { return (*Secrets)(nil).Find(s, pii) }

// Apply replaces the spans of ms (ordered by start, as Find returns them)
// in s by their placeholders; overlapping spans are replaced together, by
// the placeholder of the first.
func Apply(s string, ms []Match) string {
	if len(ms) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i, m := range ms {
		if i > 0 && m.Start < last { // overlaps what was replaced: extend it
			last = max(last, m.End)
			continue
		}
		b.WriteString(s[last:m.Start])
		if m.Rule == "" {
			b.WriteString(Redacted)
		} else {
			b.WriteString(Placeholder(m.Rule))
		}
		last = m.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// shannon is the Shannon entropy of s in bits per byte.
func shannon(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
