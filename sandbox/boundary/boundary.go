// Package boundary detects leakage in outbound text (PII, credentials, code
// patterns) and applies boundary policies (per-agent rate limits, a content
// filter, a sensitivity threshold) and the contagion model.
package boundary

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/swarm-dev/swarm/internal/redact"
)

// Severity of a hit.
type Severity int

// Severities, in increasing order.
const (
	Low Severity = iota + 1
	Medium
	High
	Critical
)

var severityNames = map[Severity]string{Low: "low", Medium: "medium", High: "high", Critical: "critical"}

func (s Severity) String() string { return severityNames[s] }

// MarshalText renders the severity by name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	for k, v := range severityNames {
		if v == strings.ToLower(string(b)) {
			*s = k
			return nil
		}
	}
	return fmt.Errorf("unknown severity %q (low, medium, high, critical)", b)
}

// Pattern is one detection rule.
type Pattern struct {
	Name     string   `yaml:"name" json:"name"`
	Kind     string   `yaml:"kind" json:"kind"` // pii, credential, code, custom
	Regexp   string   `yaml:"regexp" json:"regexp"`
	Severity Severity `yaml:"severity" json:"severity"`
	// check, when set, must accept the match (e.g. the Luhn check).
	check func(string) bool
	re    *regexp.Regexp
	// need, when set, lists lower-case strings of which one must occur in
	// the (lower-cased) text for the pattern to match; minDigits is how many
	// digits the text must hold. Both only skip work, never change a result.
	need      []string
	minDigits int
}

// Hit is one detected leak. The excerpt is redacted: never the full secret.
type Hit struct {
	Kind     string   `json:"kind"`
	Name     string   `json:"name"`
	Severity Severity `json:"severity"`
	Offset   int      `json:"offset"`
	Length   int      `json:"length"` // bytes of the match
	Redacted string   `json:"redacted"`
}

// Pattern kinds.
const (
	KindPII        = "pii"
	KindCredential = "credential"
	KindCode       = "code"
	KindCustom     = "custom"
)

// Redactable reports whether a hit must be removed from text before the text
// is stored or shown to another agent: credentials, personal data and custom
// patterns. Code patterns (shell injection, eval, prompt injection) are
// reported, not removed: they are what a reviewer must see.
func (h Hit) Redactable() bool { return h.Kind != KindCode }

// Placeholder is what Redact puts in place of a hit: "[REDACTED:<name>]".
func (h Hit) Placeholder() string { return "[REDACTED:" + h.Name + "]" }

// Config configures a detector.
type Config struct {
	Extra []Pattern `yaml:"extra_patterns" json:"extra_patterns"`
}

// Detector scans text. Safe for concurrent use.
type Detector struct{ patterns []Pattern }

// builtin are the code patterns: credentials and personal data are found by
// the module's one redaction pass (internal/redact: registered secrets,
// gitleaks' default rules, env-style and JSON assignments, private keys,
// e-mail, phone, SSN and card numbers), which Scan runs first.
func builtin() []Pattern {
	return []Pattern{
		{Name: "shell_injection", Kind: KindCode, Regexp: `(?i)(?:;\s*rm\s+-rf\s+/|\$\(curl\s|\|\s*sh\b|\bos\.system\(|\bsubprocess\.(?:call|run|Popen)\()`, Severity: High, need: []string{"-rf", "$(curl", "|", "os.system(", "subprocess."}},
		{Name: "eval_exec", Kind: KindCode, Regexp: `\b(?:eval|exec)\s*\(`, Severity: Medium, need: []string{"eval", "exec"}},
		{Name: "prompt_injection", Kind: KindCode, Regexp: `(?i)ignore (?:all )?(?:previous|prior) instructions`, Severity: High, need: []string{"instructions"}},
	}
}

// NewDetector compiles the built-in and extra patterns.
func NewDetector(c Config) (*Detector, error) {
	ps := builtin()
	for i, p := range c.Extra {
		if p.Name == "" || p.Regexp == "" {
			return nil, fmt.Errorf("extra_patterns[%d]: name and regexp are required", i)
		}
		if p.Severity == 0 {
			p.Severity = Medium
		}
		if p.Kind == "" {
			p.Kind = KindCustom
		}
		ps = append(ps, p)
	}
	for i := range ps {
		re, err := regexp.Compile(ps[i].Regexp)
		if err != nil {
			return nil, fmt.Errorf("pattern %s: %w", ps[i].Name, err)
		}
		ps[i].re = re
	}
	return &Detector{patterns: ps}, nil
}

