// Package yamlx is the one strict YAML reader of swarm. Every YAML file the
// program reads (configuration, sandbox scenarios and sweeps, compare files,
// mock scripts and faults) goes through it, so every one gets the same
// protections before a single Go value is built:
//
//   - a size cap (Limits.MaxBytes), checked while reading;
//   - a nesting-depth cap (Limits.MaxDepth), checked on the lexer's token
//     stream before the parser runs (the parser's cost grows with the square
//     of the nesting depth: 64 KB of "[" would cost gigabytes), then exactly
//     on the syntax tree;
//   - alias-expansion caps (Limits.MaxNodes, Limits.MaxExpandedBytes): the
//     number of nodes, and the bytes of scalars, the document holds once
//     every alias is expanded, computed on the syntax tree with one pass, so a
//     500-byte "billion laughs" chain, or a 244 KB file aliasing one long
//     string 40 000 times (8 GB once decoded and merged), is refused at once;
//   - no .nan or .inf: every number swarm reads is finite.
//
// Decoding is strict: an unknown key or a value of the wrong type is an
// *Error naming file:line:col and the dotted key, taken from the decoder's
// own token positions.
//
// The package imports nothing of swarm's, so any package may use it.
package yamlx

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/scanner"
	"github.com/goccy/go-yaml/token"

	"github.com/swarm-dev/swarm/internal/safeio"
	"github.com/swarm-dev/swarm/internal/textsafe"
)

// Limits bound what one YAML document may cost. A zero field takes the
// default's value.
type Limits struct {
	MaxBytes int64 // size of the file
	MaxDepth int   // nesting of mappings and sequences
	MaxNodes int   // nodes after every alias is expanded
	// MaxExpandedBytes bounds the bytes of the scalars (keys and values)
	// once every alias is expanded.
	MaxExpandedBytes int64
}

// Default limits: far above any file swarm ships or documents (config.yml is
// 5 KB and 5 levels deep), far below what hurts: a 256 KiB file costs the
// lexer at most about 60 MB.
const (
	DefaultMaxBytes = 256 << 10
	DefaultMaxDepth = 64
	DefaultMaxNodes = 200_000
	// DefaultMaxExpandedBytes: 32 times the largest file, far above what
	// any file swarm reads expands to without aliases (its own size).
	DefaultMaxExpandedBytes = 32 * DefaultMaxBytes
)

// DefaultLimits are the limits used when a caller has no reason to differ.
var DefaultLimits = Limits{MaxBytes: DefaultMaxBytes, MaxDepth: DefaultMaxDepth, MaxNodes: DefaultMaxNodes, MaxExpandedBytes: DefaultMaxExpandedBytes}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultMaxNodes
	}
	if l.MaxExpandedBytes <= 0 {
		l.MaxExpandedBytes = DefaultMaxExpandedBytes
	}
	return l
}

// Sentinels; every error this package returns wraps exactly one of them.
var (
	ErrTooLarge     = errors.New("file too large")
	ErrTooDeep      = errors.New("nested too deeply")
	ErrTooManyNodes = errors.New("too many nodes after alias expansion")
	ErrTooManyBytes = errors.New("too many bytes after alias expansion")
	ErrSyntax       = errors.New("YAML syntax error")
	ErrUnknownKey   = errors.New("unknown key")
	ErrType         = errors.New("wrong type")
	ErrRead         = errors.New("cannot read file")
)

// Error is one problem in a YAML file. Line and Col are 1-based (0: unknown);
// Key is the dotted path of the key concerned ("scales.ss-10.reviewers",
// "rules[2].text"), empty when none applies.
type Error struct {
	File string
	Line int
	Col  int
	Key  string
	Msg  string
	Err  error // the sentinel
}

