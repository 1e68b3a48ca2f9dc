package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarm-dev/swarm/internal/yamlx"
)

// econRun runs `swarm sandbox econ MECH FILE` and decodes its JSON.
func econRun(t *testing.T, mech, file string) map[string]any {
	t.Helper()
	c, out, errs := execCLI(t, "sandbox", "econ", mech, file)
	if c != 0 {
		t.Fatalf("%s %s: exit %d: %s", mech, file, c, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%s: output is not JSON: %v\n%s", mech, err, out)
	}
	return m
}

// get walks a decoded JSON value by keys (string) and indexes (int).
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %T is not an object", path, v)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("at %v: no key %q in %v", path, k, m)
			}
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("at %v: %v has no item %d", path, v, k)
			}
			v = l[k]
		}
	}
	return v
}

func wantNum(t *testing.T, v any, want float64, path ...any) {
	t.Helper()
	got, ok := get(t, v, path...).(float64)
	if !ok || math.Abs(got-want) > 1e-6 {
		t.Errorf("%v = %v, want %.9g", path, get(t, v, path...), want)
	}
}

func wantVal(t *testing.T, v any, want any, path ...any) {
	t.Helper()
	if got := get(t, v, path...); got != want {
		t.Errorf("%v = %v, want %v", path, got, want)
	}
}

func absent(t *testing.T, v map[string]any, key string) {
	t.Helper()
	if x, ok := v[key]; ok {
		t.Errorf("%q = %v, want it absent", key, x)
	}
}

var econDir = filepath.Join("..", "..", "examples", "economy")

func TestEconAuctionExample(t *testing.T) {
	t.Parallel()
	m := econRun(t, "auction", filepath.Join(econDir, "auction.yaml"))
	wantVal(t, m, false, "converged")
	wantNum(t, m, 50, "rounds")
	wantNum(t, m, 2.654588229, "prices", "compute")
	wantNum(t, m, 6.065524227, "prices", "data")
	wantNum(t, m, 3.392973498, "prices", "bandwidth")
	wantNum(t, m, 11.986685418, "allocations", "agent_1", "resources", "data")
	wantNum(t, m, 99.251413094, "allocations", "agent_1", "price_paid")
	wantNum(t, m, 31.986685418, "allocations", "agent_1", "utility")
	wantNum(t, m, 15, "allocations", "agent_2", "resources", "bandwidth")
	wantNum(t, m, 99.499556203, "allocations", "agent_2", "price_paid")
	wantNum(t, m, 38.526629164, "allocations", "agent_2", "utility")
	wantVal(t, m, true, "envy_free")
	if v := get(t, m, "envy_violations").([]any); len(v) != 0 {
		t.Errorf("envy_violations = %v, want []", v)
	}
	wantNum(t, m, 70.513314582, "total_utility")
	wantNum(t, m, 0.046373822, "gini")
}

func TestEconMissionExample(t *testing.T) {
	t.Parallel()
	m := econRun(t, "mission", filepath.Join(econDir, "mission.yaml"))
	wantNum(t, m, 1, "score")
	wantVal(t, m, "succeeded", "status")
	wantNum(t, m, 0.75, "objectives", 0, "actual")
	wantVal(t, m, true, "objectives", 0, "met")
	wantNum(t, m, 4, "objectives", 1, "actual")
	for _, c := range []struct {
		rule   string
		a1, a2 float64
	}{{"equal", 45, 45}, {"proportional", 72, 18}, {"shapley", 70.434782609, 19.565217391}} {
		wantNum(t, m, c.a1, "payouts", c.rule, "a1")
		wantNum(t, m, c.a2, "payouts", c.rule, "a2")
		if p := get(t, m, "payouts", c.rule).(map[string]any); len(p) != 2 {
			t.Errorf("%s payouts %v: want a1 and a2 only (a3 never contributed)", c.rule, p)
		}
	}
	wantNum(t, m, 0.5, "free_rider_index")
}

