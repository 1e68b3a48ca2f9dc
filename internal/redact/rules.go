package redact

import (
	"fmt"
	"hash/maphash"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
	gitleaks "github.com/zricethezav/gitleaks/v8/config"
)

// rule is one detector: a regular expression whose secret group is the
// secret (gitleaks' rules and ours), or a scanner of its own (a key body).
type rule struct {
	id, kind, severity string
	re                 *regexp.Regexp
	// src is the expression of a gitleaks rule, compiled (into re) the
	// first time a text holds one of its keywords: most of gitleaks' ~220
	// rules never see one in a run, and compiling them all costs more CPU
	// than a run's redaction.
	src  string
	once *sync.Once
	// anchored is re matching only at the start of its input: an
	// assignment-shaped rule's expression starts with the name's keyword,
	// so it is tried only where a keyword starts.
	anchored *regexp.Regexp
	group    int // the secret's group; 0: the first non-empty group, or the whole match
	entropy  float64
	keywords []string // lower case; none: the rule always runs
	// check, when set, must accept the secret (and the match around it).
	check func(secret, match string) bool
	// allow lists what is not a secret (gitleaks' allowlists); non-nil for
	// gitleaks' rules only, which gitleaks' global allowlists apply to too.
	allow []*allowlist
	// scan, when set, replaces re: it returns the secrets' spans.
	scan func(s string) [][2]int
	pii  bool
	// minDigits skips the rule when no group of digits in the text holds
	// so many (PII: a phone, social security or card number; see
	// digitGroup).
	minDigits int
	// assign marks a rule of the shape "name, then = or : (or =>, :=, ||,
	// ...), then the secret" within a few characters of its keyword: it
	// runs only around a keyword that such an operator follows (assignNear).
	assign bool
	// need, when set, is a string the text must contain for the rule to
	// match (a cheaper test than its keywords).
	need string
	// namePrefix: gitleaks' expression started with the lazy name prefix
	// (namePrefix, removed from src): what it matched is found again by
	// walking back over the name (nameStart) for the allowlists that test
	// the whole match.
	namePrefix bool
	// wordStart: a keyword counts only where a word starts (the expression
	// starts with \b and the keyword).
	wordStart bool
}

// namePrefix starts gitleaks' generated expressions: up to 50 name
// characters before the keyword, matched lazily. It decides where a match
// starts, never what the secret group holds, and it keeps up to 50 threads
// of Go's regexp engine alive at every position: it is removed, and the
// expression runs from a little before each keyword instead.
const namePrefix = `(?i)[\w.-]{0,50}?`

// assignShape is the part of gitleaks' generated expressions that puts an
// assignment operator right after the name.
const assignShape = `(?:[ \t\w.-]{0,20})[\s'"]{0,3}`

// assignNear is how far after a keyword's end an assignment's operator may
// be (the rest of the name, 20 characters, 3 quotes or blanks: a bound, not
// the exact grammar); assignBefore and assignAfter are the window around
// the keyword that holds the whole match (a name of up to 50 characters
// before it, a secret of up to 150 after the operator, and margin).
const (
	assignNear   = 48
	assignBefore = 56  // the name prefix's 50 characters, and margin
	assignAfter  = 176 // blanks and quotes (5), the secret (150), its end, and margin
)

// ruleSet is every rule and the keyword prefilter.
type ruleSet struct {
	rules  []rule
	words  *keywords
	byWord [][]int // keyword index -> rules that need it
	always []int   // rules without keywords
	global []*allowlist
}

// rules is compiled once, on first use (gitleaks' ~220 expressions take a
// few milliseconds to compile).
var rules = sync.OnceValue(func() *ruleSet {
	rs, err := compile()
	if err != nil {
		panic("redact: built-in rules: " + err.Error())
	}
	return rs
})

