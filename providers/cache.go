package providers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/swarm-dev/swarm/internal/safeio"
)

// CacheStats counts hits and misses of a Cache.
type CacheStats struct {
	Hits, Misses atomic.Int64
}

// maxCachedAnswerBytes bounds one cached answer read back: a file over it
// (or not a regular file: a FIFO would block the call) is a miss.
const maxCachedAnswerBytes = 64 << 20

// Cache is a content-addressed on-disk cache of successful responses, keyed
// on the provider reference, its endpoint (two servers behind one kind are
// different providers) and everything in the request that shapes the answer
// (messages, schema name and JSON, seed, temperature, max tokens).
// Re-running with the same directory reuses identical calls instead of
// paying twice. Writes are atomic (temp file + rename).
func Cache(dir string, ref Ref, endpoint string, stats *CacheStats) Middleware {
	return func(p Provider) Provider {
		return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
			key := CacheKey(ref, endpoint, req)
			path := filepath.Join(dir, key[:2], key+".json")
			if b, err := safeio.ReadFileNoFollow(path, maxCachedAnswerBytes); err == nil {
				var resp Response
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

// CacheKey is the hex SHA-256 of a request's identity (IdentityOf) and
// of the model and endpoint it is sent to.
func CacheKey(ref Ref, endpoint string, req Request) string {
	return KeyOf(struct {
		Ref      string `json:"ref"`
		Endpoint string `json:"endpoint,omitempty"`
		RequestIdentity
	}{ref.String(), endpoint, IdentityOf(req)})
}

// RequestIdentity is what in a request shapes the answer: the messages,
// the schema (by its name and Hash, computed once per Go type for the
// schemas Structured sends, not by a copy of its JSON), seed, temperature,
// max tokens and tools. Keys over requests (the cache's, a run journal's)
// embed it beside what else identifies them.
type RequestIdentity struct {
	Messages    []Message `json:"messages"`
	Schema      string    `json:"schema,omitempty"`
	SchemaHash  string    `json:"schema_hash,omitempty"`
	Seed        *int64    `json:"seed,omitempty"`
	Temperature *float64  `json:"temperature,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Tools       []Tool    `json:"tools,omitempty"`
}

// IdentityOf returns req's identity.
func IdentityOf(req Request) RequestIdentity {
	id := RequestIdentity{Messages: req.Messages, Seed: req.Seed, Temperature: req.Temperature, MaxTokens: req.MaxTokens, Tools: req.Tools}
	if req.Schema != nil {
		id.Schema, id.SchemaHash = req.Schema.Name, req.Schema.Hash()
	}
	return id
}

// KeyOf is the hex SHA-256 of v's JSON: a key over a struct embedding a
// RequestIdentity.
func KeyOf(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
