package mock

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/vocab"
	"github.com/swarm-dev/swarm/workspace"
)

// The mock over a workspace. A request of schema atom or bundle that offers
// the read tools (list_dir, read_file, grep, glob) gets a deterministic
// tool plan, a function of the persona and of what the request's messages
// already show (earlier calls and their answers): nothing is remembered
// between requests, so the in-process mock and its HTTP server behave alike.
// When the plan is done, or the request offers no tools, the persona answers
// in the schema with citations built from those answers only.

// Tool names of the read tools (package workspace).
const (
	toolListDir  = "list_dir"
	toolReadFile = "read_file"
	toolGrep     = "grep"
	toolGlob     = "glob"
)

// grepContext is the context lines the mock asks grep for: the before/after
// lines of a match bound a read_file range that surely exists.
const grepContext = 3

// maxReads bounds how many files one honest plan reads.
const maxReads = 3

// toolAnswer is the part of a read tool's JSON answer the mock reads.
type toolAnswer struct {
	OK      bool   `json:"ok"`
	Refusal string `json:"refusal"`
	Path    string `json:"path"`
	Content string `json:"content"`
	Entries []struct {
		Name string `json:"name"`
		Type string `json:"type"`
		Size int64  `json:"size"`
	} `json:"entries"`
	Matches []struct {
		Path   string   `json:"path"`
		Line   int      `json:"line"`
		Before []string `json:"before"`
		After  []string `json:"after"`
	} `json:"matches"`
	Paths []string `json:"paths"`
}

// toolArgs are the arguments of the read tools the mock writes.
type toolArgs struct {
	Path      string `json:"path,omitempty"`
	StartLine int    `json:"start_line,omitempty"`
	EndLine   int    `json:"end_line,omitempty"`
	Pattern   string `json:"pattern,omitempty"`
	Context   int    `json:"context,omitempty"`
}

// exchange is one earlier call and its answer (zero when unanswered).
type exchange struct {
	name     string
	args     toolArgs
	answer   toolAnswer
	answered bool
}

// fileLine is one listed entry.
type fileLine struct {
	path, typ string
	size      int64
}

// toolState is what a request shows of its tool conversation.
type toolState struct {
	turn      int             // assistant messages carrying tool calls
	offered   map[string]bool // tools the request offers
	exchanges []exchange
	tried     map[string]bool // name + "\x00" + path or pattern
	listed    []fileLine      // entries of list_dir answers, then glob paths, in order
	reads     []string        // paths read successfully, in order
	lines     map[string]map[int]string
	matches   []grepHit
}

type grepHit struct {
	path          string
	line          int
	before, after int
}

func cleanPath(p string) string {
	p = strings.TrimPrefix(p, "./")
	if p == "" {
		return "."
	}
	return p
}

// stateOf reads the tool conversation of req.
func stateOf(req providers.Request) *toolState {
	s := &toolState{offered: map[string]bool{}, tried: map[string]bool{}, lines: map[string]map[int]string{}}
	for _, t := range req.Tools {
		s.offered[t.Name] = true
	}
	byID := map[string]int{}
	for _, msg := range req.Messages {
		switch {
		case msg.Role == providers.RoleAssistant && len(msg.ToolCalls) > 0:
			s.turn++
			for _, c := range msg.ToolCalls {
				var a toolArgs
				_ = json.Unmarshal([]byte(c.Arguments), &a) // a malformed call is simply not understood
				byID[c.ID] = len(s.exchanges)
				s.exchanges = append(s.exchanges, exchange{name: c.Name, args: a})
				s.tried[c.Name+"\x00"+cleanPath(a.Path)+"\x00"+a.Pattern] = true
			}
		case msg.Role == providers.RoleTool:
			i, ok := byID[msg.ToolCallID]
			if !ok || s.exchanges[i].answered {
				continue
			}
			var ans toolAnswer
			if json.Unmarshal([]byte(msg.Content), &ans) != nil {
				continue
			}
			s.exchanges[i].answer, s.exchanges[i].answered = ans, true
			s.learn(s.exchanges[i])
		}
	}
	return s
}

