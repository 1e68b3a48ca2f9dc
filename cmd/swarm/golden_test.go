package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/internal/golden"
)

// The golden files pin what a fixed mock run writes (report.md, result.json,
// events.jsonl, a v2 Shadow Report) and what a fixed compare writes
// (compare.md), so that a change inside the pipeline that is meant to change
// nothing provably changes nothing. Only what varies between two identical
// runs is normalised: timestamps, durations and latencies, the run
// directory's path, the last digits of float sums (their order follows the
// goroutines'), the transcript line an event points to, and the order of events.jsonl lines (concurrent agents emit
// in any order; each line is kept whole, without its seq and time).
//
// Regenerate after an intended change with
//
//	go test ./cmd/swarm -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files of the golden-file tests")

func TestGoldenRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	c, _, stderr := execCLI(t, "run", "testdata/golden/mission.md",
		"--config", "testdata/golden/config.yml", "--scale", "ss-12", "--out", dir, "-q")
	if c != 0 {
		t.Fatalf("swarm run: exit %d: %s", c, stderr)
	}
	checkGolden(t, "run.report.md", normaliseMarkdown(t, dir, readFile(t, dir, "report.md")))
	checkGolden(t, "run.result.json", normaliseJSON(t, dir, readFile(t, dir, "result.json")))
	checkGolden(t, "run.events.jsonl", normaliseEvents(t, dir, readFile(t, dir, "events.jsonl")))
	reports, err := filepath.Glob(filepath.Join(dir, "reports", "*.json"))
	if err != nil || len(reports) == 0 {
		t.Fatalf("no Shadow Report under %s/reports (%v)", dir, err)
	}
	slices.Sort(reports)
	for _, p := range reports {
		name := "run.report-v2." + filepath.Base(p)
		checkGolden(t, name, normaliseJSON(t, dir, readFile(t, filepath.Dir(p), filepath.Base(p))))
	}
}

func TestGoldenCompare(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "compare")
	c, _, stderr := execCLI(t, "compare", "testdata/golden/mission.md",
		"--config", "testdata/golden/config.yml", "--scale", "ss-12",
		"--models", "mock:honest,mock:sloppy", "--repeats", "2", "--out", dir)
	if c != 0 {
		t.Fatalf("swarm compare: exit %d: %s", c, stderr)
	}
	checkGolden(t, "compare.md", normaliseMarkdown(t, dir, readFile(t, dir, "compare.md")))
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".golden")
	if d := golden.Diff(t, path, got, *update); d != "" {
		t.Errorf("%s differs from its golden file (-want +got):\n%s", name, d)
	}
}

var (
	stampRe    = regexp.MustCompile(`\b\d{8}-\d{6}\b`)
	timeRe     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)
	durKeyRe   = regexp.MustCompile(`(?i)(latency|duration|elapsed|wall|_ms$|_ns$|^time$|_at$)`)
	durationRe = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s)\b`)
)

// normaliseText replaces the run directory's path and run-id time stamps.
func normaliseText(dir, s string) string {
	s = strings.ReplaceAll(s, dir, "<dir>")
	return stampRe.ReplaceAllString(s, "<stamp>")
}

// normaliseValue walks a decoded JSON value (numbers as json.Number).
func normaliseValue(dir string, key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normaliseValue(dir, k, e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normaliseValue(dir, key, e)
		}
		return x
	case json.Number:
		if key == "transcript" { // the line of transcripts.jsonl: arrival order
			return "<seq>"
		}
		if durKeyRe.MatchString(key) {
			return "<dur>"
		}
		if strings.ContainsAny(string(x), ".eE") {
			f, err := x.Float64()
			if err == nil {
				return json.Number(strconv.FormatFloat(f, 'g', 10, 64))
			}
		}
		return x
	case string:
		if timeRe.MatchString(x) {
			return "<time>"
		}
		if durKeyRe.MatchString(key) && durationRe.MatchString(x) {
			return "<dur>"
		}
		return normaliseText(dir, x)
	}
	return v
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

func normaliseJSON(t *testing.T, dir string, b []byte) []byte {
	t.Helper()
	return marshal(t, normaliseValue(dir, "", decodeJSON(t, b)), "  ")
}

// marshal renders v as JSON without HTML escaping (the goldens stay
// readable), indented when indent is not empty, with a final newline.
func marshal(t *testing.T, v any, indent string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func normaliseEvents(t *testing.T, dir string, b []byte) []byte {
	t.Helper()
	var lines []string
	for line := range strings.Lines(string(b)) {
		v, ok := decodeJSON(t, []byte(line)).(map[string]any)
		if !ok {
			t.Fatalf("event line is not an object: %q", line)
		}
		delete(v, "seq")
		delete(v, "time")
		lines = append(lines, string(marshal(t, normaliseValue(dir, "", v), "")))
	}
	slices.Sort(lines)
	return []byte(strings.Join(lines, ""))
}

// normaliseMarkdown normalises text, and in tables every cell under a
// header naming a time (latency, wall time) or on a row naming one.
func normaliseMarkdown(t *testing.T, dir string, b []byte) []byte {
	t.Helper()
	var out strings.Builder
	var timed []bool // per column of the current table
	for line := range strings.Lines(normaliseText(dir, string(b))) {
		body := strings.TrimRight(line, "\n")
		if !strings.HasPrefix(body, "|") {
			timed = nil
			out.WriteString(line)
			continue
		}
		cells := strings.Split(body, "|")
		switch {
		case timed == nil: // header row
			timed = make([]bool, len(cells))
			for i, c := range cells {
				timed[i] = durKeyRe.MatchString(strings.TrimSpace(strings.ReplaceAll(c, " ", "_")))
			}
		case strings.HasPrefix(body, "|---"):
		default:
			rowTimed := len(cells) > 1 && durKeyRe.MatchString(strings.ReplaceAll(strings.TrimSpace(cells[1]), " ", "_"))
			for i := range cells {
				if i == 0 || i == len(cells)-1 {
					continue
				}
				if (i < len(timed) && timed[i]) || (rowTimed && i > 1) {
					cells[i] = " <dur> "
				}
			}
		}
		out.WriteString(strings.Join(cells, "|") + "\n")
	}
	return []byte(out.String())
}
