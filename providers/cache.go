package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

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
