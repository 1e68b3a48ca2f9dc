package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/providers"
)

// canary is the content of a file outside every test root: it must never
// appear in any answer.
const canary = "CANARY-7f3a-outside-the-root"

// write creates the files (path → content) under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fixture is a workspace with a canary outside it.
type fixture struct {
	root    string // the workspace
	outside string // a directory beside it, holding the canary
	links   bool   // symlinks could be made
	fifo    bool   // a named pipe could be made
}

const sessionGo = `package auth

import "crypto/subtle"

// Check compares tokens.
func Check(a, b string) bool {
	return a == b
}

func safe(a, b []byte) bool {
	return subtle.ConstantTimeCompare(a, b) == 1
}
`

func newFixture(t *testing.T) fixture {
	t.Helper()
	base := t.TempDir()
	fx := fixture{root: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	write(t, fx.outside, map[string]string{"canary.txt": canary + "\n", "dir/secret.txt": canary + "\n"})
	write(t, fx.root, map[string]string{
		"main.go":                       "package main\n\nfunc main() {}\n",
		"internal/auth/session.go":      sessionGo,
		"internal/auth/session_test.go": "package auth\n",
		"internal/db/db.go":             "package db\n// TODO: password handling\n",
		"docs/readme.md":                "# Readme\npassword rules\n",
		".git/config":                   "[core]\n" + canary + "\n",
		".git/HEAD":                     "ref: refs/heads/main\n",
		".env.local":                    "TOKEN=" + canary + "\n",
		"server.pem":                    canary,
		"id_rsa":                        canary,
		"tls/server.key":                canary,
		".swarmignore":                  "# extra\nprivate/\n*.secret\n",
		"private/notes.txt":             canary,
		"cfg.secret":                    canary,
		".gitignore":                    "build/\n*.log\n!keep.log\n",
		"build/out.go":                  "package build // password\n",
		"app.log":                       "password in a log\n",
		"keep.log":                      "password kept\n",
		"sub/.gitignore":                "gen.go\n",
		"sub/gen.go":                    "package sub // password generated\n",
		"sub/real.go":                   "package sub // password real\n",
		"bin.dat":                       "abc\x00password\n",
	})
	fx.links = true
	for link, target := range map[string]string{
		"link_out_file": "../outside/canary.txt",
		"link_out_dir":  filepath.Join(fx.outside, "dir"),
		"chain1":        "chain2",
		"chain2":        "link_out_file",
		"link_in":       "internal/auth/session.go",
		"link_env":      ".env.local",
		"link_abs_in":   filepath.Join(fx.root, "main.go"),
		"internal/up":   "../../outside",
	} {
		if err := os.Symlink(target, filepath.Join(fx.root, link)); err != nil {
			fx.links = false
			break
		}
	}
	fx.fifo = mkfifo(filepath.Join(fx.root, "pipe")) == nil
	return fx
}

// open opens dir (zero Options.Limits are the defaults, as in Open) and
// closes it when the test ends.
func open(t *testing.T, dir string, opts Options) *FS {
	t.Helper()
	f, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func call(t *testing.T, s *Session, tool string, args any) Outcome {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return s.Call(t.Context(), providers.ToolCall{ID: "c1", Name: tool, Arguments: string(b)})
}

func callRaw(ctx context.Context, s *Session, tool, args string) Outcome {
	return s.Call(ctx, providers.ToolCall{ID: "c1", Name: tool, Arguments: args})
}

// decode decodes an answer into a generic map, failing on anything that is
// not one JSON object.
func decode(t *testing.T, o Outcome) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(o.Result), &m); err != nil {
		t.Fatalf("answer is not a JSON object: %v\n%s", err, o.Result)
	}
	return m
}

func noCanary(t *testing.T, what, s string) {
	t.Helper()
	if strings.Contains(s, canary) {
		t.Errorf("%s: the canary from outside the root or a denied file leaked:\n%s", what, s)
	}
}
