package prompts

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/vocab"
)

// EvidenceBlock renders a worker atom's citations for its commander: an
// untrusted block of kind vocab.BlockEvidence (id: the atom's brief id),
// one line per citation, `- path:start-end "quote"` (`path:start` for one
// line), the quote JSON-encoded so that it stays on one line and reads back
// exactly (ParseEvidence). Paths and quotes are model-written text, so they
// go through Untrusted like every other.
func EvidenceBlock(id string, cites []citation.Citation) string {
	var b strings.Builder
	for i, c := range cites {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(vocab.EvidenceItemPrefix)
		c.Path = strings.NewReplacer("\r", " ", "\n", " ").Replace(c.Path)
		b.WriteString(c.Ref())
		b.WriteByte(' ')
		b.WriteString(quoteJSON(c.Quote))
	}
	return Untrusted(vocab.BlockEvidence, id, b.String())
}

// quoteJSON is s as a JSON string, with <, > and & left as they are (a
// model reads them; Untrusted neutralises any block marker).
func quoteJSON(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(buf.String(), "\n")
}

var evidenceLine = regexp.MustCompile(`^(.+):([0-9]+)(?:-([0-9]+))? ("(?:[^"\\]|\\.)*")$`)

// ParseEvidence reads back the citations of an evidence block's content;
// lines it cannot read are skipped.
func ParseEvidence(content string) []citation.Citation {
	var out []citation.Citation
	for _, l := range strings.Split(content, "\n") {
		rest, ok := strings.CutPrefix(l, vocab.EvidenceItemPrefix)
		if !ok {
			continue
		}
		m := evidenceLine.FindStringSubmatch(rest)
		if m == nil {
			continue
		}
		start, err1 := strconv.Atoi(m[2])
		end := start
		var err2 error
		if m[3] != "" {
			end, err2 = strconv.Atoi(m[3])
		}
		var q string
		if err1 != nil || err2 != nil || json.Unmarshal([]byte(m[4]), &q) != nil {
			continue
		}
		out = append(out, citation.Citation{Path: m[1], StartLine: start, EndLine: end, Quote: q})
	}
	return out
}
