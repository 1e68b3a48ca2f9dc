package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrLimits is wrapped by every error Limits.Validate returns.
var ErrLimits = errors.New("invalid workspace limits")

// Limits bound what the read tools may cost. Every field must be positive
// and at most its documented maximum (MaxLimits); DefaultLimits gives the
// documented defaults.
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
	// MaxFilesPerCall bounds the directory entries one list_dir, grep or
	// glob call examines (files and directories, whether shown or not): a
	// call that reaches it stops early and says so.
	MaxFilesPerCall int `yaml:"max_files_per_call" json:"max_files_per_call"`
	// MaxToolTurns is the number of tool turns one agent is offered.
	MaxToolTurns int `yaml:"max_tool_turns" json:"max_tool_turns"`
	// MaxCallsPerTurn bounds the tool calls run from one model answer (one
	// tool turn); the calls past it are refused without being run, and are
	// not charged to any budget.
	MaxCallsPerTurn int `yaml:"max_calls_per_turn" json:"max_calls_per_turn"`
	// MaxToolCallsPerAgent is one agent's share of MaxToolCalls: the tool
	// calls one agent may make in a whole run.
	MaxToolCallsPerAgent int `yaml:"max_tool_calls_per_agent" json:"max_tool_calls_per_agent"`
	// MaxToolCalls bounds the tool calls of a whole run, across every
	// Session of one FS.
	MaxToolCalls int `yaml:"max_tool_calls" json:"max_tool_calls"`
}

// DefaultLimits returns the documented defaults.
func DefaultLimits() Limits {
	return Limits{
		MaxReadBytes:         65536,
		MaxFileBytes:         1048576,
		MaxGrepMatches:       50,
		MaxListEntries:       500,
		MaxFilesPerCall:      10000,
		MaxToolTurns:         8,
		MaxCallsPerTurn:      16,
		MaxToolCallsPerAgent: 250,
		MaxToolCalls:         2000,
	}
}

// MaxLimits returns the largest value each limit may take: what one call
// (or one run) may cost at most, whatever the configuration says.
func MaxLimits() Limits {
	return Limits{
		MaxReadBytes:         16 << 20,  // 16 MiB of text in one answer
		MaxFileBytes:         256 << 20, // a file is read whole into memory
		MaxGrepMatches:       10000,
		MaxListEntries:       100000,
		MaxFilesPerCall:      1000000,
		MaxToolTurns:         100,
		MaxCallsPerTurn:      1000,
		MaxToolCallsPerAgent: 1000000,
		MaxToolCalls:         1000000,
	}
}

// LimitError is one limit that is not positive or over its maximum: its
// key and value.
type LimitError struct {
	Key   string
	Value int64
}

func (e LimitError) Error() string {
	if e.Value <= 0 {
		return fmt.Sprintf("%s must be positive (got %d)", e.Key, e.Value)
	}
	return fmt.Sprintf("%s must be at most %d (got %d)", e.Key, e.Max(), e.Value)
}

// Max is the largest value the limit named Key may take (0 for an unknown
// key).
func (e LimitError) Max() int64 {
	for _, f := range MaxLimits().fields() {
		if f.Key == e.Key {
			return f.Value
		}
	}
	return 0
}

// fields are the limits by key, in the order of the struct.
func (l Limits) fields() []LimitError {
	return []LimitError{
		{"max_read_bytes", int64(l.MaxReadBytes)},
		{"max_file_bytes", l.MaxFileBytes},
		{"max_grep_matches", int64(l.MaxGrepMatches)},
		{"max_list_entries", int64(l.MaxListEntries)},
		{"max_files_per_call", int64(l.MaxFilesPerCall)},
		{"max_tool_turns", int64(l.MaxToolTurns)},
		{"max_calls_per_turn", int64(l.MaxCallsPerTurn)},
		{"max_tool_calls_per_agent", int64(l.MaxToolCallsPerAgent)},
		{"max_tool_calls", int64(l.MaxToolCalls)},
	}
}

// Invalid returns every limit that is not positive or is over its maximum,
// in the order of the fields (nil when all are valid).
func (l Limits) Invalid() []LimitError {
	var bad []LimitError
	for _, f := range l.fields() {
		if f.Value <= 0 || f.Value > f.Max() {
			bad = append(bad, f)
		}
	}
	return bad
}

// Validate reports the first field that is not positive or over its
// maximum, by its key.
func (l Limits) Validate() error {
	if bad := l.Invalid(); len(bad) > 0 {
		return fmt.Errorf("%w: %w", ErrLimits, bad[0])
	}
	return nil
}

// DefaultDeny returns the patterns (gitignore syntax) denied to every tool
// and to evidence verification, at any depth: git metadata (.git, a
// directory or, in linked worktrees and submodules, a file naming the git
// directory by its absolute path), environment files, keys and
// certificates, and the credential stores tools keep in a home directory
// (SSH, GnuPG, AWS, gcloud, Docker, Kubernetes, gh, git, netrc, npm,
// PyPI). It is a floor: no file inside the workspace can lower it (a
// .swarmignore only adds patterns); only Options.Allow, which comes from
// the user's own configuration, lifts it.
func DefaultDeny() []string {
	return []string{
		".git", ".env*", "*.pem", "*.key", "id_*",
		".ssh", ".gnupg", ".aws", "**/.config/gcloud",
		".netrc", "_netrc", ".git-credentials",
		"**/.docker/config.json", "**/.kube/config", "**/.config/gh/hosts.yml",
		".npmrc", ".pypirc",
	}
}

// Options configure Open.
type Options struct {
	// Limits of the read tools; every field must be positive. The zero
	// value means DefaultLimits.
	Limits Limits
	// Deny holds extra patterns (gitignore syntax) added to DefaultDeny. The
	// patterns of a .swarmignore file at the root are always added too.
	// A negation here only re-includes what an earlier Deny pattern denied.
	Deny []string
	// Allow holds patterns (gitignore syntax) lifting DefaultDeny for the
	// paths they match, e.g. ".env.example": the user's explicit choice
	// (workspace.allow). A default pattern that matches a directory (".aws")
	// is lifted for what is below it only when Allow matches the directory
	// itself. Allow never lifts Deny or the .swarmignore.
	Allow []string
}

// ExposesHome says why dir must not be a workspace without the user's
// explicit consent ("" when it may be): it is the file system's root, or
// it is or contains the user's home directory, where credential stores
// beyond any deny list live. Symbolic links are resolved first.
func ExposesHome(dir string) string {
	real := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return filepath.Clean(p)
	}
	d := real(dir)
	if d == filepath.VolumeName(d)+string(filepath.Separator) {
		return "is the file system's root"
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	h := real(home)
	if h == d {
		return fmt.Sprintf("is your home directory (%s)", h)
	}
	if rel, err := filepath.Rel(d, h); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
		return fmt.Sprintf("contains your home directory (%s)", h)
	}
	return ""
}