// gitleaksRules reads gitleaks' default rule set: the gitleaks.toml its
// config package embeds (the one the gitleaks CLI uses by default),
// decoded into its ViperConfig. gitleaks decodes it with viper (TOML into a
// generic map, then the map into the struct); go-toml, the TOML decoder
// viper itself uses, decodes it straight into the struct (keys matched to
// fields whatever their case, as viper matches them), to the same value
// (TestTOMLRulesAsViper) in a fraction of the time: every run loads it
// once, on its first text. The expressions are compiled later, each on
// first use.
func gitleaksRules() (gitleaks.ViperConfig, error) {
	var vc gitleaks.ViperConfig
	if err := toml.Unmarshal([]byte(gitleaks.DefaultConfig), &vc); err != nil {
		return vc, fmt.Errorf("gitleaks default config: %w", err)
	}
	return vc, nil
}

// allowlist is one of gitleaks' allowlists: what it says is not a secret.
type allowlist struct {
	and         bool // every criterion must hold (else any one)
	pathOrSHA   bool // it also names paths or commits, which a text has none of
	regexTarget string
	src         []string
	once        sync.Once
	re          *regexp.Regexp // src, joined
	stopWords   []string       // lower case
	rules       []string       // the rules a global list is for (none: all)
}

func newAllowlist(condition string, commits, paths []string, target string, regexes, stopWords, rules []string) *allowlist {
	a := &allowlist{and: strings.EqualFold(condition, "AND"), pathOrSHA: len(commits) > 0 || len(paths) > 0,
		regexTarget: target, src: regexes, rules: rules}
	for _, w := range stopWords {
		a.stopWords = append(a.stopWords, strings.ToLower(w))
	}
	return a
}

func (a *allowlist) regexAllowed(target string) bool {
	a.once.Do(func() {
		if len(a.src) > 0 {
			a.re = regexp.MustCompile(`(?:` + strings.Join(a.src, `)|(?:`) + `)`)
		}
	})
	return a.re != nil && a.re.MatchString(target)
}

