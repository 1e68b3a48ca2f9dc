package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/swarm-dev/swarm/providers"
)

// Tool names.
const (
	ToolListDir  = "list_dir"
	ToolReadFile = "read_file"
	ToolGrep     = "grep"
	ToolGlob     = "glob"
)

// maxGrepContext is the most context lines grep gives on each side.
const maxGrepContext = 5

// Outcome is what one tool call did: the answer for the model (Result) and
// what a run records about it.
type Outcome struct {
	Tool    string `json:"tool"`
	Path    string `json:"path,omitempty"`    // list_dir/read_file path as asked
	Pattern string `json:"pattern,omitempty"` // grep regexp / glob pattern
	OK      bool   `json:"ok"`
	Refusal string `json:"refusal,omitempty"` // a Refusal* kind
	Reason  string `json:"reason,omitempty"`
	Bytes   int    `json:"bytes"` // file-content bytes returned to the model
	Result  string `json:"-"`     // the JSON answer
}

// Session is one agent's view of an FS, bounded by its file scope.
type Session struct {
	fs    *FS
	scope []scopeEntry
	agent string // whose share of the run's tool budget the calls take ("" = none)
}

// ForAgent makes the session's calls count against agent's share of the
// run's tool budget (max_tool_calls_per_agent), shared by every session
// of the same agent id. It returns s.
func (s *Session) ForAgent(id string) *Session {
	s.agent = id
	return s
}

// CallsPerTurn is how many tool calls of one model answer are run
// (max_calls_per_turn); the others get Skip's answer.
func (s *Session) CallsPerTurn() int { return s.fs.limits.MaxCallsPerTurn }

// Skip answers a call past max_calls_per_turn without running it: it is
// not charged to the run's or the agent's budget.
func (s *Session) Skip(call providers.ToolCall) Outcome {
	n := s.fs.limits.MaxCallsPerTurn
	return Outcome{Tool: call.Name}.refused(refuse(RefusalLimit, "limit reached: max_calls_per_turn (%d tool calls per answer): this call was not run; ask for at most %d tools at once, the most useful first, and call the rest in your next turn", n, n))
}

// chargeAgent counts one call against the session's agent and reports
// whether its share was already spent.
func (s *Session) chargeAgent() bool {
	if s.agent == "" {
		return true
	}
	f := s.fs
	f.agentMu.Lock()
	defer f.agentMu.Unlock()
	if f.agentCalls[s.agent] >= f.limits.MaxToolCallsPerAgent {
		return false
	}
	f.agentCalls[s.agent]++
	return true
}

type scopeEntry struct {
	pat  string
	glob bool
	base string // a glob's directory part without wildcards
}

// Session returns one agent's view. Scope entries are doublestar globs or
// paths (a directory covers everything under it); an empty scope is the
// whole root.
func (f *FS) Session(scope []string) *Session {
	s := &Session{fs: f}
	for _, e := range scope {
		e = strings.TrimPrefix(e, "./")
		glob := strings.ContainsAny(e, "*?[{") && doublestar.ValidatePattern(e)
		if !glob {
			e = path.Clean(e)
		}
		if e == "." || e == "" || e == "**" {
			return &Session{fs: f} // covers the whole root
		}
		se := scopeEntry{pat: e, glob: glob}
		if glob {
			se.base, _ = doublestar.SplitPattern(e)
		}
		s.scope = append(s.scope, se)
	}
	return s
}

// inScope reports whether rel is inside the session's scope.
func (s *Session) inScope(rel string) bool {
	if len(s.scope) == 0 {
		return true
	}
	for _, e := range s.scope {
		if e.glob {
			if ok, _ := doublestar.Match(e.pat, rel); ok {
				return true
			}
		} else if rel == e.pat || strings.HasPrefix(rel, e.pat+"/") {
			return true
		}
	}
	return false
}

