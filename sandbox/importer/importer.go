// Package importer converts a scenario file of the reference implementation
// (its YAML format: flat governance keys, simulation.n_epochs, network
// params, ...) to a swarm sandbox scenario. What has an equivalent is
// mapped, with the reference's defaults written out where ours differ;
// every key that has none is reported as a Warning at its file:line:col and
// left out. The result is checked with the scenario loader (sim.ParseScenario)
// before it is returned.
package importer

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/swarm-dev/swarm/internal/textsafe"
	"github.com/swarm-dev/swarm/internal/yamlx"
	"github.com/swarm-dev/swarm/sandbox/agents"
	"github.com/swarm-dev/swarm/sandbox/sim"
)

// Sentinels. Every error Convert returns wraps one of them (or a yamlx
// sentinel for a file that is not YAML).
var (
	// ErrNotReference: the file is YAML but not a reference scenario (no
	// top-level mapping with an agents list), or is already in swarm's format.
	ErrNotReference = errors.New("not a reference scenario")
	// ErrInvalidResult: what could be mapped does not make a valid scenario
	// (for example, no agent group of a type swarm has).
	ErrInvalidResult = errors.New("the converted scenario is not valid")
	// ErrOutOfRange: a size (simulation.n_epochs, steps_per_epoch, an
	// agent group's count) is outside swarm's bounds (sim.MaxEpochs, ...).
	ErrOutOfRange = errors.New("out of range")
)

// Warning is one key of the reference file that the conversion could not
// map (or mapped only in part).
type Warning struct {
	File      string
	Line, Col int
	Key       string // dotted, as in the reference file: governance.bandwidth_cap
	Reason    string
}

func (w Warning) String() string {
	return (&yamlx.Error{File: w.File, Line: w.Line, Col: w.Col, Key: w.Key, Msg: w.Reason}).Error()
}

// Result is a converted scenario.
type Result struct {
	YAML     []byte       // the scenario in swarm's format, with a header naming the source
	Scenario sim.Scenario // YAML as loaded by sim.ParseScenario
	Warnings []Warning    // in file order
}

// Convert converts the reference scenario data (read from name, used in
// messages) to swarm's format.
func Convert(name string, data []byte) (*Result, error) {
	doc, err := yamlx.Check(name, data, yamlx.DefaultLimits)
	if err != nil {
		return nil, err
	}
	var raw any
	if !doc.Empty() {
		if err := doc.Decode(data, &raw); err != nil {
			return nil, err
		}
	}
	top, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: %w: want a mapping at the top level", textsafe.Printable(name), ErrNotReference)
	}
	if _, ok := top["agents"].([]any); !ok {
		return nil, fmt.Errorf("%s: %w: no agents list", textsafe.Printable(name), ErrNotReference)
	}
	if k, ok := oursAlready(top); ok {
		return nil, fmt.Errorf("%s: %w: %s is swarm's own format (run it with swarm sandbox run)", textsafe.Printable(name), ErrNotReference, k)
	}
	c := &conv{name: name, doc: doc}
	out := c.scenario(top)
	if c.err != nil {
		return &Result{Warnings: c.warns}, c.err
	}
	sort.SliceStable(c.warns, func(i, j int) bool {
		a, b := c.warns[i], c.warns[j]
		return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
	})
	body, err := yaml.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", textsafe.Printable(name), err)
	}
	var head strings.Builder
	fmt.Fprintf(&head, "# Converted by `swarm sandbox import` from %s (a reference scenario).\n", filepath.Base(name))
	if len(c.warns) > 0 {
		fmt.Fprintf(&head, "# Not mapped (%d):\n", len(c.warns))
		for _, w := range c.warns {
			// Keys come from the file: escaped, so none can end the comment.
			fmt.Fprintf(&head, "#   line %d: %s: %s\n", w.Line, textsafe.Printable(w.Key), textsafe.Printable(w.Reason))
		}
	}
	res := &Result{YAML: append([]byte(head.String()), body...), Warnings: c.warns}
	res.Scenario, err = sim.ParseScenario(name+" (converted)", res.YAML)
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrInvalidResult, err)
	}
	return res, nil
}

// oursAlready reports a key that only swarm's format has.
func oursAlready(top map[string]any) (string, bool) {
	if s, ok := top["simulation"].(map[string]any); ok {
		if _, ok := s["epochs"]; ok {
			return "simulation.epochs", true
		}
	}
	if g, ok := top["governance"].(map[string]any); ok {
		for k, v := range g {
			if _, ok := v.(map[string]any); ok {
				return "governance." + k + " (a mapping)", true
			}
		}
	}
	return "", false
}

