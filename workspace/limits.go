package workspace

import (
	"errors"
	"fmt"
)

// ErrLimits is wrapped by every error Limits.Validate returns.
var ErrLimits = errors.New("invalid workspace limits")

// Limits bound what the read tools may cost. Every field must be positive;
// DefaultLimits gives the documented defaults.
type Limits struct {
	// MaxReadBytes bounds the content bytes of one read_file answer (and the
	// matched text of one grep answer); a read is cut at whole lines.
	MaxReadBytes int `yaml:"max_read_bytes" json:"max_read_bytes"`
	// MaxFileBytes: larger files are refused (too_large) and skipped by grep.
	MaxFileBytes int64 `yaml:"max_file_bytes" json:"max_file_bytes"`
	// MaxGrepMatches bounds the matches of one grep answer.
	MaxGrepMatches int `yaml:"max_grep_matches" json:"max_grep_matches"`
	// MaxListEntries bounds the entries of one list_dir and the paths of one glob answer.
	MaxListEntries int `yaml:"max_list_entries" json:"max_list_entries"`
	// MaxToolTurns is the number of tool turns one agent is offered.
	MaxToolTurns int `yaml:"max_tool_turns" json:"max_tool_turns"`
	// MaxToolCalls bounds the tool calls of a whole run, across every
	// Session of one FS.
	MaxToolCalls int `yaml:"max_tool_calls" json:"max_tool_calls"`
}

// DefaultLimits returns the documented defaults.
func DefaultLimits() Limits {
	return Limits{
		MaxReadBytes:   65536,
		MaxFileBytes:   1048576,
		MaxGrepMatches: 50,
		MaxListEntries: 500,
		MaxToolTurns:   8,
		MaxToolCalls:   2000,
	}
}

// LimitError is one limit that is not positive: its key and value.
type LimitError struct {
	Key   string
	Value int64
}

func (e LimitError) Error() string {
	return fmt.Sprintf("%s must be positive (got %d)", e.Key, e.Value)
}

// Invalid returns every limit that is not positive, in the order of the
// fields (nil when all are valid).
func (l Limits) Invalid() []LimitError {
	var bad []LimitError
	for _, f := range []LimitError{
		{"max_read_bytes", int64(l.MaxReadBytes)},
		{"max_file_bytes", l.MaxFileBytes},
		{"max_grep_matches", int64(l.MaxGrepMatches)},
		{"max_list_entries", int64(l.MaxListEntries)},
		{"max_tool_turns", int64(l.MaxToolTurns)},
		{"max_tool_calls", int64(l.MaxToolCalls)},
	} {
		if f.Value <= 0 {
			bad = append(bad, f)
		}
	}
	return bad
}

// Validate reports the first field that is not positive, by its key.
func (l Limits) Validate() error {
	if bad := l.Invalid(); len(bad) > 0 {
		return fmt.Errorf("%w: %w", ErrLimits, bad[0])
	}
	return nil
}

// DefaultDeny returns the patterns (gitignore syntax) denied to every tool
// and to evidence verification: git metadata (.git, a directory or, in
// linked worktrees and submodules, a file naming the git directory by its
// absolute path), environment files, keys and certificates.
func DefaultDeny() []string {
	return []string{".git", ".env*", "*.pem", "*.key", "id_*"}
}

// Options configure Open.
type Options struct {
	// Limits of the read tools; every field must be positive. The zero
	// value means DefaultLimits.
	Limits Limits
	// Deny holds extra patterns (gitignore syntax) added to DefaultDeny. The
	// patterns of a .swarmignore file at the root are always added too.
	Deny []string
}