// reaches reports whether the directory dir is inside the scope or holds
// part of it: whether it may be listed and walked.
func (s *Session) reaches(dir string) bool {
	if len(s.scope) == 0 || dir == "." || s.inScope(dir) {
		return true
	}
	for _, e := range s.scope {
		p := e.pat
		if e.glob {
			p = e.base
			if p == "." || strings.HasPrefix(dir, p+"/") {
				return true
			}
		}
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// Turns is the number of tool turns one agent is offered.
func (s *Session) Turns() int { return s.fs.limits.MaxToolTurns }

// Definitions are the read tools, for Request.Tools.
func (s *Session) Definitions() []providers.Tool {
	l := s.fs.limits
	return []providers.Tool{
		{Name: ToolListDir, Description: fmt.Sprintf("List one directory of the workspace (read-only). Entries are sorted by name, each with type file, dir or symlink (and size for files). Denied files (.git, .env*, keys) and .gitignored entries are left out; at most %d entries. Paths are relative to the workspace root, with forward slashes; \".\" is the root.", l.MaxListEntries),
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Directory relative to the workspace root; \".\" is the root."}},"required":["path"],"additionalProperties":false}`)},
		{Name: ToolReadFile, Description: fmt.Sprintf("Read a text file of the workspace (read-only), optionally only lines start_line..end_line (1-based, inclusive). Each returned line is prefixed with its number and a tab; cite those numbers. At most %d bytes are returned per call, cut at whole lines (truncated:true, end_line is the last line returned: call again from the next line). Binary files, files over %d bytes and denied files are refused.", l.MaxReadBytes, l.MaxFileBytes),
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File relative to the workspace root, e.g. internal/auth/session.go."},"start_line":{"type":"integer","minimum":1,"description":"First line to return (1-based). Default 1."},"end_line":{"type":"integer","minimum":1,"description":"Last line to return (inclusive). Default: the end of the file."}},"required":["path"],"additionalProperties":false}`)},
		{Name: ToolGrep, Description: fmt.Sprintf("Search the workspace's text files for a regular expression (RE2 syntax, matched per line). Returns matching lines with path and line number, files in path order, optionally with context lines. At most %d matches per call (truncated:true when there were more: narrow the pattern or path_glob). At most %d directory entries are examined per call: in a large workspace start path_glob with a directory (e.g. \"src/**/*.go\"). Gitignored, denied, binary and too large files are skipped. At most %d tool calls of one answer are run.", l.MaxGrepMatches, l.MaxFilesPerCall, l.MaxCallsPerTurn),
			Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","description":"RE2 regular expression, matched against each line, e.g. \"func .*Session\" or \"(?i)password\"."},"path_glob":{"type":"string","description":"Only search files whose path matches this glob (** matches any number of directories), e.g. \"**/*.go\" or \"internal/**\". Default: all files."},"context":{"type":"integer","minimum":0,"maximum":5,"description":"Lines of context to return before and after each match (0 to 5). Default 0."}},"required":["pattern"],"additionalProperties":false}`)},
		{Name: ToolGlob, Description: fmt.Sprintf("Find files of the workspace whose path matches a glob (* matches within a directory, ** any number of directories), e.g. \"**/*.go\" or \"cmd/*/main.go\". Returns sorted file paths relative to the root, at most %d (truncated:true when there were more). At most %d directory entries are examined per call: in a large workspace start the pattern with a directory. Denied and gitignored files are left out.", l.MaxListEntries, l.MaxFilesPerCall),
			Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","description":"Glob over file paths relative to the workspace root, e.g. \"**/*_test.go\"."}},"required":["pattern"],"additionalProperties":false}`)},
	}
}

