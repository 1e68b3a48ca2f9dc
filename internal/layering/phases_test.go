package layering

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The ranks of the engine's files (package nexus), lowest first. A file
// may use what its own file declares, what a lower rank declares, and what
// another file of its own group declares, except between phase groups:
// one phase never reaches into another (a later phase gets an earlier
// one's output as a parameter; what two phases share lives in a shared
// file).
const (
	rankShared   = iota // the run's shared parts: recorder, meter, pool, journal, breakers, bridge, evidence, result types
	rankPhase           // one group per phase
	rankPipeline        // the phase sequence (run.go)
	rankAPI             // the Mission API (Prepare, Seal, Run, RunSealed, Close, Resume, Bench)
)

// place is a file's rank and group.
type place struct {
	rank  int
	group string
}

func (p place) String() string {
	switch p.rank {
	case rankShared:
		return "shared"
	case rankPhase:
		return "phase " + p.group
	case rankPipeline:
		return "pipeline"
	}
	return "mission API"
}

// engineFiles classifies every non-test file of package nexus. A file not
// listed fails the test: a new file gets its place here.
var engineFiles = map[string]place{
	// The run's shared parts.
	"advisory.go":         {rankShared, "shared"},
	"breaker.go":          {rankShared, "shared"},
	"bridge.go":           {rankShared, "shared"},
	"concurrency.go":      {rankShared, "shared"},
	"consensus.go":        {rankShared, "shared"},
	"cputime_linux.go":    {rankShared, "shared"},
	"cputime_nolinux.go":  {rankShared, "shared"},
	"cputime_other.go":    {rankShared, "shared"},
	"cputime_unix.go":     {rankShared, "shared"},
	"cputime_windows.go":  {rankShared, "shared"},
	"deps.go":             {rankShared, "shared"},
	"doc.go":              {rankShared, "shared"},
	"events.go":           {rankShared, "shared"},
	"evidence.go":         {rankShared, "shared"},
	"evidence_verify.go":  {rankShared, "shared"},
	"followup.go":         {rankShared, "shared"},
	"groundtruth.go":      {rankShared, "shared"},
	"journal.go":          {rankShared, "shared"},
	"journal_mac.go":      {rankShared, "shared"},
	"linebuf.go":          {rankShared, "shared"},
	"logfile.go":          {rankShared, "shared"},
	"meter.go":            {rankShared, "shared"},
	"mission_input.go":    {rankShared, "shared"},
	"options.go":          {rankShared, "shared"},
	"outputs.go":          {rankShared, "shared"},
	"telemetry_calls.go":  {rankShared, "shared"},
	"pool.go":             {rankShared, "shared"},
	"ratelimits.go":       {rankShared, "shared"},
	"recorder.go":         {rankShared, "shared"},
	"result.go":           {rankShared, "shared"},
	"rundir_read.go":      {rankShared, "shared"},
	"safety.go":           {rankShared, "shared"},
	"stack.go":            {rankShared, "shared"},
	"telemetry_format.go": {rankShared, "shared"},
	"treestat_linux.go":   {rankShared, "shared"},
	"treestat_other.go":   {rankShared, "shared"},
	"util.go":             {rankShared, "shared"},
	"workspace.go":        {rankShared, "shared"},

	// The phases, one group each.
	"phase0_intake.go":      {rankPhase, "0"},
	"phase1_decompose.go":   {rankPhase, "1"},
	"phase15_seal.go":       {rankPhase, "1.5"},
	"phase2_capsules.go":    {rankPhase, "2"},
	"phase34_commanders.go": {rankPhase, "3-4"},
	"waves.go":              {rankPhase, "3-4"},
	"phase5_review.go":      {rankPhase, "5"},
	"phase6_judge.go":       {rankPhase, "6"},
	"phase7_consensus.go":   {rankPhase, "7"},
	"phase8_report.go":      {rankPhase, "8"},
	"phase8_replays.go":     {rankPhase, "8"},
	"report_cards.go":       {rankPhase, "8"},
	"report_evidence.go":    {rankPhase, "8"},
	"report_md.go":          {rankPhase, "8"},
	"findings.go":           {rankPhase, "8"},
	"export_findings.go":    {rankPhase, "8"},

	// The phase sequence.
	"run.go": {rankPipeline, "pipeline"},

	// The Mission API.
	"mission.go":        {rankAPI, "api"},
	"journal_resume.go": {rankAPI, "api"},
	"bench.go":          {rankAPI, "api"},
}

// allowed says whether a file placed at from may use what a file placed at
// to declares (two different files).
func allowed(from, to place) bool {
	if from.rank != to.rank {
		return from.rank > to.rank
	}
	return from.group == to.group
}

// arrow is one use, in a file, of something another file declares.
type arrow struct{ from, to, name string }

