package nexus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/providers"
)

// Any text that reaches an event, not only a provider error the recorder
// scrubbed, is scrubbed of configured keys and bearer tokens before it is
// written to events.jsonl or handed to an observer.
func TestEventsNeverCarryASecret(t *testing.T) {
	t.Parallel()
	const key = "swarm-events-test-key-93b1c7"
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var seen []events.Event
	l, err := newEventLog(path, time.Now, false, events.ObserverFunc(func(e events.Event) { seen = append(seen, e) }))
	if err != nil {
		t.Fatal(err)
	}
	l.secrets = redact.NewSecrets(key) // the run's set
	score := 3.0
	data := events.GateData{Reason: "upstream said: key " + key, Action: "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345", ShadowScore: &score}
	l.emit(events.Event{Kind: events.Failure, Message: "judging b1: denied for " + key, Data: data})
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := seen[0].Data.(events.GateData)
	if !ok {
		t.Fatalf("observer data is a %T, want GateData", seen[0].Data)
	}
	for name, text := range map[string]string{"events.jsonl": string(b), "observer message": seen[0].Message,
		"observer data": got.Reason + got.Action} {
		if strings.Contains(text, key) || strings.Contains(text, "abcdefghijklmnopqrstuvwxyz012345") {
			t.Errorf("%s carries a secret: %s", name, text)
		}
		if !strings.Contains(text, providers.Redacted) {
			t.Errorf("%s does not show where it was scrubbed: %s", name, text)
		}
	}
	if data.Reason != "upstream said: key "+key {
		t.Errorf("the caller's data was changed in place: %v", data.Reason)
	}
	if got.ShadowScore == nil || *got.ShadowScore != 3 || got.BundleID != "" {
		t.Errorf("non-secret data changed: %+v", got)
	}
}
