package providers

import (
	"context"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces a secret value of a Redactor's set; a credential found
// by its shape becomes "[REDACTED:<rule>]".
const Redacted = "[REDACTED]"

// MinSecretLen is the shortest secret value a Redactor scrubs verbatim: a
// shorter value (a placeholder such as "x") would blank out ordinary
// words. Token-shaped strings are scrubbed whatever their source.
const MinSecretLen = 6

// Redactor removes secrets from a text: the secret values it was given
// (a run's API keys) and every credential it finds by its shape. It is a
// value, built per run and handed in (KindConfig.Redactor, the registry's
// NewRedactor): this package holds no set of secrets. swarm's is
// internal/redact's Secrets. A nil Redactor removes nothing.
type Redactor interface {
	Redact(s string) string
}

// RedactFunc adapts a function to the Redactor interface.
type RedactFunc func(string) string

// Redact calls f.
func (f RedactFunc) Redact(s string) string { return f(s) }

// redactWith is r's pass over s; s itself when r is nil.
func redactWith(r Redactor, s string) string {
	if r == nil {
		return s
	}
	return r.Redact(s)
}

// WithMessage returns an error that reads msg (a scrubbed or shortened form
// of err's text) and unwraps to err, so errors.Is and errors.As still find
// its sentinels, classes and context errors.
func WithMessage(err error, msg string) error { return &messageError{msg: msg, err: err} }

type messageError struct {
	msg string
	err error
}

func (e *messageError) Error() string { return e.msg }
func (e *messageError) Unwrap() error { return e.err }

// RedactError returns err with every secret r finds scrubbed from its
// message. A *Error keeps its type and class, with Msg, Raw, Body and the
// text of its cause scrubbed; any other error becomes one whose message is
// scrubbed and which unwraps to err. An error with nothing to scrub (or a
// nil r) is returned as is.
func RedactError(r Redactor, err error) error {
	if err == nil || r == nil {
		return err
	}
	Redact := r.Redact
	var pe *Error
	if errors.As(err, &pe) && pe == err {
		c := *pe
		c.Msg, c.Raw, c.Body = Redact(c.Msg), Redact(c.Raw), Redact(c.Body)
		if c.First != nil {
			// The first attempt's failure is part of the error's text.
			if f, ok := RedactError(r, c.First).(*Error); ok {
				c.First = f
			}
		}
		if c.Err != nil {
			if s := c.Err.Error(); Redact(s) != s {
				c.Err = WithMessage(c.Err, Redact(s))
			}
		}
		if c == *pe {
			return err
		}
		return &c
	}
	s := err.Error()
	if red := Redact(s); red != s {
		return WithMessage(err, red)
	}
	return err
}

// Redacting scrubs, with r, every error the provider returns (RedactError)
// and the raw text of a failed answer. The registry puts it around every
// provider it builds, so no adapter can forget it.
func Redacting(r Redactor) Middleware {
	return func(p Provider) Provider {
		return ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
			resp, err := p.Complete(ctx, req)
			if err != nil {
				err = RedactError(r, err)
				resp.Text = redactWith(r, resp.Text)
			}
			return resp, err
		})
	}
}

// MaxExcerpt is the longest body excerpt an error carries, in bytes.
const MaxExcerpt = 200

// Excerpt returns at most MaxExcerpt bytes of an HTTP body for an error
// message: control characters and runs of blanks become one space, the cut
// falls on a rune boundary and is marked with "...", secrets are scrubbed
// (by r, before the cut), and an empty body reads "(empty body)".
func Excerpt(r Redactor, b []byte) string {
	// Scrub before cutting, so a key straddling the cut leaves no prefix.
	more := len(b) > MaxErrBody
	if more {
		b = b[:MaxErrBody]
	}
	b = []byte(redactWith(r, string(b)))
	var sb strings.Builder
	space := false
	for len(b) > 0 && sb.Len() < MaxExcerpt+4 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if r == utf8.RuneError && n <= 1 {
			r = '?'
		}
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r) {
			space = sb.Len() > 0
			continue
		}
		if space {
			sb.WriteByte(' ')
			space = false
		}
		sb.WriteRune(r)
	}
	s := sb.String()
	cut := len(b) > 0 || more
	if len(s) > MaxExcerpt {
		i := MaxExcerpt
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s, cut = s[:i], true
	}
	if s == "" {
		return "(empty body)"
	}
	if cut {
		s += "..."
	}
	return s
}

// MaxErrBody bounds how much of a body Excerpt reads, and so how much of an
// error response's body an adapter needs to keep for it (AppendHead).
const MaxErrBody = 4 << 10

// AppendHead appends to head as much of b as keeps head within MaxErrBody
// bytes: adapters call it on every read of an error response's body, so the
// body's first bytes are there for Excerpt once the SDK has failed.
func AppendHead(head, b []byte) []byte {
	if room := MaxErrBody - len(head); room > 0 {
		head = append(head, b[:min(len(b), room)]...)
	}
	return head
}
