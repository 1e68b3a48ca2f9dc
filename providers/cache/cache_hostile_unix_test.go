//go:build unix

package cache

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/providers"
)

// A cache directory is shared and may hold anything: an entry that is a
// FIFO, a link or a file over the bound is a miss (the call goes to the
// provider), never a read that blocks or a gigabyte in memory. On main the
// FIFO blocked the call forever.
func TestCacheEntryThatIsNotARegularFileIsAMiss(t *testing.T) {
	t.Parallel()
	ref := providers.Ref{Kind: "mock", Model: "honest"}
	req := providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: "hi"}}, Seed: providers.Int64(1)}
	key := providers.CacheKey(ref, "", req)
	for _, tc := range []struct {
		why   string
		plant func(t *testing.T, path string)
	}{
		{"a FIFO would block the read forever", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}},
		{"a link may point anywhere (here at a device that never ends)", func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a sparse file over the bound is not read into memory", func(t *testing.T, path string) {
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(maxCachedAnswerBytes + 1); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.why, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, key[:2], key+".json")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			tc.plant(t, path)
			calls := 0
			base := providers.ProviderFunc(func(_ context.Context, r providers.Request) (providers.Response, error) {
				calls++
				return providers.Response{Text: "fresh"}, nil
			})
			var st Stats
			p := Middleware(dir, ref, "", &st)(base)
			done := make(chan providers.Response, 1)
			go func() {
				resp, _ := p.Complete(t.Context(), req)
				done <- resp
			}()
			select {
			case resp := <-done:
				if resp.Text != "fresh" || calls != 1 || st.Hits.Load() != 0 {
					t.Errorf("got %q after %d calls, %d hits; want a miss answered by the provider", resp.Text, calls, st.Hits.Load())
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the cache read blocked")
			}
		})
	}
}
