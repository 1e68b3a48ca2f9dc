//go:build unix

package yamlx

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadFileRefusesAFIFO: a FIFO named as a YAML file blocked the reader
// for ever (issue 22, point 10); it is refused, naming the path.
func TestReadFileRefusesAFIFO(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.yml")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(path, DefaultLimits); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrRead) || !strings.Contains(err.Error(), path+": not a regular file") {
			t.Errorf("ReadFile: %v", err)
		}
	case <-time.After(time.Minute): // a failure guard, not a speed check: on the old code it never returns
		t.Fatal("ReadFile of a FIFO did not return")
	}
}