func (a *allowlist) stopWord(secret string) bool {
	if len(a.stopWords) == 0 {
		return false
	}
	lower := strings.ToLower(secret)
	for _, w := range a.stopWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

func compile() (*ruleSet, error) {
	vc, err := gitleaksRules()
	if err != nil {
		return nil, err
	}
	rs := &ruleSet{}
	globals := vc.Allowlists
	// gitleaks' own default config still writes its global allowlist as
	// [allowlist], which decodes into the deprecated field.
	//lint:ignore SA1019 the default gitleaks.toml uses it
	if global := vc.AllowList; global != nil {
		globals = append(globals, global)
	}
	for _, g := range globals {
		rs.global = append(rs.global, newAllowlist(g.Condition, g.Commits, g.Paths, g.RegexTarget, g.Regexes, g.StopWords, g.TargetRules))
	}
	rs.rules = append(rs.rules, ours()...)
	for i := range rs.rules {
		if r := &rs.rules[i]; r.assign {
			r.anchored = regexp.MustCompile(`^(?:` + r.re.String() + `)`)
		}
	}
	for _, r := range vc.Rules {
		// A rule with no expression matches paths only; a skip-report rule
		// only ever serves as another rule's required part.
		if r.Regex == "" || r.SkipReport {
			continue
		}
		sev := SeverityCritical
		if r.ID == "generic-api-key" {
			// It guesses from a name and the value's entropy: high, not
			// critical, so a false positive cannot quarantine a bundle.
			sev = SeverityHigh
		}
		kws := make([]string, len(r.Keywords))
		for i, k := range r.Keywords {
			kws[i] = strings.ToLower(k)
		}
		allow := []*allowlist{}
		lists := r.Allowlists
		if r.AllowList != nil {
			lists = append(lists, r.AllowList)
		}
		for _, l := range lists {
			allow = append(allow, newAllowlist(l.Condition, l.Commits, l.Paths, l.RegexTarget, l.Regexes, l.StopWords, nil))
		}
		nr := rule{id: r.ID, kind: KindCredential, severity: sev, src: r.Regex, once: new(sync.Once), group: r.SecretGroup,
			entropy: r.Entropy, keywords: kws, allow: allow, assign: strings.Contains(r.Regex, assignShape)}
		if rest, ok := strings.CutPrefix(r.Regex, namePrefix); ok && nr.assign {
			nr.src, nr.namePrefix = "(?i)"+rest, true
		}
		switch r.ID {
		case "jwt":
			nr.need = ".ey" // its keyword "ey" is in every other word
		case "vault-service-token":
			nr.wordStart = true // its keyword "s." ends every other sentence
		}
		rs.rules = append(rs.rules, nr)
	}
	index := map[string]int{}
	var words []string
	for i, r := range rs.rules {
		if len(r.keywords) == 0 {
			rs.always = append(rs.always, i)
			continue
		}
		for _, k := range r.keywords {
			w, ok := index[k]
			if !ok {
				w = len(words)
				index[k] = w
				words = append(words, k)
				rs.byWord = append(rs.byWord, nil)
			}
			rs.byWord[w] = append(rs.byWord[w], i)
		}
	}
	rs.words = newKeywords(words)
	return rs, nil
}

// regexp returns the rule's expression, compiled on first use.
func (r *rule) regexp() *regexp.Regexp {
	if r.once != nil {
		r.once.Do(func() {
			r.re = regexp.MustCompile(r.src)
			if r.assign {
				r.anchored = regexp.MustCompile(`^(?:` + r.src + `)`)
			}
		})
	}
	return r.re
}

// keywords finds which of a set of lower-case ASCII keywords occur in a
// text, whatever its case, and where they end, in one pass: each keyword is
// filed under its first two bytes (one-byte keywords apart), so the pass
// costs one table look-up per byte and a comparison only where a keyword's
// first two bytes are.
type keywords struct {
	words  []string
	lists  [][]int         // lists[bucket[k]-1]: the keywords whose first two bytes are k
	bucket [1 << 16]uint16 // first two bytes -> 1 + index in lists; 0: none
	single [256][]int      // one-byte keywords
	first  [256]bool       // a keyword starts with this byte
}

// lowerTable maps each byte to its ASCII lower case.
var lowerTable = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

func newKeywords(words []string) *keywords {
	k := &keywords{words: words}
	for i, w := range words {
		if w == "" {
			continue
		}
		k.first[w[0]] = true
		if len(w) == 1 {
			k.single[w[0]] = append(k.single[w[0]], i)
			continue
		}
		key := uint16(w[0])<<8 | uint16(w[1])
		if k.bucket[key] == 0 {
			k.lists = append(k.lists, nil)
			k.bucket[key] = uint16(len(k.lists))
		}
		k.lists[k.bucket[key]-1] = append(k.lists[k.bucket[key]-1], i)
	}
	return k
}

// each calls fn with every keyword occurrence in s (compared in lower
// case): the keyword's index and the offset just past it.
func (k *keywords) each(s string, fn func(word, end int)) {
	for i := 0; i < len(s); i++ {
		c := lowerTable[s[i]]
		if !k.first[c] {
			continue
		}
		for _, w := range k.single[c] {
			fn(w, i+1)
		}
		if i+1 >= len(s) {
			continue
		}
		l := k.bucket[uint16(c)<<8|uint16(lowerTable[s[i+1]])]
		if l == 0 {
			continue
		}
		for _, w := range k.lists[l-1] {
			if kw := k.words[w]; len(s)-i >= len(kw) && equalFoldASCII(s[i:i+len(kw)], kw) {
				fn(w, i+len(kw))
			}
		}
	}
}

// equalFoldASCII says whether s, lower-cased (ASCII), is kw.
func equalFoldASCII(s, kw string) bool {
	for j := 0; j < len(kw); j++ {
		if lowerTable[s[j]] != kw[j] {
			return false
		}
	}
	return true
}

// ours are the rules gitleaks' set leaves out or keeps too strict for text
// that is not a source file.
func ours() []rule {
	const (
		// quote is an optional quote, escaped or not (JSON in JSON).
		quote = `(?:\\?["'])?`
		// op is an assignment: =, :, :=, =>, with blanks around.
		op = `[ \t]*(?::=|=>|[:=])[ \t]*`
		// namePost is the rest of the name after the word that says what
		// follows (the name's start is not needed to find the value).
		namePost = `[A-Za-z0-9_.-]*`
		// value is what is assigned: no blank, quote, escape or bracket.
		value = "([^\\s\"'\\\\,;&<>\\[\\]{}()`]{4,})"
	)
	assign := func(words string) *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:` + words + `)` + namePost + quote + op + quote + value)
	}
	return []rule{
		{id: "password_assignment", kind: KindCredential, severity: SeverityCritical,
			re:       assign(`passw(?:or)?d|passwd|pwd|passphrase`),
			keywords: []string{"passw", "pwd", "passphrase"}, check: passwordValue, assign: true},
		{id: "api_key_assignment", kind: KindCredential, severity: SeverityCritical,
			re:       assign(`secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth[_-]?key|signing[_-]?key|credentials?|key`),
			keywords: []string{"secret", "token", "key", "credential"}, check: tokenValue, assign: true},
		{id: "bearer_token", kind: KindCredential, severity: SeverityHigh,
			re: regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9._~+/=-]{6,})`), keywords: []string{"bearer"},
			check: bearerValue},
		{id: "aws_access_key_id", kind: KindCredential, severity: SeverityCritical,
			re: regexp.MustCompile(`\b((?:AKIA|ASIA)[0-9A-Z]{16})\b`), keywords: []string{"akia", "asia"}},
		{id: "openai_style_key", kind: KindCredential, severity: SeverityCritical,
			re: regexp.MustCompile(`\b(sk-[A-Za-z0-9_-]{16,})`), keywords: []string{"sk-"}},
		{id: "google_api_key", kind: KindCredential, severity: SeverityCritical,
			re: regexp.MustCompile(`(AIza[0-9A-Za-z_-]{20,})`), keywords: []string{"aiza"}},
		{id: "api_key_header", kind: KindCredential, severity: SeverityCritical,
			re:       regexp.MustCompile(`(?i)(?:x-)?(?:api|goog-api|subscription)[-_]?key\\?["']?\s*[:=]\s*\\?["']?([^\s"'\\,;&}]{6,})`),
			keywords: []string{"api-key", "api_key", "apikey", "subscription-key", "subscription_key"}, assign: true},
		{id: "key_parameter", kind: KindCredential, severity: SeverityCritical,
			re: regexp.MustCompile(`(?i)[?&]key=([^\s&"'#\\]+)`), keywords: []string{"key="}},
		// The whole key block: up to its END line, or, when the END line is
		// missing (a truncated key is still a key), to the end of the text
		// or of the JSON string it is in.
		{id: "private_key", kind: KindCredential, severity: SeverityCritical,
			re:       regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?:[^"\\]|\\[^"])*)`),
			keywords: []string{"private key"}},
		{id: "private_key_body", kind: KindCredential, severity: SeverityCritical, scan: keyBody},
		{id: "email", kind: KindPII, severity: SeverityMedium, pii: true,
			re: regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b`), keywords: []string{"@"}},
		{id: "phone", kind: KindPII, severity: SeverityMedium, pii: true, minDigits: 10,
			re: regexp.MustCompile(`(?:\+\d{1,3}[ .-]?)?\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4}\b`)},
		{id: "us_ssn", kind: KindPII, severity: SeverityHigh, pii: true, minDigits: 9,
			re: regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`)},
		{id: "card_number", kind: KindPII, severity: SeverityCritical, pii: true, minDigits: 13,
			re: regexp.MustCompile(`\b(?:\d[ -]?){13,19}\b`), check: func(s, _ string) bool { return luhn(s) }},
	}
}

// passwordValue accepts what follows a password's name: four characters or
// more that are not a placeholder (***, xxxx, $VAR).
func passwordValue(v, _ string) bool {
	return !placeholderValue(v)
}

// bearerValue accepts what follows "Bearer": a token with a digit or a
// punctuation mark, or 16 characters or more ("Bearer tokens" is prose).
func bearerValue(v, _ string) bool {
	return len(v) >= 16 || hasDigit(v) || strings.ContainsAny(v, "._~+/=-")
}

// tokenValue accepts what follows a secret's, token's or key's name: eight
// characters or more with a letter and a digit (so max_tokens: 4096, a
// key: value of words, or a number are left alone).
func tokenValue(v, _ string) bool {
	return len(v) >= 8 && hasDigit(v) && hasLetter(v) && !placeholderValue(v)
}

func placeholderValue(v string) bool {
	if v[0] == '$' || v[0] == '%' {
		return true
	}
	for i := 1; i < len(v); i++ {
		if v[i] != v[0] {
			return false
		}
	}
	return true // one character repeated: ****, xxxx
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}

// find appends the secrets the rules find in s to ms.
//
// JSON inside JSON (a model's raw answer in a log line) escapes the quotes
// that end a secret: the rules see each \" as a blank and a quote (the
// same length, so every offset holds), as they would in the decoded text.
func (rs *ruleSet) find(s string, pii bool, ms []Match) []Match {
	if strings.Contains(s, `\"`) {
		s = strings.ReplaceAll(s, `\"`, ` "`)
	}
	active := make([]bool, len(rs.rules))
	for _, i := range rs.always {
		active[i] = true
	}
	// near[i]: the windows around rule i's keywords that an operator
	// follows (assignment-shaped rules only): from the name's possible
	// start to past the longest secret after the operator.
	var near map[int][][2]int
	rs.words.each(s, func(w, kwEnd int) {
		var (
			a    assignment
			seen bool
		)
		for _, i := range rs.byWord[w] {
			r := &rs.rules[i]
			if r.wordStart && kwEnd > len(rs.words.words[w]) && isWord(s[kwEnd-len(rs.words.words[w])-1]) {
				continue
			}
			if !r.assign {
				active[i] = true
				continue
			}
			if !seen {
				a, seen = assignmentAfter(s, kwEnd), true
			}
			if r.admits(a) {
				active[i] = true
				if near == nil {
					near = map[int][][2]int{}
				}
				win := [2]int{kwEnd - len(rs.words.words[w]), min(len(s), a.op+assignAfter)}
				if p := near[i]; len(p) == 0 || p[len(p)-1] != win {
					near[i] = append(p, win)
				}
			}
		}
	})
	digits := -1
	for i := range rs.rules {
		r := &rs.rules[i]
		if !active[i] || (r.pii && !pii) {
			continue
		}
		if r.minDigits > 0 {
			if digits < 0 {
				digits = digitGroup(s)
			}
			if digits < r.minDigits {
				continue
			}
		}
		if r.need != "" && !strings.Contains(s, r.need) {
			continue
		}
		if r.scan != nil {
			for _, sp := range r.scan(s) {
				ms = append(ms, Match{Rule: r.id, Kind: r.kind, Severity: r.severity, Start: sp[0], End: sp[1]})
			}
			continue
		}
		for _, loc := range r.matches(s, near[i]) {
			start, end := secretSpan(r, loc)
			if start < 0 || start == end {
				continue
			}
			from := loc[0]
			if r.namePrefix {
				from = nameStart(s, from)
			}
			secret, match := s[start:end], s[from:loc[1]]
			if strings.HasPrefix(s[start:], placeholderPrefix) {
				continue // redacted already
			}
			if r.entropy > 0 && shannon(secret) <= r.entropy {
				continue
			}
			if r.check != nil && !r.check(secret, match) {
				continue
			}
			if r.allow != nil && (allowed(rs.global, r.id, s, secret, match, loc) || allowed(r.allow, r.id, s, secret, match, loc)) {
				continue
			}
			ms = append(ms, Match{Rule: r.id, Kind: r.kind, Severity: r.severity, Start: start, End: end})
		}
	}
	return ms
}

