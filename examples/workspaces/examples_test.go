// Package workspaces_test keeps the example workspaces and their ground truth
// honest: every planted defect must still sit at the lines its truth file
// names, so an edit to an example cannot silently move or remove a defect.
//
// The example codebases are nested Go modules (each has its own go.mod), so
// `go build ./...` and `go vet ./...` of swarm never compile them.
package workspaces_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/workspace"
)

// pin is what a defect's lines must hold: the trimmed text of its first and
// last line (so a shift of even one line fails) and a marker, the substring
// that is the defect itself, somewhere in the range.
type pin struct {
	first, last, marker string
}

// tinynotesPins: one entry per defect of tinynotes.truth.yaml. Editing the
// example means updating the truth file's lines and, when the defect's code
// changes, this table.
var tinynotesPins = map[string]pin{
	"D1":  {first: "if sig != m.sign(id) {", last: "}", marker: "sig != m.sign(id)"},
	"D2":  {first: "q := `SELECT ` + noteColumns + ` FROM notes WHERE owner_id = ` + strconv.FormatInt(ownerID, 10) +", last: "rows, err := s.db.QueryContext(ctx, q)", marker: "LIKE '%` + query + `%'"},
	"D3":  {first: `logger.Info("starting notesd", "config", cfg)`, last: `logger.Info("starting notesd", "config", cfg)`, marker: `"config", cfg`},
	"D4":  {first: "func (s *Server) handleGetNote(w http.ResponseWriter, r *http.Request) {", last: "}", marker: "s.store.Note(r.Context(), id)"},
	"D5":  {first: "func VerifyPassword(encoded, password string) error {", last: "}", marker: "subtle.ConstantTimeCompare(got, want)"},
	"D6":  {first: "func TestSessionExpiry(t *testing.T) {", last: "}", marker: "\tm.Lookup(token)\n}"},
	"D7":  {first: "f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)", last: "defer f.Close()", marker: "defer f.Close()"},
	"D8":  {first: "defer func() {", last: "}()", marker: "recover()"},
	"D9":  {first: `if v, ok := values["NOTESD_MAX_BODY_BYTES"]; ok {`, last: "}", marker: "n, _ := strconv.ParseInt(v, 10, 64)"},
	"D10": {first: "| `-read-only` | serve reads only: every POST and DELETE answers 503 (for maintenance windows) |", last: "| `-read-only` | serve reads only: every POST and DELETE answers 503 (for maintenance windows) |", marker: "-read-only"},
	"D11": {first: "### `POST /api/sessions/refresh` (*session*)", last: "`200` with `{\"expires\"}`. Clients should call it when less than an hour is left.", marker: "/api/sessions/refresh"},
}

var categories = []string{"security", "tests", "error_handling", "docs"}

// loadTruth reads a truth file with the loader swarm run and compare use
// (strict: unknown keys, missing ids, bad paths and categories refused).
func loadTruth(t *testing.T, file string) workspace.GroundTruth {
	t.Helper()
	tr, err := workspace.LoadGroundTruth(file)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// countLines counts lines as read_file does: a final line without a newline
// still counts; a trailing newline does not start another line.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// checkDefect returns why d does not hold in the workspace at root (nil when
// it holds).
func checkDefect(root string, d workspace.Defect, p pin) error {
	if d.Path == "" || path.IsAbs(d.Path) || path.Clean(d.Path) != d.Path || strings.HasPrefix(d.Path, "../") || d.Path == ".." {
		return fmt.Errorf("path %q is not a clean slash path relative to the workspace root", d.Path)
	}
	if !slices.Contains(categories, d.Category) {
		return fmt.Errorf("category %q is not one of %v", d.Category, categories)
	}
	if strings.TrimSpace(d.Title) == "" {
		return errors.New("title is empty")
	}
	full := filepath.Join(root, filepath.FromSlash(d.Path))
	fi, err := os.Lstat(full)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", d.Path)
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return err
	}
	total := countLines(string(data))
	if d.StartLine < 1 || d.StartLine > d.EndLine || d.EndLine > total {
		return fmt.Errorf("lines %d-%d are not within 1-%d of %s", d.StartLine, d.EndLine, total, d.Path)
	}
	lines := strings.Split(string(data), "\n")[d.StartLine-1 : d.EndLine]
	if got := strings.TrimSpace(lines[0]); got != p.first {
		return fmt.Errorf("%s:%d is %q, want %q", d.Path, d.StartLine, got, p.first)
	}
	if got := strings.TrimSpace(lines[len(lines)-1]); got != p.last {
		return fmt.Errorf("%s:%d is %q, want %q", d.Path, d.EndLine, got, p.last)
	}
	if !strings.Contains(strings.Join(lines, "\n"), p.marker) {
		return fmt.Errorf("%s:%d-%d does not contain the marker %q", d.Path, d.StartLine, d.EndLine, p.marker)
	}
	return nil
}

func TestTinynotesGroundTruth(t *testing.T) {
	const root, truthFile = "tinynotes", "tinynotes.truth.yaml"
	tr := loadTruth(t, truthFile)
	if tr.Workspace != "tinynotes" {
		t.Errorf("workspace = %q, want tinynotes", tr.Workspace)
	}
	if n := len(tr.Defects); n < 8 || n > 12 {
		t.Errorf("%d defects, want 8 to 12", n)
	}

	var ids []string
	perCategory := map[string]int{}
	for _, d := range tr.Defects {
		ids = append(ids, d.ID)
		perCategory[d.Category]++
		p, ok := tinynotesPins[d.ID]
		if !ok {
			t.Errorf("defect %s has no entry in tinynotesPins", d.ID)
			continue
		}
		if err := checkDefect(root, d, p); err != nil {
			t.Errorf("defect %s: %v", d.ID, err)
		}
	}
	var pinned []string
	for id := range tinynotesPins {
		pinned = append(pinned, id)
	}
	slices.Sort(pinned)
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	if diff := cmp.Diff(pinned, sorted); diff != "" {
		t.Errorf("defect ids of the truth file vs the pins (-pins +truth):\n%s", diff)
	}
	if c := slices.Compact(sorted); len(c) != len(ids) {
		t.Errorf("defect ids are not unique: %v", ids)
	}
	for _, c := range categories {
		if perCategory[c] == 0 {
			t.Errorf("no defect of category %s", c)
		}
	}
}