// Call runs one tool call and returns its outcome; Result is the JSON
// answer for the model. A refusal or a limit reached is an answer, never
// an error.
func (s *Session) Call(ctx context.Context, call providers.ToolCall) Outcome {
	o := Outcome{Tool: call.Name}
	// The agent's share first: a call it refuses is not charged to the run.
	if !s.chargeAgent() {
		n := s.fs.limits.MaxToolCallsPerAgent
		return o.refused(refuse(RefusalLimit, "limit reached: max_tool_calls_per_agent (%d tool calls per agent per run): your share of the run's tool budget is spent; answer with what you have", n))
	}
	max := s.fs.limits.MaxToolCalls
	if n := s.fs.calls.Add(1); n > int64(max) {
		return o.refused(refuse(RefusalLimit, "limit reached: max_tool_calls (%d tool calls per run); answer with what you have", max))
	}
	args := call.Arguments
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	switch call.Name {
	case ToolListDir:
		var a struct {
			Path *string `json:"path"`
		}
		if r := decodeArgs(args, &a); r != nil {
			return o.refused(r)
		}
		if a.Path == nil {
			return o.refused(refuse(RefusalBadArguments, "path is required"))
		}
		o.Path = *a.Path
		return s.listDir(o, *a.Path)
	case ToolReadFile:
		var a struct {
			Path      *string `json:"path"`
			StartLine *int    `json:"start_line"`
			EndLine   *int    `json:"end_line"`
		}
		if r := decodeArgs(args, &a); r != nil {
			return o.refused(r)
		}
		if a.Path == nil {
			return o.refused(refuse(RefusalBadArguments, "path is required"))
		}
		o.Path = *a.Path
		return s.readFile(o, *a.Path, a.StartLine, a.EndLine)
	case ToolGrep:
		var a struct {
			Pattern  *string `json:"pattern"`
			PathGlob string  `json:"path_glob"`
			Context  int     `json:"context"`
		}
		if r := decodeArgs(args, &a); r != nil {
			return o.refused(r)
		}
		if a.Pattern == nil {
			return o.refused(refuse(RefusalBadArguments, "pattern is required"))
		}
		o.Pattern = *a.Pattern
		return s.grep(ctx, o, *a.Pattern, a.PathGlob, a.Context)
	case ToolGlob:
		var a struct {
			Pattern *string `json:"pattern"`
		}
		if r := decodeArgs(args, &a); r != nil {
			return o.refused(r)
		}
		if a.Pattern == nil {
			return o.refused(refuse(RefusalBadArguments, "pattern is required"))
		}
		o.Pattern = *a.Pattern
		return s.glob(ctx, o, *a.Pattern)
	}
	return o.refused(refuse(RefusalBadArguments, "unknown tool %q: the tools are list_dir, read_file, grep and glob", call.Name))
}

// decodeArgs decodes a call's JSON arguments strictly, naming the field at
// fault. Unknown arguments are found by comparing the object's keys with
// v's json tags (encoding/json reports them only as untyped error text).
func decodeArgs(args string, v any) *refusal {
	dec := json.NewDecoder(strings.NewReader(args))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return refuse(RefusalBadArguments, "arguments: must be a JSON object, got %s", te.Value)
		}
		return refuse(RefusalBadArguments, "arguments: not a JSON object (%s)", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return refuse(RefusalBadArguments, "arguments: more than one JSON value")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !isArgument(v, k) {
			return refuse(RefusalBadArguments, "%s: not an argument of this tool", k)
		}
	}
	if err := json.Unmarshal([]byte(args), v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return refuse(RefusalBadArguments, "%s: must be %s, got %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return refuse(RefusalBadArguments, "arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// isArgument reports whether key names a field of the struct v points to,
// matched as encoding/json matches keys (the json tag, case-insensitively).
func isArgument(v any, key string) bool {
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if strings.EqualFold(name, key) {
			return true
		}
	}
	return false
}

func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"):
		return "an integer"
	case k == "ptr", k == "string":
		return "a string"
	}
	return "a " + k
}

// answer marshals v without HTML escaping.
func answer(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every answer is built from strings, ints and bools.
		panic(fmt.Sprintf("workspace: encoding a tool answer: %v", err))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (o Outcome) refused(r *refusal) Outcome {
	o.OK = false
	o.Refusal = r.kind
	o.Reason = r.msg
	o.Result = answer(struct {
		OK      bool   `json:"ok"`
		Refusal string `json:"refusal"`
		Error   string `json:"error"`
	}{false, r.kind, r.msg})
	return o
}

func (o Outcome) ok(v any, bytes int) Outcome {
	o.OK = true
	o.Bytes = bytes
	o.Result = answer(v)
	return o
}

type dirEntry struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size *int64 `json:"size,omitempty"`
}

