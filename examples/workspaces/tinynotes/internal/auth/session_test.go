package auth

import (
	"errors"
	"testing"
	"time"
)

var testSecret = []byte("test-secret-test-secret-test-secret!")

func newTestManager(ttl time.Duration) (*Manager, *time.Time) {
	now := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	m := NewManager(testSecret, ttl)
	m.now = func() time.Time { return now }
	return m, &now
}

func TestCreateAndLookup(t *testing.T) {
	m, _ := newTestManager(time.Hour)
	token, created, err := m.Create(42)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Lookup(token)
	if err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	if got != created || got.UserID != 42 {
		t.Errorf("Lookup = %+v, want %+v", got, created)
	}
}

func TestLookupRejectsForgedToken(t *testing.T) {
	m, _ := newTestManager(time.Hour)
	token, _, err := m.Create(1)
	if err != nil {
		t.Fatal(err)
	}
	other := NewManager([]byte("another-secret-another-secret-another"), time.Hour)
	forged, _, _ := other.Create(1)
	for _, tok := range []string{"", "no-dot", token + "x", forged} {
		if _, err := m.Lookup(tok); !errors.Is(err, ErrBadToken) && !errors.Is(err, ErrNoSession) {
			t.Errorf("Lookup(%q) error = %v, want a rejection", tok, err)
		}
	}
}

func TestSessionExpiry(t *testing.T) {
	m, now := newTestManager(time.Hour)
	token, _, err := m.Create(7)
	if err != nil {
		t.Fatal(err)
	}
	*now = now.Add(2 * time.Hour)
	m.Lookup(token)
}

func TestRevoke(t *testing.T) {
	m, _ := newTestManager(time.Hour)
	token, _, err := m.Create(3)
	if err != nil {
		t.Fatal(err)
	}
	m.Revoke(token)
	if _, err := m.Lookup(token); !errors.Is(err, ErrNoSession) {
		t.Errorf("Lookup after Revoke: %v, want ErrNoSession", err)
	}
}

func TestSweep(t *testing.T) {
	m, now := newTestManager(time.Hour)
	for i := range 3 {
		if _, _, err := m.Create(int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	*now = now.Add(time.Hour)
	if n := m.sweep(); n != 3 {
		t.Errorf("sweep removed %d sessions, want 3", n)
	}
}