// Scan returns every hit in text, ordered by offset.
func (d *Detector) Scan(text string) []Hit {
	var hits []Hit
	for _, m := range redact.Find(text, true) {
		h := Hit{Kind: m.Kind, Name: m.Rule, Offset: m.Start, Length: m.End - m.Start, Redacted: excerpt(text[m.Start:m.End])}
		if h.Name == "" {
			h.Name = "configured_secret"
		}
		_ = h.Severity.UnmarshalText([]byte(m.Severity))
		hits = append(hits, h)
	}
	lower, digits := "", -1
	for _, p := range d.patterns {
		if len(p.need) > 0 {
			if lower == "" {
				lower = strings.ToLower(text)
			}
			if !slices.ContainsFunc(p.need, func(n string) bool { return strings.Contains(lower, n) }) {
				continue
			}
		}
		if p.minDigits > 0 {
			if digits < 0 {
				digits = redact.CountDigits(text)
			}
			if digits < p.minDigits {
				continue
			}
		}
		for _, loc := range p.re.FindAllStringIndex(text, -1) {
			m := text[loc[0]:loc[1]]
			if p.check != nil && !p.check(m) {
				continue
			}
			hits = append(hits, Hit{Kind: p.Kind, Name: p.Name, Severity: p.Severity, Offset: loc[0], Length: loc[1] - loc[0], Redacted: excerpt(m)})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Offset < hits[j].Offset })
	return hits
}

// Redact returns text with every redactable hit (Hit.Redactable) replaced
// by its placeholder "[REDACTED:<name>]", and every hit found (redactable or
// not, ordered by offset; offsets refer to the original text). Overlapping
// redactable hits are replaced together, by the placeholder of the first.
func (d *Detector) Redact(text string) (string, []Hit) {
	hits := d.Scan(text)
	var b strings.Builder
	last, replaced := 0, false // end of what has been written from text
	for _, h := range hits {
		if !h.Redactable() {
			continue
		}
		end := h.Offset + h.Length
		if replaced && h.Offset < last { // overlaps a replaced span: extend it
			last = max(last, end)
			continue
		}
		if !replaced {
			b.Grow(len(text))
			replaced = true
		}
		b.WriteString(text[last:h.Offset])
		b.WriteString(h.Placeholder())
		last = end
	}
	if !replaced {
		return text, hits
	}
	b.WriteString(text[last:])
	return b.String(), hits
}

// MaxSeverity of hits (0 for none).
func MaxSeverity(hits []Hit) Severity {
	var s Severity
	for _, h := range hits {
		s = max(s, h.Severity)
	}
	return s
}

// excerpt keeps at most the first 4 characters.
func excerpt(s string) string {
	r := []rune(s)
	if len(r) <= 4 {
		return strings.Repeat("*", len(r))
	}
	return string(r[:4]) + strings.Repeat("*", min(12, len(r)-4))
}

// Policy is a boundary policy.
type Policy struct {
	// RatePerMinute caps outbound messages per agent (0: unlimited).
	RatePerMinute int `yaml:"rate_per_minute" json:"rate_per_minute"`
	// BlockAt blocks content with a hit of at least this severity (0: never).
	BlockAt Severity `yaml:"block_at" json:"block_at"`
	// Sensitivity in [0, 1]: content whose severity score (max severity / 4)
	// exceeds 1 − sensitivity is flagged.
	Sensitivity float64 `yaml:"sensitivity" json:"sensitivity"`
}

// Decision is a policy's verdict on one message.
type Decision struct {
	Allowed bool   `json:"allowed"`
	Flagged bool   `json:"flagged"`
	Reason  string `json:"reason,omitempty"`
	Hits    []Hit  `json:"hits,omitempty"`
}

// Boundary applies a policy with a detector.
type Boundary struct {
	p   Policy
	d   *Detector
	mu  sync.Mutex
	log map[string][]time.Time
	now func() time.Time
}

// NewBoundary returns a boundary.
func NewBoundary(p Policy, d *Detector) *Boundary {
	return &Boundary{p: p, d: d, log: map[string][]time.Time{}, now: time.Now}
}

// Check decides whether agent may send text.
func (b *Boundary) Check(agent, text string) Decision {
	if b.p.RatePerMinute > 0 {
		b.mu.Lock()
		now := b.now()
		var recent []time.Time
		for _, t := range b.log[agent] {
			if now.Sub(t) < time.Minute {
				recent = append(recent, t)
			}
		}
		if len(recent) >= b.p.RatePerMinute {
			b.log[agent] = recent
			b.mu.Unlock()
			return Decision{Allowed: false, Reason: "rate limit"}
		}
		b.log[agent] = append(recent, now)
		b.mu.Unlock()
	}
	hits := b.d.Scan(text)
	sev := MaxSeverity(hits)
	dec := Decision{Allowed: true, Hits: hits}
	if b.p.BlockAt > 0 && sev >= b.p.BlockAt {
		dec.Allowed, dec.Reason = false, "content filter: "+sev.String()+" leak"
	}
	if b.p.Sensitivity > 0 && float64(sev)/4 > 1-b.p.Sensitivity {
		dec.Flagged = true
	}
	return dec
}

// Contagion is the probability that a bad interaction spreads across a
// boundary: r_c·(1 − p)·π for contagion rate r_c, quality p and permeability π.
func Contagion(rc, p, permeability float64) float64 {
	v := rc * (1 - p) * permeability
	return max(0, min(1, v))
}
