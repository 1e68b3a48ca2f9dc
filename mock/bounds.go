package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"golang.org/x/sync/semaphore"
)

// Bounds on what one request may cost the mock (issue 22): the schemas it
// sends (their nesting and their number of subschemas, which is what the
// schema compiler's time grows with), and the bytes of the answers built
// for it. Behind the server, the answer bytes of all requests being
// answered at once are bounded too (ServerOptions.MaxInFlightAnswerBytes).
const (
	// MaxSchemaDepth is the deepest JSON nesting (objects and arrays) of
	// one schema document. The compiler validates a schema against its
	// metaschema building a location string per level, so its time grows
	// with the square of the depth and more (74 KB of nested objects cost
	// 36 s); every schema swarm generates is under 10 levels.
	MaxSchemaDepth = 64
	// MaxSchemaNodes is how many subschemas (JSON objects and booleans) the
	// schemas of one request may hold together (its response format and
	// every tool's parameters). The compiler's queue is searched linearly
	// for each subschema, so its time grows with the square of their
	// number (40 000 properties: 38 s; 500: 60 ms); swarm's largest
	// schema has under 40.
	MaxSchemaNodes = 500
	// DefaultMaxAnswerBytes bounds the answers built for one request, all
	// its choices and tool calls together (Options.MaxAnswerBytes). A mock
	// answer of a full ss-250 mission is under 100 KB.
	DefaultMaxAnswerBytes = 4 << 20
	// DefaultMaxInFlightAnswerBytes bounds the answer bytes of every
	// request the server is answering at once
	// (ServerOptions.MaxInFlightAnswerBytes): 16 answers of the largest
	// size. The server's memory is a small multiple of it (an answer is
	// built as a tree of Go values, then encoded twice).
	DefaultMaxInFlightAnswerBytes = 64 << 20
)

// ErrAnswerTooLarge marks a request whose answer would be larger than
// Options.MaxAnswerBytes even in its smallest form the mock can build (the
// server answers it 400). It wraps ErrBadSchema when a schema asks for it.
var ErrAnswerTooLarge = errors.New("answer too large")

// errBusy is a request whose answer cannot be held within the server's
// bound on answer bytes in flight; the server answers 503 with Retry-After.
var errBusy = errors.New("the mock server is answering too many bytes at once")

// checkSchemaShape refuses a schema document nested deeper than
// MaxSchemaDepth, or one that brings the subschemas counted in *nodes over
// MaxSchemaNodes. It reads the document once, as tokens, keeping nothing:
// its cost is linear in the document's size, and it runs before the
// compiler, whose cost is not.
func checkSchemaShape(raw []byte, nodes *int) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	depth := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: not JSON: %w", ErrBadSchema, err)
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if depth++; depth > MaxSchemaDepth {
					return fmt.Errorf("%w: nested more than %d levels deep (the mock's limit)", ErrBadSchema, MaxSchemaDepth)
				}
				if t == '{' {
					*nodes++
				}
			default:
				depth--
			}
		case bool:
			*nodes++
		}
		if *nodes > MaxSchemaNodes {
			return fmt.Errorf("%w: more than %d subschemas in the request's schemas together (the mock's limit)", ErrBadSchema, MaxSchemaNodes)
		}
	}
}

// answerBudget counts the bytes of the answers built for one request
// against the request's bound and, behind the server, reserves them from
// the server's bound on answer bytes in flight. Bytes are reserved as an
// answer grows (in chunks), before the values are built.
type answerBudget struct {
	max int64               // bytes the request's answers may take
	sem *semaphore.Weighted // the server's bound (nil in-process)

	mu   sync.Mutex
	held int64 // reserved from sem
	used int64 // bytes of the answers finished
}

// reserveChunk is the step in which bytes are reserved from the server's
// bound: a request holds at least this much while it is answered.
const reserveChunk = 64 << 10

func newAnswerBudget(max int64, sem *semaphore.Weighted) *answerBudget {
	if max <= 0 {
		max = DefaultMaxAnswerBytes
	}
	return &answerBudget{max: max, sem: sem}
}

// reserve makes sure n bytes beyond the finished answers are held: an
// ErrAnswerTooLarge error when that is over the request's bound, errBusy
// when the server's bound cannot give them now.
func (b *answerBudget) reserve(n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reserveLocked(n)
}

func (b *answerBudget) reserveLocked(n int64) error {
	total := b.used + n
	if total > b.max {
		return fmt.Errorf("%w: more than %d bytes (the mock's bound on the answers to one request: mock serve --max-answer-bytes)", ErrAnswerTooLarge, b.max)
	}
	if b.sem == nil || total <= b.held {
		return nil
	}
	want := min((total+reserveChunk-1)/reserveChunk*reserveChunk, b.max) - b.held
	if !b.sem.TryAcquire(want) {
		return errBusy
	}
	b.held += want
	return nil
}

// spend records a finished answer of n bytes.
func (b *answerBudget) spend(n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.reserveLocked(n); err != nil {
		return err
	}
	b.used += n
	return nil
}

// release gives the bytes held back to the server's bound.
func (b *answerBudget) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sem != nil && b.held > 0 {
		b.sem.Release(b.held)
	}
	b.held = 0
}

type budgetKey struct{}

// withBudget is ctx carrying the budget of the request the server answers,
// so every choice of it (Mock.Complete) counts against one bound.
func withBudget(ctx context.Context, b *answerBudget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

func budgetFrom(ctx context.Context) *answerBudget {
	b, _ := ctx.Value(budgetKey{}).(*answerBudget)
	return b
}

// jsonStringLen is the length of s as encoding/json writes it, quotes
// included (HTML characters escaped, invalid UTF-8 as \ufffd).
func jsonStringLen(s string) int64 {
	n := int64(2)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += int64(size)
		}
		i += size
	}
	return n
}