// learn records what one answered call showed.
func (s *toolState) learn(x exchange) {
	a := x.answer
	if !a.OK {
		return
	}
	switch x.name {
	case toolListDir:
		dir := cleanPath(a.Path)
		if a.Path == "" {
			dir = cleanPath(x.args.Path)
		}
		for _, e := range a.Entries {
			p := e.Name
			if dir != "." {
				p = dir + "/" + e.Name
			}
			s.listed = append(s.listed, fileLine{path: p, typ: e.Type, size: e.Size})
		}
	case toolGlob:
		for _, p := range a.Paths {
			s.listed = append(s.listed, fileLine{path: cleanPath(p), typ: "file"})
		}
	case toolGrep:
		for _, m := range a.Matches {
			s.matches = append(s.matches, grepHit{path: cleanPath(m.Path), line: m.Line, before: len(m.Before), after: len(m.After)})
		}
	case toolReadFile:
		p := cleanPath(a.Path)
		if a.Path == "" {
			p = cleanPath(x.args.Path)
		}
		ls := s.lines[p]
		if ls == nil {
			ls = map[int]string{}
			s.lines[p] = ls
			s.reads = append(s.reads, p)
		}
		for _, l := range strings.Split(a.Content, "\n") {
			num, text, ok := strings.Cut(l, "\t")
			if n, err := strconv.Atoi(num); ok && err == nil && n > 0 {
				ls[n] = text
			}
		}
	}
}

func (s *toolState) did(name string) bool {
	for _, x := range s.exchanges {
		if x.name == name {
			return true
		}
	}
	return false
}

// used reports whether the conversation holds any tool call.
func (s *toolState) used() bool { return len(s.exchanges) > 0 }

// wantsTools reports whether req is one the personas plan tool calls for.
func wantsTools(req providers.Request) bool {
	return len(req.Tools) > 0 && req.Schema != nil && (req.Schema.Name == vocab.SchemaAtom || req.Schema.Name == vocab.SchemaBundle)
}

type plannedCall struct {
	name string
	args toolArgs
}

// toolCalls is the persona's next tool turn for req (nil: answer now).
// A request offering only tools other than the workspace's gets calls
// chosen from those (anyToolCalls), once per user turn.
func (m *Mock) toolCalls(req providers.Request, b *answerBudget) ([]providers.ToolCall, error) {
	if len(req.Tools) > 0 && !offersWorkspaceTools(req) {
		if calledSinceUser(req) {
			return nil, nil
		}
		return anyToolCalls(req, "", maxAnyCalls, b)
	}
	if !wantsTools(req) {
		return nil, nil
	}
	s := stateOf(req)
	var plan []plannedCall
	switch {
	case m.p.lies:
		// Deceptive: skips the tools and makes its evidence up.
	case m.p.leaks:
		plan = m.adversarialPlan(s)
	case m.persona == Sloppy:
		if !s.did(toolListDir) && !s.did(toolGlob) {
			plan = []plannedCall{{toolListDir, toolArgs{Path: "."}}, {toolGlob, toolArgs{Pattern: "**/*"}}}
		}
	default:
		plan = m.honestPlan(req, s)
	}
	var out []providers.ToolCall
	for _, c := range plan {
		if !s.offered[c.name] {
			continue
		}
		b, _ := json.Marshal(c.args)
		out = append(out, providers.ToolCall{ID: fmt.Sprintf("call_%d_%d", s.turn, len(out)), Name: c.name, Arguments: string(b)})
	}
	return out, nil
}

// honestPlan: list the root and grep for the brief's key terms, then read
// around the best matches; a commander given its workers' citations
// re-reads those lines instead.
func (m *Mock) honestPlan(req providers.Request, s *toolState) []plannedCall {
	if cites := workerCitations(req); len(cites) > 0 {
		if s.did(toolReadFile) {
			return nil
		}
		var plan []plannedCall
		seen := map[citation.Citation]bool{}
		for _, c := range cites {
			k := citation.Citation{Path: c.Path, StartLine: c.StartLine, EndLine: c.EndLine}
			if seen[k] || len(plan) >= 2*maxReads {
				continue
			}
			seen[k] = true
			plan = append(plan, plannedCall{toolReadFile, toolArgs{Path: c.Path, StartLine: c.StartLine, EndLine: c.EndLine}})
		}
		return plan
	}
	re := m.termPattern(req)
	if !s.did(toolListDir) && !s.did(toolGrep) {
		plan := []plannedCall{{toolListDir, toolArgs{Path: "."}}}
		if re != "" {
			plan = append(plan, plannedCall{toolGrep, toolArgs{Pattern: re, Context: grepContext}})
		}
		return plan
	}
	if s.did(toolReadFile) {
		return nil
	}
	// The files with the most matches first (ties in path order), each read
	// around its first match: the lines grep showed with it surely exist.
	type file struct {
		hit grepHit
		n   int
		at  int
	}
	var files []*file
	byPath := map[string]*file{}
	for _, h := range s.matches {
		if f := byPath[h.path]; f != nil {
			f.n++
			continue
		}
		f := &file{hit: h, n: 1, at: len(files)}
		byPath[h.path] = f
		files = append(files, f)
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].n > files[j].n })
	var plan []plannedCall
	for _, f := range files {
		if len(plan) == maxReads {
			break
		}
		h := f.hit
		plan = append(plan, plannedCall{toolReadFile, toolArgs{Path: h.path, StartLine: max(1, h.line-h.before), EndLine: h.line + h.after}})
	}
	if len(plan) == 0 {
		// Nothing matched: read the first files of the root listing.
		for _, e := range s.listed {
			if e.typ == "file" && len(plan) < 2 {
				plan = append(plan, plannedCall{toolReadFile, toolArgs{Path: e.path}})
			}
		}
	}
	return plan
}