func (s *Session) listDir(o Outcome, p string) Outcome {
	f := s.fs
	t, r := f.resolve(p)
	if r != nil {
		return o.refused(r)
	}
	if !t.info.IsDir() {
		return o.refused(refuse(RefusalNotRegular, "%s: not a directory (use read_file)", t.rel))
	}
	if !s.reaches(t.rel) || !s.reaches(t.real) {
		return o.refused(refuse(RefusalScope, "%s: outside your file scope", t.rel))
	}
	if t.rel != "." && f.ignored(t.real, true) {
		return o.refused(refuse(RefusalNotFound, "%s: ignored by .gitignore", t.rel))
	}
	dh, err := f.root.Open(t.real)
	if err != nil {
		return o.refused(f.classify(t.rel, err))
	}
	// Read at most max_files_per_call entries (plus one, to know whether
	// there were more): a directory of 300 000 files must not cost a
	// listing of them all.
	des, err := dh.ReadDir(f.limits.MaxFilesPerCall + 1)
	dh.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return o.refused(f.classify(t.rel, err))
	}
	stopped := ""
	if len(des) > f.limits.MaxFilesPerCall {
		des = des[:f.limits.MaxFilesPerCall]
		stopped = f.stoppedNote("the directory holds more entries than that, and only those read were sorted and listed; use glob with a narrower pattern to find a file in it")
	}
	f.visited.Add(int64(len(des)))
	sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
	entries := []dirEntry{}
	limit := ""
	for _, de := range des {
		child := path.Join(t.real, de.Name())
		isDir := de.IsDir()
		if f.denied(child, isDir) || f.ignoredSelf(child, isDir) {
			continue
		}
		if isDir {
			if !s.reaches(child) {
				continue
			}
		} else if !s.inScope(child) {
			continue
		}
		e := dirEntry{Name: de.Name(), Type: "file"}
		switch {
		case de.Type()&fs.ModeSymlink != 0:
			e.Type = "symlink"
		case isDir:
			e.Type = "dir"
		case de.Type().IsRegular():
			if info, err := de.Info(); err == nil {
				sz := info.Size()
				e.Size = &sz
			}
		default:
			continue // devices, pipes, sockets: nothing to read
		}
		if len(entries) == f.limits.MaxListEntries {
			limit = fmt.Sprintf("limit reached: max_list_entries (%d): list a subdirectory or use glob with a narrower pattern", f.limits.MaxListEntries)
			break
		}
		entries = append(entries, e)
	}
	if limit == "" {
		limit = stopped
	}
	return o.ok(struct {
		OK        bool       `json:"ok"`
		Path      string     `json:"path"`
		Entries   []dirEntry `json:"entries"`
		Truncated bool       `json:"truncated"`
		Limit     string     `json:"limit,omitempty"`
	}{true, t.rel, entries, limit != "", limit}, 0)
}

func (s *Session) readFile(o Outcome, p string, start, end *int) Outcome {
	f := s.fs
	if start != nil && *start < 1 {
		return o.refused(refuse(RefusalBadArguments, "start_line: must be at least 1"))
	}
	if end != nil && *end < 1 {
		return o.refused(refuse(RefusalBadArguments, "end_line: must be at least 1"))
	}
	if start != nil && end != nil && *end < *start {
		return o.refused(refuse(RefusalBadArguments, "end_line: %d is before start_line %d", *end, *start))
	}
	t, r := f.resolve(p)
	if r != nil {
		return o.refused(r)
	}
	if !s.inScope(t.rel) || !s.inScope(t.real) {
		return o.refused(refuse(RefusalScope, "%s: outside your file scope", t.rel))
	}
	if t.info.IsDir() {
		return o.refused(refuse(RefusalNotRegular, "%s: a directory (use list_dir)", t.rel))
	}
	b, r := f.readText(t)
	if r != nil {
		return o.refused(r)
	}
	lines := splitLines(b)
	first, last := 1, len(lines)
	if start != nil {
		first = *start
	}
	if end != nil && *end < last {
		last = *end
	}
	if first > len(lines) && (first > 1 || len(lines) > 0) {
		return o.refused(refuse(RefusalBadArguments, "start_line: %d is past the end of %s (%d lines)", first, t.rel, len(lines)))
	}
	var sb strings.Builder
	truncated := false
	n := first - 1
	for i := first; i <= last; i++ {
		line := fmt.Sprintf("%d\t%s", i, shown(lines[i-1]))
		add := len(line)
		if i > first {
			add++
		}
		if sb.Len()+add > f.limits.MaxReadBytes {
			truncated = true
			break
		}
		if i > first {
			sb.WriteByte('\n')
		}
		sb.WriteString(line)
		n = i
	}
	if truncated && n < first {
		return o.refused(refuse(RefusalLimit, "limit reached: max_read_bytes (%d): line %d alone is longer", f.limits.MaxReadBytes, first))
	}
	limit := ""
	if truncated {
		limit = fmt.Sprintf("limit reached: max_read_bytes (%d): lines %d-%d returned; call again with start_line %d", f.limits.MaxReadBytes, first, n, n+1)
	}
	return o.ok(struct {
		OK         bool   `json:"ok"`
		Path       string `json:"path"`
		StartLine  int    `json:"start_line"`
		EndLine    int    `json:"end_line"`
		TotalLines int    `json:"total_lines"`
		Truncated  bool   `json:"truncated"`
		Limit      string `json:"limit,omitempty"`
		Content    string `json:"content"`
	}{true, t.rel, first, n, len(lines), truncated, limit, sb.String()}, sb.Len())
}