type conv struct {
	name  string
	doc   *yamlx.Doc
	warns []Warning
	err   error // the first size out of bounds
}

// bounded returns v, or records an error (the first) naming key, its value
// as written and the bound when v is outside lo..hi: a size the reference
// file sets out of swarm's bounds is an error, never a silent default.
func (c *conv) bounded(key string, v, lo, hi int) int {
	if (v >= lo && v <= hi) || c.err != nil {
		return v
	}
	text, ok := c.doc.Text(key)
	if !ok {
		text = strconv.Itoa(v)
	}
	msg := fmt.Sprintf("%s is over the maximum of %d", text, hi)
	if v < lo {
		msg = fmt.Sprintf("%s is below the minimum of %d", text, lo)
	}
	e := &yamlx.Error{File: c.name, Key: key, Msg: msg, Err: ErrOutOfRange}
	if p, _, ok := c.doc.PosOrParent(key); ok {
		e.Line, e.Col = p.Line, p.Col
	}
	c.err = e
	return v
}

func (c *conv) warn(key, reason string) {
	p, _, _ := c.doc.PosOrParent(key)
	c.warns = append(c.warns, Warning{File: c.name, Line: p.Line, Col: p.Col, Key: key, Reason: reason})
}

// sorted returns m's keys in sorted order (for deterministic warnings; Convert
// then puts the warnings in file order).
func sorted(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// number returns v as a float64 (YAML integers and floats).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return 0, false
}

// whole returns v as an int when it is a whole number: a YAML integer, or
// a float with no fractional part that an int holds exactly. 1e11 (no
// dot) is a string to YAML 1.1 readers, the reference's among them, but
// plainly a number to whoever wrote it: it is read as one.
func whole(v any) (int, bool) {
	if s, ok := v.(string); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false
		}
		v = f
	}
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		if x >= math.MinInt && x <= math.MaxInt {
			return int(x), true
		}
	case uint64:
		if x <= math.MaxInt {
			return int(x), true
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
			return int(x), true
		}
	}
	return 0, false
}

// get reads key of section m (dotted path at) as the kind want ("number",
// "whole", "bool", "string"); a value of another kind is a warning and
// reads as absent.
func (c *conv) get(m map[string]any, at, key, want string) (any, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, false
	}
	var good bool
	orig := v
	switch want {
	case "number":
		v, good = number(v)
	case "whole":
		v, good = whole(v)
	case "bool":
		_, good = v.(bool)
	case "string":
		_, good = v.(string)
	}
	if !good {
		got := kind(orig)
		if t, ok := c.doc.Text(at + key); ok {
			got = t
		}
		c.warn(at+key, fmt.Sprintf("want a %s, got %s: left out", want, got))
		return nil, false
	}
	return v, true
}

func kind(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}

type ms = yaml.MapSlice

func item(k string, v any) yaml.MapItem { return yaml.MapItem{Key: k, Value: v} }

// scenario converts the top level. Keys are taken in a fixed order;
// unknown top-level sections are reported whole.
func (c *conv) scenario(top map[string]any) ms {
	var out ms
	id := "unnamed" // the reference's default
	if v, ok := c.get(top, "", "scenario_id", "string"); ok {
		id = v.(string)
	}
	out = append(out, item("scenario_id", id))
	if v, ok := c.get(top, "", "description", "string"); ok {
		out = append(out, item("description", v))
	}
	out = append(out, item("agents", c.agents(top["agents"].([]any))))
	out = append(out, item("simulation", c.simulation(section(c, top, "simulation"))))
	if n := c.network(section(c, top, "network")); n != nil {
		out = append(out, item("network", n))
	}
	if g := c.governance(section(c, top, "governance")); len(g) > 0 {
		out = append(out, item("governance", g))
	}
	out = append(out, item("payoff", c.payoff(section(c, top, "payoff"))))
	if s := c.criteria(section(c, top, "success_criteria")); len(s) > 0 {
		out = append(out, item("success_criteria", s))
	}
	for _, k := range sorted(section(c, top, "rate_limits")) {
		c.warn("rate_limits."+k, "no equivalent (swarm's rate limit is rate_limits.per_agent_per_epoch, interactions an agent may propose per epoch)")
	}
	for _, k := range sorted(section(c, top, "outputs")) {
		c.warn("outputs."+k, "no equivalent: swarm writes events.jsonl, epochs.csv, agents.csv and summary.json in the run directory (--out)")
	}
	handled := map[string]bool{"scenario_id": true, "description": true, "agents": true, "simulation": true, "network": true,
		"governance": true, "payoff": true, "success_criteria": true, "rate_limits": true, "outputs": true}
	for _, k := range sorted(top) {
		switch {
		case handled[k]:
		case k == "motif":
			c.warn(k, "no equivalent (a grouping tag): left out")
		default:
			c.warn(k, "no equivalent section in swarm's sandbox: left out")
		}
	}
	return out
}