// TestEconMissionFailedAndUnscored: the partial-score example at the
// deadline fails and pays nothing; a mission without objectives has no
// score to print (the reference's 0.0 is not a measurement).
func TestEconMissionFailedAndUnscored(t *testing.T) {
	t.Parallel()
	partial := writeFile(t, "partial.yaml", `config: {min_participants: 1}
pool: 90
coordinator: a1
objectives:
  - {id: avg, metric: avg_p, target: 0.9}
  - {id: count, metric: total_count, target: 4, weight: 0.5}
  - {id: acc, metric: acceptance_rate, target: 1}
  - {id: welfare, metric: total_welfare, target: 2}
  - {id: min, metric: min_p, target: 0.5}
interactions:
  - {id: i1, p: 0.9, accepted: true}
  - {id: i2, p: 0.8, accepted: true}
  - {id: i3, p: 0.7, accepted: false}
  - {id: i4, p: 0.6, accepted: true}
contributions:
  - {agent: a1, interaction: i1}
  - {agent: a1, interaction: i2}
  - {agent: a1, interaction: i3}
  - {agent: a1, interaction: i4}
evaluate_at_epoch: 10
`)
	m := econRun(t, "mission", partial)
	wantNum(t, m, 0.907407407, "score")
	wantVal(t, m, "failed", "status")
	for _, rule := range []string{"equal", "proportional", "shapley"} {
		if p := get(t, m, "payouts", rule).(map[string]any); len(p) != 0 {
			t.Errorf("%s payouts of a failed mission: %v, want none", rule, p)
		}
	}
	none := writeFile(t, "none.yaml", "config: {min_participants: 1}\npool: 10\ncoordinator: a\nevaluate_at_epoch: 0\n")
	m = econRun(t, "mission", none)
	absent(t, m, "score")
	absent(t, m, "free_rider_index")
	wantVal(t, m, "succeeded", "status")
}

func TestEconMarketExample(t *testing.T) {
	t.Parallel()
	m := econRun(t, "market", filepath.Join(econDir, "market.yaml"))
	wantNum(t, m, 10, "ticks", 0, "market_price")
	wantNum(t, m, 7.5, "ticks", 1, "market_price")
	wantVal(t, m, false, "ticks", 1, "halted")
	wantVal(t, m, true, "ticks", 2, "halted")
	wantVal(t, m, true, "ticks", 3, "halted")
	wantVal(t, m, false, "ticks", 4, "halted")
	absent(t, get(t, m, "ticks", 1).(map[string]any), "volatility")
	wantNum(t, m, 0.125, "ticks", 3, "volatility")
	wantNum(t, m, 0.117851130, "ticks", 4, "volatility")
	wantNum(t, m, 0.108253175, "ticks", 5, "volatility")
	wantNum(t, m, 9.75, "ticks", 5, "market_price")
	wantNum(t, m, 2, "crashes", 0, "start_tick")
	wantNum(t, m, 0.25, "crashes", 0, "price_drop_pct")
	wantNum(t, m, 2.5, "crashes", 0, "severity")
	wantNum(t, m, 6, "crashes", 0, "end_tick")
	wantNum(t, m, 4, "crashes", 0, "recovery_time_ticks")
	wantVal(t, m, "b", "crashes", 0, "trigger_agent_ids", 0)
	wantVal(t, m, "s", "crashes", 0, "trigger_agent_ids", 1)
	if r := get(t, m, "rejected").([]any); len(r) != 2 {
		t.Errorf("rejected = %v, want the orders before ticks 3 and 4 (halted)", r)
	}
	wantNum(t, m, 1, "trades", 2, "quantity")
}

func TestEconMarketH1(t *testing.T) {
	t.Parallel()
	f := writeFile(t, "h1.yaml", `seed: 42
ticks: 6
orders:
  - {before_tick: 1, agent: buyer, type: bid, resource: r, quantity: 5, price: 1.2}
  - {before_tick: 1, agent: seller, type: ask, resource: r, quantity: 3, price: 1.1}
`)
	m := econRun(t, "market", f)
	for i := range 4 {
		wantNum(t, m, 1, "ticks", i, "market_price")
		wantNum(t, m, 0, "ticks", i, "bid_ask_spread")
	}
	wantNum(t, m, 2, "ticks", 0, "orders_submitted")
	wantNum(t, m, 1.15, "trades", 0, "price")
	wantNum(t, m, 3, "trades", 0, "quantity")
	wantNum(t, m, 2, "book", "bids", 0, "quantity")
	wantNum(t, m, 0.064951905, "ticks", 5, "volatility")
	wantNum(t, m, 0, "speed_advantage_gini")
}