// walk is the result of one bounded walk: the files found and, when the
// walk stopped at max_files_per_call, the note saying so.
type walk struct {
	files   []string
	stopped string
}

// stoppedNote says that a call examined max_files_per_call entries and
// how to narrow it (hint: the argument that narrows it).
func (f *FS) stoppedNote(hint string) string {
	return fmt.Sprintf("stopped early: max_files_per_call (%d directory entries examined per call) reached, so only part of the workspace was searched; %s", f.limits.MaxFilesPerCall, hint)
}

// files returns the regular files under base (a directory, "." for the
// root) the session may see (not denied, not gitignored, in scope), in
// path order. At most max_files_per_call directory entries are examined
// (shown or not); past that the walk stops and says so. Symlinks are not
// followed: their targets inside the root are found where they are. A
// base that is not a plain directory (a symlink in its path, denied,
// missing) is walked from the root instead.
func (s *Session) files(ctx context.Context, base, hint string) walk {
	f := s.fs
	base = path.Clean(base)
	if base != "." {
		if real, err := f.realRel(base); err != nil || real != base || f.denied(base, true) || f.ignored(base, true) || !s.reaches(base) {
			base = "."
		} else if fi, err := f.root.Lstat(base); err != nil || !fi.IsDir() {
			base = "."
		}
	}
	var w walk
	budget := f.limits.MaxFilesPerCall
	var visit func(dir string)
	visit = func(dir string) {
		dh, err := f.root.Open(dir)
		if err != nil {
			return
		}
		// Read no more entries than the budget has left (plus one, to know
		// whether there were more).
		des, _ := dh.ReadDir(budget + 1)
		dh.Close()
		if len(des) > budget {
			des = des[:budget]
			w.stopped = f.stoppedNote(hint)
		}
		budget -= len(des)
		f.visited.Add(int64(len(des)))
		sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
		for _, d := range des {
			if ctx.Err() != nil {
				return
			}
			p := path.Join(dir, d.Name())
			if d.IsDir() {
				if f.denied(p, true) || f.ignoredSelf(p, true) || !s.reaches(p) {
					continue
				}
				if budget == 0 {
					w.stopped = f.stoppedNote(hint)
					return
				}
				visit(p)
				continue
			}
			if !d.Type().IsRegular() || f.denied(p, false) || f.ignoredSelf(p, false) || !s.inScope(p) {
				continue
			}
			w.files = append(w.files, p)
		}
	}
	visit(base)
	sort.Strings(w.files)
	return w
}

type grepMatch struct {
	Path   string   `json:"path"`
	Line   int      `json:"line"`
	Text   string   `json:"text"`
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
}

