package nexus

import (
	"bytes"
	"path/filepath"
	"sync"
	"testing"
)

// Runs that start at once on a machine without a key all make or read the
// same key: none reads another's key file while it is still being written
// (an empty or partial file would be refused as "does not hold a journal
// key", and the run would fail).
func TestJournalKeyMadeByManyRunsAtOnce(t *testing.T) {
	t.Parallel()
	const rounds, runs = 100, 8
	for round := range rounds {
		path := filepath.Join(t.TempDir(), "swarm", "journal.key")
		keys := make([][]byte, runs)
		errs := make([]error, runs)
		var wg sync.WaitGroup
		for i := range runs {
			wg.Go(func() {
				k, err := loadJournalKeyAt(path, true)
				errs[i] = err
				if err == nil {
					keys[i] = k.key
				}
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, run %d: %v", round, i, err)
			}
			if !bytes.Equal(keys[i], keys[0]) {
				t.Fatalf("round %d: run %d got another key than run 0", round, i)
			}
		}
	}
}
