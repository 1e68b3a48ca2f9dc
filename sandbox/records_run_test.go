package sandbox

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A sandbox run's events.jsonl is read: its header gives the payoff, its
// interactions are read with their run fields, its other lines skipped;
// a header out of place and an unknown type are errors naming the line.
func TestReadRunInteractions(t *testing.T) {
	t.Parallel()
	const header = `{"type":"run","scenario_id":"s","seed":3,"epochs":2,"payoff":{"s_plus":3,"s_minus":1,"h":2,"theta":0.5,"rho_a":0,"rho_b":0,"w_rep":1}}` + "\n"
	const in1 = `{"type":"interaction","id":"i1","initiator":"a","counterparty":"b","epoch":1,"step":2,"accepted":true,"p":0.75,"v_hat":0.5,"c_a":0.1,"r_a":0.0125,"r_b":0.00625}` + "\n"
	for _, tc := range []struct {
		name, in string
		want     []Interaction
		header   *RunHeader
		err      string
	}{
		{"a run's lines: header, agent, effect and governance skipped, interaction read with its v̂",
			header + `{"type":"agent","agent":"a","kind":"honest","reputation":0.5}` + "\n" +
				`{"type":"governance","epoch":0,"step":0,"kind":"freeze","message":"b frozen for 2 epochs"}` + "\n" +
				`{"type":"effect","agent":"b","epoch":0,"step":0,"freeze_epochs":2,"epoch_start":true}` + "\n" + in1,
			[]Interaction{{ID: "i1", Initiator: "a", Counterparty: "b", Epoch: 1, Step: 2, Accepted: true, P: 0.75, VHat: 0.5, CA: 0.1, RA: 0.0125, RB: 0.00625}},
			&RunHeader{ScenarioID: "s", Seed: 3, Epochs: 2, Payoff: PayoffConfig{SPlus: 3, SMinus: 1, H: 2, Theta: 0.5, WRep: 1}}, ""},
		{"a second header", header + header, nil, nil, "f:2: a second run header"},
		{"a header after interactions", in1 + header, nil, nil, "f:2: a run header after interactions"},
		{"a header without payoff", `{"type":"run","scenario_id":"s"}` + "\n", nil, nil, `f:1: run header without "payoff"`},
		{"an unknown type", `{"type":"trade","accepted":true,"p":0.5}` + "\n", nil, nil, `f:1: unknown type "trade"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			proxy, _ := NewProxy(DefaultProxyConfig())
			var got []Interaction
			var h *RunHeader
			err := ReadRunInteractions("f", strings.NewReader(tc.in), proxy, func(_ int, rh RunHeader) error { h = &rh; return nil },
				func(_ int, in Interaction) error { got = append(got, in); return nil })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("interactions (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.header, h); d != "" {
				t.Errorf("header (-want +got):\n%s", d)
			}
		})
	}
}

// ReadRunMetricsFile computes under the run's payoff when runPayoff says
// so, under the caller's otherwise: s⁺ 3 against the default 2 moves the
// welfare of the one accepted interaction at p 0.75 (S = 2 vs 1.25,
// less the cost 0.1, plus the reputation changes).
func TestReadRunMetricsFileUsesTheRunsPayoff(t *testing.T) {
	t.Parallel()
	const in = `{"type":"run","payoff":{"s_plus":3,"s_minus":1,"h":2,"theta":0.5,"rho_a":0,"rho_b":0,"w_rep":1}}` + "\n" +
		`{"type":"interaction","accepted":true,"p":0.75,"c_a":0.1,"r_a":0.0125,"r_b":0.00625}` + "\n"
	proxy, _ := NewProxy(DefaultProxyConfig())
	for _, tc := range []struct {
		name      string
		runPayoff func(PayoffConfig) PayoffConfig
		welfare   float64
	}{
		{"the run's payoff", func(p PayoffConfig) PayoffConfig { return p }, 2 - 0.1 + 0.0125 + 0.00625},
		{"no runPayoff: the caller's", nil, 1.25 - 0.1 + 0.0125 + 0.00625},
	} {
		f, err := ReadRunMetricsFile("f", strings.NewReader(in), proxy, DefaultPayoffConfig(), tc.runPayoff, false)
		if err != nil {
			t.Fatal(err)
		}
		if d := f.Report.TotalWelfare - tc.welfare; d > 1e-12 || d < -1e-12 {
			t.Errorf("%s: welfare %v, want %v", tc.name, f.Report.TotalWelfare, tc.welfare)
		}
	}
}