// TestEnginePhasesLayered checks the engine's file-to-file arrows: for
// every identifier a non-test file of package nexus uses, the file that
// declares what it refers to (a type, function, method, field, constant or
// variable of the package) must be the same file, a lower rank, or the
// same group (never another phase). It fails on every arrow that runs back
// up or across phases, naming both files and the identifier.
func TestEnginePhasesLayered(t *testing.T) {
	t.Parallel()
	pkg, info, fset, all := loadEngine(t)
	var unplaced, stale []string
	for _, name := range all {
		if _, ok := engineFiles[name]; !ok {
			unplaced = append(unplaced, name)
		}
	}
	for name := range engineFiles {
		if !slices.Contains(all, name) {
			stale = append(stale, name)
		}
	}
	slices.Sort(stale)
	if len(stale) > 0 {
		t.Errorf("engineFiles places files nexus does not have (remove them): %s", strings.Join(stale, ", "))
	}
	if len(unplaced) > 0 {
		t.Fatalf("nexus files without a place in engineFiles (give each a rank and group): %s", strings.Join(unplaced, ", "))
	}
	arrows, pairs := engineArrows(pkg, info, fset)
	var bad []string
	badPairs := map[[2]string]bool{}
	for _, a := range arrows {
		from, to := engineFiles[a.from], engineFiles[a.to]
		if !allowed(from, to) {
			bad = append(bad, fmt.Sprintf("%s (%s) -> %s (%s): %s", a.from, from, a.to, to, a.name))
			badPairs[[2]string{a.from, a.to}] = true
		}
	}
	t.Logf("%d file-to-file arrows (%d identifiers)", len(pairs), len(arrows))
	if len(bad) > 0 {
		t.Errorf("%d of %d file-to-file arrows (%d uses of an identifier) run back up or across phases:\n%s",
			len(badPairs), len(pairs), len(bad), strings.Join(bad, "\n"))
	}
}

// engineArrows is every distinct (using file, declaring file, identifier)
// between two different files of the package, sorted, and the distinct
// file pairs.
func engineArrows(pkg *types.Package, info *types.Info, fset *token.FileSet) ([]arrow, map[[2]string]bool) {
	owner := map[*types.Var]string{} // a struct field's type
	for _, name := range pkg.Scope().Names() {
		if tn, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok {
			if st, ok := tn.Type().Underlying().(*types.Struct); ok {
				for f := range st.Fields() {
					owner[f] = name
				}
			}
		}
	}
	seen := map[arrow]bool{}
	pairs := map[[2]string]bool{}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from == to {
			continue
		}
		seen[arrow{from, to, qualified(obj, owner)}] = true
		pairs[[2]string{from, to}] = true
	}
	var out []arrow
	for a := range seen {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b arrow) int {
		return strings.Compare(a.from+"\x00"+a.to+"\x00"+a.name, b.from+"\x00"+b.to+"\x00"+b.name)
	})
	return out, pairs
}

// qualified is an object's name, a method's or field's with its type
// ("runState.rec").
func qualified(obj types.Object, owner map[*types.Var]string) string {
	switch o := obj.(type) {
	case *types.Func:
		if sig, ok := o.Type().(*types.Signature); ok && sig.Recv() != nil {
			return typeName(sig.Recv().Type()) + "." + o.Name()
		}
	case *types.Var:
		if o.IsField() && owner[o] != "" {
			return owner[o] + "." + o.Name()
		}
	}
	return obj.Name()
}

func typeName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return t.String()
}

// loadEngine parses and type-checks package nexus (its non-test files for
// this platform, as go list reports them) against the export data of its
// dependencies. It also returns the names of all its non-test files, those
// of other platforms included (each needs a place; only this platform's
// are type-checked).
func loadEngine(t *testing.T) (*types.Package, *types.Info, *token.FileSet, []string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to load package nexus: %v", err)
	}
	dir := filepath.Join("..", "..", "nexus")
	out, err := exec.Command(goTool, "list", "-f", "{{range .GoFiles}}{{.}}\n{{end}}--\n{{range .IgnoredGoFiles}}{{.}}\n{{end}}", dir).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", dir, stderrOf(err))
	}
	var names, all []string
	ignored := false
	for l := range strings.Lines(string(out)) {
		switch l = strings.TrimSpace(l); {
		case l == "--":
			ignored = true
		case l != "" && !ignored:
			names = append(names, l)
			all = append(all, l)
		case l != "" && !strings.HasSuffix(l, "_test.go"):
			all = append(all, l)
		}
	}
	exports := map[string]string{}
	out, err = exec.Command(goTool, "list", "-deps", "-export", "-f", "{{.ImportPath}}\t{{.Export}}", dir).Output()
	if err != nil {
		t.Fatalf("go list -export %s: %v", dir, stderrOf(err))
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check(module+"/nexus", fset, files, info)
	if err != nil {
		t.Fatalf("type-check nexus: %v", err)
	}
	return pkg, info, fset, all
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return err.Error() + ": " + string(ee.Stderr)
	}
	return err.Error()
}
