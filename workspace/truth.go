package workspace

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/swarm-dev/swarm/internal/yamlx"
)

// ErrGroundTruth is wrapped by every validation error LoadGroundTruth returns.
var ErrGroundTruth = errors.New("invalid ground truth")

// Defect categories.
var defectCategories = []string{"security", "tests", "error_handling", "docs"}

// Defect is one planted defect: lines of a workspace file.
type Defect struct {
	ID        string `yaml:"id" json:"id"`
	Path      string `yaml:"path" json:"path"`
	StartLine int    `yaml:"start_line" json:"start_line"`
	EndLine   int    `yaml:"end_line" json:"end_line"`
	Category  string `yaml:"category" json:"category"`
	Title     string `yaml:"title" json:"title"`
}

// GroundTruth is the documented defects of a workspace, kept outside it.
type GroundTruth struct {
	Workspace string   `yaml:"workspace" json:"workspace"`
	Defects   []Defect `yaml:"defects" json:"defects"`
}

// LoadGroundTruth reads and checks a ground-truth file; errors name
// file:line:col.
func LoadGroundTruth(file string) (GroundTruth, error) {
	gt, _, err := loadGroundTruth(file)
	return gt, err
}

// LoadGroundTruthIn is LoadGroundTruth, then every defect checked against
// the workspace ws: its file exists inside the workspace, is a text file
// the agents may read (not denied, not too large, not binary), and its
// lines exist. A defect that fails one of these could never be found, so
// the file is refused; the error lists every such defect, each at the
// file:line:col of its key in the ground truth.
func LoadGroundTruthIn(file string, ws *FS) (GroundTruth, error) {
	gt, fail, err := loadGroundTruth(file)
	if err != nil {
		return GroundTruth{}, err
	}
	var errs []error
	for i, d := range gt.Defects {
		key := func(f string) string { return fmt.Sprintf("defects[%d].%s", i, f) }
		t, r := ws.resolve(d.Path)
		if r == nil && t.info.IsDir() {
			r = refuse(RefusalNotRegular, "%s: a directory, not a file", t.rel)
		}
		var b []byte
		if r == nil {
			b, r = ws.readText(t)
		}
		if r != nil {
			errs = append(errs, fail(key("path"), "defect %s: %s: no finding could ever cite it (workspace %s)", d.ID, groundTruthRefusal(r), ws.Dir()))
			continue
		}
		if n := len(splitLines(b)); d.EndLine > n {
			k := "end_line"
			if d.StartLine > n {
				k = "start_line"
			}
			errs = append(errs, fail(key(k), "defect %s: lines %d-%d of %s are out of range: the file has %d lines (workspace %s)", d.ID, d.StartLine, d.EndLine, d.Path, n, ws.Dir()))
		}
	}
	if len(errs) > 0 {
		return GroundTruth{}, errors.Join(errs...)
	}
	return gt, nil
}

// groundTruthRefusal says why a defect's file cannot be read, in the
// words of a ground-truth error.
func groundTruthRefusal(r *refusal) string {
	switch r.kind {
	case RefusalNotFound:
		return "the file does not exist (" + r.msg + ")"
	case RefusalEscape:
		return "the path leaves the workspace (" + r.msg + ")"
	case RefusalDenied:
		return "the file is denied to the agents (" + r.msg + ")"
	}
	return "the file cannot be read as text (" + r.msg + ")"
}

// loadGroundTruth is LoadGroundTruth, with the function that makes an
// error at a key of the file.
func loadGroundTruth(file string) (GroundTruth, func(key, format string, args ...any) error, error) {
	var gt GroundTruth
	doc, err := yamlx.DecodeFile(file, &gt, yamlx.DefaultLimits)
	if err != nil {
		return GroundTruth{}, nil, err
	}
	fail := func(key, format string, args ...any) error {
		e := &yamlx.Error{File: file, Key: key, Msg: fmt.Sprintf(format, args...), Err: ErrGroundTruth}
		if p, k, ok := doc.PosOrParent(key); ok {
			e.Line, e.Col, e.Key = p.Line, p.Col, k
		}
		return e
	}
	gt, err = checkGroundTruth(gt, fail)
	return gt, fail, err
}

