package providers

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// viaRegistry builds provider p under ref through a Registry, as a run
// builds every provider.
func viaRegistry(t *testing.T, ref Ref, p Provider) Provider {
	t.Helper()
	r := &Registry{}
	r.Register(KindInfo{Kind: ref.Kind}, func(Ref, KindConfig) (Provider, error) { return p, nil })
	got, err := r.New(ref, KindConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// answers plays the responses (and errors) in order and keeps each request.
func answers(seen *[]Request, resps []Response, errs []error) Provider {
	return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
		i := min(len(*seen), len(resps)-1)
		*seen = append(*seen, req)
		return resps[i], errs[i]
	})
}

// Issue 21 points 6-8: a failed repair keeps the first attempt's failure
// as its cause, the repair request never holds an assistant message with
// neither content nor tool calls, and errors name the model kind:model.
func TestRepairKeepsItsCauseAndIsWellFormed(t *testing.T) {
	t.Parallel()
	toolsOnly := &Error{Class: ClassUnparseable, Provider: "openai-compatible", Model: "x", Msg: "tools called: lookup", Err: ErrUnofferedToolCalls}
	tests := []struct {
		name       string
		resps      []Response
		errs       []error
		wantClass  Class
		wantText   string // the whole error text
		wantFirst  Class
		wantRepair string // in the repair prompt
	}{
		{
			name:      "prose, then a schema-invalid repair: both in order",
			resps:     []Response{{Text: "Sure, here it is.", Model: "x-2025"}, {Text: `{"name":"a","score":11,"tags":[]}`, Model: "x-2025"}},
			errs:      []error{nil, nil},
			wantClass: ClassSchemaInvalid, wantFirst: ClassUnparseable,
			wantText:   "schema_invalid from openai-compatible:x: unparseable: no JSON found in the answer: unparseable output; repair: schema_invalid: output does not match schema: at /score: maximum: got 11, want 10",
			wantRepair: "Your previous answer was not a valid",
		},
		{
			name:      "tool calls only where none were offered: repaired, and no empty assistant echo",
			resps:     []Response{{Model: "x-2025", FinishReason: FinishToolCalls, ToolCalls: []ToolCall{{ID: "c1", Name: "lookup", Arguments: "{}"}}}, {Text: "still prose", Model: "x-2025"}},
			errs:      []error{toolsOnly, nil},
			wantClass: ClassUnparseable, wantFirst: ClassUnparseable,
			wantText:   "unparseable from openai-compatible:x: unparseable: answered tool calls though none were offered; repair: unparseable: no JSON found in the answer: unparseable output",
			wantRepair: "only calls of tools that were not offered (lookup)",
		},
		{
			name:      "empty answer: the repair prompt says so",
			resps:     []Response{{Model: "x-2025"}, {Text: `{"name":"a","score":1,"tags":[]}`}},
			errs:      []error{nil, nil},
			wantClass: ClassNone, wantRepair: "Your previous answer was empty",
		},
		{
			name:      "a repair refused by the server keeps the first failure too",
			resps:     []Response{{Text: "prose"}, {}},
			errs:      []error{nil, &Error{Class: ClassPermanent, Provider: "openai-compatible", Model: "x", StatusCode: 400, Msg: "the server rejected the request"}},
			wantClass: ClassPermanent, wantFirst: ClassUnparseable,
			wantText:   "permanent from openai-compatible:x (HTTP 400): unparseable: no JSON found in the answer: unparseable output; repair: permanent: the server rejected the request",
			wantRepair: "Your previous answer was not a valid",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen []Request
			p := viaRegistry(t, Ref{Kind: "openai-compatible", Model: "x"}, answers(&seen, tc.resps, tc.errs))
			_, _, err := Structured[testOut](t.Context(), p, Request{Messages: []Message{{Role: RoleUser, Content: "go"}}}, WithSchemaName("test_out"))
			if ClassOf(err) != tc.wantClass {
				t.Fatalf("class %q (%v), want %q", ClassOf(err), err, tc.wantClass)
			}
			if len(seen) != 2 {
				t.Fatalf("%d requests, want 2 (one repair)", len(seen))
			}
			for i, m := range seen[1].Messages {
				if m.Role == RoleAssistant && m.Content == "" && len(m.ToolCalls) == 0 {
					t.Errorf("repair message %d is an empty assistant message", i)
				}
			}
			last := seen[1].Messages[len(seen[1].Messages)-1]
			if last.Role != RoleUser || !strings.Contains(last.Content, tc.wantRepair) {
				t.Errorf("repair prompt %q, want it to say %q", last.Content, tc.wantRepair)
			}
			if err == nil {
				return
			}
			if d := cmp.Diff(tc.wantText, err.Error()); d != "" {
				t.Errorf("error text (-want +got):\n%s", d)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.First == nil || pe.First.Class != tc.wantFirst {
				t.Fatalf("err %#v: want the first failure (%s) kept", err, tc.wantFirst)
			}
			// errors.Is sees the first failure's sentinel as well as the final one.
			if !errors.Is(err, ErrUnparseable) {
				t.Errorf("errors.Is(err, ErrUnparseable) = false for %v", err)
			}
			if strings.Contains(err.Error(), "from x-2025") || strings.Contains(err.Error(), "from x:") {
				t.Errorf("the model is named another way than kind:model: %v", err)
			}
		})
	}
}

// Issue 21 point 8: every error names the model one way, kind:model, the
// way the user wrote it, whoever made the error.
func TestErrorsNameTheModelOneWay(t *testing.T) {
	t.Parallel()
	ref := Ref{Kind: "openai-compatible", Model: "x"}
	var seen []Request
	p := viaRegistry(t, ref, answers(&seen, []Response{{Text: "prose", Model: "x-2025-served"}}, []error{nil}))
	_, _, err := Structured[testOut](t.Context(), p, Request{Messages: []Message{{Role: RoleUser, Content: "go"}}}, WithSchemaName("test_out"))
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("err %v", err)
	}
	if got := pe.Provider + ":" + pe.Model; got != ref.String() || !strings.HasPrefix(err.Error(), "unparseable from "+ref.String()+":") {
		t.Errorf("error names %q (%v), want %s", got, err, ref)
	}
	// An adapter's error without a model gets the registry's.
	bare := viaRegistry(t, ref, ProviderFunc(func(context.Context, Request) (Response, error) {
		return Response{}, &Error{Class: ClassTransient, Msg: "boom"}
	}))
	_, err = bare.Complete(t.Context(), Request{})
	if want := "transient from openai-compatible:x: boom"; err == nil || err.Error() != want {
		t.Errorf("err %v, want %q", err, want)
	}
}

// The first attempt's failure is part of the error's text, so it is
// scrubbed of secrets like the rest.
func TestRedactErrorScrubsTheFirstFailure(t *testing.T) {
	t.Parallel()
	err := RedactError(valuesRedactor("first-failure-secret-4711"), &Error{Class: ClassSchemaInvalid, Msg: "bad", First: &Error{Class: ClassUnparseable, Msg: "echoed first-failure-secret-4711"}})
	if strings.Contains(err.Error(), "first-failure-secret-4711") {
		t.Errorf("secret in %v", err)
	}
}