// matches returns r's matches in s (FindAllStringSubmatchIndex); for an
// assignment-shaped rule, only in the windows around the keywords an
// operator follows (wins, in order), overlapping ones merged.
func (r *rule) matches(s string, wins [][2]int) [][]int {
	re := r.regexp()
	if !r.assign {
		return re.FindAllStringSubmatchIndex(s, -1)
	}
	var out [][]int
	for _, win := range wins {
		lo, hi := win[0], win[1]
		if len(out) > 0 && lo < out[len(out)-1][1] {
			continue // inside the last match
		}
		// Let the window end where a token ends, not inside one.
		for hi < len(s) && isToken(s[hi]) {
			hi++
		}
		// Where the keyword starts, and where the name it is part of
		// starts (an expression's name may start before its keyword).
		loc := r.anchored.FindStringSubmatchIndex(s[lo:hi])
		if n := nameStart(s, lo); loc == nil && n < lo && (len(out) == 0 || n >= out[len(out)-1][1]) {
			if loc = r.anchored.FindStringSubmatchIndex(s[n:hi]); loc != nil {
				lo = n
			}
		}
		if loc == nil {
			continue
		}
		{
			for j := range loc {
				if loc[j] >= 0 {
					loc[j] += lo
				}
			}
			out = append(out, loc)
		}
	}
	return out
}