// section returns the mapping at top[key] (nil if absent); another kind
// is a warning.
func section(c *conv, top map[string]any, key string) map[string]any {
	v, ok := top[key]
	if !ok || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.warn(key, fmt.Sprintf("want a mapping, got %s: left out", kind(v)))
		return nil
	}
	return m
}

func (c *conv) agents(list []any) []ms {
	var out []ms
	for i, e := range list {
		at := fmt.Sprintf("agents[%d]", i)
		g, ok := e.(map[string]any)
		if !ok {
			c.warn(at, fmt.Sprintf("want a mapping, got %s: left out", kind(e)))
			continue
		}
		typ := "honest" // the reference's default
		if v, ok := c.get(g, at+".", "type", "string"); ok {
			typ = v.(string)
		}
		if !slices.Contains(agents.Types, typ) {
			c.warn(at+".type", fmt.Sprintf("agent type %q has no equivalent (swarm's: %s): group left out", typ, strings.Join(agents.Types, ", ")))
			continue
		}
		count := 1 // the reference's default
		if v, ok := c.get(g, at+".", "count", "whole"); ok {
			count = c.bounded(at+".count", v.(int), 1, sim.MaxAgents)
		}
		out = append(out, ms{item("type", typ), item("count", count)})
		for _, k := range sorted(g) {
			switch k {
			case "type", "count":
			case "name", "id_prefix":
				c.warn(at+"."+k, "no equivalent: swarm names agents TYPE-N")
			case "config":
				c.warn(at+"."+k, "the reference's per-type agent config has no equivalent (swarm's behaviour parameters are agents[].params)")
			default:
				c.warn(at+"."+k, "no equivalent: left out")
			}
		}
	}
	return out
}

func (c *conv) simulation(m map[string]any) ms {
	// The reference's defaults are 10 epochs × 10 steps (ours: 20 × 10):
	// both are always written.
	epochs, steps := 10, 10
	if v, ok := c.get(m, "simulation.", "n_epochs", "whole"); ok {
		epochs = c.bounded("simulation.n_epochs", v.(int), 1, sim.MaxEpochs)
	}
	if v, ok := c.get(m, "simulation.", "steps_per_epoch", "whole"); ok {
		steps = c.bounded("simulation.steps_per_epoch", v.(int), 1, sim.MaxStepsPerEpoch)
	}
	out := ms{item("epochs", epochs), item("steps_per_epoch", steps)}
	if v, ok := c.get(m, "simulation.", "seed", "whole"); ok {
		out = append(out, item("seed", v))
	}
	if v, ok := c.get(m, "simulation.", "schedule_mode", "string"); ok {
		switch v {
		case "round_robin", "random", "priority":
			out = append(out, item("scheduling", v))
		default:
			c.warn("simulation.schedule_mode", fmt.Sprintf("%q has no equivalent (swarm's scheduling: round_robin, random, priority)", v))
		}
	}
	for _, k := range sorted(m) {
		switch k {
		case "n_epochs", "steps_per_epoch", "seed", "schedule_mode":
		default:
			c.warn("simulation."+k, "no equivalent: left out")
		}
	}
	return out
}

