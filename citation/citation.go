// Package citation holds the Citation: one piece of evidence an agent gives
// for what it says, lines of a file in the workspace and their text. It is a
// leaf (it imports nothing of swarm's), so that the packages which carry
// citations (the agents' output types, the prompts that frame them, the mock
// that answers with them) need not import the workspace that checks them.
package citation

import "fmt"

// Citation is one piece of evidence: lines of a file in the workspace and
// the text the citing agent says they hold. Lines are 1-based and
// inclusive; Path is slash-separated and relative to the workspace root.
type Citation struct {
	Path      string `json:"path" jsonschema:"minLength=1" jsonschema_description:"The cited file, relative to the workspace root, with forward slashes (e.g. internal/auth/session.go)."`
	StartLine int    `json:"start_line" jsonschema:"minimum=1" jsonschema_description:"First cited line, 1-based, as numbered by read_file."`
	EndLine   int    `json:"end_line" jsonschema:"minimum=1" jsonschema_description:"Last cited line, 1-based and inclusive (equal to start_line for one line)."`
	Quote     string `json:"quote" jsonschema:"minLength=1" jsonschema_description:"The cited lines' text, copied exactly from the file (without the line numbers read_file adds)."`
}

// SchemaDescription implements providers.Described.
func (Citation) SchemaDescription() string {
	return "One piece of evidence: lines of a workspace file and their exact text."
}

// Ref is where the citation points, as people write it: path:start-end,
// or path:start for one line.
func (c Citation) Ref() string {
	if c.EndLine == c.StartLine {
		return fmt.Sprintf("%s:%d", c.Path, c.StartLine)
	}
	return fmt.Sprintf("%s:%d-%d", c.Path, c.StartLine, c.EndLine)
}