// nameStart is where gitleaks' lazy name prefix would have started a match
// found at i: up to 50 name characters ([\w.-]) back.
func nameStart(s string, i int) int {
	for n := 0; n < 50 && i > 0 && (isWord(s[i-1]) || s[i-1] == '.' || s[i-1] == '-'); n++ {
		i--
	}
	return i
}

// isWord says whether c is a word character (\w).
func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// isToken says whether c can be part of a secret's token.
func isToken(c byte) bool {
	return isB64(c) || c == '_' || c == '-' || c == '.' || c == '='
}

// assignment is what follows a keyword when an assignment operator does:
// the value after it, measured two ways.
type assignment struct {
	ok bool // an operator follows the keyword
	op int  // where the operator is
	// distinct is how many different characters the value's first token
	// (gitleaks' secret characters: letters, digits, _ . = + / -) has; a
	// secret of entropy e needs more than 2^e of them.
	distinct, tokenLen int
	// plain: the token is letters, _ . - only (gitleaks' generic rule
	// allows such a value: a word, a name).
	plain bool
	// valueLen, letter and digit describe the value up to a blank, quote,
	// escape, comma, semicolon or bracket (our assignment rules' value).
	valueLen      int
	letter, digit bool
}

// assignmentAfter says whether an assignment operator (= : > | ,) follows
// the keyword that ends at i, past the rest of its name, blanks and quotes,
// and measures the value after it. It is a necessary condition of every
// assignment-shaped rule, cheaper than its expression.
func assignmentAfter(s string, i int) assignment {
	var a assignment
	for end := min(len(s), i+assignNear); i < end && !a.ok; i++ {
		switch c := s[i]; c {
		case '=', ':', '>', '|', ',':
			a.ok, a.op = true, i
		case ' ', '\t', '\n', '\r', '\f', '\v', '"', '\'', '\\', '_', '.', '-':
		default:
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return a
			}
		}
	}
	if !a.ok {
		return a
	}
	// Past more operator characters, quotes and blanks (at most 10).
	for end := min(len(s), i+10); i < end; i++ {
		if !strings.ContainsRune(":=>|?,`'\" \t\r\n\\", rune(s[i])) {
			break
		}
	}
	var seen [256]bool
	token := true
	a.plain = true
	for j := i; j < len(s) && j-i < 160; j++ {
		c := s[j]
		if token && (isB64(c) || c == '_' || c == '.' || c == '=' || c == '-') {
			a.tokenLen++
			a.plain = a.plain && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '.' || c == '-')
			if !seen[c] {
				seen[c] = true
				a.distinct++
			}
		} else {
			token = false
		}
		if strings.IndexByte(" \t\r\n\"'\\,;&<>[]{}()`", c) >= 0 {
			break
		}
		a.valueLen++
		a.letter = a.letter || (c|0x20 >= 'a' && c|0x20 <= 'z')
		a.digit = a.digit || (c >= '0' && c <= '9')
	}
	return a
}