// network: the reference's small-world k counts neighbours on both sides
// (it links k/2 on each side); swarm's k counts one side.
func (c *conv) network(m map[string]any) ms {
	if m == nil {
		return nil
	}
	if v, ok := c.get(m, "network.", "enabled", "bool"); ok && !v.(bool) {
		for _, k := range sorted(m) {
			if k != "enabled" {
				c.warn("network."+k, "the network is disabled (enabled: false): left out")
			}
		}
		return nil // no network: everyone may meet everyone, as swarm's default complete network
	}
	params, _ := m["params"].(map[string]any)
	if v, ok := m["params"]; ok && params == nil && v != nil {
		c.warn("network.params", fmt.Sprintf("want a mapping, got %s: left out", kind(v)))
	}
	// A parameter may be under params (short or long name) or flat.
	param := func(want string, names ...string) (any, string, bool) {
		for _, n := range names {
			if _, ok := params[n]; ok {
				v, ok := c.get(params, "network.params.", n, want)
				return v, "network.params." + n, ok
			}
		}
		for _, n := range names {
			if _, ok := m[n]; ok {
				v, ok := c.get(m, "network.", n, want)
				return v, "network." + n, ok
			}
		}
		return nil, "", false
	}
	used := map[string]bool{"enabled": true, "topology": true, "params": true}
	topo := "complete"
	if v, ok := c.get(m, "network.", "topology", "string"); ok {
		topo = strings.ToLower(v.(string))
	}
	var out ms
	switch topo {
	case "complete", "ring", "star":
		out = ms{item("topology", topo)}
	case "random_erdos_renyi":
		p := 0.5
		if v, _, ok := param("number", "edge_probability"); ok {
			p = v.(float64)
		}
		out = ms{item("topology", "random"), item("p", p)}
		used["edge_probability"] = true
	case "small_world":
		k, p := 4, 0.1
		key := ""
		if v, at, ok := param("whole", "k", "k_neighbors"); ok {
			k, key = v.(int), at
		}
		if v, _, ok := param("number", "p", "rewire_probability"); ok {
			p = v.(float64)
		}
		if k%2 == 1 && key != "" {
			c.warn(key, fmt.Sprintf("%d is odd: the reference links k/2 = %d neighbours per side, as swarm's k: %d does", k, k/2, k/2))
		}
		out = ms{item("topology", "small_world"), item("k", max(1, k/2)), item("p", p)}
		for _, n := range []string{"k", "k_neighbors", "p", "rewire_probability"} {
			used[n] = true
		}
	case "scale_free":
		mm := 2
		if v, _, ok := param("whole", "m", "m_edges"); ok {
			mm = v.(int)
		}
		out = ms{item("topology", "scale_free"), item("m", mm)}
		used["m"], used["m_edges"] = true, true
	default:
		c.warn("network.topology", fmt.Sprintf("%q has no equivalent (swarm's: complete, ring, star, random, small_world, scale_free): left out, the network is complete", topo))
	}
	for _, k := range sorted(params) {
		if !used[k] {
			c.warn("network.params."+k, "no equivalent for this topology: left out")
		}
	}
	for _, k := range sorted(m) {
		switch {
		case used[k]:
		case k == "dynamic" || strings.HasPrefix(k, "edge_") || strings.HasSuffix(k, "_edge_weight") || k == "reputation_disconnect_threshold":
			c.warn("network."+k, "swarm's networks are static (no edge weights, decay or disconnection): left out")
		default:
			c.warn("network."+k, "no equivalent: left out")
		}
	}
	return out
}

// lever is one governance lever: the reference's flat enable key (empty:
// enabled when a parameter says so) and its parameters, each with the
// reference's default.
type lever struct {
	ours   string
	enable string
	params []param
	// on decides, for levers without an enable key, whether the lever is on
	// from its parameters' values (after defaults).
	on func(v map[string]any) bool
}

type param struct {
	ref, ours, want string
	def             any
}

var levers = []lever{
	{ours: "transaction_tax", params: []param{
		{"transaction_tax_rate", "rate", "number", 0.0},
		{"transaction_tax_split", "split", "number", 0.5}},
		on: func(v map[string]any) bool { return v["rate"].(float64) > 0 }},
	{ours: "reputation_decay", params: []param{
		{"reputation_decay_rate", "factor", "number", 1.0}},
		on: func(v map[string]any) bool { return v["factor"].(float64) != 1 }},
	{ours: "staking", enable: "staking_enabled", params: []param{
		{"min_stake_to_participate", "min_stake", "number", 0.0},
		{"stake_slash_rate", "slash_rate", "number", 0.1}}},
	{ours: "circuit_breaker", enable: "circuit_breaker_enabled", params: []param{
		{"freeze_threshold_toxicity", "threshold", "number", 0.7},
		{"freeze_threshold_violations", "violations", "whole", 3},
		{"freeze_duration_epochs", "freeze_epochs", "whole", 2}}},
	{ours: "random_audit", enable: "audit_enabled", params: []param{
		{"audit_probability", "probability", "number", 0.1},
		{"audit_penalty_multiplier", "penalty_multiplier", "number", 2.0},
		{"audit_threshold_p", "threshold_p", "number", 0.5}}},
	{ours: "collusion_detection", enable: "collusion_detection_enabled", params: []param{
		{"collusion_frequency_threshold", "z_threshold", "number", 2.0},
		{"collusion_correlation_threshold", "benefit_correlation", "number", 0.7}}},
	{ours: "self_ensemble", enable: "self_ensemble_enabled", params: []param{
		{"self_ensemble_samples", "samples", "whole", 5}}},
}