// Error renders file:line:col: key: message, with every user-controlled part
// made safe for a terminal.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(textsafe.Printable(e.File))
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	if e.Key != "" {
		b.WriteString(": ")
		b.WriteString(textsafe.Printable(e.Key))
	}
	b.WriteString(": ")
	b.WriteString(textsafe.Printable(e.Msg))
	return b.String()
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Doc is a checked document: its syntax tree and where each key is.
type Doc struct {
	Name string
	File *ast.File
	pos  map[string]Pos    // dotted key → position of the key
	keys map[Pos]string    // position of any node → dotted key that holds it
	text map[string]string // dotted key → its scalar value as written
}

// Empty reports whether the document holds no value (only comments, or
// nothing).
func (d *Doc) Empty() bool {
	if d == nil || d.File == nil {
		return true
	}
	for _, doc := range d.File.Docs {
		if doc.Body != nil {
			if _, ok := doc.Body.(*ast.CommentGroupNode); !ok {
				return false
			}
		}
	}
	return true
}

// Pos is a 1-based line and column.
type Pos struct{ Line, Col int }

// Pos returns where key (dotted, e.g. "scales.ss-10.reviewers" or
// "agents[1].count") is set in the file.
func (d *Doc) Pos(key string) (Pos, bool) {
	if d == nil {
		return Pos{}, false
	}
	p, ok := d.pos[key]
	return p, ok
}

// PosOrParent returns the position of key or, if the file does not set it,
// of its closest parent the file sets; the key returned is the one found.
func (d *Doc) PosOrParent(key string) (Pos, string, bool) {
	for k := key; k != ""; {
		if p, ok := d.Pos(k); ok {
			return p, k, true
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return Pos{}, "", false
}

// Text returns the scalar value set at key as the file writes it (1e11,
// not 100000000000), for messages about a value.
func (d *Doc) Text(key string) (string, bool) {
	if d == nil {
		return "", false
	}
	t, ok := d.text[key]
	return t, ok
}

// KeyAt returns the dotted key whose key or value token is at p.
func (d *Doc) KeyAt(p Pos) (string, bool) {
	if d == nil {
		return "", false
	}
	k, ok := d.keys[p]
	return k, ok
}

// ReadFile reads path, refusing more than lim.MaxBytes (without reading the
// rest) and anything but a regular file (a FIFO would block the reader for
// ever, a device never ends).
func ReadFile(path string, lim Limits) ([]byte, error) {
	f, _, err := safeio.Open(path, false)
	if errors.Is(err, safeio.ErrNotRegular) {
		return nil, &Error{File: path, Msg: "not a regular file (a FIFO, device or directory): give the path of a YAML file", Err: ErrRead}
	}
	if err != nil {
		return nil, &Error{File: path, Msg: errText(err), Err: ErrRead}
	}
	defer f.Close()
	return Read(path, f, lim)
}

// Read reads r (named name in errors, e.g. "stdin"), refusing more than
// lim.MaxBytes (without reading the rest).
func Read(name string, r io.Reader, lim Limits) ([]byte, error) {
	lim = lim.withDefaults()
	b, err := io.ReadAll(io.LimitReader(r, lim.MaxBytes+1))
	if err != nil {
		return nil, &Error{File: name, Msg: errText(err), Err: ErrRead}
	}
	if int64(len(b)) > lim.MaxBytes {
		return nil, tooLarge(name, lim)
	}
	return b, nil
}

// errText is an os error's text without the path (the Error names the file).
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

func tooLarge(name string, lim Limits) error {
	return &Error{File: name, Msg: fmt.Sprintf("file too large: more than %d bytes (the limit for a YAML file)", lim.MaxBytes), Err: ErrTooLarge}
}

// DecodeFile reads path with ReadFile and decodes it with Decode.
func DecodeFile(path string, v any, lim Limits) (*Doc, error) {
	b, err := ReadFile(path, lim)
	if err != nil {
		return nil, err
	}
	return Decode(path, b, v, lim)
}

// Decode checks data (named name in errors) with Check, then decodes its
// first document strictly into v (a pointer). An empty document leaves v
// unchanged.
func Decode(name string, data []byte, v any, lim Limits) (*Doc, error) {
	doc, err := Check(name, data, lim)
	if err != nil {
		return nil, err
	}
	return doc, doc.Decode(data, v)
}

// Merge lays the document over on top of the document base and returns
// the result as one YAML document: mappings merge key by key, at any depth;
// any other value of over (a scalar, a list) replaces base's. Both must
// have been checked (Check); baseData and overData are the bytes each was
// checked from. An empty over leaves base as it is.
//
// Decoding over onto a Go value already filled from base would not do
// this: goccy/go-yaml keeps the struct fields over does not set but
// replaces a map field whole (a file setting scales.ss-50.reviewers would
// lose every other scale and ss-50's other keys).
func Merge(base *Doc, baseData []byte, over *Doc, overData []byte) ([]byte, error) {
	var b, o map[string]any
	if err := base.Decode(baseData, &b); err != nil {
		return nil, err
	}
	if err := over.Decode(overData, &o); err != nil {
		return nil, err
	}
	return yaml.Marshal(mergeMaps(b, o))
}

// mergeMaps merges o into b: mappings merge key by key, anything else
// replaces.
func mergeMaps(b, o map[string]any) map[string]any {
	if b == nil {
		b = map[string]any{}
	}
	for k, v := range o {
		bm, ok1 := b[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			b[k] = mergeMaps(bm, om)
		} else {
			b[k] = v
		}
	}
	return b
}

// Decode decodes data, the bytes d was checked from, strictly into v (a
// pointer). An empty document leaves v unchanged.
func (d *Doc) Decode(data []byte, v any) error {
	if d.Empty() {
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data), yaml.Strict(), yaml.DisallowUnknownField())
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		var ye yaml.Error
		if !errors.As(err, &ye) {
			// An error of a value's own UnmarshalText carries no
			// position: find the value that refuses its text.
			if e := d.textError(reflect.TypeOf(v)); e != nil {
				return e
			}
		}
		return d.DecodeError(err)
	}
	return nil
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// textError returns, as an *Error with the value's position and key, the
// first scalar of the document whose Go type (along t) decodes through
// encoding.TextUnmarshaler and refuses its text; nil when there is none.
func (d *Doc) textError(t reflect.Type) error {
	return d.WalkScalars(t, func(n ast.ScalarNode, t reflect.Type, key string) error {
		if !reflect.PointerTo(t).Implements(textUnmarshaler) {
			return nil
		}
		text := n.GetToken().Value
		if sn, ok := n.(*ast.StringNode); ok {
			text = sn.Value
		}
		if err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(text)); err != nil {
			tk := n.GetToken()
			return &Error{File: d.Name, Line: tk.Position.Line, Col: tk.Position.Column, Key: key, Msg: err.Error(), Err: ErrType}
		}
		return nil
	})
}

