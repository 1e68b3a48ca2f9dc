package prompts

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRenderFromPooledBuffers: Render executes templates into pooled
// buffers; renders running at once, one after another, must each get the
// whole text of their own template and nothing of another's.
func TestRenderFromPooledBuffers(t *testing.T) {
	t.Parallel()
	want, err := Render("system", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		why        string
		goroutines int
	}{
		{"one after another", "a buffer back from the pool is reset", 1},
		{"at once", "two renders never share a buffer", 8},
	}
	for _, tt := range tests {
		var wg sync.WaitGroup
		got := make([]string, tt.goroutines*20)
		for g := range tt.goroutines {
			wg.Go(func() {
				for i := range 20 {
					s, err := Render("system", nil)
					if err != nil {
						t.Error(err)
					}
					got[g*20+i] = s
				}
			})
		}
		wg.Wait()
		for i, s := range got {
			if diff := cmp.Diff(want, s); diff != "" {
				t.Fatalf("%s (%s): render %d (-want +got):\n%s", tt.name, tt.why, i, diff)
			}
		}
	}
}