// admits says whether an assignment can hold a secret for r: its value is
// long enough and varied enough for r's check and entropy floor.
func (r *rule) admits(a assignment) bool {
	if !a.ok {
		return false
	}
	switch r.id {
	case "password_assignment":
		return a.valueLen >= 4
	case "api_key_assignment":
		return a.valueLen >= 8 && a.letter && a.digit
	case "api_key_header":
		return a.valueLen >= 6
	case "generic-api-key":
		// Entropy over e bits needs more than 2^e distinct characters; its
		// secret is made of the token's characters and maybe a leading =;
		// a value of letters, _ . - only is on its allowlist.
		return !a.plain && a.distinct+1 > int(math.Exp2(r.entropy))
	}
	return true
}

// secretSpan is the span of the secret in a match: the rule's secret
// group, else its first non-empty group, else the whole match.
func secretSpan(r *rule, loc []int) (int, int) {
	groups := len(loc)/2 - 1
	if r.group > 0 && r.group <= groups {
		return loc[2*r.group], loc[2*r.group+1]
	}
	for g := 1; g <= groups; g++ {
		if loc[2*g] >= 0 && loc[2*g+1] > loc[2*g] {
			return loc[2*g], loc[2*g+1]
		}
	}
	return loc[0], loc[1]
}

