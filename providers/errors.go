package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Class is the failure class of an error. Every failure in a run has one.
type Class string

// Failure classes.
const (
	ClassNone          Class = ""
	ClassRateLimited   Class = "rate_limited"
	ClassTimeout       Class = "timeout"
	ClassUnparseable   Class = "unparseable"
	ClassSchemaInvalid Class = "schema_invalid"
	ClassRefused       Class = "refused"
	ClassQuota         Class = "quota"
	ClassTransient     Class = "transient"
	ClassPermanent     Class = "permanent"
)

// Classes lists every failure class in a stable order.
var Classes = []Class{ClassRateLimited, ClassTimeout, ClassUnparseable, ClassSchemaInvalid, ClassRefused, ClassQuota, ClassTransient, ClassPermanent}

// Sentinels, one per class, usable with errors.Is on any *Error.
var (
	ErrRateLimited   = errors.New("rate limited")
	ErrTimeout       = errors.New("timeout")
	ErrUnparseable   = errors.New("unparseable output")
	ErrSchemaInvalid = errors.New("output does not match schema")
	ErrRefused       = errors.New("model refused")
	ErrQuota         = errors.New("quota exhausted")
	ErrTransient     = errors.New("transient failure")
	ErrPermanent     = errors.New("permanent failure")
	// ErrTruncated marks an answer cut off by the token limit (finish_reason
	// "length"). Its class is unparseable: a cut-off answer is never parsed.
	ErrTruncated = errors.New("answer truncated by token limit")
	// ErrUnofferedToolCalls marks an answer made only of tool calls to a
	// request that offered no tools. Its class is unparseable: there is no
	// answer to use.
	ErrUnofferedToolCalls = errors.New("answered tool calls though none were offered")
	// ErrUnknownKind is returned by the registry for an unregistered provider kind.
	ErrUnknownKind = errors.New("unknown provider kind")
	// ErrMissingAPIKey is returned when a provider's API key variable is unset.
	ErrMissingAPIKey = errors.New("missing API key")
	// ErrCircuitOpen marks a call refused before it reached any model: the
	// circuit breaker of every model it could go to (its own and its role's
	// fallbacks) is open. No simpler request and no smaller scope can be
	// answered either until one closes.
	ErrCircuitOpen = errors.New("circuit breaker open")
)

var classSentinel = map[Class]error{
	ClassRateLimited:   ErrRateLimited,
	ClassTimeout:       ErrTimeout,
	ClassUnparseable:   ErrUnparseable,
	ClassSchemaInvalid: ErrSchemaInvalid,
	ClassRefused:       ErrRefused,
	ClassQuota:         ErrQuota,
	ClassTransient:     ErrTransient,
	ClassPermanent:     ErrPermanent,
}

// Error is a classified provider failure.
type Error struct {
	Class      Class
	Provider   string        // provider kind, e.g. "openai"
	Model      string        // model name
	StatusCode int           // HTTP status when there was one
	RetryAfter time.Duration // server-requested delay before retrying, if any
	// Raw is the model's raw text for unparseable or schema-invalid output.
	Raw string
	Msg string
	// Body is a bounded excerpt of the error response's body (Excerpt:
	// at most MaxExcerpt bytes, control characters removed, secrets
	// scrubbed), when the server answered with an error status.
	Body string
	// RateLimit is what the error answer's headers said of the caller's
	// rate-limit budgets (ParseRateLimit), when they said anything.
	RateLimit *RateLimitState
	Err       error
	// First is the failure of the first attempt when this is the failure
	// of its repair (Structured): the cause the repair tried to fix. Error
	// reads "<first>; repair: <this>"; errors.Is and errors.As see both
	// (Unwrap), and ClassOf gives this error's class, the final one.
	First *Error
}

func (e *Error) Error() string {
	s := string(e.Class)
	switch {
	case e.Provider != "" && e.Model != "":
		s += " from " + e.Provider + ":" + e.Model
	case e.Provider != "" || e.Model != "":
		s += " from " + e.Provider + e.Model
	}
	if e.StatusCode != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.StatusCode)
	}
	if f := e.First; f != nil {
		// The first attempt's failure, then the repair's, in the order
		// they happened: "unparseable: no JSON ...; repair: schema_invalid: ...".
		return s + ": " + string(f.Class) + f.detail() + "; repair: " + string(e.Class) + e.detail()
	}
	return s + e.detail()
}

