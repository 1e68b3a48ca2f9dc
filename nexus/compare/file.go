package compare

import (
	"errors"
	"strings"

	"github.com/swarm-dev/swarm/internal/yamlx"
)

// File is a compare YAML (examples/compare/): what to compare, each key
// optional; a command line's flags win over it (see NewPlan).
type File struct {
	Missions     []string `yaml:"missions"` // relative paths are relative to the file
	Models       []string `yaml:"models"`
	Judge        string   `yaml:"judge"`
	SealAuthor   string   `yaml:"seal_author"`
	Repeats      int      `yaml:"repeats"`
	Scale        string   `yaml:"scale"`
	Roles        string   `yaml:"roles"`
	JudgeSamples int      `yaml:"judge_samples"`
	Seed         int64    `yaml:"seed"`
	Parallel     int      `yaml:"parallel"`
	// Workspace is the directory every contender reads; GroundTruth the
	// planted-defects file its findings are matched against (needs
	// Workspace). Relative paths are relative to the file.
	Workspace   string `yaml:"workspace"`
	GroundTruth string `yaml:"ground_truth"`

	path string
	doc  *yamlx.Doc
}

// fileKeys are the keys of a compare file, in the order the error for an
// unknown key lists them.
const fileKeys = "missions, models, judge, seal_author, repeats, scale, roles, judge_samples, seed, parallel, workspace, ground_truth"

// LoadFile reads a compare file strictly (internal/yamlx: size, depth and
// alias caps; unknown keys and type errors as FILE:LINE:COL: KEY: MESSAGE,
// an unknown top-level key listing the known ones).
func LoadFile(path string) (*File, error) {
	f := &File{path: path}
	doc, err := yamlx.DecodeFile(path, f, yamlx.DefaultLimits)
	if err != nil {
		var ye *yamlx.Error
		if errors.As(err, &ye) && errors.Is(err, yamlx.ErrUnknownKey) && !strings.ContainsAny(ye.Key, ".[") {
			ye.Msg += " (known: " + fileKeys + ")"
		}
		return nil, err
	}
	f.doc = doc
	return f, nil
}

// Path is the file's path as given to LoadFile.
func (f *File) Path() string { return f.path }

// Line is the line of a top-level key in the file (0 when unknown).
func (f *File) Line(key string) int {
	if f == nil || f.doc == nil {
		return 0
	}
	p, _ := f.doc.Pos(key)
	return p.Line
}
