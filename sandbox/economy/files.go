package economy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/swarm-dev/swarm/internal/yamlx"
)

// This file and files_*.go are the file evaluators behind `swarm sandbox
// econ MECHANISM FILE`: one typed input per mechanism (decoded from YAML or
// JSON through internal/yamlx; unknown keys are errors), its checks (a bad
// value is a *FieldError, located in the file as FILE:LINE:COL: KEY:
// MESSAGE), and a function that evaluates it and returns a typed report
// whose JSON is what the command prints.

// FieldError is a bad value found after decoding, named by its path in the
// input (e.g. "bids[1].budget").
type FieldError struct {
	Path, Msg string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

func fieldErr(path, format string, a ...any) error {
	return &FieldError{Path: path, Msg: fmt.Sprintf(format, a...)}
}

// locate turns the path into FILE:LINE:COL: KEY: MESSAGE; a missing key is
// reported at its closest parent in the file (or 1:1).
func (e *FieldError) locate(doc *yamlx.Doc) error {
	ye := &yamlx.Error{File: doc.Name, Line: 1, Col: 1, Key: e.Path, Msg: e.Msg}
	if p, _, ok := doc.PosOrParent(e.Path); ok {
		ye.Line, ye.Col = p.Line, p.Col
	}
	return ye
}

// evaluateFile reads the file name from r into in (which holds the
// defaults), checks it and evaluates it with eval. Every error names the
// file: a *yamlx.Error for a bad file or a bad value (a *FieldError located
// in the file), or an error of the mechanism.
func evaluateFile[In any, Out any](name string, r io.Reader, in *In, eval func(*In) (Out, error)) (Out, error) {
	var zero Out
	b, err := yamlx.Read(name, r, yamlx.DefaultLimits)
	if err != nil {
		return zero, err
	}
	doc, err := yamlx.Check(name, b, yamlx.DefaultLimits)
	if err != nil {
		return zero, err
	}
	if doc.Empty() {
		return zero, &yamlx.Error{File: name, Line: 1, Col: 1, Key: "(file)", Msg: "empty file"}
	}
	if err := doc.Decode(b, in); err != nil {
		return zero, err
	}
	out, err := eval(in)
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return zero, fe.locate(doc)
		}
		return zero, err
	}
	return out, nil
}

// Upper bounds of the size parameters of the econ files: a value over one
// is an error naming the key and the bound (before issue 22, ticks: 1e8
// ran for minutes and took 8 GB). They are those of a scenario's economy
// (sandbox/sim, docs/sandbox.md) where the key is the same, and far above
// any file the reference ships.
const (
	MaxMarketTicks            = 100_000   // market: ticks (each is a line of the report)
	MaxIntervalTicks          = 100_000   // market: batch_interval_ticks, halt_duration_ticks
	MaxOrdersPerTick          = 1_000_000 // market: max_orders_per_tick
	MaxAuctionRounds          = 10_000    // auction: max_rounds
	MaxDetectorWindow         = 10_000    // crash: window (the detector scans it at every price)
	MaxCredentialExpiryEpochs = 100_000   // identity: credential_expiry_epochs
)

// overMax is the error of a size parameter at path above its bound hi.
func overMax(path string, v, hi int) error {
	return fieldErr(path, "%d is over the maximum of %d", v, hi)
}

// Ordered is a JSON object that keeps its keys in insertion order.
type Ordered[V any] []KeyValue[V]

// KeyValue is one member of an Ordered object.
type KeyValue[V any] struct {
	Key   string
	Value V
}

// Set sets key k to v: a new key goes last, a known key keeps its place.
func (o *Ordered[V]) Set(k string, v V) {
	for i := range *o {
		if (*o)[i].Key == k {
			(*o)[i].Value = v
			return
		}
	}
	*o = append(*o, KeyValue[V]{k, v})
}

// Get returns the value of key k.
func (o Ordered[V]) Get(k string) (V, bool) {
	for _, kv := range o {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	var zero V
	return zero, false
}

// MarshalJSON writes the members in order ({} when there are none).
func (o Ordered[V]) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := json.Marshal(kv.Key)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(kv.Value)
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case uint64:
		return float64(x), true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func in01(path string, v float64) error {
	if !(v >= 0 && v <= 1) {
		return fieldErr(path, "%v is outside [0, 1]", v)
	}
	return nil
}

// configErr names the config key of a validation error.
func configErr(err error, keys ...string) error {
	for _, k := range keys {
		if strings.Contains(err.Error(), k+" =") {
			return fieldErr("config."+k, "%s", strings.TrimPrefix(err.Error(), ErrInvalidConfig.Error()+": "))
		}
	}
	return fieldErr("config", "%v", err)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func optional(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

// InteractionInput is one interaction of an input file.
type InteractionInput struct {
	ID       string   `yaml:"id"`
	P        *float64 `yaml:"p"`
	Accepted *bool    `yaml:"accepted"`
}

func (in InteractionInput) check(path string, needID bool) (Interaction, error) {
	switch {
	case needID && in.ID == "":
		return Interaction{}, fieldErr(path+".id", "missing")
	case in.P == nil:
		return Interaction{}, fieldErr(path+".p", "missing")
	case in.Accepted == nil:
		return Interaction{}, fieldErr(path+".accepted", "missing (true or false)")
	}
	if err := in01(path+".p", *in.P); err != nil {
		return Interaction{}, err
	}
	return Interaction{ID: in.ID, P: *in.P, Accepted: *in.Accepted}, nil
}
