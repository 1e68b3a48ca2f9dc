package mock_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/internal/yamlx"
	"github.com/swarm-dev/swarm/mock"
)

func TestScriptAndFaultsRefuseHostileYAML(t *testing.T) {
	t.Parallel()
	var laughs strings.Builder
	laughs.WriteString("rules:\n  - text: &a0 [lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&laughs, "  - json: &a%d [%s]\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
	}
	tests := []struct {
		name, why, yaml string
		wantErr         error
		want            string // after the file name
	}{
		{"billion laughs", "a 500-byte alias chain ran for minutes", laughs.String(), yamlx.ErrTooManyNodes, ":7:48: rules[5].json[8]: more than 200000 nodes once aliases are expanded"},
		{"64 KB of [", "the parser is quadratic in depth", "rules: " + strings.Repeat("[", 64<<10), yamlx.ErrTooDeep, ":1:71: nested more than 64 levels deep"},
		{"oversize", "a file over the cap is not read to the end", "# " + strings.Repeat("x", 300<<10), yamlx.ErrTooLarge, ": file too large"},
		{"unknown key", "file:line:col: key", "rules:\n  - schema: bundle\n    txt: hello\n", yamlx.ErrUnknownKey, `:3:5: rules[0].txt: unknown key "txt"`},
		{"type error", "a mapping where a list belongs", "rules: {text: x}\n", yamlx.ErrType, ":1:8: rules: wrong type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := mock.LoadScript(path)
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), path+tc.want) {
				t.Errorf("%s: LoadScript: %v, want %v and %q", tc.why, err, tc.wantErr, path+tc.want)
			}
		})
	}
	// faults: the same reader.
	path := filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(path, []byte("rate_limit: 0.1\nrate_limt: 0.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mock.LoadFaults(path); !errors.Is(err, yamlx.ErrUnknownKey) || !strings.Contains(err.Error(), path+`:2:1: rate_limt: unknown key "rate_limt"`) {
		t.Errorf("LoadFaults: %v", err)
	}
	if err := os.WriteFile(path, []byte("rate_limit: "+strings.Repeat("- ", 1000)+"x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mock.LoadFaults(path); !errors.Is(err, yamlx.ErrTooDeep) {
		t.Errorf("LoadFaults deep: %v", err)
	}
}
