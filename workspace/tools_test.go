package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func tenLines() string {
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "line %02d\n", i)
	}
	return b.String()
}

type readAnswer struct {
	OK         bool   `json:"ok"`
	Path       string `json:"path"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines"`
	Truncated  bool   `json:"truncated"`
	Limit      string `json:"limit"`
	Content    string `json:"content"`
	Refusal    string `json:"refusal"`
}

func TestReadFileRanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"ten.txt": tenLines(), "crlf.txt": "a\r\nb\r\n", "empty.txt": "", "long.txt": strings.Repeat("x", 100) + "\n"})
	lim := DefaultLimits()
	lim.MaxReadBytes = 40 // each "N\tline NN" is 9 or 10 bytes, plus a newline between lines
	lim.MaxFileBytes = 1000
	f := open(t, dir, Options{Limits: lim})
	s := f.Session(nil)
	write(t, dir, map[string]string{"huge.txt": strings.Repeat("y\n", 600)})
	cases := []struct {
		name string
		args string
		want readAnswer
	}{
		{"range", `{"path":"ten.txt","start_line":3,"end_line":5}`,
			readAnswer{OK: true, Path: "ten.txt", StartLine: 3, EndLine: 5, TotalLines: 10, Content: "3\tline 03\n4\tline 04\n5\tline 05"}},
		{"end past the file is clamped", `{"path":"./ten.txt","start_line":9,"end_line":50}`,
			readAnswer{OK: true, Path: "ten.txt", StartLine: 9, EndLine: 10, TotalLines: 10, Content: "9\tline 09\n10\tline 10"}},
		{"truncated at whole lines: 4 lines fit in 40 bytes", `{"path":"ten.txt"}`,
			readAnswer{OK: true, Path: "ten.txt", StartLine: 1, EndLine: 4, TotalLines: 10, Truncated: true,
				Limit: "limit reached: max_read_bytes (40): lines 1-4 returned; call again with start_line 5", Content: "1\tline 01\n2\tline 02\n3\tline 03\n4\tline 04"}},
		{"the model continues from the next line", `{"path":"ten.txt","start_line":5}`,
			readAnswer{OK: true, Path: "ten.txt", StartLine: 5, EndLine: 8, TotalLines: 10, Truncated: true,
				Limit: "limit reached: max_read_bytes (40): lines 5-8 returned; call again with start_line 9", Content: "5\tline 05\n6\tline 06\n7\tline 07\n8\tline 08"}},
		{"carriage returns dropped", `{"path":"crlf.txt"}`,
			readAnswer{OK: true, Path: "crlf.txt", StartLine: 1, EndLine: 2, TotalLines: 2, Content: "1\ta\n2\tb"}},
		{"empty file", `{"path":"empty.txt"}`,
			readAnswer{OK: true, Path: "empty.txt", StartLine: 1, EndLine: 0, TotalLines: 0}},
		{"start past the end", `{"path":"ten.txt","start_line":11}`, readAnswer{Refusal: RefusalBadArguments}},
		{"end before start", `{"path":"ten.txt","start_line":5,"end_line":4}`, readAnswer{Refusal: RefusalBadArguments}},
		{"start zero", `{"path":"ten.txt","start_line":0}`, readAnswer{Refusal: RefusalBadArguments}},
		{"one line longer than max_read_bytes is a limit", `{"path":"long.txt"}`, readAnswer{Refusal: RefusalLimit}},
		{"file over max_file_bytes", `{"path":"huge.txt"}`, readAnswer{Refusal: RefusalTooLarge}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := callRaw(t.Context(), s, ToolReadFile, tc.args)
			var got readAnswer
			if err := json.Unmarshal([]byte(o.Result), &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s\n%s", d, o.Result)
			}
			if o.OK && o.Bytes != len(got.Content) {
				t.Errorf("Bytes %d, content is %d bytes", o.Bytes, len(got.Content))
			}
			if tc.want.Refusal == RefusalLimit && !strings.HasPrefix(o.Reason, "limit reached: ") {
				t.Errorf("limit reason %q does not start with \"limit reached: \"", o.Reason)
			}
		})
	}
}

