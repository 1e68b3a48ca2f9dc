package events_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/events"
)

// A kind this version does not know keeps its data as it was read.
func TestEventOfUnknownKindKeepsItsData(t *testing.T) {
	line := `{"seq":3,"time":"2026-01-02T03:04:05Z","kind":"from_the_future","data":{"z":1,"a":[true]}}`
	var e events.Event
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(events.RawData(`{"z":1,"a":[true]}`), e.Data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	b, _ := json.Marshal(e)
	if diff := cmp.Diff(line, string(b)); diff != "" {
		t.Errorf("written back (-want +got):\n%s", diff)
	}
}

// A payload that does not fit its kind is an error naming the event, not a
// silently empty payload.
func TestEventWithMistypedDataIsAnError(t *testing.T) {
	line := `{"seq":7,"time":"2026-01-02T03:04:05Z","kind":"sealed","data":{"sealed_hash":42}}`
	var e events.Event
	err := json.Unmarshal([]byte(line), &e)
	if err == nil || !strings.Contains(err.Error(), "event 7 (sealed)") {
		t.Errorf("err = %v, want one naming event 7 (sealed)", err)
	}
}

// events.jsonl wrote its data as JSON objects, whose keys encoding/json
// sorts; the payload structs keep that order by declaring their fields in
// the order of their JSON names, so the lines stay byte-identical.
func TestPayloadFieldOrder(t *testing.T) {
	payloads := []events.Payload{
		events.BriefingData{}, events.CallData{}, events.AgentFinishData{}, events.DepthGuardData{}, events.FailureData{},
		events.LeakageData{}, events.AuditData{}, events.ScoreCorrectionData{}, events.CostStopData{}, events.ReviewData{},
		events.SealedData{}, events.EnvelopeCheckData{}, events.JudgedData{}, events.HardeningData{}, events.GateData{},
		events.RunEndData{}, events.ToolCallData{}, events.Phase1End{}, events.Phase2End{}, events.Phase3End{}, events.Phase4End{},
		events.Phase5End{}, events.Phase6End{}, events.Phase8End{}, events.BreakerData{}, events.ModelSwapData{}, events.WaveData{}, events.CanaryData{},
	}
	for _, p := range payloads {
		typ := reflect.TypeOf(p)
		var names []string
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			names = append(names, name)
		}
		if !slices.IsSorted(names) {
			t.Errorf("%s: fields %v are not in the order of their JSON names", typ.Name(), names)
		}
	}
}

// Every phase has a name (the progress view shows it); an unknown one has
// none rather than a made-up one.
func TestPhaseNames(t *testing.T) {
	got := map[events.Phase]string{}
	for _, p := range []events.Phase{events.Phase0, events.Phase1, events.Phase15, events.Phase2, events.Phase3, events.Phase4, events.Phase5, events.Phase6, events.Phase7, events.Phase8, "9"} {
		got[p] = p.Name()
	}
	want := map[events.Phase]string{"0": "intake", "1": "decomposition", "1.5": "seal", "2": "capsules", "3": "deployment",
		"4": "execution", "5": "cross-review", "6": "shadow validation", "7": "consensus", "8": "output", "9": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}
