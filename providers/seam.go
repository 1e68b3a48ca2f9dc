package providers

import (
	"context"
	"time"
)

// The seam: one call path around every model call.
//
// A Stack runs a call through its Layers, outermost first, then through
// its Provider (or Next). A layer is either a Hook (code that runs before
// and after the layers below it, and may answer the call itself, as a
// replay of recorded answers does) or an Around (code that runs the layers
// below it itself: zero, one or several times, bounded, as retries, rate
// limits, concurrency caps and timeouts do). Everything a layer learns of
// a call travels on the Call, in the open: which model answered, the
// validation outcome, the caller's phase; nothing rides in the context.
//
// This is the shape of adk-go's plugins and eino's callback handlers: the
// order of a stack is the order of its Layers, one list a reader (or a
// test) can read.

// Call is one model call as the layers of a Stack see it. A Stack makes
// one per Complete; Run takes one made by the caller (a call routed from
// one stack to another stays the same Call).
type Call struct {
	// Request is the request as this layer sees it: an Around that changes
	// the request (a token ceiling) changes it for the layers below it
	// only; the layers above see theirs again once it returns.
	Request Request
	// Ref is the model the call is made on: set by whoever chooses it (a
	// routing layer), it is the model that answered once Response is set.
	Ref Ref
	// Phase is the caller's name for the stage of its work the call
	// belongs to (nexus: the pipeline phase). Opaque to this package.
	Phase string
	// Response and Err are the call's outcome as it travels up: a Hook's
	// After may replace them (a recorder returns the answer scrubbed).
	Response Response
	Err      error
	// Validation is the outcome of validating Response against Request's
	// schema, set by the layer that validates (CheckOutput); nil when no
	// layer did (no schema, a turn of tool calls, an error).
	Validation *Validation
	// Latency is how long the layers below a Hook took to answer (set
	// before each After; 0 when its Before answered).
	Latency time.Duration
	// Key is the request's identity for replay, when a layer computed it
	// (nexus's journal key): computed once per call, reused by its After.
	Key string
	// AnsweredBy names the layer whose Hook answered the call in Before
	// (the layers below it, the provider included, did not run); "" when
	// the layers below answered.
	AnsweredBy string
}

// Hook is a layer that runs around the layers below it.
//
// Before runs first, outermost hook first; when it answers (ok), the call
// is answered with resp and err, the layers below it do not run, and the
// Afters of it and of the hooks above it still do. After runs once the
// layers below have answered (or Before did), innermost first; it sees the
// request, the response, the error and the validation outcome, and may
// replace Response and Err (what the layers above see).
type Hook interface {
	Before(ctx context.Context, c *Call) (resp Response, ok bool, err error)
	After(ctx context.Context, c *Call)
}

// HookFuncs makes a Hook of two functions; either may be nil.
type HookFuncs struct {
	BeforeFunc func(ctx context.Context, c *Call) (Response, bool, error)
	AfterFunc  func(ctx context.Context, c *Call)
}

// Before calls BeforeFunc (nil: does not answer).
func (h HookFuncs) Before(ctx context.Context, c *Call) (Response, bool, error) {
	if h.BeforeFunc == nil {
		return Response{}, false, nil
	}
	return h.BeforeFunc(ctx, c)
}

// After calls AfterFunc (nil: nothing).
func (h HookFuncs) After(ctx context.Context, c *Call) {
	if h.AfterFunc != nil {
		h.AfterFunc(ctx, c)
	}
}

// Around is a layer that runs the layers below it itself, through next:
// not at all (a limiter that gave up: it sets c.Err), once, or once per
// attempt (retries). next sets c.Response and c.Err.
type Around func(ctx context.Context, c *Call, next func(context.Context))

// Wrap makes a Middleware (Retry, Timeout, RateLimit, Concurrency, ...)
// an Around: the middleware sees the rest of the stack as its provider, and
// the request it sends down is the one the layers below see.
func Wrap(mw Middleware) Around {
	return func(ctx context.Context, c *Call, next func(context.Context)) {
		inner := ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
			mine := c.Request
			c.Request = req
			next(ctx)
			c.Request = mine
			return c.Response, c.Err
		})
		c.Response, c.Err = mw(inner).Complete(ctx, c.Request)
	}
}

// Layer is one layer of a Stack: a Hook or an Around (exactly one), named
// for readers, tests and errors.
type Layer struct {
	Name   string
	Hook   Hook
	Around Around
}

// Stack is the one call path: Layers, outermost first, then Next (when
// set) or Provider. A Stack is a Provider.
type Stack struct {
	Layers []Layer
	// Next ends the stack when set: it is handed the Call itself, so a
	// routing end can run another Stack on the same Call.
	Next func(ctx context.Context, c *Call)
	// Provider ends the stack when Next is nil.
	Provider Provider
}

// Complete makes a Call of req and runs it (Run).
func (s *Stack) Complete(ctx context.Context, req Request) (Response, error) {
	c := &Call{Request: req}
	s.Run(ctx, c)
	return c.Response, c.Err
}

// Run runs c through the stack; c.Response and c.Err are its outcome.
func (s *Stack) Run(ctx context.Context, c *Call) {
	s.run(ctx, c, 0)
}

func (s *Stack) run(ctx context.Context, c *Call, i int) {
	if i == len(s.Layers) {
		c.Validation, c.AnsweredBy = nil, ""
		switch {
		case s.Next != nil:
			s.Next(ctx, c)
		case s.Provider != nil:
			c.Response, c.Err = s.Provider.Complete(ctx, c.Request)
		}
		return
	}
	l := s.Layers[i]
	switch {
	case l.Hook != nil:
		resp, ok, err := l.Hook.Before(ctx, c)
		if ok {
			c.Response, c.Err, c.Validation, c.AnsweredBy, c.Latency = resp, err, nil, l.Name, 0
		} else {
			start := time.Now()
			s.run(ctx, c, i+1)
			c.Latency = time.Since(start)
		}
		l.Hook.After(ctx, c)
	case l.Around != nil:
		l.Around(ctx, c, func(ctx context.Context) { s.run(ctx, c, i+1) })
	default:
		s.run(ctx, c, i+1)
	}
}

// Names lists the stack's layers, outermost first.
func (s *Stack) Names() []string {
	out := make([]string, len(s.Layers))
	for i, l := range s.Layers {
		out[i] = l.Name
	}
	return out
}