func TestEconCrashExample(t *testing.T) {
	t.Parallel()
	m := econRun(t, "crash", filepath.Join(econDir, "crash.yaml"))
	wantNum(t, m, 5, "crashes", 0, "start_tick")
	wantNum(t, m, 0.2, "crashes", 0, "price_drop_pct")
	wantNum(t, m, 2, "crashes", 0, "severity")
	wantNum(t, m, 3, "crashes", 0, "recovery_time_ticks")
	wantNum(t, m, 11, "crashes", 1, "start_tick")
	wantNum(t, m, 0.10999999999999996, "crashes", 1, "price_drop_pct")
	wantNum(t, m, 1.0999999999999994, "crashes", 1, "severity")
	wantVal(t, m, false, "crashes", 1, "recovered")
	absent(t, get(t, m, "crashes", 1).(map[string]any), "recovery_time_ticks")
	wantNum(t, m, 0.085442364, "volatility")
}

func TestEconPermeabilityExample(t *testing.T) {
	t.Parallel()
	m := econRun(t, "permeability", filepath.Join(econDir, "permeability.json"))
	for i, w := range []float64{0.375, 0.315, 0.125, 0.4, 0} {
		wantNum(t, m, w, "effective", i)
	}
	wantNum(t, m, 0.0126, "contagion", 0)
	wantNum(t, m, 1, "optimal", 0)
	wantNum(t, m, 0, "optimal", 1)
}

func TestEconIdentityExample(t *testing.T) {
	t.Parallel()
	m := econRun(t, "identity", filepath.Join(econDir, "identity.yaml"))
	for _, c := range []struct {
		id, epoch string
		want      float64
	}{
		{"anonymous", "5", 0.3}, {"person", "5", 0.5},
		{"docs_example", "5", 0.6}, {"docs_example", "55", 0.5},
		{"two_credentials", "5", 0.7}, {"two_credentials", "49", 0.7}, {"two_credentials", "50", 0.6}, {"two_credentials", "60", 0.5},
		{"one_revoked", "5", 0.6},
	} {
		wantNum(t, m, c.want, "trust", c.id, c.epoch)
	}
}