// allowed says whether one of the allowlists lets the finding pass: its
// expressions (on the secret, the match or the line, as the list says) or
// its stop words (on the secret). A list that also needs a path or a
// commit to match (AND) never applies: a text has neither.
func allowed(lists []*allowlist, rule, s, secret, match string, loc []int) bool {
	for _, a := range lists {
		if len(a.src) == 0 && len(a.stopWords) == 0 {
			continue
		}
		if len(a.rules) > 0 && !slices.Contains(a.rules, rule) {
			continue
		}
		target := secret
		switch a.regexTarget {
		case "match":
			target = match
		case "line":
			target = lineOf(s, loc[0], loc[1])
		}
		re := len(a.src) > 0 && a.regexAllowed(target)
		sw := a.stopWord(secret)
		if a.and {
			if a.pathOrSHA {
				continue
			}
			if (len(a.src) == 0 || re) && (len(a.stopWords) == 0 || sw) {
				return true
			}
			continue
		}
		if re || sw {
			return true
		}
	}
	return false
}

func lineOf(s string, start, end int) string {
	i := strings.LastIndexByte(s[:start], '\n') + 1
	j := strings.IndexByte(s[end:], '\n')
	if j < 0 {
		return s[i:]
	}
	return s[i : end+j]
}

// digitGroup is the number of digits in the largest group of digits in s:
// digits with at most two of " .-()" between each and the next. Every
// number the PII rules look for is one such group (a card: 13 to 19
// digits, one blank or dash apart at most; a phone: "+1 (555) 123-4567",
// ") " or " (" at most between two digits; a social security number:
// 3-2-4), so a text whose largest group is smaller than a rule's
// minDigits cannot match it: a cheaper test than the text's digit count,
// which prompts full of sizes and dates pass.
func digitGroup(s string) int {
	best, cur, gap := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if gap > 2 {
				cur = 0
			}
			cur++
			best = max(best, cur)
			gap = 0
		case cur > 0 && (c == ' ' || c == '.' || c == '-' || c == '(' || c == ')'):
			gap++
		default:
			cur, gap = 0, 0
		}
	}
	return best
}

// CountDigits is the number of ASCII digits in s: the cheap test before a
// rule that needs at least so many (a card or phone number) runs its
// expression.
func CountDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

func luhn(s string) bool {
	var digits []int
	for _, c := range s {
		if c >= '0' && c <= '9' {
			digits = append(digits, int(c-'0'))
		}
	}
	if len(digits) < 13 || len(digits) > 19 {
		return false
	}
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := digits[i]
		if (len(digits)-1-i)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// A private key's body, seen without its BEGIN and END lines (grep shows
// "path:12:MIIEv..." lines, a tool's window cuts the block): a line that is
// nothing but 60 to 100 base64 characters with upper- and lower-case
// letters and digits (PEM lines are 64, OpenSSH's 70), or a base64 run of
// any length from 60 that starts like a DER key ("MII"), and the short last
// line right after such a line.
const (
	minBodyLine = 60
	maxBodyLine = 100
)

func isB64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/'
}