// WalkScalars visits, in document order, every scalar value of the document
// along t, the Go type decoding it fills: fn gets the scalar, the Go type
// it decodes into (pointers removed) and its dotted key
// ("scales.ss-10.reviewers", "rules[2]"). Not visited: keys t has no field
// or map for, a list where t is no slice or array, nulls, aliases and
// comments. The first error fn returns ends the walk and is returned.
func (d *Doc) WalkScalars(t reflect.Type, fn func(n ast.ScalarNode, t reflect.Type, key string) error) error {
	if d == nil || d.File == nil || t == nil {
		return nil
	}
	var walk func(n ast.Node, t reflect.Type, path string) error
	walk = func(n ast.Node, t reflect.Type, path string) error {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch v := n.(type) {
		case nil:
			return nil
		case *ast.DocumentNode:
			return walk(v.Body, t, path)
		case *ast.AnchorNode:
			return walk(v.Value, t, path)
		case *ast.TagNode:
			return walk(v.Value, t, path)
		case *ast.MappingNode:
			for _, mv := range v.Values {
				if err := walk(mv, t, path); err != nil {
					return err
				}
			}
		case *ast.MappingValueNode:
			k := v.Key.GetToken().Value
			p := strings.TrimPrefix(path+"."+k, ".")
			switch t.Kind() {
			case reflect.Map:
				return walk(v.Value, t.Elem(), p)
			case reflect.Struct:
				if ft, ok := yamlField(t, k); ok {
					return walk(v.Value, ft, p)
				}
			}
		case *ast.SequenceNode:
			if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
				for i, x := range v.Values {
					if err := walk(x, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
						return err
					}
				}
			}
		case *ast.NullNode, *ast.AliasNode, *ast.CommentGroupNode, *ast.CommentNode:
		case ast.ScalarNode:
			return fn(v, t, path)
		}
		return nil
	}
	for _, doc := range d.File.Docs {
		if err := walk(doc, t, ""); err != nil {
			return err
		}
	}
	return nil
}