// detail is the part of Error after the class, the model and the status:
// the message, the body excerpt and the wrapped cause, each after ": ".
func (e *Error) detail() string {
	s := ""
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Body != "" && !strings.Contains(e.Msg, e.Body) {
		s += "; body: " + e.Body
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the wrapped cause and, after a failed repair, the first
// attempt's failure.
func (e *Error) Unwrap() []error {
	switch {
	case e.First == nil && e.Err == nil:
		return nil
	case e.First == nil:
		return []error{e.Err}
	case e.Err == nil:
		return []error{e.First}
	}
	return []error{e.Err, e.First}
}

// Is reports whether target is the sentinel of e's class.
func (e *Error) Is(target error) bool {
	return classSentinel[e.Class] == target && target != nil
}

// NewError builds a classified error.
func NewError(class Class, msg string, cause error) *Error {
	return &Error{Class: class, Msg: msg, Err: cause}
}

// ClassOf returns the failure class of err: the class of a wrapped *Error, or
// one inferred from context and network errors; ClassPermanent otherwise and
// ClassNone for nil.
func ClassOf(err error) Class {
	if err == nil {
		return ClassNone
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Class
	}
	for c, s := range classSentinel {
		if errors.Is(err, s) {
			return c
		}
	}
	if errors.Is(err, ErrTruncated) || errors.Is(err, ErrUnofferedToolCalls) {
		return ClassUnparseable
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ClassTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) {
		if ne.Timeout() {
			return ClassTimeout
		}
		return ClassTransient
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return ClassTransient
	}
	return ClassPermanent
}

// Retryable reports whether a retry can fix err: rate limits (but not quota),
// transient server or connection failures and timeouts. A cancelled context is
// never retryable.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	switch ClassOf(err) {
	case ClassRateLimited, ClassTransient, ClassTimeout:
		return true
	}
	return false
}

// RetryAfterOf returns the server-requested retry delay carried by err, if any.
func RetryAfterOf(err error) time.Duration {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.RetryAfter
	}
	return 0
}

// ClassForStatus maps an HTTP status code (and an API error code such as
// "insufficient_quota") to a failure class.
func ClassForStatus(status int, code string) Class {
	switch {
	case code == "insufficient_quota" || code == "billing_hard_limit_reached":
		return ClassQuota
	case status == 429:
		return ClassRateLimited
	case status == 408 || status == 504:
		return ClassTimeout
	case status >= 500:
		return ClassTransient
	case status == 402:
		return ClassQuota
	default:
		return ClassPermanent
	}
}

// StatusHint says in a few words what an HTTP error status means for the
// user, naming the API-key variable keyEnv (when there is one) for 401 and
// 403. It returns "" for a status it has nothing to say about.
func StatusHint(status int, keyEnv string) string {
	key := "the API key"
	if keyEnv != "" {
		key += " in " + keyEnv
	}
	switch {
	case status == http.StatusUnauthorized:
		return "authentication failed: check " + key
	case status == http.StatusForbidden:
		return "access denied: check " + key + " and that it may use this model"
	case status == http.StatusNotFound:
		return "not found: check base_url and the model name"
	case status == http.StatusPaymentRequired:
		return "payment required: the account's quota or billing"
	case status == http.StatusRequestEntityTooLarge:
		return "request too large"
	case status == http.StatusTooManyRequests:
		return "rate limited"
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return "the server timed out"
	case status >= 500:
		return "server error"
	case status >= 400:
		return "the server rejected the request"
	}
	return ""
}

// RetryAfterHeader reads the server-requested delay from response headers:
// retry-after-ms (Azure, Anthropic), else Retry-After in seconds or as an
// HTTP date. It returns 0 when there is none.
func RetryAfterHeader(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}

// IsJSONDecodeError reports an error of decoding a JSON body that arrived
// whole: not JSON, or JSON of the wrong shape (a *json.SyntaxError or
// *json.UnmarshalTypeError in err's chain). Adapters use it to class a 200
// answer whose body does not parse as unparseable, not as a server failure.
func IsJSONDecodeError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}