func (s *Session) grep(ctx context.Context, o Outcome, pattern, pathGlob string, context int) Outcome {
	f := s.fs
	re, err := regexp.Compile(pattern)
	if err != nil {
		return o.refused(refuse(RefusalBadArguments, "pattern: not a valid RE2 regular expression: %v", err))
	}
	// A file with no match of the pattern in multi-line mode has no
	// matching line: one pass over the file instead of one per line.
	// Anchors of the whole text (\A, \z, and ^ or $ where the pattern
	// turns multi-line mode off) need the per-line pass.
	var pre *regexp.Regexp
	if ml, err := syntax.Parse("(?m:"+pattern+")", syntax.Perl); err == nil && !anchorsText(ml) {
		pre, _ = regexp.Compile("(?m:" + pattern + ")")
	}
	if pathGlob != "" && !doublestar.ValidatePattern(strings.TrimPrefix(pathGlob, "./")) {
		return o.refused(refuse(RefusalBadArguments, "path_glob: not a valid glob: %q", pathGlob))
	}
	if context < 0 || context > maxGrepContext {
		return o.refused(refuse(RefusalBadArguments, "context: must be between 0 and %d", maxGrepContext))
	}
	pathGlob = strings.TrimPrefix(pathGlob, "./")
	matches := []grepMatch{}
	limit := ""
	size := 0
	base := "."
	if pathGlob != "" {
		base, _ = doublestar.SplitPattern(pathGlob)
	}
	w := s.files(ctx, base, `narrow path_glob to one directory (e.g. "src/**/*.go" rather than "**/*.go")`)
scan:
	for _, p := range w.files {
		if pathGlob != "" {
			if ok, _ := doublestar.Match(pathGlob, p); !ok {
				continue
			}
		}
		b, r := f.readText(target{rel: p, real: p})
		if r != nil {
			continue
		}
		if pre != nil && bytes.IndexByte(b, '\r') < 0 && !pre.Match(b) {
			continue // no line of the file can match
		}
		lines := splitLines(b)
		for i, line := range lines {
			if !re.MatchString(line) {
				continue
			}
			m := grepMatch{Path: p, Line: i + 1, Text: line}
			add := len(line)
			if context > 0 {
				m.Before = lines[max(0, i-context):i]
				m.After = lines[i+1 : min(len(lines), i+1+context)]
				for _, c := range m.Before {
					add += len(c)
				}
				for _, c := range m.After {
					add += len(c)
				}
			}
			switch {
			case len(matches) == f.limits.MaxGrepMatches:
				limit = fmt.Sprintf("limit reached: max_grep_matches (%d): narrow the pattern or path_glob", f.limits.MaxGrepMatches)
				break scan
			case size+add > f.limits.MaxReadBytes:
				limit = fmt.Sprintf("limit reached: max_read_bytes (%d): the matched lines and their context fill it; narrow the pattern or path_glob, or ask for less context", f.limits.MaxReadBytes)
				break scan
			}
			size += add
			matches = append(matches, m)
		}
	}
	if limit == "" {
		limit = w.stopped
	}
	return o.ok(struct {
		OK        bool        `json:"ok"`
		Pattern   string      `json:"pattern"`
		Matches   []grepMatch `json:"matches"`
		Truncated bool        `json:"truncated"`
		Limit     string      `json:"limit,omitempty"`
	}{true, pattern, matches, limit != "" || ctx.Err() != nil, limit}, size)
}

// anchorsText reports whether re holds an anchor of the whole text.
func anchorsText(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	for _, sub := range re.Sub {
		if anchorsText(sub) {
			return true
		}
	}
	return false
}

func (s *Session) glob(ctx context.Context, o Outcome, pattern string) Outcome {
	f := s.fs
	pat := strings.TrimPrefix(pattern, "./")
	if !doublestar.ValidatePattern(pat) {
		return o.refused(refuse(RefusalBadArguments, "pattern: not a valid glob: %q", pattern))
	}
	paths := []string{}
	limit := ""
	base, _ := doublestar.SplitPattern(pat)
	w := s.files(ctx, base, `start the pattern with one directory (e.g. "src/**/*.go" rather than "**/*.go")`)
	for _, p := range w.files {
		if ok, _ := doublestar.Match(pat, p); !ok {
			continue
		}
		if len(paths) == f.limits.MaxListEntries {
			limit = fmt.Sprintf("limit reached: max_list_entries (%d): narrow the pattern", f.limits.MaxListEntries)
			break
		}
		paths = append(paths, p)
	}
	if limit == "" {
		limit = w.stopped
	}
	return o.ok(struct {
		OK        bool     `json:"ok"`
		Pattern   string   `json:"pattern"`
		Paths     []string `json:"paths"`
		Truncated bool     `json:"truncated"`
		Limit     string   `json:"limit,omitempty"`
	}{true, pattern, paths, limit != "" || ctx.Err() != nil, limit}, 0)
}
