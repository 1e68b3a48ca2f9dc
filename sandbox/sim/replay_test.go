package sim

import (
	"strings"
	"testing"
)

// ReplayEvents refuses what is not a run's events.jsonl, naming the line.
func TestReplayEventsRefuses(t *testing.T) {
	t.Parallel()
	const header = `{"type":"run","epochs":1,"payoff":{"s_plus":2,"s_minus":1,"h":2,"theta":0.5,"rho_a":0,"rho_b":0,"w_rep":1}}` + "\n"
	const agents = `{"type":"agent","agent":"a","kind":"honest","reputation":0.5}` + "\n" + `{"type":"agent","agent":"b","kind":"honest","reputation":0.5}` + "\n"
	for _, tc := range []struct{ name, in, err string }{
		{"no header: an interactions file", `{"accepted":true,"p":0.5}` + "\n", "f:1: a line before the run header"},
		{"empty", "", "f: no run header"},
		{"a second header", header + header, "f:2: a second run header"},
		{"an unknown field", header + `{"type":"agent","agent":"a","colour":"red"}` + "\n", `f:2: json: unknown field "colour"`},
		{"an unknown type", header + `{"type":"trade","epoch":0}` + "\n", `f:2: unknown type "trade"`},
		{"an interaction of agents not listed", header + `{"type":"interaction","id":"i1","initiator":"a","counterparty":"z","accepted":true,"p":0.5}` + "\n",
			"f:2: interaction i1 between agents the file does not list (a, z)"},
		{"epochs out of order", header + agents + `{"type":"interaction","id":"i1","initiator":"a","counterparty":"b","epoch":1,"p":0.5}` + "\n" +
			`{"type":"interaction","id":"i2","initiator":"a","counterparty":"b","epoch":0,"p":0.5}` + "\n", "f:5: epoch 0 after epoch 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ReplayEvents("f", strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}