// Guesses the adversarial persona tries besides what it sees listed.
var hostilePaths = []string{"../../etc/passwd", "/etc/passwd", ".env", ".git/config", "id_rsa", "server.pem"}

// maxListDepth bounds how deep the adversarial persona lists directories
// (a path of at most maxListDepth slashes).
const maxListDepth = 2

// adversarialPlan: escapes and denied files first, then every symlink and
// directory (to maxListDepth) it sees listed, until nothing new turns up.
func (m *Mock) adversarialPlan(s *toolState) []plannedCall {
	if !s.used() {
		plan := []plannedCall{{toolListDir, toolArgs{Path: "."}}, {toolListDir, toolArgs{Path: ".."}}}
		for _, p := range hostilePaths {
			plan = append(plan, plannedCall{toolReadFile, toolArgs{Path: p}})
		}
		return append(plan, plannedCall{toolGlob, toolArgs{Pattern: "**/*.pem"}})
	}
	var plan []plannedCall
	for _, e := range s.listed {
		switch {
		case e.typ == "symlink" && !s.tried[toolReadFile+"\x00"+e.path+"\x00"]:
			plan = append(plan, plannedCall{toolReadFile, toolArgs{Path: e.path}})
		case e.typ == "dir" && strings.Count(e.path, "/") < maxListDepth && !s.tried[toolListDir+"\x00"+e.path+"\x00"]:
			plan = append(plan, plannedCall{toolListDir, toolArgs{Path: e.path}})
		}
	}
	return plan
}

