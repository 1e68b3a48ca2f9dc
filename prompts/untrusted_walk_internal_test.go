package prompts

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/vocab"
)

// SplitUntrusted and BlocksOf read prompts without building a map per
// block or the outside text BlocksOf never uses; they read exactly what
// the first version (refSplitUntrusted, kept here as the reference) read,
// whatever the prompt: unclosed blocks, markers mid-line, a wrong nonce,
// attributes repeated, a marker right after one that opened nothing.
func FuzzSplitUntrustedAsBefore(f *testing.F) {
	ok := Untrusted("atom", "a-1", "hello\nworld") + "\nmiddle\n" + Untrusted("bundle", "", "x <untrusted y")
	seeds := []string{
		"", "plain text", ok, "pre\n" + ok + "\npost",
		vocab.UntrustedOpen + `kind="atom" nonce="n">` + "\nbody\n" + vocab.UntrustedClose + `kind="atom" nonce="m">`,
		vocab.UntrustedOpen + `kind="atom" nonce="n" kind="b">` + "\nbody\n" + vocab.UntrustedClose + `kind="b" nonce="n">`,
		vocab.UntrustedOpen + vocab.UntrustedOpen + `kind="a" nonce="n">` + "\nz\n" + vocab.UntrustedClose + `kind="a" nonce="n">`,
		"mid " + ok, vocab.UntrustedOpen + `kind="a" nonce="n"` + "\nno close",
		vocab.UntrustedOpen + `kind="a" nonce="n">` + "\r\n" + "b\n" + vocab.UntrustedClose + `kind="a" nonce="nn">` + "\n" + vocab.UntrustedClose + `kind="a" nonce="n">`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		wantOut, wantBlocks := refSplitUntrusted(text)
		gotOut, gotBlocks := SplitUntrusted(text)
		if d := cmp.Diff(wantOut, gotOut); d != "" {
			t.Errorf("outside (-want +got):\n%s", d)
		}
		if d := cmp.Diff(wantBlocks, gotBlocks); d != "" {
			t.Errorf("blocks (-want +got):\n%s", d)
		}
		for _, kind := range []string{"atom", "bundle", "a", "b"} {
			var want []Block
			for _, b := range wantBlocks {
				if b.Kind == kind {
					want = append(want, b)
				}
			}
			if d := cmp.Diff(want, BlocksOf(text, kind)); d != "" {
				t.Errorf("BlocksOf %s (-want +got):\n%s", kind, d)
			}
		}
	})
}

// refSplitUntrusted is SplitUntrusted as it was first written.
func refSplitUntrusted(text string) (outside string, blocks []Block) {
	var out strings.Builder
	rest := text
	for {
		i := refIndexLineStart(rest, vocab.UntrustedOpen)
		if i < 0 {
			out.WriteString(rest)
			break
		}
		blk, n, ok := refParseBlock(rest[i:])
		if !ok {
			out.WriteString(rest[:i+len(vocab.UntrustedOpen)])
			rest = rest[i+len(vocab.UntrustedOpen):]
			continue
		}
		out.WriteString(rest[:i])
		blocks = append(blocks, blk)
		rest = rest[i+n:]
	}
	return out.String(), blocks
}

// indexLineStart finds marker at the start of a line of s.
func refIndexLineStart(s, marker string) int {
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
func refParseBlock(s string) (Block, int, bool) {
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return Block{}, 0, false
	}
	head := strings.TrimSuffix(s[len(vocab.UntrustedOpen):nl], "\r")
	if !strings.HasSuffix(head, ">") {
		return Block{}, 0, false
	}
	attrs := refParseAttrs(strings.TrimSuffix(head, ">"))
	b := Block{Kind: attrs["kind"], ID: attrs["id"], Nonce: attrs["nonce"]}
	if b.Kind == "" || b.Nonce == "" {
		return Block{}, 0, false
	}
	closing := "\n" + vocab.UntrustedClose + `kind="` + b.Kind + `" nonce="` + b.Nonce + `">`
	body := s[nl+1:]
	j := strings.Index(body, closing)
	if j < 0 {
		return Block{}, 0, false
	}
	b.Content = body[:j]
	return b, nl + 1 + j + len(closing), true
}

// parseAttrs reads name="value" pairs separated by spaces.
func refParseAttrs(s string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if ok && len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			out[k] = v[1 : len(v)-1]
		}
	}
	return out
}
