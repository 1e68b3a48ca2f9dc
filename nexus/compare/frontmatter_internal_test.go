package compare

import (
	"path/filepath"
	"testing"
)

// The workspace a compared mission names in its front matter is resolved
// once, against the mission file's directory, for the seal, every
// contender and the reports alike.
func TestFrontMatterWorkspace(t *testing.T) {
	t.Parallel()
	abs := filepath.Join(t.TempDir(), "ws")
	for _, tc := range []struct {
		name, mission, dir, want string
	}{
		{"relative to the mission's directory", "---\nworkspace: ../ws\n---\n# M\n", filepath.Join("examples", "missions"), filepath.Join("examples", "ws")},
		{"absolute as it is", "---\nworkspace: " + abs + "\n---\n# M\n", "examples", abs},
		{"no front matter", "# M\n", "examples", ""},
		{"a bad front matter names none (the run reports it)", "---\ncolour: blue\n---\n# M\n", "examples", ""},
	} {
		if got := frontMatterWorkspace("m.md", tc.mission, tc.dir); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
