package main

import (
	"io"
	"os"

	"github.com/swarm-dev/swarm/providers"
)

// scrubbed wraps w (standard error) so every write has the secrets the
// process knows (providers.AddSecrets: every API key a provider was built
// with or the config names) and token-shaped credentials scrubbed: log
// lines, progress and the final error alike. Every writer of standard
// error writes whole lines, so a key is never split across two writes.
func scrubbed(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok {
		return scrubFile{scrubWriter{w}, f}
	}
	return scrubWriter{w}
}

type scrubWriter struct{ w io.Writer }

// scrubFile keeps the file's descriptor visible, so terminal detection
// still sees standard error.
type scrubFile struct {
	scrubWriter
	f *os.File
}

func (s scrubFile) Fd() uintptr { return s.f.Fd() }

func (s scrubWriter) Write(b []byte) (int, error) {
	r := providers.Redact(string(b))
	if _, err := io.WriteString(s.w, r); err != nil {
		return 0, err
	}
	return len(b), nil
}
