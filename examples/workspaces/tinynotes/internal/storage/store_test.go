package storage

import (
	"errors"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

func openTest(t *testing.T) *Store {
	t.Helper()
	s, err := Open("file::memory:?_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	s.db.SetMaxOpenConns(1) // one connection: one in-memory database
	t.Cleanup(func() { s.Close() })
	return s
}

func TestUsersAndNotes(t *testing.T) {
	s := openTest(t)
	u, err := s.CreateUser(t.Context(), "ada@example.com", "hash")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.UserByEmail(t.Context(), "ada@example.com"); err != nil || got.ID != u.ID {
		t.Fatalf("UserByEmail = %+v, %v; want user %d", got, err, u.ID)
	}
	if _, err := s.UserByEmail(t.Context(), "nobody@example.com"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown email: %v, want ErrNotFound", err)
	}
	n, err := s.CreateNote(t.Context(), u.ID, "title", "body")
	if err != nil {
		t.Fatal(err)
	}
	notes, err := s.ListNotes(t.Context(), u.ID, 10)
	if err != nil || len(notes) != 1 || notes[0].ID != n.ID {
		t.Fatalf("ListNotes = %+v, %v; want the one note", notes, err)
	}
	if err := s.DeleteNote(t.Context(), n.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Note(t.Context(), n.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Note after delete: %v, want ErrNotFound", err)
	}
}