// checkGroundTruth checks the defects' fields, the first problem at its key.
func checkGroundTruth(gt GroundTruth, fail func(key, format string, args ...any) error) (GroundTruth, error) {
	if len(gt.Defects) == 0 {
		return GroundTruth{}, fail("defects", "no defects: a ground truth lists at least one")
	}
	seen := map[string]bool{}
	for i, d := range gt.Defects {
		key := func(f string) string { return fmt.Sprintf("defects[%d].%s", i, f) }
		switch {
		case strings.TrimSpace(d.ID) == "":
			return GroundTruth{}, fail(key("id"), "id is required")
		case seen[d.ID]:
			return GroundTruth{}, fail(key("id"), "duplicate id %q", d.ID)
		case d.Path == "":
			return GroundTruth{}, fail(key("path"), "path is required")
		case strings.Contains(d.Path, `\`) || path.IsAbs(d.Path) || path.Clean(d.Path) != d.Path || d.Path == "." || d.Path == ".." || strings.HasPrefix(d.Path, "../"):
			return GroundTruth{}, fail(key("path"), "path %q must be relative to the workspace root, clean, with forward slashes", d.Path)
		case d.StartLine < 1:
			return GroundTruth{}, fail(key("start_line"), "start_line must be at least 1 (got %d)", d.StartLine)
		case d.EndLine < d.StartLine:
			return GroundTruth{}, fail(key("end_line"), "end_line %d is before start_line %d", d.EndLine, d.StartLine)
		}
		if d.Category != "" && !slices.Contains(defectCategories, d.Category) {
			return GroundTruth{}, fail(key("category"), "category %q is not one of %s", d.Category, strings.Join(defectCategories, ", "))
		}
		seen[d.ID] = true
	}
	return gt, nil
}

// Match is how a run's findings compare with the ground truth.
type Match struct {
	Defects   int      `json:"defects"`
	Found     int      `json:"found"`     // defects matched by at least one finding
	Findings  int      `json:"findings"`  // every finding, with or without citations
	Matching  int      `json:"matching"`  // findings that match at least one defect
	Recall    *float64 `json:"recall"`    // Found/Defects; nil when there are no defects
	Precision *float64 `json:"precision"` // Matching/Findings; nil when there are no findings
	Missed    []string `json:"missed"`    // ids of the defects no finding matched
	// ByDefect is every defect, in the file's order, with the findings
	// that matched it and its near misses.
	ByDefect []DefectMatch `json:"by_defect"`
}

// NearMissLines is how close (in lines) a verified citation of a defect's
// file must come to the defect's lines, without overlapping them, to be a
// near miss.
const NearMissLines = 10

// DefectMatch is one defect and the findings that reached it. Found and
// NearMisses are indexes into the findings given to Match. A near miss is
// a finding that cites the defect's file without matching it: a verified
// citation within NearMissLines lines of the defect that does not overlap
// it, or a citation overlapping the defect's lines that is not verified
// (fabricated or unverifiable).
type DefectMatch struct {
	ID         string `json:"id"`
	Path       string `json:"path"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	Title      string `json:"title,omitempty"`
	Found      []int  `json:"found"`
	NearMisses []int  `json:"near_misses"`
}

// Match compares findings (each one its checked citations) with the
// defects: a finding matches a defect when one of its verified citations
// has the defect's path and lines overlapping the defect's.
func (g GroundTruth) Match(findings [][]Check) Match {
	m := Match{Defects: len(g.Defects), Findings: len(findings), Missed: []string{}, ByDefect: make([]DefectMatch, len(g.Defects))}
	for i, d := range g.Defects {
		m.ByDefect[i] = DefectMatch{ID: d.ID, Path: d.Path, StartLine: d.StartLine, EndLine: d.EndLine, Title: d.Title, Found: []int{}, NearMisses: []int{}}
	}
	for f, cs := range findings {
		matching := false
		near := make([]bool, len(g.Defects))
		hit := make([]bool, len(g.Defects))
		for _, c := range cs {
			for i, d := range g.Defects {
				if path.Clean(c.Path) != d.Path {
					continue
				}
				overlap := c.StartLine <= d.EndLine && c.EndLine >= d.StartLine
				switch {
				case overlap && c.State == Verified:
					hit[i], matching = true, true
				case overlap,
					c.State == Verified && c.StartLine <= d.EndLine+NearMissLines && c.EndLine >= d.StartLine-NearMissLines:
					near[i] = true
				}
			}
		}
		for i := range g.Defects {
			switch {
			case hit[i]:
				m.ByDefect[i].Found = append(m.ByDefect[i].Found, f)
			case near[i]:
				m.ByDefect[i].NearMisses = append(m.ByDefect[i].NearMisses, f)
			}
		}
		if matching {
			m.Matching++
		}
	}
	for i, d := range m.ByDefect {
		if len(d.Found) > 0 {
			m.Found++
		} else {
			m.Missed = append(m.Missed, g.Defects[i].ID)
		}
	}
	if m.Defects > 0 {
		r := float64(m.Found) / float64(m.Defects)
		m.Recall = &r
	}
	if m.Findings > 0 {
		p := float64(m.Matching) / float64(m.Findings)
		m.Precision = &p
	}
	return m
}
