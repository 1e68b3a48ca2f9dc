package nexus_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/nexus"
)

// events.jsonl is read back into the typed form a run emitted: every line
// decodes to its kind's payload type (none is left as RawData), equals the
// event the run kept, and writes back to the same bytes. This is what
// CommittedHashes, `swarm shadow verify` and any other reader rely on.
func TestEventsJSONLRoundTripsTyped(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	res, err := nexus.Run(t.Context(), missionOptions(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	var read []nexus.Event
	kinds := map[nexus.Kind]bool{}
	for sc.Scan() {
		var e nexus.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d: %v", len(read)+1, err)
		}
		if _, raw := e.Data.(nexus.RawData); raw {
			t.Errorf("line %d: %s data not decoded to its type: %s", len(read)+1, e.Kind, e.Data)
		}
		if (e.Data != nil) != bytes.Contains(sc.Bytes(), []byte(`"data":`)) {
			t.Errorf("line %d: data %v for %s", len(read)+1, e.Data, sc.Bytes())
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sc.Text(), string(b)); diff != "" {
			t.Errorf("line %d written back differently (-want +got):\n%s", len(read)+1, diff)
		}
		kinds[e.Kind] = true
		read = append(read, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// Result.Events is taken before the run_end event, the last line.
	if len(read) != len(res.Events)+1 || read[len(read)-1].Kind != nexus.EvRunEnd {
		t.Fatalf("%d lines, %d kept events: want the kept ones and run_end", len(read), len(res.Events))
	}
	if diff := cmp.Diff(res.Events, read[:len(res.Events)]); diff != "" {
		t.Errorf("events.jsonl read back differs from the events the run emitted (-want +got):\n%s", diff)
	}
	for _, k := range []nexus.Kind{nexus.EvBriefing, nexus.EvLLMCall, nexus.EvSealed, nexus.EvJudged, nexus.EvGate, nexus.EvReview, nexus.EvAgentFinish, nexus.EvPhaseEnd, nexus.EvRunEnd} {
		if !kinds[k] {
			t.Errorf("fixture: the run wrote no %s event, so its decoding is untested", k)
		}
	}
}

// A kind this version does not know keeps its data as it was read.
func TestEventOfUnknownKindKeepsItsData(t *testing.T) {
	t.Parallel()
	line := `{"seq":3,"time":"2026-01-02T03:04:05Z","kind":"from_the_future","data":{"z":1,"a":[true]}}`
	var e nexus.Event
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(nexus.RawData(`{"z":1,"a":[true]}`), e.Data); diff != "" {
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
	t.Parallel()
	line := `{"seq":7,"time":"2026-01-02T03:04:05Z","kind":"sealed","data":{"sealed_hash":42}}`
	var e nexus.Event
	err := json.Unmarshal([]byte(line), &e)
	if err == nil || !strings.Contains(err.Error(), "event 7 (sealed)") {
		t.Errorf("err = %v, want one naming event 7 (sealed)", err)
	}
}

// events.jsonl wrote its data as JSON objects, whose keys encoding/json
// sorts; the payload structs keep that order by declaring their fields in
// the order of their JSON names, so the lines stay byte-identical.
func TestPayloadFieldOrder(t *testing.T) {
	t.Parallel()
	payloads := []nexus.Payload{
		nexus.BriefingData{}, nexus.CallData{}, nexus.AgentFinishData{}, nexus.DepthGuardData{}, nexus.FailureData{},
		nexus.LeakageData{}, nexus.AuditData{}, nexus.ScoreCorrectionData{}, nexus.CostStopData{}, nexus.ReviewData{},
		nexus.SealedData{}, nexus.EnvelopeCheckData{}, nexus.JudgedData{}, nexus.HardeningData{}, nexus.GateData{},
		nexus.RunEndData{}, nexus.ToolCallData{}, nexus.Phase1End{}, nexus.Phase2End{}, nexus.Phase3End{}, nexus.Phase4End{},
		nexus.Phase5End{}, nexus.Phase6End{}, nexus.Phase8End{}, nexus.BreakerData{}, nexus.ModelSwapData{}, nexus.WaveData{}, nexus.CanaryData{},
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
	t.Parallel()
	got := map[nexus.Phase]string{}
	for _, p := range []nexus.Phase{nexus.Phase0, nexus.Phase1, nexus.Phase15, nexus.Phase2, nexus.Phase3, nexus.Phase4, nexus.Phase5, nexus.Phase6, nexus.Phase7, nexus.Phase8, "9"} {
		got[p] = p.Name()
	}
	want := map[nexus.Phase]string{"0": "intake", "1": "decomposition", "1.5": "seal", "2": "capsules", "3": "deployment",
		"4": "execution", "5": "cross-review", "6": "shadow validation", "7": "consensus", "8": "output", "9": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}