func keyBody(s string) [][2]int {
	var out [][2]int
	prevEnd := -1 // end of the last body line found
	for i := 0; i < len(s); {
		if !isB64(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isB64(s[j]) {
			j++
		}
		start, end := i, j
		for end < len(s) && end-j < 2 && s[end] == '=' {
			end++
		}
		i = end
		if start > 0 && s[start-1] == '\\' { // "\nMIIE...": the n is the escape's
			start++
		}
		n := j - start
		if n < 4 || !bodyBoundary(s, start, end) {
			continue
		}
		switch {
		case n >= minBodyLine && (n <= maxBodyLine || strings.HasPrefix(s[start:], "MII")) && mixed(s[start:j]) && !wordy(s[start:j]):
			out = append(out, [2]int{start, end})
			prevEnd = end
		case prevEnd >= 0 && n < minBodyLine && (mixed(s[start:j]) || end > j) && nextLine(s, prevEnd, start):
			// The last, shorter line of the body just found (random
			// base64, or padded with =).
			out = append(out, [2]int{start, end})
			prevEnd = -1
		}
	}
	return out
}

// bodyBoundary says whether s[start:end] stands alone on its line's end:
// nothing but a line break, a blank, a quote or the end of the text follows,
// and no identifier character (., _) is glued to either side.
func bodyBoundary(s string, start, end int) bool {
	if start > 0 {
		if c := s[start-1]; c == '.' || c == '_' {
			return false
		}
	}
	if end == len(s) {
		return true
	}
	switch s[end] {
	case '\n', '\r', ' ', '\t', '"', '\'', '\\':
		return true
	}
	return false
}

// nextLine says whether s[i:j] is one line break (raw or escaped) and, at
// most, a grep prefix ("path:12:", "path-12-"): nothing else, no blank.
func nextLine(s string, i, j int) bool {
	seg := s[i:j]
	switch {
	case strings.HasPrefix(seg, "\r\n"):
		seg = seg[2:]
	case strings.HasPrefix(seg, "\n"):
		seg = seg[1:]
	case strings.HasPrefix(seg, `\`): // \n, or \\n in JSON inside JSON
		seg = strings.TrimLeft(seg, `\`)
		if !strings.HasPrefix(seg, "n") {
			return false
		}
		seg = seg[1:]
	default:
		return false
	}
	return len(seg) <= 200 && !strings.ContainsAny(seg, " \t\r\n\\\"'")
}

// wordy says whether s reads as words rather than random base64: a path or
// a CamelCase name (/tmp/TestFollowUpPassesPriorContext.../003/run) has
// many runs of four lower-case letters or more, and a path many slashes;
// random base64 seldom has either (five such runs: about 0.4% of 64
// random characters; three runs and three slashes: about 0.6%).
func wordy(s string) bool {
	runs, slashes, n := 0, strings.Count(s, "/"), 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] >= 'a' && s[i] <= 'z' {
			n++
			continue
		}
		if n >= 4 {
			runs++
		}
		n = 0
	}
	return runs >= 5 || (runs >= 3 && slashes >= 3)
}

// mixed says whether s has an upper-case letter, a lower-case letter and a
// digit (a hex digest or a word does not).
func mixed(s string) bool {
	var up, low, dig bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			up = true
		case c >= 'a' && c <= 'z':
			low = true
		case c >= '0' && c <= '9':
			dig = true
		}
	}
	return up && low && dig
}

// minCached is the shortest text whose being clean is remembered (a
// shorter one costs less to scan than to hash).
const minCached = 256

// maxCached bounds the remembered texts; past it the set starts again.
const maxCached = 1 << 15

// cleanSet remembers texts found to hold no secret, by a keyed 64-bit hash
// (the seed is random per process, so no input can be made to collide on
// purpose). Each set of secrets has its own (a text clean of one set's
// values may hold another's); the set with no values shares one.
type cleanSet struct {
	mu   sync.Mutex
	seed maphash.Seed
	m    map[uint64]struct{}
}

func newCleanSet() *cleanSet { return &cleanSet{seed: maphash.MakeSeed(), m: map[uint64]struct{}{}} }

// noValues and noValuesPII remember the texts clean of credentials (and
// of personal data): what the set with no values finds depends on the
// rules alone, so every user of that set shares them (a cache, not a set
// of secrets).
var noValues, noValuesPII = newCleanSet(), newCleanSet()

func noValuesClean(pii bool) *cleanSet {
	if pii {
		return noValuesPII
	}
	return noValues
}

func (c *cleanSet) has(s string) bool {
	h := maphash.String(c.seed, s)
	c.mu.Lock()
	_, ok := c.m[h]
	c.mu.Unlock()
	return ok
}

func (c *cleanSet) add(s string) {
	h := maphash.String(c.seed, s)
	c.mu.Lock()
	if len(c.m) >= maxCached {
		clear(c.m)
	}
	c.m[h] = struct{}{}
	c.mu.Unlock()
}
