package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// module is the module's path; packages are named relative to it ("nexus",
// "providers/openai"), the module's root package as ".".
const module = "github.com/swarm-dev/swarm"

// A rule forbids packages (From, but not Except) to reach packages matching
// Forbid, directly or through any chain of imports, unless what they reach
// matches Allow. Patterns are module-relative package paths; "x/..." is x
// and everything under it, "..." every package of the module.
type rule struct {
	Name   string // the subtest's name
	Why    string // the design's sentence, said when the rule is broken
	From   []string
	Except []string
	Forbid []string
	Allow  []string
}

// rules are the design's one-way imports (DESIGN.md, "Layout"): cmd/swarm
// → nexus → commanders, shadow, sandbox, workspace → prompts, providers →
// vocab, internal.
func rules() []rule {
	return []rule{
		{
			Name:   "providers_leaf",
			Why:    "providers (the interface) imports nothing of ours",
			From:   []string{"providers"},
			Forbid: []string{"..."},
		},
		{
			Name: "adapters_leaf",
			Why: "the adapters under providers/ import nothing of ours but providers " +
				"(the registry providers/builtin names every kind, the mock's included; providers/cache has a rule of its own)",
			From:   []string{"providers/..."},
			Except: []string{"providers", "providers/builtin", "providers/cache"},
			Forbid: []string{"..."},
			Allow:  []string{"providers/..."},
		},
		{
			Name:   "providers_cache",
			Why:    "providers/cache imports providers and the bounded no-follow read of internal/safeio, nothing else of ours",
			From:   []string{"providers/cache"},
			Forbid: []string{"..."},
			Allow:  []string{"providers", "internal/safeio"},
		},
		{
			Name:   "mock_outside_providers",
			Why:    "the mock is not imported by providers (only the registry providers/builtin may name it)",
			From:   []string{"providers/..."},
			Except: []string{"providers/builtin"},
			Forbid: []string{"mock/..."},
		},
		{
			Name:   "workspace_below",
			Why:    "workspace sits below the mock, the engine, the judge and the agents",
			From:   []string{"workspace/..."},
			Forbid: []string{"mock/...", "nexus/...", "shadow/...", "commanders/..."},
		},
		{
			Name:   "shadow_sandbox_below_nexus",
			Why:    "shadow and sandbox never import nexus",
			From:   []string{"shadow/...", "sandbox/..."},
			Forbid: []string{"nexus/..."},
		},
		{
			Name:   "contract_below_engine",
			Why:    "the data contract (config, events, runfiles) is apart from the engine: it never imports nexus or the mock",
			From:   []string{"config", "events", "runfiles"},
			Forbid: []string{"nexus/...", "mock/..."},
		},
		{
			Name: "history_view_below_engine",
			Why: "the run index (history) and the viewer (view) read run directories through the data contract " +
				"(runfiles, events, config, shadow): they never import the engine (nexus) or the mock",
			From:   []string{"history", "view"},
			Forbid: []string{"nexus/...", "mock/..."},
		},
		{
			Name:   "cli_on_top",
			Why:    "nothing imports the CLI",
			From:   []string{"..."},
			Except: []string{"cmd/..."},
			Forbid: []string{"cmd/..."},
		},
		{
			Name:   "vocab_citation_leaves",
			Why:    "vocab and citation are leaves: they import nothing of ours",
			From:   []string{"vocab", "citation"},
			Forbid: []string{"..."},
		},
	}
}

// graph maps each package of the module to the packages of the module it
// imports (test files excluded), both module-relative.
type graph map[string][]string

// match reports whether pkg matches pattern ("x", "x/...", "...").
func match(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
	}
	return pkg == pattern
}

func matchAny(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return match(p, pkg) })
}

