package providers

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// trace records what the layers of a stack saw, in order.
type trace struct{ got []string }

func (tr *trace) hook(name string, answer bool) Layer {
	return Layer{Name: name, Hook: HookFuncs{
		BeforeFunc: func(_ context.Context, c *Call) (Response, bool, error) {
			tr.got = append(tr.got, "before "+name)
			if answer {
				return Response{Text: "from " + name}, true, nil
			}
			return Response{}, false, nil
		},
		AfterFunc: func(_ context.Context, c *Call) {
			tr.got = append(tr.got, "after "+name+" saw "+c.Response.Text+" answered by "+c.AnsweredBy)
		},
	}}
}

func (tr *trace) around(name string, times int) Layer {
	return Layer{Name: name, Around: func(ctx context.Context, c *Call, next func(context.Context)) {
		for range times {
			tr.got = append(tr.got, "enter "+name)
			next(ctx)
			tr.got = append(tr.got, "leave "+name)
		}
	}}
}

func (tr *trace) provider() Provider {
	return ProviderFunc(func(context.Context, Request) (Response, error) {
		tr.got = append(tr.got, "provider")
		return Response{Text: "fresh"}, nil
	})
}

func TestStackRunsLayersInDeclaredOrder(t *testing.T) {
	tests := []struct {
		name   string
		why    string
		layers func(tr *trace) []Layer
		want   []string
	}{
		{name: "hooks and arounds", why: "Befores run outermost first, Afters innermost first, arounds where they are listed",
			layers: func(tr *trace) []Layer { return []Layer{tr.hook("a", false), tr.around("b", 1), tr.hook("c", false)} },
			want: []string{"before a", "enter b", "before c", "provider", "after c saw fresh answered by ",
				"leave b", "after a saw fresh answered by "}},
		{name: "a Before answers", why: "the layers below it and the provider are skipped; its After and those above still see the answer",
			layers: func(tr *trace) []Layer {
				return []Layer{tr.hook("outer", false), tr.hook("replay", true), tr.around("retry", 1), tr.hook("record", false)}
			},
			want: []string{"before outer", "before replay", "after replay saw from replay answered by replay",
				"after outer saw from replay answered by replay"}},
		{name: "an around runs the rest twice", why: "a retry runs the layers below it once per attempt: each attempt is recorded",
			layers: func(tr *trace) []Layer { return []Layer{tr.around("retry", 2), tr.hook("record", false)} },
			want: []string{"enter retry", "before record", "provider", "after record saw fresh answered by ", "leave retry",
				"enter retry", "before record", "provider", "after record saw fresh answered by ", "leave retry"}},
		{name: "a layer of neither kind", why: "an absent layer (no adaptive limit) passes the call on",
			layers: func(tr *trace) []Layer { return []Layer{{Name: "adaptive"}, tr.hook("record", false)} },
			want:   []string{"before record", "provider", "after record saw fresh answered by "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := &trace{}
			st := &Stack{Layers: tc.layers(tr), Provider: tr.provider()}
			if _, err := st.Complete(t.Context(), Request{}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tr.got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.why, diff)
			}
		})
	}
}

// An Around made of a Middleware changes the request for the layers below
// it only, and its result is the call's.
func TestWrapScopesTheRequestToTheLayersBelow(t *testing.T) {
	t.Parallel()
	var above, below int
	ceiling := Middleware(func(p Provider) Provider {
		return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
			req.MaxTokens = 10
			return p.Complete(ctx, req)
		})
	})
	st := &Stack{
		Layers: []Layer{
			{Name: "record", Hook: HookFuncs{AfterFunc: func(_ context.Context, c *Call) { above = c.Request.MaxTokens }}},
			{Name: "token_ceiling", Around: Wrap(ceiling)},
		},
		Provider: ProviderFunc(func(_ context.Context, req Request) (Response, error) {
			below = req.MaxTokens
			return Response{}, errors.New("down")
		}),
	}
	_, err := st.Complete(t.Context(), Request{MaxTokens: 100})
	if diff := cmp.Diff([]int{100, 10}, []int{above, below}); diff != "" || err == nil {
		t.Errorf("max tokens above and below the ceiling (-want +got):\n%s (err %v)", diff, err)
	}
}

// A stack ending in Next hands it the same Call, so a routing end can run
// another stack on it and what the inner stack learnt (the model that
// answered, the validation outcome) reaches the outer hooks.
func TestNextRunsAnotherStackOnTheSameCall(t *testing.T) {
	t.Parallel()
	s, err := SchemaFor[testOut]("out")
	if err != nil {
		t.Fatal(err)
	}
	model := &Stack{
		Layers: []Layer{{Name: "validate", Hook: HookFuncs{AfterFunc: func(_ context.Context, c *Call) {
			c.Response, _ = CheckOutput(c.Request, c.Response)
			c.Validation = c.Response.Validation
		}}}},
		Provider: ProviderFunc(func(context.Context, Request) (Response, error) {
			return Response{Text: `{"name":"a","score":30,"tags":[]}`}, nil // score above the schema's maximum
		}),
	}
	var saw Call
	outer := &Stack{
		Layers: []Layer{{Name: "journal", Hook: HookFuncs{AfterFunc: func(_ context.Context, c *Call) { saw = *c }}}},
		Next: func(ctx context.Context, c *Call) {
			c.Ref = Ref{Kind: "fallback", Model: "m"}
			model.Run(ctx, c)
		},
	}
	resp, err := outer.Complete(t.Context(), Request{Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	if saw.Ref != (Ref{Kind: "fallback", Model: "m"}) {
		t.Errorf("outer hook saw the call answered by %v, want fallback:m", saw.Ref)
	}
	if saw.Validation == nil || saw.Validation.Err == nil || saw.Validation.Err.Class != ClassSchemaInvalid {
		t.Fatalf("outer hook saw validation %+v, want a schema_invalid outcome", saw.Validation)
	}
	if resp.Validation != saw.Validation {
		t.Errorf("the response carries validation %p, the call %p: want the same outcome", resp.Validation, saw.Validation)
	}
}

func TestStackNames(t *testing.T) {
	t.Parallel()
	st := &Stack{Layers: []Layer{{Name: "replay"}, {Name: "route"}}}
	if diff := cmp.Diff([]string{"replay", "route"}, st.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}
