package mock

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/internal/yamlx"
	"github.com/swarm-dev/swarm/providers"
)

// FaultConfig sets injected fault rates (each 0..1; their sum ≤ 1). Fault to
// failure class: rate_limit → rate_limited (HTTP 429 with Retry-After),
// server_error → transient (500), timeout → timeout (504), malformed_json →
// unparseable (text that is not JSON), schema_invalid_json → schema_invalid
// (JSON that breaks the schema), truncated → unparseable (finish_reason
// "length", ErrTruncated). On a tool-call turn only the first three apply.
type FaultConfig struct {
	RateLimit         float64       `yaml:"rate_limit" json:"rate_limit"`
	RetryAfter        time.Duration `yaml:"retry_after" json:"retry_after"`
	ServerError       float64       `yaml:"server_error" json:"server_error"`
	Timeout           float64       `yaml:"timeout" json:"timeout"`
	MalformedJSON     float64       `yaml:"malformed_json" json:"malformed_json"`
	SchemaInvalidJSON float64       `yaml:"schema_invalid_json" json:"schema_invalid_json"`
	Truncated         float64       `yaml:"truncated" json:"truncated"`
}

// DefaultFlakyFaults is the flaky persona's default: 20% in all.
func DefaultFlakyFaults() FaultConfig {
	return FaultConfig{RateLimit: 0.05, RetryAfter: 10 * time.Millisecond, ServerError: 0.05, Timeout: 0.02, MalformedJSON: 0.03, SchemaInvalidJSON: 0.03, Truncated: 0.02}
}

// Validate checks the rates.
func (f FaultConfig) Validate() error {
	sum := 0.0
	for name, r := range map[string]float64{"rate_limit": f.RateLimit, "server_error": f.ServerError, "timeout": f.Timeout,
		"malformed_json": f.MalformedJSON, "schema_invalid_json": f.SchemaInvalidJSON, "truncated": f.Truncated} {
		if r < 0 || r > 1 || math.IsNaN(r) {
			return fmt.Errorf("faults: %s = %v, want 0..1", name, r)
		}
		sum += r
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("faults: rates sum to %v, want at most 1", sum)
	}
	if f.RetryAfter < 0 {
		return fmt.Errorf("faults: retry_after must not be negative")
	}
	return nil
}

// LoadFaults reads a FaultConfig from YAML (strict: unknown keys are errors).
func LoadFaults(path string) (FaultConfig, error) {
	var f FaultConfig
	if _, err := yamlx.DecodeFile(path, &f, yamlx.DefaultLimits); err != nil {
		return f, err
	}
	if err := f.Validate(); err != nil {
		return f, fmt.Errorf("%s: %w", textsafe.Printable(path), err)
	}
	return f, nil
}

// apply draws one fault (or none) and applies it to resp. It returns the
// failure class the fault injects ("" for none).
func (f *FaultConfig) apply(resp providers.Response, req providers.Request, rng *rand.Rand) (providers.Response, providers.Class, error) {
	u := 0.0 // a scripted fault (rng nil) always fires
	if rng != nil {
		u = rng.Float64()
	}
	step := func(rate float64) bool {
		if u < rate {
			return true
		}
		u -= rate
		return false
	}
	switch {
	case step(f.RateLimit):
		ra := f.RetryAfter
		if ra == 0 {
			ra = time.Second
		}
		return resp, providers.ClassRateLimited, &providers.Error{Class: providers.ClassRateLimited, Provider: "mock", StatusCode: 429, RetryAfter: ra, Msg: "injected rate limit"}
	case step(f.ServerError):
		return resp, providers.ClassTransient, &providers.Error{Class: providers.ClassTransient, Provider: "mock", StatusCode: 500, Msg: "injected server error"}
	case step(f.Timeout):
		return resp, providers.ClassTimeout, &providers.Error{Class: providers.ClassTimeout, Provider: "mock", StatusCode: 504, Msg: "injected timeout", Err: context.DeadlineExceeded}
	case len(resp.ToolCalls) > 0:
		// A tool turn: the transport faults above apply; the content faults
		// below do not (the mock's tool calls are always well formed), and
		// their share of draws passes without a fault.
		return resp, "", nil
	case step(f.MalformedJSON):
		resp.Text = "Sure! Here is the answer: {not json"
		return resp, providers.ClassUnparseable, nil
	case step(f.SchemaInvalidJSON):
		if req.Schema != nil {
			resp.Text = `{"unexpected": true}`
			return resp, providers.ClassSchemaInvalid, nil
		}
	case step(f.Truncated):
		resp.FinishReason = providers.FinishLength
		cut := resp.Text[:len(resp.Text)/2]
		return resp, providers.ClassUnparseable, &providers.Error{Class: providers.ClassUnparseable, Provider: "mock", Raw: cut, Msg: "injected truncation", Err: providers.ErrTruncated}
	}
	return resp, "", nil
}

// LatencyConfig is a call's simulated latency: Fixed, or drawn from
// Distribution "uniform" (Min..Max), "normal" (Mean, StdDev) or "lognormal"
// (Mean, StdDev of the underlying normal in log-milliseconds).
type LatencyConfig struct {
	Fixed        time.Duration `yaml:"fixed" json:"fixed"`
	Distribution string        `yaml:"distribution" json:"distribution"`
	Min          time.Duration `yaml:"min" json:"min"`
	Max          time.Duration `yaml:"max" json:"max"`
	Mean         time.Duration `yaml:"mean" json:"mean"`
	StdDev       time.Duration `yaml:"stddev" json:"stddev"`
}

func (l LatencyConfig) draw(rng *rand.Rand) time.Duration {
	switch l.Distribution {
	case "uniform":
		if l.Max > l.Min {
			return l.Min + time.Duration(rng.Int64N(int64(l.Max-l.Min)))
		}
		return l.Min
	case "normal":
		return max(0, l.Mean+time.Duration(rng.NormFloat64()*float64(l.StdDev)))
	case "lognormal":
		mu := math.Log(math.Max(1, float64(l.Mean.Milliseconds())))
		sigma := float64(l.StdDev.Milliseconds()) / math.Max(1, float64(l.Mean.Milliseconds()))
		return time.Duration(math.Exp(mu+sigma*rng.NormFloat64()) * float64(time.Millisecond))
	}
	return l.Fixed
}

func (l LatencyConfig) sleep(ctx context.Context, rng *rand.Rand) error {
	d := l.draw(rng)
	if d <= 0 {
		return ctx.Err()
	}
	return providers.Sleep(ctx, d)
}