// TestCheckDefectRefuses shows each check of checkDefect can fail, on the
// real workspace: a truth file that drifted is caught, not waved through.
func TestCheckDefectRefuses(t *testing.T) {
	good := workspace.Defect{ID: "D1", Path: "internal/auth/session.go", StartLine: 79, EndLine: 81, Category: "security", Title: "t"}
	p := tinynotesPins["D1"]
	if err := checkDefect("tinynotes", good, p); err != nil {
		t.Fatalf("the reference defect does not hold: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(*workspace.Defect, *pin)
		want   string
	}{
		{"a path climbing out of the workspace", func(d *workspace.Defect, _ *pin) { d.Path = "../tinynotes.truth.yaml" }, "not a clean slash path"},
		{"an absolute path", func(d *workspace.Defect, _ *pin) { d.Path = "/etc/passwd" }, "not a clean slash path"},
		{"a path that does not exist", func(d *workspace.Defect, _ *pin) { d.Path = "internal/auth/missing.go" }, "no such file"},
		{"a directory instead of a file", func(d *workspace.Defect, _ *pin) { d.Path = "internal/auth" }, "not a regular file"},
		{"an end line past the end of the file", func(d *workspace.Defect, _ *pin) { d.EndLine = 100000 }, "are not within"},
		{"a start line after the end line", func(d *workspace.Defect, _ *pin) { d.StartLine, d.EndLine = 81, 79 }, "are not within"},
		{"a range shifted by one line", func(d *workspace.Defect, _ *pin) { d.StartLine, d.EndLine = 80, 82 }, "want \"if sig != m.sign(id) {\""},
		{"a range cut short at the end", func(d *workspace.Defect, _ *pin) { d.EndLine = 80 }, "want \"}\""},
		{"a marker no longer in the range", func(_ *workspace.Defect, p *pin) { p.marker = "hmac.Equal" }, "does not contain the marker"},
		{"an unknown category", func(d *workspace.Defect, _ *pin) { d.Category = "style" }, "is not one of"},
		{"an empty title", func(d *workspace.Defect, _ *pin) { d.Title = " " }, "title is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, q := good, p
			tc.mutate(&d, &q)
			err := checkDefect("tinynotes", d, q)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("checkDefect = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestTinynotesWorkspaceShape: the workspace is the size the issue asks for
// (500-1500 lines), holds the files the deny list and .gitignore handling
// are exercised with, and no ground truth is inside it.
func TestTinynotesWorkspaceShape(t *testing.T) {
	const root = "tinynotes"
	total := 0
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		total += countLines(string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if total < 500 || total > 1500 {
		t.Errorf("the workspace has %d lines, want 500 to 1500", total)
	}
	for _, f := range files {
		if strings.Contains(strings.ToLower(path.Base(f)), "truth") {
			t.Errorf("%s: a ground-truth file inside the workspace would be readable by agents", f)
		}
	}
	// Fixtures: denied by default (.env*, *.pem), and a committed file
	// under a directory .gitignore ignores.
	for _, want := range []string{".env", "deploy/server.pem", "build/VERSION", ".gitignore", "go.mod"} {
		if !slices.Contains(files, want) {
			t.Errorf("the workspace lacks %s", want)
		}
	}
	gi, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(gi), "\n"), "build/") {
		t.Errorf(".gitignore does not ignore build/:\n%s", gi)
	}
	// The fake secrets say they are fake, so nobody mistakes them.
	for _, f := range []string{".env", "deploy/server.pem"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "FAKE") {
			t.Errorf("%s does not say its credentials are FAKE", f)
		}
	}
	abs, err := filepath.Abs("tinynotes.truth.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := filepath.Rel(rootAbs, abs); err != nil || !strings.HasPrefix(rel, "..") {
		t.Errorf("the truth file %s is inside the workspace %s", abs, rootAbs)
	}
}

// TestTinynotesMissions: the missions over tinynotes are valid missions, name
// at least five aspects, and do not leak the ground truth (its file name, or
// a defect's path:line).
func TestTinynotesMissions(t *testing.T) {
	tr := loadTruth(t, "tinynotes.truth.yaml")
	for _, name := range []string{"security-review-tinynotes.md", "test-gap-hunt-tinynotes.md", "migration-plan-tinynotes.md"} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("..", "missions", name)
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			if err := nexus.CheckMission(file, text, 0); err != nil {
				t.Fatal(err)
			}
			bullets := 0
			for _, l := range strings.Split(text, "\n") {
				if strings.HasPrefix(l, "- ") {
					bullets++
				}
			}
			if bullets < 5 {
				t.Errorf("%d aspects (bullet lines), want at least 5", bullets)
			}
			if strings.Contains(text, "truth") {
				t.Errorf("the mission mentions the ground truth")
			}
			for _, d := range tr.Defects {
				if ref := fmt.Sprintf("%s:%d", path.Base(d.Path), d.StartLine); strings.Contains(text, ref) {
					t.Errorf("the mission gives away defect %s (%s)", d.ID, ref)
				}
			}
		})
	}
}
