package yamlx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

type inner struct {
	Count int           `yaml:"count"`
	Wait  time.Duration `yaml:"wait"`
}

type target struct {
	Name   string           `yaml:"name"`
	Items  []inner          `yaml:"items"`
	Nested map[string]inner `yaml:"nested"`
	Any    any              `yaml:"any"`
}

// billionLaughs is the classic alias chain: 9 levels of 10 references,
// 10^9 nodes once expanded, in a few hundred bytes.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("any:\n  a0: &a0 [lol]\n")
	for i := 1; i <= 9; i++ {
		b.WriteString("  a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// stringBomb is a 30 KB file aliasing one 10 000-byte string 5000 times:
// 5000 nodes (under the node cap), 50 MB once expanded. The 244 KB
// file of the same shape expanded to 8 GB.
func stringBomb() string {
	return "any:\n  s: &s " + strings.Repeat("x", 10_000) + "\n  l: [" + strings.TrimSuffix(strings.Repeat("*s, ", 5000), ", ") + "]\n"
}

// TestCheckCountsExpandedBytes: the node cap alone let a file of one
// aliased long string through (before issue 22, Check accepted this one).
// Only Check runs, so the test is cheap on the code before the fix too.
func TestCheckCountsExpandedBytes(t *testing.T) {
	t.Parallel()
	_, err := Check("f.yaml", []byte(stringBomb()), DefaultLimits)
	if err == nil || !strings.Contains(err.Error(), "f.yaml:3:") || !strings.Contains(err.Error(), "bytes once aliases are expanded") {
		t.Fatalf("Check: %v, want an error naming f.yaml, line 3 and the expanded bytes", err)
	}
	// Aliasing within the cap is fine.
	small := "any:\n  s: &s " + strings.Repeat("x", 1000) + "\n  l: [" + strings.TrimSuffix(strings.Repeat("*s, ", 100), ", ") + "]\n"
	if _, err := Check("f.yaml", []byte(small), DefaultLimits); err != nil {
		t.Errorf("100 KB once expanded: %v", err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		why  string
		data string
		lim  Limits
		want *Error
	}{
		{
			name: "billion laughs",
			why:  "a 500-byte alias chain expands to 10^9 nodes and would run for minutes",
			data: billionLaughs(),
			want: &Error{File: "f.yaml", Line: 7, Col: 44, Key: "any.a5[8]", Msg: "more than 200000 nodes once aliases are expanded (an alias bomb?)", Err: ErrTooManyNodes},
		},
		{
			name: "one string aliased 5000 times",
			why:  "5000 nodes pass the node cap; 50 MB of strings once expanded (the issue's 244 KB file: 8 GB)",
			data: stringBomb(),
			want: &Error{File: "f.yaml", Line: 3, Col: 3355, Key: "any.l[837]", Msg: "more than 8388608 bytes once aliases are expanded (an alias bomb?)", Err: ErrTooManyBytes},
		},
		{
			name: "64 KB of [",
			why:  "the parser is quadratic in depth: 64 KB of [ cost 5 GB before the cap",
			data: strings.Repeat("[", 64<<10),
			want: &Error{File: "f.yaml", Line: 1, Col: 65, Msg: "nested more than 64 levels deep", Err: ErrTooDeep},
		},
		{
			name: "64 KB of {a: ",
			why:  "flow mappings nest the same way",
			data: strings.Repeat("{a: ", 16<<10),
			want: &Error{File: "f.yaml", Line: 1, Col: 257, Msg: "nested more than 64 levels deep", Err: ErrTooDeep},
		},
		{
			name: "64 KB of - ",
			why:  "block sequences nest on one line too",
			data: strings.Repeat("- ", 32<<10) + "x",
			want: &Error{File: "f.yaml", Line: 1, Col: 129, Msg: "nested more than 64 levels deep", Err: ErrTooDeep},
		},
		{
			name: "deep indentation",
			why:  "block mappings nest by indentation",
			data: func() string {
				var b strings.Builder
				for i := range 200 {
					b.WriteString(strings.Repeat(" ", i) + "k:\n")
				}
				return b.String()
			}(),
			want: &Error{File: "f.yaml", Line: 65, Col: 66, Msg: "nested more than 64 levels deep", Err: ErrTooDeep},
		},
		{
			name: "sequences at their key's indentation",
			why:  "the token scan undercounts this style; the tree check still refuses it",
			data: "any:\n" + func() string {
				var b strings.Builder
				for i := range 40 {
					ind := strings.Repeat("  ", i)
					b.WriteString(ind + "- k:\n")
				}
				return b.String()
			}(),
			lim:  Limits{MaxDepth: 50},
			want: &Error{File: "f.yaml", Line: 26, Col: 52, Key: "any[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0].k[0]", Msg: "nested more than 50 levels deep", Err: ErrTooDeep},
		},
		{
			name: "oversize",
			why:  "a file larger than the cap is refused before it is parsed",
			data: "name: " + strings.Repeat("x", 2000),
			lim:  Limits{MaxBytes: 1000},
			want: &Error{File: "f.yaml", Msg: "file too large: more than 1000 bytes (the limit for a YAML file)", Err: ErrTooLarge},
		},
		{
			name: "unknown key",
			why:  "strict decoding names the key and where it is",
			data: "name: x\nitems:\n  - count: 1\n    cuont: 2\n",
			want: &Error{File: "f.yaml", Line: 4, Col: 5, Key: "items[0].cuont", Msg: `unknown key "cuont"`, Err: ErrUnknownKey},
		},
		{
			name: "type error",
			why:  "a string where a number belongs names the key and the value",
			data: "nested:\n  a:\n    count: many\n",
			want: &Error{File: "f.yaml", Line: 3, Col: 12, Key: "nested.a.count", Msg: `wrong type: want a whole number, got "many"`, Err: ErrType},
		},
		{
			name: "syntax error",
			why:  "the parser's position is kept, and the top-level key the error is under",
			data: "name: [x\n",
			want: &Error{File: "f.yaml", Line: 1, Col: 7, Key: "name", Msg: "sequence end token ']' not found", Err: ErrSyntax},
		},
		{
			name: "not a number",
			why:  "a NaN would pass every range check written as v < lo || v > hi",
			data: "nested:\n  a: {count: 1}\nany: [1, .nan]\n",
			want: &Error{File: "f.yaml", Line: 3, Col: 10, Key: "any[1]", Msg: ".nan is not a finite number", Err: ErrType},
		},
		{
			name: "infinity",
			why:  "no setting means anything by an infinite value",
			data: "name: x\nnested:\n  a: {count: -.Inf}\n",
			want: &Error{File: "f.yaml", Line: 3, Col: 14, Key: "nested.a.count", Msg: "-.Inf is not a finite number", Err: ErrType},
		},
		{
			name: "syntax error below a key",
			why:  "a syntax error in a block names the top-level key above it",
			data: "name: x\nnested:\n  a: {count: 1\n",
			want: &Error{File: "f.yaml", Line: 3, Col: 6, Key: "nested", Msg: "could not find flow mapping end token '}'", Err: ErrSyntax},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v target
			_, err := Decode("f.yaml", []byte(tc.data), &v, tc.lim)
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("Decode: %v (%T), want an *Error (%s)", err, err, tc.why)
			}
			if diff := cmp.Diff(*tc.want, *got, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("%s: error (-want +got):\n%s", tc.why, diff)
			}
			if !errors.Is(err, tc.want.Err) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.want.Err)
			}
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	t.Parallel()
	data := "name: x\nitems:\n  - &one {count: 1, wait: 2s}\n  - *one\nnested:\n  a: {count: 3}\nany: [1, [2, [3]]]\n"
	var got target
	doc, err := Decode("f.yaml", []byte(data), &got, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := target{Name: "x", Items: []inner{{1, 2 * time.Second}, {1, 2 * time.Second}}, Nested: map[string]inner{"a": {Count: 3}}, Any: []any{uint64(1), []any{uint64(2), []any{uint64(3)}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if p, ok := doc.Pos("nested.a.count"); !ok || p != (Pos{6, 7}) {
		t.Errorf("Pos(nested.a.count) = %v, %v; want 6:7", p, ok)
	}
	if p, k, ok := doc.PosOrParent("nested.b.count"); !ok || k != "nested" || p != (Pos{5, 1}) {
		t.Errorf("PosOrParent(nested.b.count) = %v %q %v; want 5:1 nested", p, k, ok)
	}
	// An empty document leaves the value alone.
	keep := target{Name: "kept"}
	if _, err := Decode("f.yaml", []byte("# nothing\n"), &keep, Limits{}); err != nil || keep.Name != "kept" {
		t.Errorf("empty document: %v, %+v", err, keep)
	}
}

func TestDecodeFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("# padding\n", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	var v target
	if _, err := DecodeFile(big, &v, Limits{MaxBytes: 1000}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("2000-byte file with a 1000-byte cap: %v, want ErrTooLarge", err)
	}
	if _, err := DecodeFile(filepath.Join(dir, "missing.yaml"), &v, Limits{}); !errors.Is(err, ErrRead) || !strings.HasPrefix(err.Error(), filepath.Join(dir, "missing.yaml")+": open: ") {
		t.Errorf("missing file: %v, want ErrRead naming the file once", err)
	}
}

func TestErrorIsPrintable(t *testing.T) {
	t.Parallel()
	// Keys, values and file names come from the user: an escape sequence in
	// any of them must not reach the terminal raw.
	data := "name: x\n\"evil\\e[2J\": 1\n"
	var v target
	_, err := Decode("f\x1b]0;t\a.yaml", []byte(data), &v, Limits{})
	if err == nil {
		t.Fatal("unknown key accepted")
	}
	got := err.Error()
	want := `f\x1b]0;t\x07.yaml:2:1: evil\x1b[2J: unknown key "evil\x1b[2J"`
	if got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}

func BenchmarkCheckDeep(b *testing.B) {
	for _, tc := range []struct{ name, data string }{
		{"flow-64KB", strings.Repeat("[", 64<<10)},
		{"block-64KB", strings.Repeat("- ", 32<<10) + "x"},
		{"billion-laughs", billionLaughs()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Check("f.yaml", []byte(tc.data), Limits{}); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}

// upper decodes through encoding.TextUnmarshaler and refuses lower-case text.
type upper string

func (u *upper) UnmarshalText(b []byte) error {
	if s := string(b); s != strings.ToUpper(s) {
		return errors.New("not upper case: " + s)
	}
	*u = upper(b)
	return nil
}

// A value whose own UnmarshalText refuses it (a provider reference) gave an
// error with neither position nor key: the decoder does not say which value
// failed. Decode finds it along the Go type.
func TestTextUnmarshalerErrorHasPositionAndKey(t *testing.T) {
	t.Parallel()
	type doc struct {
		One  upper            `yaml:"one"`
		List []upper          `yaml:"list"`
		Map  map[string]upper `yaml:"map"`
	}
	tests := []struct {
		name, data string
		want       *Error
	}{
		{"a field", "one: abc\n", &Error{File: "f.yaml", Line: 1, Col: 6, Key: "one", Msg: "not upper case: abc", Err: ErrType}},
		{"a list item", "one: A\nlist: [B, c]\n", &Error{File: "f.yaml", Line: 2, Col: 11, Key: "list[1]", Msg: "not upper case: c", Err: ErrType}},
		{"a map value", "map:\n  k: 'x y'\n", &Error{File: "f.yaml", Line: 2, Col: 6, Key: "map.k", Msg: "not upper case: x y", Err: ErrType}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v doc
			_, err := Decode("f.yaml", []byte(tc.data), &v, DefaultLimits)
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("not an *Error: %v", err)
			}
			if d := cmp.Diff(*tc.want, *got, cmpopts.EquateErrors()); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	var v doc
	if _, err := Decode("f.yaml", []byte("one: A\nlist: [B]\nmap: {k: C}\n"), &v, DefaultLimits); err != nil || v.One != "A" || v.Map["k"] != "C" {
		t.Errorf("valid text refused or lost: %+v, %v", v, err)
	}
}

func TestMergeLaysOverOnBaseKeyByKey(t *testing.T) {
	t.Parallel()
	base := "a: {x: 1, y: 2, m: {p: 1, q: 2}}\nl: [1, 2, 3]\ns: base\n"
	tests := []struct {
		name, over, want string
	}{
		{"a key inside a mapping keeps its siblings, at every depth", "a: {m: {q: 9}}\n", "a: {x: 1, y: 2, m: {p: 1, q: 9}}\nl: [1, 2, 3]\ns: base\n"},
		{"a list replaces the base's whole (no element-wise merge)", "l: [7]\n", "a: {x: 1, y: 2, m: {p: 1, q: 2}}\nl: [7]\ns: base\n"},
		{"a scalar replaces a mapping", "a: gone\n", "a: gone\nl: [1, 2, 3]\ns: base\n"},
		{"a new key is added", "n: 3\n", "a: {x: 1, y: 2, m: {p: 1, q: 2}}\nl: [1, 2, 3]\nn: 3\ns: base\n"},
		{"an empty document changes nothing", "# only a comment\n", base},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bd, err := Check("base.yml", []byte(base), DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			od, err := Check("over.yml", []byte(tc.over), DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			merged, err := Merge(bd, []byte(base), od, []byte(tc.over))
			if err != nil {
				t.Fatal(err)
			}
			var got, want map[string]any
			if _, err := Decode("merged", merged, &got, DefaultLimits); err != nil {
				t.Fatal(err)
			}
			if _, err := Decode("want", []byte(tc.want), &want, DefaultLimits); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("merged (-want +got)\n%s", d)
			}
		})
	}
}

func TestMergeNamesTheFileOfAWrongType(t *testing.T) {
	t.Parallel()
	// The top level of a document to merge must be a mapping.
	bd, err := Check("base.yml", []byte("a: 1\n"), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	over := []byte("- 1\n- 2\n")
	od, err := Check("over.yml", over, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Merge(bd, []byte("a: 1\n"), od, over)
	var ye *Error
	if !errors.As(err, &ye) || ye.File != "over.yml" || ye.Line != 1 || !errors.Is(err, ErrType) {
		t.Errorf("err = %v, want an *Error of type at over.yml:1", err)
	}
}

// WalkScalars follows the Go type through fields, maps, lists and pointers,
// giving each scalar's type and key, and skips what the type does not hold.
func TestWalkScalarsFollowsTheGoType(t *testing.T) {
	t.Parallel()
	type leaf struct {
		N *int `yaml:"n"`
	}
	type doc struct {
		Name  string          `yaml:"name"`
		Wait  time.Duration   `yaml:"wait"`
		Items []leaf          `yaml:"items"`
		Map   map[string]leaf `yaml:"map"`
		Pair  [2]float64      `yaml:"pair"`
	}
	data := "name: x\nwait: 5s\nitems:\n  - {n: 1}\n  - n: 2\nmap: {a: {n: 3, other: 4}, b: {n: null}}\npair: [0.5, 1]\nunknown: {n: 5}\n"
	d, err := Check("f.yaml", []byte(data), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = d.WalkScalars(reflect.TypeFor[*doc](), func(n ast.ScalarNode, t reflect.Type, key string) error {
		got = append(got, fmt.Sprintf("%s %s %s %d:%d", key, t, n.GetToken().Value, n.GetToken().Position.Line, n.GetToken().Position.Column))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"name string x 1:7", "wait time.Duration 5s 2:7", "items[0].n int 1 4:9", "items[1].n int 2 5:8",
		"map.a.n int 3 6:14", "pair[0] float64 0.5 7:8", "pair[1] float64 1 7:13"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("visited (-want +got)\n%s", d)
	}
	stop := errors.New("stop")
	n := 0
	if err := d.WalkScalars(reflect.TypeFor[doc](), func(ast.ScalarNode, reflect.Type, string) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("after an error: err %v, %d visits; want stop, 1", err, n)
	}
}
