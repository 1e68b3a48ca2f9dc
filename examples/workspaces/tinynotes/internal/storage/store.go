// Package storage keeps users and notes in SQLite through database/sql.
// The driver is registered by the binary (cmd/notesd imports go-sqlite3).
package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrNotFound: no row with that key.
var ErrNotFound = errors.New("storage: not found")

// User is an account.
type User struct {
	ID           int64     `json:"id"`
	Email        string    `json:"email"`
	PasswordHash string    `json:"-"`
	Created      time.Time `json:"created"`
}

// Note belongs to one user.
type Note struct {
	ID      int64     `json:"id"`
	OwnerID int64     `json:"owner_id"`
	Title   string    `json:"title"`
	Body    string    `json:"body"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

const schema = `
CREATE TABLE IF NOT EXISTS users (
	id            INTEGER PRIMARY KEY,
	email         TEXT NOT NULL UNIQUE,
	password_hash TEXT NOT NULL,
	created       TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS notes (
	id       INTEGER PRIMARY KEY,
	owner_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	title    TEXT NOT NULL,
	body     TEXT NOT NULL,
	created  TIMESTAMP NOT NULL,
	updated  TIMESTAMP NOT NULL
);
CREATE INDEX IF NOT EXISTS notes_owner_updated ON notes(owner_id, updated);
`

const noteColumns = "id, owner_id, title, body, created, updated"

// Store is the database.
type Store struct {
	db  *sql.DB
	now func() time.Time
}

// Open connects to dsn and creates the tables that are missing.
func Open(dsn string) (*Store, error) {
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: create schema: %w", err)
	}
	return &Store{db: db, now: time.Now}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// CreateUser adds an account.
func (s *Store) CreateUser(ctx context.Context, email, passwordHash string) (User, error) {
	u := User{Email: email, PasswordHash: passwordHash, Created: s.now().UTC()}
	res, err := s.db.ExecContext(ctx, `INSERT INTO users (email, password_hash, created) VALUES (?, ?, ?)`, u.Email, u.PasswordHash, u.Created)
	if err != nil {
		return User{}, fmt.Errorf("storage: create user: %w", err)
	}
	u.ID, err = res.LastInsertId()
	return u, err
}

// UserByEmail finds an account by its email address.
func (s *Store) UserByEmail(ctx context.Context, email string) (User, error) {
	var u User
	err := s.db.QueryRowContext(ctx, `SELECT id, email, password_hash, created FROM users WHERE email = ?`, email).
		Scan(&u.ID, &u.Email, &u.PasswordHash, &u.Created)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, ErrNotFound
	}
	return u, err
}

// CreateNote adds a note for ownerID.
func (s *Store) CreateNote(ctx context.Context, ownerID int64, title, body string) (Note, error) {
	now := s.now().UTC()
	n := Note{OwnerID: ownerID, Title: title, Body: body, Created: now, Updated: now}
	res, err := s.db.ExecContext(ctx, `INSERT INTO notes (owner_id, title, body, created, updated) VALUES (?, ?, ?, ?, ?)`,
		n.OwnerID, n.Title, n.Body, n.Created, n.Updated)
	if err != nil {
		return Note{}, fmt.Errorf("storage: create note: %w", err)
	}
	n.ID, err = res.LastInsertId()
	return n, err
}

// Note returns one note by id.
func (s *Store) Note(ctx context.Context, id int64) (Note, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+noteColumns+` FROM notes WHERE id = ?`, id)
	var n Note
	err := row.Scan(&n.ID, &n.OwnerID, &n.Title, &n.Body, &n.Created, &n.Updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Note{}, ErrNotFound
	}
	return n, err
}

// ListNotes returns ownerID's most recently updated notes.
func (s *Store) ListNotes(ctx context.Context, ownerID int64, limit int) ([]Note, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+noteColumns+` FROM notes WHERE owner_id = ? ORDER BY updated DESC LIMIT ?`, ownerID, limit)
	if err != nil {
		return nil, err
	}
	return scanNotes(rows)
}

// SearchNotes returns ownerID's notes whose title or body contains query.
func (s *Store) SearchNotes(ctx context.Context, ownerID int64, query string) ([]Note, error) {
	q := `SELECT ` + noteColumns + ` FROM notes WHERE owner_id = ` + strconv.FormatInt(ownerID, 10) +
		` AND (title LIKE '%` + query + `%' OR body LIKE '%` + query + `%') ORDER BY updated DESC`
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return scanNotes(rows)
}

// DeleteNote removes a note.
func (s *Store) DeleteNote(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM notes WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrNotFound
	}
	return nil
}

func scanNotes(rows *sql.Rows) ([]Note, error) {
	defer rows.Close()
	var notes []Note
	for rows.Next() {
		var n Note
		if err := rows.Scan(&n.ID, &n.OwnerID, &n.Title, &n.Body, &n.Created, &n.Updated); err != nil {
			return nil, err
		}
		notes = append(notes, n)
	}
	return notes, rows.Err()
}
