package events_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/events"
)

// allPayloads is every payload type of the package (RawData aside).
var allPayloads = []events.Payload{
	events.BriefingData{}, events.CallData{}, events.ToolCallData{}, events.AgentFinishData{}, events.DepthGuardData{},
	events.FailureData{}, events.LeakageData{}, events.AuditData{}, events.ScoreCorrectionData{}, events.CostStopData{},
	events.ReviewData{}, events.SealedData{}, events.EnvelopeCheckData{}, events.JudgedData{}, events.HardeningData{},
	events.GateData{}, events.RunEndData{}, events.BreakerData{}, events.ModelSwapData{}, events.RecoveryData{},
	events.WaveData{}, events.CanaryData{}, events.ResumedData{}, events.FollowUpData{}, events.ConcurrencyData{},
	events.Phase1End{}, events.Phase2End{}, events.Phase3End{}, events.Phase4End{}, events.Phase5End{},
	events.Phase6End{}, events.Phase8End{},
}

// Decoding is by table, built from what each payload type declares: an
// event of the kind (and, for phase_end, the phase) a payload declares is
// read back into that payload's type, and no two payload types claim the
// same kind and phase.
func TestEveryPayloadDecodesByItsDeclaredKind(t *testing.T) {
	seen := map[string]string{}
	for _, p := range allPayloads {
		typ := reflect.TypeOf(p).Name()
		t.Run(typ, func(t *testing.T) {
			e := events.Event{Seq: 1, Kind: p.EventKind(), Data: p}
			if pe, ok := p.(interface{ EndOf() events.Phase }); ok {
				e.Phase = pe.EndOf()
			}
			key := fmt.Sprintf("%s/%s", e.Kind, e.Phase)
			if other, dup := seen[key]; dup {
				t.Fatalf("%s and %s both declare %s", other, typ, key)
			}
			seen[key] = typ
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			var got events.Event
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(reflect.TypeOf(p).String(), reflect.TypeOf(got.Data).String()); diff != "" {
				t.Errorf("%s decoded as another type (-want +got):\n%s", b, diff)
			}
		})
	}
}

// The table's edges: what it does not hold stays RawData, and the kinds
// that carry no payload stay without one.
func TestDecodingTableEdges(t *testing.T) {
	tests := []struct {
		name string
		line string
		want events.Payload
	}{
		{
			// phase 7's phase_end has no payload type: its data, should a
			// writer add some, is kept, not dropped or misread.
			name: "phase_end of a phase without a payload type",
			line: `{"seq":1,"time":"2026-01-02T03:04:05Z","phase":"7","kind":"phase_end","data":{"x":1}}`,
			want: events.RawData(`{"x":1}`),
		},
		{
			// a phase_end is keyed by its phase, not by its kind alone.
			name: "phase_end of phase 2",
			line: `{"seq":1,"time":"2026-01-02T03:04:05Z","phase":"2","kind":"phase_end","data":{}}`,
			want: events.Phase2End{},
		},
		{
			// other kinds ignore the phase: an llm_call of any phase is a CallData.
			name: "llm_call in phase 5",
			line: `{"seq":1,"time":"2026-01-02T03:04:05Z","phase":"5","kind":"llm_call","data":{}}`,
			want: events.CallData{},
		},
		{
			name: "phase_start carries no data",
			line: `{"seq":1,"time":"2026-01-02T03:04:05Z","phase":"1","kind":"phase_start"}`,
			want: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e events.Event
			if err := json.Unmarshal([]byte(tc.line), &e); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, e.Data); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

// Phases is the pipeline's order, and a caller's copy: writing to it does
// not reorder anyone else's phases.
func TestPhasesInOrderAndACopy(t *testing.T) {
	want := []events.Phase{"0", "1", "1.5", "2", "3", "4", "5", "6", "7", "8"}
	p := events.Phases()
	if diff := cmp.Diff(want, p); diff != "" {
		t.Fatalf("Phases (-want +got):\n%s", diff)
	}
	p[0] = "9"
	if diff := cmp.Diff(want, events.Phases()); diff != "" {
		t.Errorf("Phases after a caller wrote to its slice (-want +got):\n%s", diff)
	}
}
