package mock

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/internal/yamlx"
	"github.com/swarm-dev/swarm/providers"
)

// Script overrides the mock's answers: the first rule that matches a request
// decides its answer.
type Script struct {
	Rules []Rule `yaml:"rules"`
}

// Rule matches on the schema name, the caller's role and a regular
// expression over the messages' text (each optional), and answers with a
// fixed text, a JSON document, or a fault (rate_limit, server_error,
// timeout, malformed_json, schema_invalid_json, truncated).
type Rule struct {
	Schema string `yaml:"schema"`
	Role   string `yaml:"role"`
	Match  string `yaml:"match"`
	Text   string `yaml:"text"`
	JSON   any    `yaml:"json"`
	Fault  string `yaml:"fault"`
	re     *regexp.Regexp
}

// LoadScript reads a script (strict YAML: unknown keys are errors naming file:line).
func LoadScript(path string) (*Script, error) {
	var s Script
	if _, err := yamlx.DecodeFile(path, &s, yamlx.DefaultLimits); err != nil {
		return nil, err
	}
	if err := s.compile(); err != nil {
		return nil, fmt.Errorf("%s: %w", textsafe.Printable(path), err)
	}
	return &s, nil
}

func (s *Script) compile() error {
	for i := range s.Rules {
		r := &s.Rules[i]
		if r.Match != "" {
			re, err := regexp.Compile(r.Match)
			if err != nil {
				return fmt.Errorf("rules[%d].match: %w", i, err)
			}
			r.re = re
		}
		n := 0
		for _, set := range []bool{r.Text != "", r.JSON != nil, r.Fault != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("rules[%d]: give exactly one of text, json, fault", i)
		}
		if r.Fault != "" {
			if _, ok := faultOf(r.Fault); !ok {
				return fmt.Errorf("rules[%d].fault %q: want rate_limit, server_error, timeout, malformed_json, schema_invalid_json or truncated", i, r.Fault)
			}
		}
	}
	return nil
}

func faultOf(name string) (FaultConfig, bool) {
	f := FaultConfig{RetryAfter: 10 * time.Millisecond}
	switch name {
	case "rate_limit":
		f.RateLimit = 1
	case "server_error":
		f.ServerError = 1
	case "timeout":
		f.Timeout = 1
	case "malformed_json":
		f.MalformedJSON = 1
	case "schema_invalid_json":
		f.SchemaInvalidJSON = 1
	case "truncated":
		f.Truncated = 1
	default:
		return f, false
	}
	return f, true
}

// match returns the first rule matching req.
func (s *Script) match(req providers.Request) *Rule {
	if s == nil {
		return nil
	}
	text := allText(req)
	for i := range s.Rules {
		r := &s.Rules[i]
		if r.Schema != "" && (req.Schema == nil || req.Schema.Name != r.Schema) {
			continue
		}
		if r.Role != "" && req.Caller.Role != r.Role {
			continue
		}
		if r.re != nil && !r.re.MatchString(text) {
			continue
		}
		return r
	}
	return nil
}

// answer applies a rule.
func (r *Rule) answer(resp providers.Response, req providers.Request) (providers.Response, error) {
	switch {
	case r.Text != "":
		resp.Text = r.Text
	case r.JSON != nil:
		b, err := json.Marshal(normalise(r.JSON))
		if err != nil {
			return resp, providers.NewError(providers.ClassPermanent, "mock script json", err)
		}
		resp.Text = string(b)
	default:
		f, _ := faultOf(r.Fault)
		resp, _, err := f.apply(resp, req, nil)
		return resp, err
	}
	return resp, nil
}

// normalise returns a copy of v with YAML maps of any keys turned into
// JSON-encodable maps. It never modifies v: rules answer concurrently.
func normalise(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = normalise(x)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = normalise(x)
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i := range t {
			out[i] = normalise(t[i])
		}
		return out
	}
	return v
}