// yamlField returns the type of struct t's field whose yaml tag (or
// lower-cased name) is key.
func yamlField(t reflect.Type, key string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == key {
			return f.Type, true
		}
	}
	return nil, false
}

// Check enforces the limits on data and parses it. It never builds Go values
// from the document.
func Check(name string, data []byte, lim Limits) (*Doc, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxBytes {
		return nil, tooLarge(name, lim)
	}
	if err := scanDepth(name, data, lim.MaxDepth); err != nil {
		return nil, err
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		d := &Doc{Name: name}
		e := d.DecodeError(err)
		if ye, ok := e.(*Error); ok && ye.Line > 0 {
			ye.Key = topKeyAbove(data, ye.Line)
		}
		return nil, e
	}
	doc := &Doc{Name: name, File: f, pos: map[string]Pos{}, keys: map[Pos]string{}, text: map[string]string{}}
	w := walker{doc: doc, lim: lim, anchors: map[string]size{}}
	for _, d := range f.Docs {
		if _, err := w.walk(d.Body, "", 0); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// topKeyAbove names the top-level key written at or above line (1-based),
// "" if none: a document that does not parse has no tree to say which key
// holds line, but the section a syntax error is in still helps its reader.
func topKeyAbove(data []byte, line int) string {
	lines := strings.Split(string(data), "\n")
	for i := min(line, len(lines)) - 1; i >= 0; i-- {
		l := lines[i]
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' || l[0] == '-' {
			continue
		}
		if k, _, ok := strings.Cut(l, ":"); ok {
			if k = strings.Trim(strings.TrimSpace(k), `"'`); k != "" && !strings.ContainsAny(k, "{}[],") {
				return k
			}
		}
	}
	return ""
}

// scanDepth streams the lexer's tokens (without keeping them) and refuses
// a document nested deeper than max before the parser, whose cost is
// quadratic in the depth, sees it. Flow collections count exactly; block
// collections count by indentation (a sequence written at its parent key's
// indentation is not counted, so the count is at most half too low; the
// exact check on the tree follows).
func scanDepth(name string, data []byte, max int) error {
	var s scanner.Scanner
	s.Init(string(data))
	flow := 0
	var block []int // columns of the open block collections
	var prev *token.Token
	for {
		toks, err := s.Scan()
		for _, t := range toks {
			switch t.Type {
			case token.DocumentHeaderType, token.DocumentEndType:
				flow, block = 0, block[:0]
			case token.SequenceStartType, token.MappingStartType:
				flow++
			case token.SequenceEndType, token.MappingEndType:
				if flow > 0 {
					flow--
				}
			case token.SequenceEntryType, token.MappingKeyType, token.MappingValueType:
				if flow > 0 {
					break
				}
				col := t.Position.Column
				if t.Type == token.MappingValueType && prev != nil {
					col = prev.Position.Column // the key's column
				}
				for len(block) > 0 && block[len(block)-1] >= col {
					block = block[:len(block)-1]
				}
				block = append(block, col)
			}
			if d := flow + len(block); d > max {
				return &Error{File: name, Line: t.Position.Line, Col: t.Position.Column,
					Msg: fmt.Sprintf("nested more than %d levels deep", max), Err: ErrTooDeep}
			}
			if t.Type != token.CommentType && t.Type != token.SpaceType {
				prev = t
			}
		}
		if err != nil {
			// io.EOF, or a syntax error the parser will report with its position.
			return nil
		}
	}
}

type walker struct {
	doc     *Doc
	lim     Limits
	anchors map[string]size // anchor name → expanded size of its value
	total   size            // so far, aliases expanded
}

// size is what a node holds once its aliases are expanded: nodes, and
// bytes of scalars.
type size struct {
	nodes int
	bytes int64
}

func (a size) add(b size) size { return size{a.nodes + b.nodes, a.bytes + b.bytes} }

// walk records key positions under path and returns n's size with aliases
// expanded. depth is the number of collections n is nested in.
func (w *walker) walk(n ast.Node, path string, depth int) (size, error) {
	if n == nil {
		return size{}, nil
	}
	if tk := n.GetToken(); tk != nil && path != "" {
		p := Pos{tk.Position.Line, tk.Position.Column}
		if _, ok := w.doc.keys[p]; !ok {
			w.doc.keys[p] = path
		}
	}
	switch t := n.(type) {
	case *ast.MappingValueNode:
		p := path
		if kt := t.Key.GetToken(); kt != nil {
			p = strings.TrimPrefix(path+"."+kt.Value, ".")
			kp := Pos{kt.Position.Line, kt.Position.Column}
			if _, ok := w.doc.pos[p]; !ok {
				w.doc.pos[p] = kp
			}
			w.doc.keys[kp] = p
			if sc, ok := t.Value.(ast.ScalarNode); ok && sc.GetToken() != nil {
				w.doc.text[p] = sc.GetToken().Value
			}
		}
		k, err := w.walk(t.Key, path, depth)
		if err != nil {
			return size{}, err
		}
		v, err := w.walk(t.Value, p, depth)
		return k.add(v), err
	case *ast.MappingKeyNode:
		return w.walk(t.Value, path, depth)
	case *ast.TagNode:
		return w.walk(t.Value, path, depth)
	case *ast.AnchorNode:
		k, err := w.walk(t.Value, path, depth)
		if err == nil && t.Name != nil {
			w.anchors[t.Name.GetToken().Value] = k
		}
		return k, err
	case *ast.AliasNode:
		sz := size{nodes: 1}
		if t.Value != nil {
			if k, ok := w.anchors[t.Value.GetToken().Value]; ok {
				sz = k
			}
		}
		// The anchor's nodes were walked once where it is defined; every
		// alias adds them again, as a decoder expanding it would.
		return sz, w.count(n, path, sz)
	case *ast.MappingNode:
		if err := w.enter(n, path, depth+1); err != nil {
			return size{}, err
		}
		sz := size{nodes: 1}
		for _, mv := range t.Values {
			k, err := w.walk(mv, path, depth+1)
			if err != nil {
				return size{}, err
			}
			sz = sz.add(k)
		}
		return sz, w.count(n, path, size{nodes: 1})
	case *ast.SequenceNode:
		if err := w.enter(n, path, depth+1); err != nil {
			return size{}, err
		}
		sz := size{nodes: 1}
		for i, v := range t.Values {
			p := fmt.Sprintf("%s[%d]", path, i)
			if tk := v.GetToken(); tk != nil {
				if _, ok := w.doc.pos[p]; !ok {
					w.doc.pos[p] = Pos{tk.Position.Line, tk.Position.Column}
				}
			}
			k, err := w.walk(v, p, depth+1)
			if err != nil {
				return size{}, err
			}
			sz = sz.add(k)
		}
		return sz, w.count(n, path, size{nodes: 1})
	case *ast.CommentGroupNode, *ast.CommentNode:
		return size{}, nil
	case *ast.NanNode, *ast.InfinityNode:
		// No setting, scenario or input of swarm means anything by them,
		// and a NaN passes every range check written as v < lo || v > hi.
		return size{}, w.errAt(n, path, fmt.Sprintf("%s is not a finite number", n.GetToken().Value), ErrType)
	}
	// A scalar: its bytes are its text (a block scalar's, folded or not).
	sz := size{nodes: 1}
	if tk := n.GetToken(); tk != nil {
		sz.bytes = int64(len(tk.Value))
	}
	return sz, w.count(n, path, sz)
}

// enter refuses a collection nested deeper than the limit.
func (w *walker) enter(n ast.Node, path string, depth int) error {
	if depth > w.lim.MaxDepth {
		return w.errAt(n, path, fmt.Sprintf("nested more than %d levels deep", w.lim.MaxDepth), ErrTooDeep)
	}
	return nil
}

// count adds k to the document's expanded size.
func (w *walker) count(n ast.Node, path string, k size) error {
	if k.nodes > w.lim.MaxNodes-w.total.nodes {
		return w.errAt(n, path, fmt.Sprintf("more than %d nodes once aliases are expanded (an alias bomb?)", w.lim.MaxNodes), ErrTooManyNodes)
	}
	if k.bytes > w.lim.MaxExpandedBytes-w.total.bytes {
		return w.errAt(n, path, fmt.Sprintf("more than %d bytes once aliases are expanded (an alias bomb?)", w.lim.MaxExpandedBytes), ErrTooManyBytes)
	}
	w.total = w.total.add(k)
	return nil
}

func (w *walker) errAt(n ast.Node, path, msg string, sentinel error) error {
	e := &Error{File: w.doc.Name, Key: path, Msg: msg, Err: sentinel}
	if tk := n.GetToken(); tk != nil {
		e.Line, e.Col = tk.Position.Line, tk.Position.Column
	}
	return e
}

// DecodeError turns an error of the goccy/go-yaml decoder or parser into an
// *Error with the position of the token the library blames and the dotted
// key there. Errors it does not know pass through wrapped in ErrSyntax.
func (d *Doc) DecodeError(err error) error {
	name := ""
	if d != nil {
		name = d.Name
	}
	e := &Error{File: name, Err: ErrSyntax, Msg: err.Error()}
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return e
	}
	e.Msg = ye.GetMessage()
	if tk := ye.GetToken(); tk != nil {
		e.Line, e.Col = tk.Position.Line, tk.Position.Column
		e.Key, _ = d.KeyAt(Pos{e.Line, e.Col})
	}
	var (
		unknown  *yaml.UnknownFieldError
		typ      *yaml.TypeError
		overflow *yaml.OverflowError
		node     *yaml.UnexpectedNodeTypeError
	)
	switch {
	case errors.As(err, &unknown):
		e.Err = ErrUnknownKey
		e.Msg = "unknown key"
		if tk := unknown.Token; tk != nil {
			e.Msg = fmt.Sprintf("unknown key %q", tk.Value)
		}
	case errors.As(err, &typ):
		e.Err = ErrType
		e.Msg = fmt.Sprintf("wrong type: want %s, got %s", goType(typ.DstType.String()), typ.SrcType)
		if tk := typ.Token; tk != nil {
			e.Msg = fmt.Sprintf("wrong type: want %s, got %q", goType(typ.DstType.String()), tk.Value)
		}
	case errors.As(err, &overflow):
		e.Err = ErrType
		e.Msg = fmt.Sprintf("wrong type: %s does not fit in %s", overflow.SrcNum, goType(overflow.DstType.String()))
	case errors.As(err, &node):
		e.Err = ErrType
		want := node.Expected.YAMLName()
		switch node.Expected {
		case ast.SequenceType:
			want = "list"
		case ast.MappingType:
			want = "mapping"
		}
		e.Msg = fmt.Sprintf("wrong type: want a %s, got a %s", want, node.Actual.YAMLName())
		if tk := node.Token; tk != nil {
			e.Msg = fmt.Sprintf("wrong type: want a %s, got %q", want, tk.Value)
		}
	}
	return e
}

// goType names a Go type the way a YAML author thinks of it.
func goType(t string) string {
	switch {
	case t == "time.Duration":
		return "a duration (e.g. 90s)"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), !strings.Contains(t, "."):
		return "a mapping"
	}
	return "a mapping" // a struct
}
