package main

import (
	"io"
	"os"
	"sync/atomic"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/providers"
)

// scrubber is the secret set one invocation's standard error is scrubbed
// with: made by runCLI (a value, not a package global) and grown as the
// command learns keys (App.LoadConfig: every api_key_env the config names
// and every kind's default key variable).
type scrubber struct {
	set atomic.Pointer[redact.Secrets]
}

// add puts values into the set.
func (s *scrubber) add(values ...string) {
	for {
		cur := s.set.Load()
		next := cur.With(values...)
		if next == cur || s.set.CompareAndSwap(cur, next) {
			return
		}
	}
}

// addConfigured puts the value of every key variable cfg and reg name
// into the set.
func (s *scrubber) addConfigured(cfg *config.Config, reg *providers.Registry) {
	if s == nil {
		return
	}
	s.add(cfg.KeyValues(reg)...)
}

// scrubbed wraps w (standard error) so every write has the secrets sc
// knows and token-shaped credentials scrubbed: log lines, progress and the
// final error alike. Every writer of standard error writes whole lines, so
// a key is never split across two writes.
func scrubbed(w io.Writer, sc *scrubber) io.Writer {
	if f, ok := w.(*os.File); ok {
		return scrubFile{scrubWriter{w, sc}, f}
	}
	return scrubWriter{w, sc}
}

type scrubWriter struct {
	w  io.Writer
	sc *scrubber
}

// scrubFile keeps the file's descriptor visible, so terminal detection
// still sees standard error.
type scrubFile struct {
	scrubWriter
	f *os.File
}

func (s scrubFile) Fd() uintptr { return s.f.Fd() }

func (s scrubWriter) Write(b []byte) (int, error) {
	r := s.sc.set.Load().String(string(b))
	if _, err := io.WriteString(s.w, r); err != nil {
		return 0, err
	}
	return len(b), nil
}
