package prompts

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/swarm-dev/swarm/vocab"
)

// Untrusted wraps data in an untrusted block of the given kind (one of
// providers.Block*) and id (may be empty):
//
//	<untrusted kind="atom" id="testing-01" nonce="1a2b3c4d5e6f">
//	...data...
//	</untrusted kind="atom" nonce="1a2b3c4d5e6f">
//
// The data is escaped first (EscapeUntrusted), so it contains no marker of
// any block and cannot close this one or open another; the nonce is derived
// from kind, id and the escaped data and never occurs in the data, so the
// closing marker cannot be guessed from inside either. The id is reduced to
// [A-Za-z0-9._:/-] (at most 64 bytes). Every template puts every piece of
// model- or user-written text through this function.
func Untrusted(kind, id, data string) string {
	kind, id = attr(kind), attr(id)
	data = EscapeUntrusted(data)
	sum := sha256.Sum256([]byte(kind + "\x00" + id + "\x00" + data))
	nonce := hex.EncodeToString(sum[:6])
	for i := 0; strings.Contains(data, nonce); i++ {
		sum = sha256.Sum256(append(sum[:], byte(i)))
		nonce = hex.EncodeToString(sum[:6])
	}
	var b strings.Builder
	b.Grow(len(data) + 128)
	b.WriteString(vocab.UntrustedOpen)
	b.WriteString(`kind="` + kind + `"`)
	if id != "" {
		b.WriteString(` id="` + id + `"`)
	}
	b.WriteString(` nonce="` + nonce + `">` + "\n")
	b.WriteString(data)
	b.WriteString("\n" + vocab.UntrustedClose + `kind="` + kind + `" nonce="` + nonce + `">`)
	return b.String()
}

// EscapeUntrusted neutralises every marker-like sequence in data: each "<"
// that starts "<untrusted" or "</untrusted" (any case, with spaces or
// slashes between "<" and the name) becomes vocab.UntrustedEscape. The
// rest of the data is left as it is.
func EscapeUntrusted(data string) string {
	if !strings.Contains(data, "<") {
		return data
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(data); i++ {
		if data[i] != '<' || !startsMarker(data[i+1:]) {
			continue
		}
		if last == 0 {
			b.Grow(len(data) + 16)
		}
		b.WriteString(data[last:i])
		b.WriteString(vocab.UntrustedEscape)
		last = i + 1
	}
	if last == 0 {
		return data
	}
	b.WriteString(data[last:])
	return b.String()
}

// startsMarker reports whether s (what follows a "<") is, after any spaces,
// tabs and slashes, the untrusted tag name in any case.
func startsMarker(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n/")
	tag := vocab.UntrustedTag
	return len(s) >= len(tag) && strings.EqualFold(s[:len(tag)], tag)
}

// attr reduces an attribute value to characters that cannot end or extend
// the attribute or the marker.
func attr(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._:/-", r):
			return r
		}
		return '_'
	}, s)
}

// Block is one untrusted block read back from a prompt.
type Block struct {
	Kind    string
	ID      string
	Nonce   string
	Content string // the data as written into the prompt (escaped)
}

// SplitUntrusted reads a prompt back: the blocks written by Untrusted, in
// order, and the text outside them (the prompt's own instructions and
// protocol lines), blocks removed. A marker whose block is not closed by a
// matching closing marker (same kind and nonce) is left in the outside text.
// The mock provider reads prompts with it, so it and the templates share one
// definition of the format.
func SplitUntrusted(text string) (outside string, blocks []Block) {
	var out strings.Builder
	rest := walkBlocks(text, func(before string, blk Block) {
		out.WriteString(before)
		blocks = append(blocks, blk)
	})
	out.WriteString(rest)
	return out.String(), blocks
}

// walkBlocks reads text as SplitUntrusted does, calling fn with the text
// outside blocks before each block and the block, and returns the text
// after the last block. A marker that opens no block is outside text.
func walkBlocks(text string, fn func(before string, blk Block)) (rest string) {
	rest = text
	from := 0 // rest[:from] is outside text not yet handed to fn
	for {
		i := indexLineStart(rest[from:], vocab.UntrustedOpen)
		if i < 0 {
			return rest
		}
		i += from
		blk, n, ok := parseBlock(rest[i:])
		if !ok {
			from = i + len(vocab.UntrustedOpen)
			continue
		}
		fn(rest[:i], blk)
		rest, from = rest[i+n:], 0
	}
}

// BlocksOf returns the content of the blocks of one kind, in order.
func BlocksOf(text, kind string) []Block {
	var out []Block
	walkBlocks(text, func(_ string, b Block) {
		if b.Kind == kind {
			out = append(out, b)
		}
	})
	return out
}

// indexLineStart finds marker at the start of a line of s.
func indexLineStart(s, marker string) int {
	off := 0
	for {
		i := strings.Index(s[off:], marker)
		if i < 0 {
			return -1
		}
		if j := off + i; j == 0 || s[j-1] == '\n' {
			return j
		}
		off += i + len(marker)
	}
}

// parseBlock parses a block at the start of s and returns it with its length.
func parseBlock(s string) (Block, int, bool) {
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return Block{}, 0, false
	}
	head := strings.TrimSuffix(s[len(vocab.UntrustedOpen):nl], "\r")
	if !strings.HasSuffix(head, ">") {
		return Block{}, 0, false
	}
	var b Block
	for k, v := range attrs(strings.TrimSuffix(head, ">")) {
		switch k {
		case "kind":
			b.Kind = v
		case "id":
			b.ID = v
		case "nonce":
			b.Nonce = v
		}
	}
	if b.Kind == "" || b.Nonce == "" {
		return Block{}, 0, false
	}
	body := s[nl+1:]
	j := indexClosing(body, b.Kind, b.Nonce)
	if j < 0 {
		return Block{}, 0, false
	}
	b.Content = body[:j]
	return b, nl + 1 + j + closingLen(b.Kind, b.Nonce), true
}

// closingLen is the length of the closing marker of a block of kind and
// nonce: "\n</untrusted kind=\"...\" nonce=\"...\">".
func closingLen(kind, nonce string) int {
	return 1 + len(vocab.UntrustedClose) + len(`kind="`) + len(kind) + len(`" nonce="`) + len(nonce) + len(`">`)
}

// indexClosing finds the closing marker of a block of kind and nonce in
// body, without building the marker.
func indexClosing(body, kind, nonce string) int {
	head := "\n" + vocab.UntrustedClose + `kind="`
	off := 0
	for {
		i := strings.Index(body[off:], head)
		if i < 0 {
			return -1
		}
		j := off + i
		r := body[j+len(head):]
		if strings.HasPrefix(r, kind) && strings.HasPrefix(r[len(kind):], `" nonce="`) &&
			strings.HasPrefix(r[len(kind)+len(`" nonce="`):], nonce) && strings.HasPrefix(r[len(kind)+len(`" nonce="`)+len(nonce):], `">`) {
			return j
		}
		off = j + 1
	}
}

// attrs yields the name="value" pairs separated by spaces, in order (a
// later pair of the same name wins, as it overwrites the earlier).
func attrs(s string) func(yield func(k, v string) bool) {
	return func(yield func(k, v string) bool) {
		for f := range strings.FieldsSeq(s) {
			k, v, ok := strings.Cut(f, "=")
			if ok && len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
				if !yield(k, v[1:len(v)-1]) {
					return
				}
			}
		}
	}
}
