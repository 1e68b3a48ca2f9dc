package providers

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// Exchange is what a CaptureTransport saw of one call's last HTTP
// exchange: whether a request was sent at all, the response's status and
// headers, and the first MaxErrBody bytes of an error response's body.
// SDKs keep little of these (the Retry-After and rate-limit headers, the
// status of an error body they could parse), and an adapter classifies
// errors and reads rate limits from them.
type Exchange struct {
	mu     sync.Mutex
	sent   bool
	status int
	header http.Header
	body   []byte
}

// Get returns what was seen.
func (e *Exchange) Get() (sent bool, status int, header http.Header, body []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sent, e.status, e.header, e.body
}

type exchangeKey struct{}

// WithExchange returns a context whose HTTP requests through a
// CaptureTransport are recorded in the Exchange it returns.
func WithExchange(ctx context.Context) (context.Context, *Exchange) {
	e := &Exchange{}
	return context.WithValue(ctx, exchangeKey{}, e), e
}

// CaptureTransport records each request whose context came from
// WithExchange into that Exchange (a later attempt within the call
// replaces an earlier one's response).
type CaptureTransport struct{ Base http.RoundTripper }

// RoundTrip sends r through Base and records the exchange.
func (t CaptureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	e, _ := r.Context().Value(exchangeKey{}).(*Exchange)
	if e != nil {
		e.mu.Lock()
		e.sent = true
		e.mu.Unlock()
	}
	resp, err := t.Base.RoundTrip(r)
	if resp != nil && e != nil {
		e.mu.Lock()
		e.status, e.header, e.body = resp.StatusCode, resp.Header.Clone(), nil
		e.mu.Unlock()
		if resp.StatusCode >= 400 {
			resp.Body = &headReader{rc: resp.Body, e: e}
		}
	}
	return resp, err
}

// headReader copies the first MaxErrBody bytes read from an error body into
// the call's Exchange.
type headReader struct {
	rc io.ReadCloser
	e  *Exchange
}

func (r *headReader) Read(b []byte) (int, error) {
	n, err := r.rc.Read(b)
	if n > 0 {
		r.e.mu.Lock()
		r.e.body = AppendHead(r.e.body, b[:n])
		r.e.mu.Unlock()
	}
	return n, err
}

func (r *headReader) Close() error { return r.rc.Close() }
