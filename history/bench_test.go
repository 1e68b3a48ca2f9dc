package history_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/swarm-dev/swarm/history"
	"github.com/swarm-dev/swarm/internal/runfixture"
)

// BenchmarkReindex1000 indexes 1 000 run directories that are copies (hard
// links) of the fixture's workspace run: run.json, result.json,
// telemetry.json and events.jsonl of a real mock run with evidence and
// ground truth. Target: under 10 s on 2 cores (README, "Browse runs").
func BenchmarkReindex1000(b *testing.B) {
	runs := filepath.Join(b.TempDir(), "runs")
	src := filepath.Join(fixture, runfixture.Workspace)
	for i := range 1000 {
		dir := filepath.Join(runs, fmt.Sprintf("run-%04d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for _, f := range []string{"run.json", "result.json", "telemetry.json", "events.jsonl"} {
			if err := os.Link(filepath.Join(src, f), filepath.Join(dir, f)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		os.Remove(filepath.Join(runs, history.IndexFile))
		ix, err := history.Open(b.Context(), runs)
		if err != nil {
			b.Fatal(err)
		}
		st, err := ix.Reindex(b.Context())
		ix.Close()
		if err != nil || st.Indexed != 1000 {
			b.Fatalf("%+v %v", st, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/1000-runs")
}

// BenchmarkList10000 answers runs-list queries over 10 000 indexed
// synthetic run directories (runfixture.Synthetic). Target: every query
// under 300 ms.
func BenchmarkList10000(b *testing.B) {
	runs := filepath.Join(b.TempDir(), "runs")
	if err := runfixture.Synthetic(runs, 10000); err != nil {
		b.Fatal(err)
	}
	ix, err := history.Open(b.Context(), runs)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if st, err := ix.Reindex(b.Context()); err != nil || st.Total != 10000 {
		b.Fatalf("%+v %v", st, err)
	}
	for _, bc := range []struct {
		name string
		q    history.Query
	}{
		{"first-page", history.Query{}},
		{"last-page", history.Query{Page: 200}},
		{"filter-status-model-sort-shadow", history.Query{Status: "complete", Model: "openai:gpt-4.1", Sort: "shadow", Asc: true}},
		{"search", history.Query{Search: "billing", Sort: "cost", Page: 20}},
		{"mission-and-dates", history.Query{Mission: "mission 07", Sort: "duration"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				p, err := ix.List(b.Context(), bc.q)
				if err != nil || len(p.Runs) == 0 {
					b.Fatalf("%v, %d runs", err, len(p.Runs))
				}
			}
		})
	}
}
