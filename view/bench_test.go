package view_test

import (
	"bufio"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/history"
	"github.com/swarm-dev/swarm/internal/runfixture"
	"github.com/swarm-dev/swarm/view"
)

// BenchmarkViewer10000 serves the runs list (pages, filters, sorts) and
// run pages over 10 000 indexed synthetic run directories
// (runfixture.Synthetic), and reports the process's resident memory after
// (VmRSS, Linux; the test binary's whole RSS, so an upper bound of the
// viewer's). Targets: a list page well under 300 ms, under 100 MB RSS.
func BenchmarkViewer10000(b *testing.B) {
	runs := filepath.Join(b.TempDir(), "runs")
	if err := runfixture.Synthetic(runs, 10000); err != nil {
		b.Fatal(err)
	}
	ix, err := history.Open(b.Context(), runs)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Reindex(b.Context()); err != nil {
		b.Fatal(err)
	}
	s, err := view.New(view.Options{RunsDir: runs, Index: ix, LoopbackOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	i := 0
	for b.Loop() {
		for _, u := range []string{
			fmt.Sprintf("/?page=%d", i%200+1),
			fmt.Sprintf("/?status=complete&sort=shadow&order=asc&page=%d", i%50+1),
			"/?q=billing&model=openai:gpt-4.1&sort=cost",
			fmt.Sprintf("/run/syn-%05d", i*37%10000),
		} {
			w := httptest.NewRecorder()
			s.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1"+u, nil))
			if w.Code != 200 {
				b.Fatalf("%s: %d", u, w.Code)
			}
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/4, "ms/page")
	if rss := vmRSS(); rss > 0 {
		b.ReportMetric(float64(rss)/(1<<20), "MB-RSS")
	}
}

// vmRSS is the process's resident set in bytes (/proc/self/status); 0
// where there is no /proc.
func vmRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