// termWords are the words of the brief's key terms the persona covers,
// a few, each once.
func (m *Mock) termWords(req providers.Request) []string {
	covered, _ := m.coveredTerms(req)
	if len(covered) == 0 {
		covered = salientTerms(block(lastUser(req), vocab.BlockBrief), 6)
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range covered {
		for _, w := range contentWords(t) {
			if !seen[w] && len(out) < 6 {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

// termPattern is a case-insensitive RE2 alternation of the term words ("" when none).
func (m *Mock) termPattern(req providers.Request) string {
	ws := m.termWords(req)
	if len(ws) == 0 {
		return ""
	}
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = regexp.QuoteMeta(w)
	}
	return "(?i)(" + strings.Join(q, "|") + ")"
}

// citations is the persona's evidence for req: built only from what the
// request's tool answers showed (and, for a commander, its workers'
// citations); empty without tools.
func (m *Mock) citations(req providers.Request) []citation.Citation {
	s := stateOf(req)
	if !s.used() && len(req.Tools) == 0 {
		if !m.p.lies && !m.p.leaks && m.persona != Sloppy {
			// A commander with no tools to check them passes its workers'
			// citations on (none without a workspace).
			return nonNil(workerCitations(req))
		}
		return []citation.Citation{}
	}
	switch {
	case m.p.lies:
		return m.fabricated(req)
	case m.persona == Sloppy:
		return m.sloppy(req, s)
	case m.p.leaks:
		return s.readCitations(nil)
	}
	if cites := workerCitations(req); len(cites) > 0 {
		// An honest commander keeps what it re-read and found as reported,
		// or (when it could not re-read) what its workers reported.
		if !s.did(toolReadFile) {
			return cites
		}
		var out []citation.Citation
		for _, c := range cites {
			if q, ok := s.text(c.Path, c.StartLine, c.EndLine); ok && workspace.QuoteMatches(q, c.Quote) {
				out = append(out, c)
			}
		}
		return nonNil(out)
	}
	var re *regexp.Regexp
	if p := m.termPattern(req); p != "" {
		re = regexp.MustCompile(p)
	}
	return s.readCitations(re)
}

func nonNil(cs []citation.Citation) []citation.Citation {
	if cs == nil {
		return []citation.Citation{}
	}
	return cs
}

// text is lines start..end of p as read, when every one of them was read.
func (s *toolState) text(p string, start, end int) (string, bool) {
	ls := s.lines[cleanPath(p)]
	if ls == nil || start < 1 || end < start {
		return "", false
	}
	parts := make([]string, 0, end-start+1)
	for n := start; n <= end; n++ {
		l, ok := ls[n]
		if !ok {
			return "", false
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, "\n"), true
}

// readCitations cites one place of every file read: the first line
// matching re (else the first non-blank line), with the next line when it
// was read and is not blank; the quote is those lines exactly as read.
func (s *toolState) readCitations(re *regexp.Regexp) []citation.Citation {
	out := []citation.Citation{}
	for _, p := range s.reads {
		ls := s.lines[p]
		nums := make([]int, 0, len(ls))
		for n := range ls {
			nums = append(nums, n)
		}
		sort.Ints(nums)
		hit := 0
		for _, n := range nums {
			if re != nil && re.MatchString(ls[n]) {
				hit = n
				break
			}
		}
		if hit == 0 {
			for _, n := range nums {
				if strings.TrimSpace(ls[n]) != "" {
					hit = n
					break
				}
			}
		}
		if hit == 0 {
			continue
		}
		end := hit
		if next, ok := ls[hit+1]; ok && strings.TrimSpace(next) != "" {
			end = hit + 1
		}
		q, _ := s.text(p, hit, end)
		out = append(out, citation.Citation{Path: p, StartLine: hit, EndLine: end, Quote: q})
	}
	return out
}

// sloppy cites files it listed but never read, at lines it guesses from
// their size, with quotes it guesses from the brief.
func (m *Mock) sloppy(req providers.Request, s *toolState) []citation.Citation {
	terms := m.termWords(req)
	if len(terms) == 0 {
		terms = []string{"config"}
	}
	seen := map[string]bool{}
	var files []fileLine
	for _, e := range s.listed {
		if e.typ == "file" && !seen[e.path] && s.lines[e.path] == nil {
			seen[e.path] = true
			files = append(files, e)
		}
	}
	seed := seedOf(req)
	h := func(p string) uint64 {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s", seed, p)))
		return binary.BigEndian.Uint64(sum[:8])
	}
	sort.SliceStable(files, func(i, j int) bool { return h(files[i].path) < h(files[j].path) })
	out := []citation.Citation{}
	for i, f := range files {
		if i == maxReads {
			break
		}
		approx := 40 // lines, when the listing gave no size
		if f.size > 0 {
			approx = max(1, int(f.size/40)) // about forty bytes a line
		}
		start := 1 + int(h(f.path)%uint64(approx))
		t := terms[i%len(terms)]
		out = append(out, citation.Citation{Path: f.path, StartLine: start, EndLine: start + 2, Quote: fmt.Sprintf("// %s is handled here", t)})
	}
	return out
}

// fabricated is the deceptive persona's evidence: plausible paths, lines
// and code it never saw.
func (m *Mock) fabricated(req providers.Request) []citation.Citation {
	terms := m.termWords(req)
	if len(terms) == 0 {
		terms = []string{"session"}
	}
	out := []citation.Citation{}
	for i, t := range terms {
		if i == maxReads {
			break
		}
		slug := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, strings.ToLower(t))
		name := strings.ToUpper(slug[:1]) + slug[1:]
		start := 41 + 17*i
		out = append(out, citation.Citation{Path: path.Join("internal", slug, slug+"_guard.go"), StartLine: start, EndLine: start + 3,
			Quote: fmt.Sprintf("if err := verify%s(ctx, req); err != nil {\n\treturn fmt.Errorf(\"%s: %%w\", err)\n}", name, slug)})
	}
	return out
}

// workerCitations are the citations a bundle prompt shows of its workers'
// atoms (prompts.ParseEvidence), each once, in order.
func workerCitations(req providers.Request) []citation.Citation {
	if req.Schema == nil || req.Schema.Name != vocab.SchemaBundle {
		return nil
	}
	var out []citation.Citation
	seen := map[citation.Citation]bool{}
	for _, b := range prompts.BlocksOf(lastUser(req), vocab.BlockEvidence) {
		for _, c := range prompts.ParseEvidence(b.Content) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// forFinding picks the citations of one finding about term: those whose
// path or quote names a word of it, else one in turn (i), so every finding
// carries evidence when there is any.
func forFinding(cites []citation.Citation, term string, i int) []citation.Citation {
	out := []citation.Citation{}
	if len(cites) == 0 {
		return out
	}
	for _, c := range cites {
		for _, w := range contentWords(term) {
			if containsFold(c.Quote, w) || containsFold(c.Path, w) {
				out = append(out, c)
				break
			}
		}
	}
	if len(out) == 0 {
		out = append(out, cites[i%len(cites)])
	}
	return out
}