// TestEconBadFiles: every bad file names file:line:col and the key, exit 2.
// A value found bad after decoding is located at its key.
func TestEconBadFiles(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		why, mech, name, body, want string
	}{
		{"a negative budget is named at its value", "auction", "a.yaml", "supply: {x: 10}\nbids:\n  - agent: a\n    budget: -1\n", "a.yaml:4:5: bids[0].budget: -1 is negative"},
		{"a string where a number goes", "auction", "a.yaml", "supply: {x: 10}\nbids:\n  - {agent: a, budget: lots}\n", `a.yaml:3:24: bids[0].budget: wrong type: want a number, got "lots"`},
		{"an unknown top-level key", "auction", "a.yaml", "supply: {x: 10}\nbidz: []\n", "a.yaml:2:1: bidz: unknown key"},
		{"JSON input is located too", "auction", "a.json", `{"supply": {"x": 10}, "bids": [{"agent": "a", "budget": 1, "valuations": {"x": "high"}}]}`, `a.json:1:80: bids[0].valuations.x: wrong type: want a number, got "high"`},
		{"a config value out of range", "auction", "a.yaml", "config:\n  max_rounds: 0\nsupply: {x: 1}\nbids: [{agent: a, budget: 1}]\n", "a.yaml:2:3: config.max_rounds: max_rounds = 0, want ≥ 1"},
		{"a missing required key", "auction", "a.yaml", "supply: {x: 1}\n", "a.yaml:1:1: bids: give at least one bid"},
		{"a syntax error names the nearest key", "auction", "a.yaml", "supply: [x\n", "a.yaml:1:9: supply: "},
		{"a contribution before the mission is active", "mission", "m.yaml", "pool: 90\ncoordinator: a1\nevaluate_at_epoch: 1\ncontributions:\n  - {agent: a1, interaction: i1}\n", "m.yaml:5:6: contributions[0].agent: a1: mission is not active (proposed): 1 of min_participants 2 have joined"},
		{"an unknown metric", "mission", "m.yaml", "pool: 9\ncoordinator: a\nevaluate_at_epoch: 1\nobjectives:\n  - {id: o, metric: avgp}\n", `m.yaml:5:13: objectives[0].metric: "avgp" is not a metric`},
		{"an order after the last tick", "market", "k.yaml", "seed: 1\nticks: 2\norders:\n  - {before_tick: 3, agent: a, type: bid, quantity: 1, price: 1}\n", "k.yaml:4:6: orders[0].before_tick: 3 is outside 1..ticks (2)"},
		{"an unknown order type", "market", "k.yaml", "seed: 1\nticks: 2\norders:\n  - {before_tick: 1, agent: a, type: buy, quantity: 1, price: 1}\n", `k.yaml:4:32: orders[0].type: "buy": want bid, ask or cancel`},
		{"a window that cannot show a drop", "crash", "c.yaml", "config: {drop_threshold: 0.1, window: 1}\nprices: [{tick: 0, price: 1}]\n", "c.yaml:1:31: config.window: window = 1, want ≥ 2"},
		{"ticks out of order", "crash", "c.yaml", "prices:\n  - {tick: 1, price: 1}\n  - {tick: 1, price: 2}\n", "c.yaml:3:6: prices[1].tick: 1 does not follow tick 1"},
		{"p outside [0, 1]", "permeability", "p.yaml", "contagion:\n  - {p: 1.2, permeability: 0.5}\n", "p.yaml:2:6: contagion[0].p: 1.2 is outside [0, 1]"},
		{"accepted must be given", "permeability", "p.yaml", "optimal:\n  - interactions: [{p: 0.5}]\n", "p.yaml:2:20: optimal[0].interactions[0].accepted: missing"},
		{"a duplicate identity", "identity", "i.yaml", "identities: [{id: a}, {id: a}]\nepochs: [1]\n", "i.yaml:1:24: identities[1].id: a: agent already has an identity"},
		{"an expiry below 1", "identity", "i.yaml", "config: {credential_expiry_epochs: 0}\nidentities: [{id: a}]\nepochs: [1]\n", "i.yaml:1:10: config.credential_expiry_epochs: credential_expiry_epochs = 0, want ≥ 1"},
		{"min_participants below 1", "mission", "m.yaml", "config:\n  min_participants: 0\npool: 1\ncoordinator: a\nevaluate_at_epoch: 0\n", "m.yaml:2:3: config.min_participants: min_participants = 0, want ≥ 1"},
		{"an empty file", "identity", "i.yaml", "", "i.yaml:1:1: (file): empty file"},
		{"a number that is not finite", "auction", "a.yaml", "supply: {x: .nan}\nbids: [{agent: a, budget: 1, valuations: {x: 1}}]\n", "a.yaml:1:13: supply.x: .nan is not a finite number"},
		{"an infinite budget", "auction", "a.yaml", "supply: {x: 1}\nbids: [{agent: a, budget: .inf, valuations: {x: 1}}]\n", "a.yaml:2:27: bids[0].budget: .inf is not a finite number"},
	} {
		t.Run(c.why, func(t *testing.T) {
			f := writeFile(t, c.name, c.body)
			app, outb, _ := testApp()
			root := newRootCmd(app)
			root.SetArgs([]string{"sandbox", "econ", c.mech, f})
			err := root.ExecuteContext(t.Context())
			code, out, errs := code(err), outb.String(), fmt.Sprint(err)
			if code != 2 || out != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing printed", code, out)
			}
			if want := filepath.Join(filepath.Dir(f), c.want); !strings.Contains(errs, want) {
				t.Errorf("stderr %q\nwant it to contain %q", errs, want)
			}
		})
	}
}