// violations returns, for every package the rule covers, each forbidden
// package it reaches, as the shortest import chain ("a → b → c"), sorted.
func violations(g graph, r rule) []string {
	var out []string
	for _, from := range sortedKeys(g) {
		if !matchAny(r.From, from) || matchAny(r.Except, from) {
			continue
		}
		// Breadth first: the first path found to a package is a shortest.
		parent := map[string]string{from: ""}
		queue := []string{from}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			for _, q := range g[p] {
				if _, seen := parent[q]; seen {
					continue
				}
				parent[q] = p
				queue = append(queue, q)
				if matchAny(r.Forbid, q) && !matchAny(r.Allow, q) {
					out = append(out, chain(parent, q))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// chain is the path to pkg the breadth-first search recorded in parent.
func chain(parent map[string]string, pkg string) string {
	var path []string
	for p := pkg; p != ""; p = parent[p] {
		path = append(path, p)
	}
	slices.Reverse(path)
	return strings.Join(path, " → ")
}

func sortedKeys(g graph) []string {
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// loadGraph lists the module's packages with go list, once per target
// system (an import may sit in a file built for one system only), and
// returns the union of their imports of the module's packages.
func loadGraph(t *testing.T) graph {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	g := graph{}
	for _, target := range [][2]string{{"linux", "amd64"}, {"windows", "amd64"}, {"darwin", "arm64"}} {
		cmd := exec.CommandContext(t.Context(), "go", "list", "-json=ImportPath,Imports", "./...")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS="+target[0], "GOARCH="+target[1])
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list for %s/%s: %v\n%s", target[0], target[1], err, stderr.Bytes())
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p struct {
				ImportPath string
				Imports    []string
			}
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("go list output: %v", err)
			}
			from, ok := relative(p.ImportPath)
			if !ok {
				continue
			}
			deps := g[from]
			for _, imp := range p.Imports {
				if to, ok := relative(imp); ok && !slices.Contains(deps, to) {
					deps = append(deps, to)
				}
			}
			slices.Sort(deps)
			g[from] = deps
		}
	}
	return g
}

// relative names a package of the module relative to it; ok is false for
// packages of other modules and the standard library.
func relative(importPath string) (string, bool) {
	if importPath == module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(importPath, module+"/")
	return rel, ok
}

// TestLayering checks the design's rules on the module as it is.
func TestLayering(t *testing.T) {
	t.Parallel()
	g := loadGraph(t)
	for _, r := range rules() {
		t.Run(r.Name, func(t *testing.T) {
			// A rule about packages that no longer exist would pass forever.
			for _, p := range slices.Concat(r.From, r.Except, r.Forbid) {
				if p != "..." && !slices.ContainsFunc(sortedKeys(g), func(pkg string) bool { return match(p, pkg) }) {
					t.Errorf("pattern %q matches no package of the module: update the rule", p)
				}
			}
			for _, v := range violations(g, r) {
				t.Errorf("%s, but %s", r.Why, v)
			}
		})
	}
}

// TestViolations checks the checker on small graphs.
func TestViolations(t *testing.T) {
	t.Parallel()
	providersLeaf, providersCache := rules()[0], rules()[2]
	mockNotInProviders := rule{Why: "x", From: []string{"providers/..."}, Except: []string{"providers/builtin"}, Forbid: []string{"mock/..."}}
	cases := []struct {
		name string // why the case exists
		g    graph
		r    rule
		want []string
	}{
		{
			name: "the layout before issue 23: the mock under providers/ lifted providers above workspace",
			g: graph{
				"providers":      {"internal/redact", "internal/safeio"},
				"providers/mock": {"providers", "prompts", "workspace"},
				"workspace":      {"providers"},
				"prompts":        {"workspace"},
			},
			r: rule{
				Why: "x", From: []string{"providers/..."}, Except: []string{"providers"},
				Forbid: []string{"..."}, Allow: []string{"providers/...", "internal/redact"},
			},
			want: []string{"providers/mock → prompts", "providers/mock → providers → internal/safeio", "providers/mock → workspace"},
		},
		{
			name: "a chain is named through the package that makes it, shortest first",
			g: graph{
				"providers":   {"internal/safeio"},
				"workspace":   {"providers"},
				"commanders":  {"workspace"},
				"nexus":       {"commanders"},
				"unreachable": {"nexus"},
			},
			r:    rule{Why: "x", From: []string{"nexus"}, Forbid: []string{"internal/..."}},
			want: []string{"nexus → commanders → workspace → providers → internal/safeio"},
		},
		{
			name: "providers may import nothing of ours, internal packages included",
			g:    graph{"providers": {"internal/redact", "vocab"}},
			r:    providersLeaf,
			want: []string{"providers → internal/redact", "providers → vocab"},
		},
		{
			name: "what an allowed package imports is reached too",
			g:    graph{"providers/cache": {"providers", "internal/safeio"}, "internal/safeio": {"internal/yamlx"}},
			r:    providersCache,
			want: []string{"providers/cache → internal/safeio → internal/yamlx"},
		},
		{
			name: "the registry may import the mock; nothing else under providers/ may",
			g: graph{
				"providers/builtin": {"mock", "providers"},
				"providers/openai":  {"providers/builtin"},
				"mock":              {"providers"},
			},
			r:    mockNotInProviders,
			want: []string{"providers/openai → providers/builtin → mock"},
		},
		{
			name: "x/... covers x and its subpackages, not packages that merely share the prefix",
			g: graph{
				"sandbox":     {"nexusish"},
				"sandbox/sim": {"nexus/compare"},
				"shadow":      {"nexus"},
			},
			r:    rule{Why: "x", From: []string{"shadow/...", "sandbox/..."}, Forbid: []string{"nexus/..."}},
			want: []string{"sandbox/sim → nexus/compare", "shadow → nexus"},
		},
		{
			name: "cycles end the search",
			g:    graph{"a": {"b"}, "b": {"a", "c"}},
			r:    rule{Why: "x", From: []string{"a"}, Forbid: []string{"c"}},
			want: []string{"a → b → c"},
		},
		{
			name: "a clean graph breaks no rule",
			g:    graph{"providers": {}, "providers/openai": {"providers"}, "vocab": {}},
			r:    providersLeaf,
			want: nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if d := cmp.Diff(tc.want, violations(tc.g, tc.r)); d != "" {
				t.Errorf("violations (-want +got):\n%s", d)
			}
		})
	}
}
