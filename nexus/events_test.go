package nexus_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/nexus"
)

// events.jsonl is read back into the typed form a run emitted: every line
// decodes to its kind's payload type (none is left as events.RawData), equals the
// event the run kept, and writes back to the same bytes. This is what
// runfiles.CommittedHashes, `swarm shadow verify` and any other reader rely on.
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
	var read []events.Event
	kinds := map[events.Kind]bool{}
	for sc.Scan() {
		var e events.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d: %v", len(read)+1, err)
		}
		if _, raw := e.Data.(events.RawData); raw {
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
	if len(read) != len(res.Events)+1 || read[len(read)-1].Kind != events.RunEnd {
		t.Fatalf("%d lines, %d kept events: want the kept ones and run_end", len(read), len(res.Events))
	}
	if diff := cmp.Diff(res.Events, read[:len(res.Events)]); diff != "" {
		t.Errorf("events.jsonl read back differs from the events the run emitted (-want +got):\n%s", diff)
	}
	for _, k := range []events.Kind{events.Briefing, events.LLMCall, events.Sealed, events.Judged, events.Gate, events.Review, events.AgentFinish, events.PhaseEnd, events.RunEnd} {
		if !kinds[k] {
			t.Errorf("fixture: the run wrote no %s event, so its decoding is untested", k)
		}
	}
}
