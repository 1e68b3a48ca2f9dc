// TEMPORARY: the API of TOOLS11.md §4–§5 with placeholder bodies, so the
// nexus and CLI parts compile while the real package is written in
// parallel (branch wsfs). Deleted when wsfs merges; never shipped.

package workspace

import (
	"context"

	"github.com/swarm-dev/swarm/providers"
)

type Limits struct {
	MaxReadBytes   int   `yaml:"max_read_bytes" json:"max_read_bytes"`
	MaxFileBytes   int64 `yaml:"max_file_bytes" json:"max_file_bytes"`
	MaxGrepMatches int   `yaml:"max_grep_matches" json:"max_grep_matches"`
	MaxListEntries int   `yaml:"max_list_entries" json:"max_list_entries"`
	MaxToolTurns   int   `yaml:"max_tool_turns" json:"max_tool_turns"`
	MaxToolCalls   int   `yaml:"max_tool_calls" json:"max_tool_calls"`
}

func DefaultLimits() Limits {
	return Limits{MaxReadBytes: 65536, MaxFileBytes: 1 << 20, MaxGrepMatches: 50, MaxListEntries: 500, MaxToolTurns: 8, MaxToolCalls: 2000}
}
func (l Limits) Validate() error { return nil }
func DefaultDeny() []string      { return []string{".git/", ".env*", "*.pem", "*.key", "id_*"} }

type Options struct {
	Limits Limits
	Deny   []string
}
type FS struct{ dir string }

func Open(dir string, opts Options) (*FS, error) { return &FS{dir: dir}, nil }
func (f *FS) Close() error                       { return nil }
func (f *FS) Dir() string                        { return f.dir }
func (f *FS) Limits() Limits                     { return DefaultLimits() }
func (f *FS) Session(scope []string) *Session    { return &Session{} }

type Session struct{}

func (s *Session) Definitions() []providers.Tool { return nil }
func (s *Session) Turns() int                    { return 0 }
func (s *Session) Call(ctx context.Context, call providers.ToolCall) Outcome {
	return Outcome{Tool: call.Name, Result: `{"ok":false,"refusal":"bad_arguments","error":"stub"}`}
}

type Outcome struct {
	Tool    string `json:"tool"`
	Path    string `json:"path,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	OK      bool   `json:"ok"`
	Refusal string `json:"refusal,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Bytes   int    `json:"bytes"`
	Result  string `json:"-"`
}
type Check struct {
	Citation
	State  State  `json:"state"`
	Reason string `json:"reason,omitempty"`
}

func (f *FS) Verify(c Citation) Check { return Check{Citation: c, State: Unverifiable, Reason: "stub"} }

type Fingerprint struct {
	Kind      string `json:"kind"`
	GitHead   string `json:"git_head,omitempty"`
	Dirty     *bool  `json:"dirty,omitempty"`
	FilesHash string `json:"files_hash"`
	FilesRead int    `json:"files_read"`
}

func (f *FS) Fingerprint() Fingerprint { return Fingerprint{Kind: "files"} }

type Defect struct {
	ID        string `yaml:"id" json:"id"`
	Path      string `yaml:"path" json:"path"`
	StartLine int    `yaml:"start_line" json:"start_line"`
	EndLine   int    `yaml:"end_line" json:"end_line"`
	Category  string `yaml:"category" json:"category"`
	Title     string `yaml:"title" json:"title"`
}
type GroundTruth struct {
	Workspace string   `yaml:"workspace" json:"workspace"`
	Defects   []Defect `yaml:"defects" json:"defects"`
}

func LoadGroundTruth(path string) (GroundTruth, error) { return GroundTruth{}, nil }

type Match struct {
	Defects   int      `json:"defects"`
	Found     int      `json:"found"`
	Findings  int      `json:"findings"`
	Matching  int      `json:"matching"`
	Recall    *float64 `json:"recall"`
	Precision *float64 `json:"precision"`
	Missed    []string `json:"missed"`
}

func (g GroundTruth) Match(findings [][]Check) Match { return Match{} }
