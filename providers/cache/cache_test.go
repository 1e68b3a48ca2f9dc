package cache

import (
	"context"
	"errors"
	"testing"

	"github.com/swarm-dev/swarm/providers"
)

func TestCacheReusesIdenticalCallsOnly(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	fail := false
	base := providers.ProviderFunc(func(_ context.Context, r providers.Request) (providers.Response, error) {
		calls++
		if fail {
			return providers.Response{}, providers.NewError(providers.ClassTransient, "boom", nil)
		}
		return providers.Response{Text: r.Messages[0].Content + "!"}, nil
	})
	var st Stats
	ref := providers.Ref{Kind: "mock", Model: "honest"}
	p := Middleware(dir, ref, "", &st)(base)
	req := providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: "hi"}}, Seed: providers.Int64(1)}
	a, _ := p.Complete(t.Context(), req)
	b, _ := p.Complete(t.Context(), req)
	if a.Text != "hi!" || b.Text != "hi!" || calls != 1 || st.Hits.Load() != 1 {
		t.Fatalf("calls %d hits %d", calls, st.Hits.Load())
	}
	// a new process with the same directory still hits
	p2 := Middleware(dir, ref, "", nil)(base)
	if _, err := p2.Complete(t.Context(), req); err != nil || calls != 1 {
		t.Fatalf("on-disk reuse failed: calls %d", calls)
	}
	// anything that shapes the answer is part of the key
	for _, r := range []providers.Request{
		{Messages: req.Messages, Seed: providers.Int64(2)},
		{Messages: req.Messages, Seed: providers.Int64(1), Schema: &providers.Schema{Name: "x", JSON: []byte(`{}`)}},
	} {
		before := calls
		p.Complete(t.Context(), r)
		if calls != before+1 {
			t.Errorf("distinct request served from cache: %+v", r)
		}
	}
	if providers.CacheKey(providers.Ref{Kind: "mock", Model: "sloppy"}, "", req) == providers.CacheKey(ref, "", req) {
		t.Error("model not in the key")
	}
	if providers.CacheKey(ref, "http://a:8080/v1", req) == providers.CacheKey(ref, "http://b:8080/v1", req) {
		t.Error("endpoint not in the key: two servers behind one kind would share answers")
	}
	// failures are not cached
	fail = true
	r := providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: "new"}}}
	if _, err := p.Complete(t.Context(), r); !errors.Is(err, providers.ErrTransient) {
		t.Fatal(err)
	}
	fail = false
	if x, err := p.Complete(t.Context(), r); err != nil || x.Text != "new!" {
		t.Fatal("failure was cached")
	}
}