// OpenAI strict mode makes optional arguments nullable, so a model may
// send null for them: that is the argument left out, not a bad argument.
func TestNullOptionalArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	s := open(t, dir, Options{}).Session(nil)
	for _, tc := range []struct{ tool, args string }{
		{ToolReadFile, `{"path":"a.go","start_line":null,"end_line":null}`},
		{ToolGrep, `{"pattern":"func","path_glob":null,"context":null}`},
	} {
		if o := callRaw(t.Context(), s, tc.tool, tc.args); !o.OK {
			t.Errorf("%s %s: %s, want it served", tc.tool, tc.args, o.Result)
		}
	}
}

func TestBadArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.go": "package a\n"})
	s := open(t, dir, Options{}).Session(nil)
	cases := []struct {
		name, tool, args string
		field            string // the error must name it
	}{
		{"path of the wrong type", ToolReadFile, `{"path":3}`, "path"},
		{"line of the wrong type", ToolReadFile, `{"path":"a.go","start_line":"one"}`, "start_line"},
		{"unknown argument", ToolReadFile, `{"path":"a.go","mode":"w"}`, "mode: not an argument of this tool"},
		{"unknown argument beside a wrong type", ToolGrep, `{"pattern":1,"flags":"i"}`, "flags: not an argument of this tool"},
		{"missing path", ToolListDir, `{}`, "path"},
		{"missing pattern", ToolGrep, `{"path_glob":"**"}`, "pattern"},
		{"not JSON", ToolGlob, `{"pattern":`, "JSON"},
		{"an array, not an object", ToolReadFile, `[1]`, "arguments: must be a JSON object, got array"},
		{"two values", ToolReadFile, `{"path":"a.go"} {}`, "more than one JSON value"},
		{"bad regexp", ToolGrep, `{"pattern":"(unclosed"}`, "pattern"},
		{"bad path_glob", ToolGrep, `{"pattern":"x","path_glob":"[a"}`, "path_glob"},
		{"context too large", ToolGrep, `{"pattern":"x","context":9}`, "context"},
		{"bad glob", ToolGlob, `{"pattern":"[a"}`, "pattern"},
		{"unknown tool", "write_file", `{"path":"a.go"}`, "write_file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := callRaw(t.Context(), s, tc.tool, tc.args)
			m := decode(t, o)
			if m["ok"] != false || m["refusal"] != RefusalBadArguments || !strings.Contains(fmt.Sprint(m["error"]), tc.field) {
				t.Errorf("want bad_arguments naming %q, got %s", tc.field, o.Result)
			}
			if strings.Contains(o.Result, "Go value") || strings.Contains(o.Result, "struct {") {
				t.Errorf("the error shows Go internals to the model: %s", o.Result)
			}
		})
	}
}

