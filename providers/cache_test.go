package providers

import (
	"context"
	"errors"
	"testing"
)

func TestCacheReusesIdenticalCallsOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	calls := 0
	fail := false
	base := ProviderFunc(func(_ context.Context, r Request) (Response, error) {
		calls++
		if fail {
			return Response{}, NewError(ClassTransient, "boom", nil)
		}
		return Response{Text: r.Messages[0].Content + "!"}, nil
	})
	var st CacheStats
	ref := Ref{Kind: "mock", Model: "honest"}
	p := Cache(dir, ref, "", &st)(base)
	req := Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}, Seed: Int64(1)}
	a, _ := p.Complete(t.Context(), req)
	b, _ := p.Complete(t.Context(), req)
	if a.Text != "hi!" || b.Text != "hi!" || calls != 1 || st.Hits.Load() != 1 {
		t.Fatalf("calls %d hits %d", calls, st.Hits.Load())
	}
	// a new process with the same directory still hits
	p2 := Cache(dir, ref, "", nil)(base)
	if _, err := p2.Complete(t.Context(), req); err != nil || calls != 1 {
		t.Fatalf("on-disk reuse failed: calls %d", calls)
	}
	// anything that shapes the answer is part of the key
	for _, r := range []Request{
		{Messages: req.Messages, Seed: Int64(2)},
		{Messages: req.Messages, Seed: Int64(1), Schema: &Schema{Name: "x", JSON: []byte(`{}`)}},
	} {
		before := calls
		p.Complete(t.Context(), r)
		if calls != before+1 {
			t.Errorf("distinct request served from cache: %+v", r)
		}
	}
	if CacheKey(Ref{Kind: "mock", Model: "sloppy"}, "", req) == CacheKey(ref, "", req) {
		t.Error("model not in the key")
	}
	if CacheKey(ref, "http://a:8080/v1", req) == CacheKey(ref, "http://b:8080/v1", req) {
		t.Error("endpoint not in the key: two servers behind one kind would share answers")
	}
	// failures are not cached
	fail = true
	r := Request{Messages: []Message{{Role: RoleUser, Content: "new"}}}
	if _, err := p.Complete(t.Context(), r); !errors.Is(err, ErrTransient) {
		t.Fatal(err)
	}
	fail = false
	if x, err := p.Complete(t.Context(), r); err != nil || x.Text != "new!" {
		t.Fatal("failure was cached")
	}
}
