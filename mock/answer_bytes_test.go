package mock_test

import (
	"encoding/json"
	"errors"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/providers"
)

// TestMockAnswerBytesBound: in-process, Options.MaxAnswerBytes bounds the
// answer, and refusing a schema whose smallest answer is over it allocates
// a small multiple of the bound, not the answer (the 256-byte
// schema: 590 MB, 4 GB of RSS).
func TestMockAnswerBytesBound(t *testing.T) {
	// Serial: counts the whole process's allocations.
	const bound = 1 << 20
	m, err := mock.New(mock.Honest, mock.Options{MaxAnswerBytes: bound})
	if err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"array","minItems":1000,"items":{"type":"array","minItems":48,"items":{"type":"string","minLength":10000}}}`
	if len(schema) > 256 {
		t.Fatalf("schema of %d bytes", len(schema))
	}
	req := providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: "Review token rotation."}},
		Schema: &providers.Schema{Name: "x", JSON: json.RawMessage(schema)}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = m.Complete(t.Context(), req)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, mock.ErrAnswerTooLarge) || !errors.Is(err, mock.ErrBadSchema) {
		t.Errorf("Complete: %v, want ErrAnswerTooLarge and ErrBadSchema", err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("refusing the schema allocated %d bytes (bound %d)", alloc, bound)
	if alloc > 16*bound {
		t.Errorf("refusing the schema allocated %d bytes, want at most %d", alloc, 16*bound)
	}

	// Within the bound: the usual answer, unchanged by the bound.
	small := `{"type":"object","required":["a","b"],"properties":{"a":{"type":"string"},"b":{"type":"array","minItems":3,"items":{"type":"integer"}}}}`
	req.Schema.JSON = json.RawMessage(small)
	bounded, err := m.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	free, _ := mock.New(mock.Honest, mock.Options{})
	usual, err := free.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(usual.Text, bounded.Text); diff != "" {
		t.Errorf("answer within the bound changed (-default +bounded):\n%s", diff)
	}
}
