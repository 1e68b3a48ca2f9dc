package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"example.com/tinynotes/internal/auth"
	"example.com/tinynotes/internal/storage"
)

// memStore is an in-memory Store for handler tests.
type memStore struct {
	mu    sync.Mutex
	notes map[int64]storage.Note
	next  int64
}

func newMemStore() *memStore { return &memStore{notes: map[int64]storage.Note{}} }

func (m *memStore) CreateUser(context.Context, string, string) (storage.User, error) {
	return storage.User{}, nil
}
func (m *memStore) UserByEmail(context.Context, string) (storage.User, error) {
	return storage.User{}, storage.ErrNotFound
}
func (m *memStore) CreateNote(_ context.Context, owner int64, title, body string) (storage.Note, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	n := storage.Note{ID: m.next, OwnerID: owner, Title: title, Body: body}
	m.notes[n.ID] = n
	return n, nil
}
func (m *memStore) Note(_ context.Context, id int64) (storage.Note, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.notes[id]
	if !ok {
		return storage.Note{}, storage.ErrNotFound
	}
	return n, nil
}
func (m *memStore) ListNotes(_ context.Context, owner int64, _ int) ([]storage.Note, error) {
	return m.SearchNotes(context.Background(), owner, "")
}
func (m *memStore) SearchNotes(_ context.Context, owner int64, q string) ([]storage.Note, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []storage.Note
	for _, n := range m.notes {
		if n.OwnerID == owner && (strings.Contains(n.Title, q) || strings.Contains(n.Body, q)) {
			out = append(out, n)
		}
	}
	return out, nil
}
func (m *memStore) DeleteNote(_ context.Context, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.notes, id)
	return nil
}

type fixture struct {
	srv      *httptest.Server
	store    *memStore
	sessions *auth.Manager
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{store: newMemStore(), sessions: auth.NewManager([]byte("0123456789abcdef0123456789abcdef"), time.Hour)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.srv = httptest.NewServer(NewServer(f.store, f.sessions, log, 1<<16).Routes())
	t.Cleanup(f.srv.Close)
	return f
}

// do sends a request as userID (0: no session cookie) and returns the status.
func (f *fixture) do(t *testing.T, userID int64, method, path, body string, out any) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if userID != 0 {
		token, _, err := f.sessions.Create(userID)
		if err != nil {
			t.Fatal(err)
		}
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: token})
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decode: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

func TestNotesNeedASession(t *testing.T) {
	f := newFixture(t)
	if got := f.do(t, 0, "GET", "/api/notes", "", nil); got != http.StatusUnauthorized {
		t.Errorf("GET /api/notes without a session: %d, want 401", got)
	}
	if got := f.do(t, 0, "POST", "/api/notes", `{"title":"x"}`, nil); got != http.StatusUnauthorized {
		t.Errorf("POST /api/notes without a session: %d, want 401", got)
	}
}

func TestCreateAndListNotes(t *testing.T) {
	f := newFixture(t)
	var created storage.Note
	if got := f.do(t, 1, "POST", "/api/notes", `{"title":"groceries","body":"eggs"}`, &created); got != http.StatusCreated {
		t.Fatalf("create: %d", got)
	}
	var list struct{ Notes []storage.Note }
	if got := f.do(t, 1, "GET", "/api/notes", "", &list); got != http.StatusOK {
		t.Fatalf("list: %d", got)
	}
	if len(list.Notes) != 1 || list.Notes[0].Title != "groceries" {
		t.Errorf("list = %+v, want the one note created", list.Notes)
	}
	if got := f.do(t, 2, "GET", "/api/notes", "", &list); got != http.StatusOK || len(list.Notes) != 0 {
		t.Errorf("another user sees %d notes (status %d), want 0", len(list.Notes), got)
	}
}

func TestCannotDeleteAnotherUsersNote(t *testing.T) {
	f := newFixture(t)
	n, err := f.store.CreateNote(t.Context(), 1, "mine", "")
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/notes/" + strconv.FormatInt(n.ID, 10)
	if got := f.do(t, 2, "DELETE", path, "", nil); got != http.StatusNotFound {
		t.Errorf("DELETE by another user: %d, want 404", got)
	}
	if got := f.do(t, 1, "DELETE", path, "", nil); got != http.StatusNoContent {
		t.Errorf("DELETE by the owner: %d, want 204", got)
	}
}