func TestMaxToolCallsAcrossSessions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.go": "package a\n"})
	lim := DefaultLimits()
	lim.MaxToolCalls = 123
	f := open(t, dir, Options{Limits: lim})
	const sessions, perSession = 8, 40 // 320 calls for 123 allowed
	var mu sync.Mutex
	ok, limited := 0, 0
	var wg sync.WaitGroup
	for i := range sessions {
		s := f.Session(nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range perSession {
				tool, args := ToolReadFile, `{"path":"a.go"}`
				if (i+j)%2 == 0 {
					tool, args = ToolGrep, `{"pattern":"package"}`
				}
				o := callRaw(t.Context(), s, tool, args)
				mu.Lock()
				switch {
				case o.OK:
					ok++
				case o.Refusal == RefusalLimit && strings.HasPrefix(o.Reason, "limit reached: max_tool_calls"):
					limited++
				default:
					t.Errorf("unexpected answer %s", o.Result)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if d := cmp.Diff([2]int{123, sessions*perSession - 123}, [2]int{ok, limited}); d != "" {
		t.Errorf("(ok, limited) (-want +got):\n%s", d)
	}
}

func TestLimitsTruncate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 12 {
		files[fmt.Sprintf("f%02d.go", i)] = "package f\nvar x = 1\nvar y = 1\n"
	}
	write(t, dir, files)
	lim := DefaultLimits()
	lim.MaxGrepMatches = 5
	lim.MaxListEntries = 4
	lim.MaxToolTurns = 3
	lim.MaxReadBytes = 30 // three "var x = 1" lines (9 bytes each), not four
	s := open(t, dir, Options{Limits: lim}).Session(nil)
	if s.Turns() != 3 {
		t.Errorf("Turns() = %d, want max_tool_turns 3", s.Turns())
	}
	type ans struct {
		Matches []struct {
			Path string `json:"path"`
			Line int    `json:"line"`
		} `json:"matches"`
		Paths     []string                `json:"paths"`
		Entries   []struct{ Name string } `json:"entries"`
		Truncated bool                    `json:"truncated"`
		Limit     *string                 `json:"limit"`
	}
	getCtx := func(ctx context.Context, tool, args string) ans {
		var a ans
		o := callRaw(ctx, s, tool, args)
		if !o.OK {
			t.Fatalf("%s: %s", tool, o.Result)
		}
		if err := json.Unmarshal([]byte(o.Result), &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	get := func(tool, args string) ans { return getCtx(t.Context(), tool, args) }
	// limitIs reports whether the answer names the limit it reached, in
	// the form the model is told ("limit reached: <key> (<value>): ...").
	limitIs := func(a ans, want string) bool {
		return a.Truncated && a.Limit != nil && strings.HasPrefix(*a.Limit, "limit reached: "+want+": ")
	}
	g := get(ToolGrep, `{"pattern":"= 1","path_glob":"f0[0-5].go"}`)
	if len(g.Matches) != 3 || !limitIs(g, "max_read_bytes (30)") {
		t.Errorf("grep over max_read_bytes of matched text: %+v", g)
	}
	lim.MaxReadBytes = DefaultLimits().MaxReadBytes
	s = open(t, dir, Options{Limits: lim}).Session(nil)
	g = get(ToolGrep, `{"pattern":"= 1"}`)
	if len(g.Matches) != 5 || !limitIs(g, "max_grep_matches (5)") || g.Matches[4].Path != "f02.go" || g.Matches[4].Line != 2 {
		t.Errorf("grep over max_grep_matches: %+v", g)
	}
	if g := get(ToolGrep, `{"pattern":"= 1","path_glob":"f0[01].go"}`); len(g.Matches) != 4 || g.Truncated || g.Limit != nil {
		t.Errorf("grep under the limit: %+v", g)
	}
	if l := get(ToolListDir, `{"path":"."}`); len(l.Entries) != 4 || !limitIs(l, "max_list_entries (4)") || l.Entries[3].Name != "f03.go" {
		t.Errorf("list_dir over max_list_entries: %+v", l)
	}
	if l := get(ToolListDir, `{"path":"."}`); l.Limit == nil || !strings.Contains(*l.Limit, "glob") {
		t.Errorf("list_dir over max_list_entries must say how to see the rest: %+v", l)
	}
	if gl := get(ToolGlob, `{"pattern":"*.go"}`); len(gl.Paths) != 4 || !limitIs(gl, "max_list_entries (4)") {
		t.Errorf("glob over max_list_entries: %+v", gl)
	}
	if gl := get(ToolGlob, `{"pattern":"f0[0-3].go"}`); len(gl.Paths) != 4 || gl.Truncated || gl.Limit != nil {
		t.Errorf("glob of exactly max_list_entries paths is complete: %+v", gl)
	}
	// A cancelled call stops walking: its answer is partial, so it says
	// truncated (no limit was reached, so it names none).
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tool := range []string{ToolGrep, ToolGlob} {
		args := `{"pattern":"= 1"}`
		if tool == ToolGlob {
			args = `{"pattern":"*.go"}`
		}
		if a := getCtx(ctx, tool, args); !a.Truncated || a.Limit != nil {
			t.Errorf("%s with a cancelled context: %+v, want truncated:true and no limit", tool, a)
		}
	}
}

func TestValidateNamesField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		field string
		set   func(*Limits)
	}{
		{"max_read_bytes", func(l *Limits) { l.MaxReadBytes = 0 }},
		{"max_file_bytes", func(l *Limits) { l.MaxFileBytes = -1 }},
		{"max_grep_matches", func(l *Limits) { l.MaxGrepMatches = 0 }},
		{"max_list_entries", func(l *Limits) { l.MaxListEntries = 0 }},
		{"max_tool_turns", func(l *Limits) { l.MaxToolTurns = 0 }},
		{"max_tool_calls", func(l *Limits) { l.MaxToolCalls = 0 }},
	} {
		l := DefaultLimits()
		tc.set(&l)
		if err := l.Validate(); err == nil || !strings.Contains(err.Error(), tc.field+" must be positive") {
			t.Errorf("%s: Validate() = %v", tc.field, err)
		}
	}
	if err := DefaultLimits().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	// Invalid lists every bad limit (the config reports each at its key).
	l := DefaultLimits()
	l.MaxReadBytes, l.MaxToolCalls = 0, -3
	want := []LimitError{{"max_read_bytes", 0}, {"max_tool_calls", -3}}
	if got := l.Invalid(); !slices.Equal(got, want) {
		t.Errorf("Invalid() = %v, want %v", got, want)
	}
	if got := DefaultLimits().Invalid(); got != nil {
		t.Errorf("defaults: Invalid() = %v", got)
	}
}

func TestGitignore(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	s := open(t, fx.root, Options{}).Session(nil)
	var l struct {
		Entries []struct{ Name string } `json:"entries"`
	}
	o := call(t, s, ToolListDir, map[string]any{"path": "."})
	json.Unmarshal([]byte(o.Result), &l)
	names := map[string]bool{}
	for _, e := range l.Entries {
		names[e.Name] = true
	}
	for name, want := range map[string]bool{"build": false, "app.log": false, "keep.log": true, "main.go": true, "sub": true} {
		if names[name] != want {
			t.Errorf("list_dir .: %s shown=%v, want %v (.gitignore: build/, *.log, !keep.log)", name, names[name], want)
		}
	}
	o = call(t, s, ToolListDir, map[string]any{"path": "sub"})
	if strings.Contains(o.Result, "gen.go") || !strings.Contains(o.Result, "real.go") {
		t.Errorf("nested sub/.gitignore not honoured: %s", o.Result)
	}
	if o := call(t, s, ToolListDir, map[string]any{"path": "build"}); o.Refusal != RefusalNotFound {
		t.Errorf("list_dir of an ignored dir: %s", o.Result)
	}
	var g struct {
		Matches []struct{ Path string } `json:"matches"`
	}
	o = call(t, s, ToolGrep, map[string]any{"pattern": "password"})
	json.Unmarshal([]byte(o.Result), &g)
	var got []string
	for _, m := range g.Matches {
		got = append(got, m.Path)
	}
	want := []string{"docs/readme.md", "internal/db/db.go", "keep.log", "sub/real.go"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("grep skips gitignored, denied and binary files (-want +got):\n%s", d)
	}
	o = call(t, s, ToolGlob, map[string]any{"pattern": "**/*.go"})
	var gl struct{ Paths []string }
	json.Unmarshal([]byte(o.Result), &gl)
	want = []string{"internal/auth/session.go", "internal/auth/session_test.go", "internal/db/db.go", "main.go", "sub/real.go"}
	if d := cmp.Diff(want, gl.Paths); d != "" {
		t.Errorf("glob (-want +got):\n%s", d)
	}
	if o := call(t, s, ToolReadFile, map[string]any{"path": "sub/gen.go"}); !o.OK {
		t.Errorf("read_file of a gitignored file is allowed: %s", o.Result)
	}
}

func TestScope(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	f := open(t, fx.root, Options{})
	cases := []struct {
		name  string
		why   string
		scope []string
		tool  string
		args  string
		want  string // refusal, or "" for ok
		has   []string
		hasnt []string
	}{
		{"read inside", "a directory covers what is under it", []string{"internal/auth"}, ToolReadFile, `{"path":"internal/auth/session.go"}`, "", nil, nil},
		{"read outside", "outside the scope is refused", []string{"internal/auth"}, ToolReadFile, `{"path":"main.go"}`, RefusalScope, nil, nil},
		{"prefix is not a parent", "internal/authz is not under internal/auth", []string{"internal/au"}, ToolReadFile, `{"path":"internal/auth/session.go"}`, RefusalScope, nil, nil},
		{"list root", "an ancestor shows only what leads into the scope", []string{"internal/auth"}, ToolListDir, `{"path":"."}`, "", []string{`"internal"`}, []string{"main.go", "docs", "sub"}},
		{"list parent", "siblings of the scope are hidden", []string{"internal/auth"}, ToolListDir, `{"path":"internal"}`, "", []string{`"auth"`}, []string{`"db"`}},
		{"list sibling", "a directory outside the scope", []string{"internal/auth"}, ToolListDir, `{"path":"docs"}`, RefusalScope, nil, nil},
		{"grep filtered", "grep results stay in scope", []string{"internal/auth"}, ToolGrep, `{"pattern":"package"}`, "", []string{"internal/auth/session.go"}, []string{"main.go", "db.go", "real.go"}},
		{"glob filtered", "glob results stay in scope", []string{"internal/auth"}, ToolGlob, `{"pattern":"**"}`, "", []string{"internal/auth/session_test.go"}, []string{"main.go"}},
		{"glob scope read", "a glob scope entry", []string{"**/*_test.go"}, ToolReadFile, `{"path":"internal/auth/session_test.go"}`, "", nil, nil},
		{"glob scope refuses", "a file the glob does not match", []string{"**/*_test.go"}, ToolReadFile, `{"path":"internal/auth/session.go"}`, RefusalScope, nil, nil},
		{"glob scope grep", "grep under a glob scope", []string{"**/*_test.go"}, ToolGrep, `{"pattern":"package"}`, "", []string{"session_test.go"}, []string{`"internal/auth/session.go"`, "main.go"}},
		{"several entries", "any entry admits", []string{"docs", "main.go"}, ToolReadFile, `{"path":"main.go"}`, "", nil, nil},
		{"symlink out of scope", "a link in scope naming a file out of scope", []string{"link_in"}, ToolReadFile, `{"path":"link_in"}`, RefusalScope, nil, nil},
		{"whole root", "an empty scope is the whole root", nil, ToolReadFile, `{"path":"main.go"}`, "", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.args, "link_in") && !fx.links {
				t.Skip("symlinks cannot be made here")
			}
			o := callRaw(t.Context(), f.Session(tc.scope), tc.tool, tc.args)
			if o.Refusal != tc.want || (tc.want == "") != o.OK {
				t.Fatalf("%s: want refusal %q, got %s", tc.why, tc.want, o.Result)
			}
			for _, h := range tc.has {
				if !strings.Contains(o.Result, h) {
					t.Errorf("%s: answer lacks %s: %s", tc.why, h, o.Result)
				}
			}
			for _, h := range tc.hasnt {
				if strings.Contains(o.Result, h) {
					t.Errorf("%s: answer shows %s: %s", tc.why, h, o.Result)
				}
			}
		})
	}
}