// TestEconFileLimits: an economy file is read like every YAML file swarm
// reads (internal/yamlx): too large, nested too deeply or an alias bomb is
// refused before any value is built, from a file or from stdin, exit 2.
func TestEconFileLimits(t *testing.T) {
	t.Parallel()
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i, prev := 'b', 'a'; i <= 'g'; i, prev = i+1, i {
		bomb += fmt.Sprintf("%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	for _, c := range []struct {
		why, body string
		stdin     bool
		want      error
	}{
		{"a file over 256 KiB", "supply: {x: 1}\n" + strings.Repeat("# padding\n", 30000), false, yamlx.ErrTooLarge},
		{"over 256 KiB on stdin", strings.Repeat("# padding\n", 30000), true, yamlx.ErrTooLarge},
		{"nested deeper than 64 levels", "supply: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n", false, yamlx.ErrTooDeep},
		{"a billion-laughs alias chain", bomb, false, yamlx.ErrTooManyNodes},
	} {
		t.Run(c.why, func(t *testing.T) {
			app, outb, _ := testApp()
			arg := "-"
			if c.stdin {
				app.In = strings.NewReader(c.body)
			} else {
				arg = writeFile(t, "a.yaml", c.body)
			}
			root := newRootCmd(app)
			root.SetArgs([]string{"sandbox", "econ", "auction", arg})
			err := root.ExecuteContext(t.Context())
			if code(err) != 2 || outb.Len() != 0 || !errors.Is(err, c.want) {
				t.Errorf("exit %d, stdout %q, error %v; want 2, nothing printed and %v", code(err), outb, err, c.want)
			}
		})
	}
}

// TestEconReadsStdin: "-" reads the file from stdin.
func TestEconReadsStdin(t *testing.T) {
	t.Parallel()
	app, out, _ := testApp()
	app.In = strings.NewReader(`{"config": {"drop_threshold": 0.1, "window": 10}, "prices": [{"tick": 0, "price": 10}, {"tick": 1, "price": 11}, {"tick": 2, "price": 9}, {"tick": 3, "price": 12}, {"tick": 4, "price": 8}]}`)
	root := newRootCmd(app)
	root.SetArgs([]string{"sandbox", "econ", "crash", "-"})
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	wantNum(t, m, 0.256713128, "volatility")
}

// TestEconSizeBounds: every size parameter of an econ file has an upper
// bound, and a value over it is an error naming file:line:col, the key and
// the bound, exit 2, before anything runs. Before issue 22, ticks: 1e8 ran
// for minutes and took 8 GB; each value here is just over its bound, so
// the old code ran it (cheaply) and exited 0.
func TestEconSizeBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		why, mechanism, body, want string
	}{
		{"ticks: a line of the report each", "market", "seed: 1\nticks: 100001\norders: []\n",
			"a.yaml:2:1: ticks: 100001 is over the maximum of 100000"},
		{"ticks written as a float", "market", "seed: 1\nticks: 2e5\norders: []\n",
			"a.yaml:2:1: ticks: 200000 is over the maximum of 100000"},
		{"batch interval", "market", "config: {batch_interval_ticks: 100001}\nseed: 1\nticks: 5\norders: []\n",
			"a.yaml:1:10: config.batch_interval_ticks: 100001 is over the maximum of 100000"},
		{"halt duration", "market", "config: {halt_duration_ticks: 100001}\nseed: 1\nticks: 5\norders: []\n",
			"a.yaml:1:10: config.halt_duration_ticks: 100001 is over the maximum of 100000"},
		{"orders per tick", "market", "config: {max_orders_per_tick: 1000001}\nseed: 1\nticks: 5\norders: []\n",
			"a.yaml:1:10: config.max_orders_per_tick: 1000001 is over the maximum of 1000000"},
		{"auction rounds", "auction", "config: {max_rounds: 10001}\nsupply: {x: 1}\nbids: [{agent: a, budget: 1, valuations: {x: 1}}]\n",
			"a.yaml:1:10: config.max_rounds: 10001 is over the maximum of 10000"},
		{"detector window: scanned at every price", "crash", "config: {drop_threshold: 0.1, window: 10001}\nprices: [{tick: 0, price: 1}]\n",
			"a.yaml:1:31: config.window: 10001 is over the maximum of 10000"},
		{"credential expiry", "identity", "config: {credential_expiry_epochs: 100001}\nidentities: [{id: a}]\nepochs: [1]\n",
			"a.yaml:1:10: config.credential_expiry_epochs: 100001 is over the maximum of 100000"},
	} {
		t.Run(c.why, func(t *testing.T) {
			app, outb, _ := testApp()
			path := writeFile(t, "a.yaml", c.body)
			root := newRootCmd(app)
			root.SetArgs([]string{"sandbox", "econ", c.mechanism, path})
			err := root.ExecuteContext(t.Context())
			want := filepath.Join(filepath.Dir(path), c.want)
			if code(err) != 2 || outb.Len() != 0 || err == nil || err.Error() != want {
				t.Errorf("exit %d, stdout %.200q, error %v; want 2, nothing printed and %q", code(err), outb, err, want)
			}
		})
	}
}
