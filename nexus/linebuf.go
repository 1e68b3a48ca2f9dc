package nexus

import (
	"bytes"
	"encoding/json"
)

// lineEncoder encodes values as JSON lines into one buffer it reuses: the
// bytes json.Marshal writes, then a newline, without a new allocation per
// line. Not safe for concurrent use: its owner (a log, under its mutex)
// serialises the calls.
type lineEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// maxKeptLine is the largest buffer a lineEncoder keeps between lines; a
// longer line (a transcript with a whole file in it) gets its own.
const maxKeptLine = 1 << 20

// encode returns v's JSON followed by '\n', valid until the next call.
func (l *lineEncoder) encode(v any) ([]byte, error) {
	if l.enc == nil || l.buf.Cap() > maxKeptLine {
		l.buf = bytes.Buffer{}
		l.enc = json.NewEncoder(&l.buf)
	}
	l.buf.Reset()
	if err := l.enc.Encode(v); err != nil {
		return nil, err
	}
	return l.buf.Bytes(), nil
}