func TestGrepContext(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	s := open(t, fx.root, Options{}).Session(nil)
	type match struct {
		Path   string   `json:"path"`
		Line   int      `json:"line"`
		Text   string   `json:"text"`
		Before []string `json:"before"`
		After  []string `json:"after"`
	}
	cases := []struct {
		name, args string
		want       []match
		bytes      int
	}{
		{"context 2", `{"pattern":"a == b","path_glob":"internal/**","context":2}`,
			[]match{{Path: "internal/auth/session.go", Line: 7, Text: "\treturn a == b", Before: []string{"// Check compares tokens.", "func Check(a, b string) bool {"}, After: []string{"}", ""}}},
			len("\treturn a == b") + len("// Check compares tokens.") + len("func Check(a, b string) bool {") + 1},
		{"context clipped at the file's start", `{"pattern":"^package","path_glob":"./internal/auth/session.go","context":1}`,
			[]match{{Path: "internal/auth/session.go", Line: 1, Text: "package auth", After: []string{""}}}, len("package auth")},
		{"no context: before/after omitted", `{"pattern":"^func","path_glob":"**/session.go"}`,
			[]match{{Path: "internal/auth/session.go", Line: 6, Text: "func Check(a, b string) bool {"}, {Path: "internal/auth/session.go", Line: 10, Text: "func safe(a, b []byte) bool {"}},
			len("func Check(a, b string) bool {") + len("func safe(a, b []byte) bool {")},
		{"path_glob matching nothing", `{"pattern":"x","path_glob":"**/*.rs"}`, []match{}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := callRaw(t.Context(), s, ToolGrep, tc.args)
			var got struct {
				Matches []match `json:"matches"`
			}
			if err := json.Unmarshal([]byte(o.Result), &got); err != nil || !o.OK {
				t.Fatalf("%v %s", err, o.Result)
			}
			if d := cmp.Diff(tc.want, got.Matches); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if strings.Contains(tc.name, "omitted") && strings.Contains(o.Result, "before") {
				t.Errorf("before/after present with context 0: %s", o.Result)
			}
			if o.Bytes != tc.bytes {
				t.Errorf("Bytes = %d, want %d", o.Bytes, tc.bytes)
			}
		})
	}
}

