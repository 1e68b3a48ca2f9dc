package vocab_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// vocab is a leaf: prompts, commanders, shadow, nexus and the mock provider
// all import it, so it must import nothing of ours (or it would close a cycle).
func TestImportsNothingOfOurs(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			if strings.Contains(imp.Path.Value, "github.com/swarm-dev/swarm") {
				t.Errorf("%s imports %s", f, imp.Path.Value)
			}
		}
	}
}
