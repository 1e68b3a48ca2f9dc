package prompts_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/prompts"
)

// TestWorkspaceParagraph: the atom and bundle prompts name the read tools
// and the citation rules only when Workspace is set; unset or false, the
// prompt is what it was before workspaces existed (the goldens pin that
// text's size through token counts; here it is pinned by a phrase check
// and by equality of the unset, false and paragraph-removed renders).
func TestWorkspaceParagraph(t *testing.T) {
	t.Parallel()
	capsule := commanders.Capsule{Domain: "security", Brief: "Your domain: security.", Aspects: []string{"sessions"}}
	cases := []struct {
		name string
		data func(ws any) map[string]any
	}{
		{"atom", func(ws any) map[string]any {
			d := map[string]any{"Domain": "security", "BriefID": "security-01", "Brief": "Review sessions.", "Aspects": []string{"sessions"}, "FileScope": []string(nil)}
			if ws != nil {
				d["Workspace"] = ws
			}
			return d
		}},
		{"bundle", func(ws any) map[string]any {
			d := map[string]any{"Capsule": capsule, "Atoms": []commanders.AtomView{{BriefID: "security-01", Status: "complete", Confidence: 0.9, Content: "done"}},
				"Feedback": "", "Previous": ""}
			if ws != nil {
				d["Workspace"] = ws
			}
			return d
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			render := func(ws any) string {
				out, err := prompts.Render(c.name, c.data(ws))
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			unset, off, on := render(nil), render(false), render(true)
			if d := cmp.Diff(unset, off); d != "" {
				t.Errorf("Workspace false changed the prompt (-unset +false):\n%s", d)
			}
			for _, s := range []string{"read_file", "list_dir", "grep", "glob", "{path, start_line, end_line, quote}", "copied exactly", "fabricated"} {
				if strings.Contains(unset, s) {
					t.Errorf("prompt without a workspace mentions %q", s)
				}
				if !strings.Contains(on, s) {
					t.Errorf("prompt with a workspace does not mention %q:\n%s", s, on)
				}
			}
			if !strings.HasPrefix(on, strings.SplitN(unset, "\n\n", 2)[0]) {
				t.Errorf("the workspace paragraph changed the prompt's opening:\n%s", on)
			}
		})
	}
}

// TestEvidenceRoundTrip: what EvidenceBlock shows, ParseEvidence reads back
// exactly, whatever the path and quote hold (spaces, colons, quotes,
// backslashes, tabs, several lines, angle brackets).
func TestEvidenceRoundTrip(t *testing.T) {
	t.Parallel()
	cites := []citation.Citation{
		{Path: "internal/auth/session.go", StartLine: 40, EndLine: 52, Quote: "return s.Token == token"},
		{Path: "dir with space/a:b.go", StartLine: 7, EndLine: 7, Quote: `say "hi" \ there`},
		{Path: "x.go", StartLine: 1, EndLine: 3, Quote: "if a < b && c > d {\n\treturn 1 :2 \"\n}"},
	}
	blocks := prompts.BlocksOf(prompts.EvidenceBlock("security-01", cites), "evidence")
	if len(blocks) != 1 {
		t.Fatalf("blocks: %+v", blocks)
	}
	if !strings.Contains(blocks[0].Content, `- internal/auth/session.go:40-52 "return s.Token == token"`) ||
		!strings.Contains(blocks[0].Content, `- dir with space/a:b.go:7 "say \"hi\" \\ there"`) {
		t.Errorf("line format:\n%s", blocks[0].Content)
	}
	if d := cmp.Diff(cites, prompts.ParseEvidence(blocks[0].Content)); d != "" {
		t.Errorf("read back (-shown +read):\n%s", d)
	}
}
