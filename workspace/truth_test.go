package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/swarm-dev/swarm/citation"
)

const goodTruth = `workspace: shop
defects:
  - id: D1
    path: internal/auth/session.go
    start_line: 40
    end_line: 52
    category: security
    title: Session tokens compared with ==
  - id: D2
    path: internal/db/db.go
    start_line: 10
    end_line: 10
    category: error_handling
    title: error dropped
  - id: D3
    path: README.md
    start_line: 3
    end_line: 5
    category: docs
    title: docs drift
`

func writeTruth(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "shop.truth.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadGroundTruth(t *testing.T) {
	t.Parallel()
	gt, err := LoadGroundTruth(writeTruth(t, goodTruth))
	if err != nil {
		t.Fatal(err)
	}
	if gt.Workspace != "shop" || len(gt.Defects) != 3 || gt.Defects[1] != (Defect{"D2", "internal/db/db.go", 10, 10, "error_handling", "error dropped"}) {
		t.Errorf("%+v", gt)
	}
}

func TestLoadGroundTruthErrors(t *testing.T) {
	t.Parallel()
	one := func(fields string) string {
		return "workspace: shop\ndefects:\n  - id: D1\n" + fields
	}
	ok := "    path: a.go\n    start_line: 1\n    end_line: 2\n"
	cases := []struct {
		name, body string
		want       string // the error contains it (file name is checked for all)
	}{
		{"duplicate id", goodTruth + "  - id: D1\n" + ok, ":21:5: defects[3].id: duplicate id"},
		{"missing id", "defects:\n  - path: a.go\n    start_line: 1\n    end_line: 1\n", ":2:"},
		{"absolute path", one("    path: /etc/passwd\n    start_line: 1\n    end_line: 1\n"), ":4:5: defects[0].path: path \"/etc/passwd\" must be relative"},
		{"escaping path", one("    path: ../x.go\n    start_line: 1\n    end_line: 1\n"), ":4:5: defects[0].path"},
		{"unclean path", one("    path: a/./b.go\n    start_line: 1\n    end_line: 1\n"), ":4:5: defects[0].path"},
		{"backslashes", one("    path: a\\\\b.go\n    start_line: 1\n    end_line: 1\n"), "defects[0].path"},
		{"start zero", one("    path: a.go\n    start_line: 0\n    end_line: 1\n"), ":5:5: defects[0].start_line: start_line must be at least 1"},
		{"end before start", one("    path: a.go\n    start_line: 5\n    end_line: 4\n"), ":6:5: defects[0].end_line: end_line 4 is before start_line 5"},
		{"bad category", one(ok + "    category: style\n"), ":7:5: defects[0].category"},
		{"unknown key", one(ok + "    severity: high\n"), ":7:"},
		{"wrong type", one("    path: a.go\n    start_line: one\n    end_line: 1\n"), ":5:"},
		{"no defects", "workspace: shop\n", "defects"},
		{"syntax", "defects: [\n", "truth.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTruth(t, tc.body)
			_, err := LoadGroundTruth(p)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to name %s and contain %q", err, p, tc.want)
			}
		})
	}
	if _, err := LoadGroundTruth(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	gt, err := LoadGroundTruth(writeTruth(t, goodTruth))
	if err != nil {
		t.Fatal(err)
	}
	v := func(p string, s, e int) Check {
		return Check{Citation: citation.Citation{Path: p, StartLine: s, EndLine: e, Quote: "q"}, State: Verified}
	}
	fab := func(c Check) Check { c.State = Fabricated; return c }
	unv := func(c Check) Check { c.State = Unverifiable; return c }
	f := func(x float64) *float64 { return &x }
	cases := []struct {
		name     string
		findings [][]Check
		want     Match
	}{
		{"overlap at the defect's first line and inside another", [][]Check{{v("internal/auth/session.go", 30, 40)}, {v("internal/db/db.go", 10, 10)}},
			Match{Defects: 3, Found: 2, Findings: 2, Matching: 2, Recall: f(2.0 / 3), Precision: f(1), Missed: []string{"D3"}}},
		{"adjacent lines do not overlap; a finding without citations counts", [][]Check{{v("internal/auth/session.go", 53, 60)}, {}},
			Match{Defects: 3, Found: 0, Findings: 2, Matching: 0, Recall: f(0), Precision: f(0), Missed: []string{"D1", "D2", "D3"}}},
		{"fabricated and unverifiable citations never match", [][]Check{{fab(v("internal/auth/session.go", 40, 41))}, {unv(v("README.md", 3, 3))}},
			Match{Defects: 3, Found: 0, Findings: 2, Matching: 0, Recall: f(0), Precision: f(0), Missed: []string{"D1", "D2", "D3"}}},
		{"one finding covering two defects; two findings on one defect", [][]Check{{v("README.md", 1, 3), v("./internal/db/db.go", 1, 20)}, {v("README.md", 5, 9)}, {v("other.go", 1, 1)}},
			Match{Defects: 3, Found: 2, Findings: 3, Matching: 2, Recall: f(2.0 / 3), Precision: f(2.0 / 3), Missed: []string{"D1"}}},
		{"no findings: precision is absent, not zero", nil,
			Match{Defects: 3, Missed: []string{"D1", "D2", "D3"}, Recall: f(0)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// ByDefect has its own test (TestMatchByDefect).
			if d := cmp.Diff(tc.want, gt.Match(tc.findings), cmpopts.IgnoreFields(Match{}, "ByDefect")); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if m := (GroundTruth{}).Match([][]Check{{v("a.go", 1, 1)}}); m.Recall != nil || m.Precision == nil || *m.Precision != 0 {
		t.Errorf("no defects: recall must be absent: %+v", m)
	}
}

// Per defect: the findings that matched it and the near misses (a
// verified citation of its file within NearMissLines lines that does not
// overlap it, or an overlapping citation that is not verified).
func TestMatchByDefect(t *testing.T) {
	t.Parallel()
	gt, err := LoadGroundTruth(writeTruth(t, goodTruth))
	if err != nil {
		t.Fatal(err)
	}
	v := func(p string, s, e int) Check {
		return Check{Citation: citation.Citation{Path: p, StartLine: s, EndLine: e, Quote: "q"}, State: Verified}
	}
	fab := func(c Check) Check { c.State = Fabricated; return c }
	findings := [][]Check{
		{v("internal/auth/session.go", 50, 60)},                // 0: found D1
		{v("internal/auth/session.go", 53, 62)},                // 1: near D1 (one line after it)
		{fab(v("internal/auth/session.go", 40, 41))},           // 2: near D1 (overlaps, fabricated)
		{v("internal/auth/session.go", 63, 70)},                // 3: 11 lines after D1: not near
		{v("internal/db/db.go", 10, 10), v("README.md", 9, 9)}, // 4: found D2, near D3 (4 lines after)
		{v("other.go", 10, 10)},                                // 5: nothing
	}
	got := gt.Match(findings).ByDefect
	want := []DefectMatch{
		{ID: "D1", Path: "internal/auth/session.go", StartLine: 40, EndLine: 52, Title: "Session tokens compared with ==", Found: []int{0}, NearMisses: []int{1, 2}},
		{ID: "D2", Path: "internal/db/db.go", StartLine: 10, EndLine: 10, Title: "error dropped", Found: []int{4}, NearMisses: []int{}},
		{ID: "D3", Path: "README.md", StartLine: 3, EndLine: 5, Title: "docs drift", Found: []int{}, NearMisses: []int{4}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("by defect (-want +got):\n%s", d)
	}
}

// Issue 20, "Ground truth checked at start": a defect whose file is not in
// the workspace, or whose lines the file does not have, could never be
// found; the file is refused, each such defect named at file:line:col of
// its key.
func TestLoadGroundTruthInChecksTheWorkspace(t *testing.T) {
	t.Parallel()
	lines := func(n int) string { return strings.Repeat("x\n", n) }
	ws := t.TempDir()
	write(t, ws, map[string]string{
		"internal/auth/session.go": lines(60), "internal/db/db.go": lines(12), "README.md": lines(5),
		".env": "SECRET=1\n", "bin/tool": "\x00\x01", "docs/guide.md": lines(2),
	})
	fs, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	defect := func(id, path string, start, end int) string {
		return "  - id: " + id + "\n    path: " + path + "\n    start_line: " + strconv.Itoa(start) + "\n    end_line: " + strconv.Itoa(end) + "\n"
	}
	cases := []struct {
		name, why string
		body      string
		want      []string // every one in the error ("" = no error)
	}{
		{"every defect in place", "the shipped shape: files exist, lines in range", goodTruth, nil},
		{"a file the workspace lacks", "a typo in a path made every run miss the defect, lowering recall",
			"defects:\n" + defect("D1", "internal/auth/sesion.go", 1, 2),
			[]string{":3:5: defects[0].path: defect D1: the file does not exist"}},
		{"lines past the end", "the file has 12 lines; 10-14 cannot be cited",
			"defects:\n" + defect("D1", "internal/db/db.go", 10, 14),
			[]string{":5:5: defects[0].end_line: defect D1: lines 10-14 of internal/db/db.go are out of range: the file has 12 lines"}},
		{"lines wholly past the end", "the start is the first line out of range",
			"defects:\n" + defect("D1", "README.md", 7, 9),
			[]string{":4:5: defects[0].start_line: defect D1: lines 7-9 of README.md are out of range: the file has 5 lines"}},
		{"a denied file", "no agent may read .env, so no finding can cite it",
			"defects:\n" + defect("D1", ".env", 1, 1), []string{":3:5: defects[0].path: defect D1: the file is denied to the agents"}},
		{"a directory", "a defect is lines of a file",
			"defects:\n" + defect("D1", "internal/auth", 1, 1), []string{":3:5: defects[0].path: defect D1: the file cannot be read as text"}},
		{"a binary file", "its lines cannot be quoted",
			"defects:\n" + defect("D1", "bin/tool", 1, 1), []string{":3:5: defects[0].path: defect D1: the file cannot be read as text"}},
		{"every bad defect named", "one run of the check lists them all, each at its line",
			"defects:\n" + defect("D1", "docs/guide.md", 1, 2) + defect("D2", "nope.go", 1, 1) + defect("D3", "docs/guide.md", 2, 3),
			[]string{":7:5: defects[1].path: defect D2", ":13:5: defects[2].end_line: defect D3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTruth(t, tc.body)
			_, err := LoadGroundTruthIn(p, fs)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("%s: %v", tc.why, err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrGroundTruth) {
				t.Fatalf("%s: error %v, want one wrapping ErrGroundTruth", tc.why, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), p+w) {
					t.Errorf("%s: error %q lacks %q", tc.why, err, p+w)
				}
			}
		})
	}
}
