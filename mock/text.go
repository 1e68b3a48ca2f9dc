package mock

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/vocab"
)

// reading the text protocol of package vocab

func allText(req providers.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		if m.Role == providers.RoleSystem {
			continue
		}
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// lastUser is the last user message (the one being answered).
func lastUser(req providers.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == providers.RoleUser && !strings.HasPrefix(req.Messages[i].Content, vocab.ToolLimitNote) {
			return req.Messages[i].Content
		}
	}
	return ""
}

func between(text, open, close string) string {
	i := strings.Index(text, open)
	if i < 0 {
		return ""
	}
	rest := text[i+len(open):]
	j := strings.Index(rest, close)
	if j < 0 {
		return rest
	}
	return rest[:j]
}

func linesWithPrefix(text, prefix string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), strings.TrimSpace(prefix)); ok {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// aspects returns the terms of every aspects block, each once.
func aspects(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, b := range prompts.BlocksOf(text, vocab.BlockAspects) {
		for _, a := range prompts.SplitAspects(b.Content) {
			if !seen[strings.ToLower(a)] {
				seen[strings.ToLower(a)] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// block returns the content of the first block of kind ("" when none).
func block(text, kind string) string {
	if bs := prompts.BlocksOf(text, kind); len(bs) > 0 {
		return bs[0].Content
	}
	return ""
}

// outside is the prompt's own text: every untrusted block removed, so
// nothing a user or model wrote can pass for a protocol line.
func outside(text string) string {
	o, _ := prompts.SplitUntrusted(text)
	return o
}

// MaxCount caps the "Count: N" a prompt asks for, so a request cannot make
// the mock build an unbounded list.
const MaxCount = 1000

func count(text string, def int) int {
	for _, l := range linesWithPrefix(outside(text), vocab.CountPrefix) {
		if n, err := strconv.Atoi(strings.TrimSpace(l)); err == nil && n > 0 {
			return min(n, MaxCount)
		}
	}
	return def
}

// listLine is the comma-separated list on the first line starting with
// prefix (nil when none).
func listLine(text, prefix string) []string {
	lines := linesWithPrefix(outside(text), prefix)
	if len(lines) == 0 {
		return nil
	}
	var out []string
	for _, x := range strings.Split(lines[0], ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

var quotedRe = regexp.MustCompile(`"([^"]{2,80})"`)

func quoted(s string) []string {
	var out []string
	for _, m := range quotedRe.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

var wordRe = regexp.MustCompile(`[A-Za-z][A-Za-z0-9.\-]*[A-Za-z0-9]|[A-Za-z]`)

var stop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or of to in on for with by from at as is are be been being this that these those it its
	our we you your they their them us i me my must should will would can could may might shall do does did done not no nor
	what which who whom whose when where why how all any both each few more most other some such only own same so than too very
	just also into over under about after before again further then once here there out up down off above below between through
	during until while per via vs etc produce report plan write cover covers covering including include includes need needs want
	wants make makes made use used using every one two three four five six seven eight nine ten today before after q1 q2 q3 q4
	twice year years month months week weeks day days mission following list lists item items describe design covering covers
	each something nobody everything anything whole part parts way ways time times thing things keep keeps new old`) {
		stop[w] = true
	}
}

// salientTerms extracts distinctive terms of a text: bullet phrases first
// (their leading noun phrase), then frequent non-stopword bigrams and words,
// in order of first appearance.
func salientTerms(text string, n int) []string {
	var terms []string
	seen := map[string]bool{}
	add := func(t string) {
		t = strings.Trim(strings.ToLower(strings.TrimSpace(t)), " .,:;-()")
		if len(t) < 3 || seen[t] || stop[t] {
			return
		}
		seen[t] = true
		terms = append(terms, t)
	}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "- ") && !strings.HasPrefix(l, "* ") {
			continue
		}
		words := contentWords(l[2:])
		if len(words) >= 2 {
			add(words[0] + " " + words[1])
		} else if len(words) == 1 {
			add(words[0])
		}
	}
	if len(terms) < n {
		words := contentWords(text)
		freq := map[string]int{}
		for _, w := range words {
			freq[w]++
		}
		type wc struct {
			w     string
			c, at int
		}
		var ws []wc
		for i, w := range words {
			if freq[w] > 0 {
				ws = append(ws, wc{w, freq[w], i})
				freq[w] = 0
			}
		}
		sort.SliceStable(ws, func(i, j int) bool { return ws[i].c > ws[j].c })
		for _, x := range ws {
			if len(terms) >= n {
				break
			}
			if len(x.w) >= 5 {
				add(x.w)
			}
		}
	}
	if len(terms) > n {
		terms = terms[:n]
	}
	return terms
}

func contentWords(s string) []string {
	var out []string
	for _, w := range wordRe.FindAllString(s, -1) {
		lw := strings.ToLower(w)
		if !stop[lw] && len(lw) >= 3 {
			out = append(out, lw)
		}
	}
	return out
}

func containsFold(hay, needle string) bool {
	return strings.Contains(strings.ToLower(hay), strings.ToLower(needle))
}