func TestDefinitions(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), Options{}).Session(nil)
	var names []string
	for _, d := range s.Definitions() {
		names = append(names, d.Name)
		var sch struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(d.Parameters, &sch); err != nil {
			t.Fatalf("%s: parameters are not JSON: %v", d.Name, err)
		}
		if sch.Type != "object" || sch.AdditionalProperties == nil || *sch.AdditionalProperties || len(sch.Required) != 1 {
			t.Errorf("%s: %s", d.Name, d.Parameters)
		}
		if _, ok := sch.Properties[sch.Required[0]]; !ok {
			t.Errorf("%s: required %s is not a property", d.Name, sch.Required[0])
		}
		if len(d.Description) < 80 {
			t.Errorf("%s: description too thin for a model: %q", d.Name, d.Description)
		}
	}
	if d := cmp.Diff([]string{ToolListDir, ToolReadFile, ToolGrep, ToolGlob}, names); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestGrepAnchors: grep skips files with no match in one pass; anchors
// must still mean the start and end of each line.
func TestGrepAnchors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.txt": "x\nfoo\nbar foo\n", "crlf.txt": "one\r\nfoo\r\n"})
	s := open(t, dir, Options{}).Session(nil)
	cases := []struct {
		name, pattern string
		want          []string // path:line
	}{
		{"^ is a line start", "^foo", []string{"a.txt:2", "crlf.txt:2"}},
		{"$ is a line end, also before CRLF", "foo$", []string{"a.txt:2", "a.txt:3", "crlf.txt:2"}},
		{`\A is each line's start`, `\Afoo`, []string{"a.txt:2", "crlf.txt:2"}},
		{`\z is each line's end`, `bar foo\z`, []string{"a.txt:3"}},
		{"case-insensitive flag", "(?i)^FOO$", []string{"a.txt:2", "crlf.txt:2"}},
		{"^ with multi-line mode turned off is still a line start", "(?-m)^foo", []string{"a.txt:2", "crlf.txt:2"}},
		{"$ with multi-line mode turned off is still a line end", "(?-m:foo$)", []string{"a.txt:2", "a.txt:3", "crlf.txt:2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := call(t, s, ToolGrep, map[string]any{"pattern": tc.pattern})
			var a struct {
				Matches []struct {
					Path string
					Line int
				}
			}
			if err := json.Unmarshal([]byte(o.Result), &a); err != nil || !o.OK {
				t.Fatalf("%v %s", err, o.Result)
			}
			got := []string{}
			for _, m := range a.Matches {
				got = append(got, fmt.Sprintf("%s:%d", m.Path, m.Line))
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// Reports list refusal kinds in one order: the attempts to get out or at
// what is denied first, then scope and the limits, then the rest by name.
func TestCompareRefusalKinds(t *testing.T) {
	t.Parallel()
	kinds := []string{RefusalBinary, RefusalLimit, "zz", RefusalScope, RefusalNotFound, RefusalDenied, RefusalEscape}
	slices.SortFunc(kinds, CompareRefusalKinds)
	want := []string{RefusalEscape, RefusalDenied, RefusalScope, RefusalLimit, RefusalBinary, RefusalNotFound, "zz"}
	if !slices.Equal(kinds, want) {
		t.Errorf("order %v, want %v", kinds, want)
	}
}
