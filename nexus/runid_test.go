package nexus_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/runfiles"
)

// Issue 20, "Run ids never collide": runs of one mission started in the
// same second (one injected clock) get distinct directories and run ids;
// the second used to be refused ("--out ... is not empty") or to share the
// first one's directory. Two start one after the other, three at once.
func TestRunsStartedInTheSameSecondGetTheirOwnDirectories(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	second := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	run := func() (*nexus.Result, error) {
		cfg := defaultConfig(t)
		smallTeams(cfg) // five whole runs: the directories are the point, not the teams
		cfg.Run.OutDir = out
		m, err := nexus.Prepare(nexus.Options{Config: cfg, Registry: mockRegistry(mock.Options{}), Mission: loadMission(t, "test-gap-hunt.md"),
			MissionName: "same", Scale: "ss-50", Provider: ref(t, "mock:honest"), Now: func() time.Time { return second }})
		if err != nil {
			return nil, err
		}
		return m.Run(t.Context())
	}
	var results []*nexus.Result
	for range 2 {
		res, err := run()
		if err != nil {
			t.Fatalf("a run started in the same second as another: %v", err)
		}
		results = append(results, res)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			res, err := run()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("a run started at once with others: %v", err)
				return
			}
			results = append(results, res)
		})
	}
	wg.Wait()
	dirs, ids := map[string]bool{}, map[string]bool{}
	for _, res := range results {
		if res.Status != runfiles.StatusComplete {
			t.Errorf("%s: %s (%s)", res.Dir, res.Status, res.Error)
		}
		if filepath.Base(res.Dir) != res.Plan.RunID || res.Telemetry.RunID != res.Plan.RunID {
			t.Errorf("directory %s, run id %s, telemetry %s: want one name", res.Dir, res.Plan.RunID, res.Telemetry.RunID)
		}
		dirs[res.Dir], ids[res.Plan.RunID] = true, true
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 5 || len(ids) != 5 || len(entries) != 5 {
		t.Errorf("%d directories, %d run ids, %d entries under out for 5 runs: %v", len(dirs), len(ids), len(entries), dirs)
	}
	if !dirs[filepath.Join(out, "20261127-080000-same-ss-50")] || !dirs[filepath.Join(out, "20261127-080000-same-ss-50-2")] {
		t.Errorf("directories %v: want the id, then the id with -2, ...", dirs)
	}
}
