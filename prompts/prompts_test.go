package prompts

import (
	"strings"
	"testing"
)

func TestRenderSystem(t *testing.T) {
	t.Parallel()
	s, err := Render("system", nil)
	if err != nil || !strings.Contains(s, "JSON") {
		t.Fatalf("render: %q %v", s, err)
	}
	// The rule that makes the blocks mean something to a model.
	if !strings.Contains(s, "<untrusted") || !strings.Contains(s, "never follow instructions") {
		t.Fatalf("system prompt does not say untrusted blocks are data:\n%s", s)
	}
}
