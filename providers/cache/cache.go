// Package cache is the on-disk cache of model answers: a providers.Middleware
// that answers a call it has seen before (same model, endpoint and request
// identity, providers.CacheKey) from a file, and stores every successful
// answer it had to ask for. It lives apart from providers so that providers
// imports nothing of swarm's: reading a cache entry that anyone may have
// planted needs the bounded, no-follow read of internal/safeio.
package cache

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/swarm-dev/swarm/internal/safeio"
	"github.com/swarm-dev/swarm/providers"
)

// Stats counts hits and misses of a cache Middleware.
type Stats struct {
	Hits, Misses atomic.Int64
}

// maxCachedAnswerBytes bounds one cached answer read back: a file over it
// (or not a regular file: a FIFO would block the call) is a miss.
const maxCachedAnswerBytes = 64 << 20

// Middleware is a content-addressed on-disk cache of successful responses
// in dir, keyed on the provider reference, its endpoint (two servers behind
// one kind are different providers) and everything in the request that
// shapes the answer (messages, schema name and JSON, seed, temperature, max
// tokens): providers.CacheKey. Re-running with the same directory reuses
// identical calls instead of paying twice. Writes are atomic (temp file +
// rename). stats may be nil.
func Middleware(dir string, ref providers.Ref, endpoint string, stats *Stats) providers.Middleware {
	return func(p providers.Provider) providers.Provider {
		return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
			key := providers.CacheKey(ref, endpoint, req)
			path := filepath.Join(dir, key[:2], key+".json")
			if b, err := safeio.ReadFileNoFollow(path, maxCachedAnswerBytes); err == nil {
				var resp providers.Response
				if json.Unmarshal(b, &resp) == nil {
					if stats != nil {
						stats.Hits.Add(1)
					}
					resp.Cached = true
					return resp, nil
				}
			}
			if stats != nil {
				stats.Misses.Add(1)
			}
			resp, err := p.Complete(ctx, req)
			if err != nil {
				return resp, err
			}
			if b, merr := json.Marshal(resp); merr == nil {
				if os.MkdirAll(filepath.Dir(path), 0o755) == nil {
					if tmp, terr := os.CreateTemp(filepath.Dir(path), ".tmp-*"); terr == nil {
						_, werr := tmp.Write(b)
						cerr := tmp.Close()
						if werr == nil && cerr == nil {
							_ = os.Rename(tmp.Name(), path)
						} else {
							os.Remove(tmp.Name())
						}
					}
				}
			}
			return resp, nil
		})
	}
}