// aliases are the reference's alternative names of a governance key.
var aliases = map[string]string{"transaction_tax": "transaction_tax_rate", "reputation_decay": "reputation_decay_rate"}

// unmapped explains governance keys with no equivalent, by prefix.
var unmapped = []struct{ prefix, why string }{
	{"bandwidth_cap", "no equivalent: a swarm agent proposes at most one interaction per step"},
	{"collusion_", "no equivalent in swarm's collusion detector (it flags on z-score, benefit correlation, mutual acceptance and quality; see docs/sandbox.md)"},
	{"incoherence_breaker", "no equivalent: swarm's incoherence breaker is configured by window and max_flip_rate"},
	{"decomposition_", "no equivalent: swarm's decomposition checkpoints are configured by every and cost"},
	{"incoherence_friction", "no equivalent: swarm's incoherence friction is configured by band and cost"},
	{"vote_normalization", "no equivalent: swarm's agents do not vote"},
	{"max_vote_weight", "no equivalent: swarm's agents do not vote"},
}

func (c *conv) governance(m map[string]any) ms {
	for short, long := range aliases {
		if _, ok := m[short]; ok {
			if _, both := m[long]; both {
				c.warn("governance."+short, fmt.Sprintf("%s is set too and wins (as in the reference): left out", long))
			}
		}
	}
	used := map[string]bool{}
	var out ms
	for _, l := range levers {
		vals := map[string]any{}
		var body ms
		set := false
		for _, p := range l.params {
			key := p.ref
			if _, ok := m[key]; !ok {
				for short, long := range aliases {
					if long == key {
						if _, ok := m[short]; ok {
							key = short
						}
					}
				}
			}
			used[p.ref] = true
			v, ok := c.get(m, "governance.", key, p.want)
			if !ok {
				v = p.def
			} else {
				set = true
			}
			vals[p.ours] = v
			body = append(body, item(p.ours, v))
		}
		enabled := false
		if l.enable != "" {
			used[l.enable] = true
			if v, ok := c.get(m, "governance.", l.enable, "bool"); ok {
				enabled = v.(bool)
			}
		} else {
			enabled = l.on(vals)
		}
		if !enabled {
			if set && l.enable != "" {
				for _, p := range l.params {
					if _, ok := m[p.ref]; ok {
						c.warn("governance."+p.ref, fmt.Sprintf("%s is not true: the lever is off, the value is left out", l.enable))
					}
				}
			}
			continue
		}
		out = append(out, item(l.ours, append(ms{item("enabled", true)}, body...)))
	}
	for short := range aliases {
		used[short] = true
	}
	for _, k := range sorted(m) {
		if used[k] {
			continue
		}
		why := "no equivalent lever in swarm's sandbox: left out"
		for _, u := range unmapped {
			if strings.HasPrefix(k, u.prefix) {
				why = u.why
				break
			}
		}
		c.warn("governance."+k, why)
	}
	return out
}

func (c *conv) payoff(m map[string]any) ms {
	// The reference's defaults equal swarm's; all seven are written so the
	// converted file says what it runs with.
	keys := []struct {
		k   string
		def float64
	}{{"s_plus", 2}, {"s_minus", 1}, {"h", 2}, {"theta", 0.5}, {"rho_a", 0}, {"rho_b", 0}, {"w_rep", 1}}
	var out ms
	for _, p := range keys {
		v := p.def
		if x, ok := c.get(m, "payoff.", p.k, "number"); ok {
			v = x.(float64)
		}
		out = append(out, item(p.k, v))
	}
	for _, k := range sorted(m) {
		known := false
		for _, p := range keys {
			known = known || p.k == k
		}
		if !known {
			c.warn("payoff."+k, "no equivalent: left out")
		}
	}
	return out
}

// criteria: the reference's mean-toxicity bound (toxicity_threshold or
// max_toxicity) is swarm's max_toxicity; the others have no equivalent.
func (c *conv) criteria(m map[string]any) ms {
	var out ms
	tox := ""
	for _, k := range []string{"max_toxicity", "toxicity_threshold"} {
		if _, ok := m[k]; !ok {
			continue
		}
		if tox != "" {
			c.warn("success_criteria."+k, tox+" is set too and is used: left out")
			continue
		}
		if v, ok := c.get(m, "success_criteria.", k, "number"); ok {
			out = append(out, item("max_toxicity", v))
			tox = k
		}
	}
	for _, k := range sorted(m) {
		if k == "max_toxicity" || k == "toxicity_threshold" {
			continue
		}
		c.warn("success_criteria."+k, "no equivalent criterion in swarm's sandbox: left out")
	}
	return out
}
