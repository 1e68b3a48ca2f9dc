// Package api is notesd's JSON HTTP API.
package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"example.com/tinynotes/internal/auth"
	"example.com/tinynotes/internal/storage"
)

// Store is what the handlers need from the database.
type Store interface {
	CreateUser(ctx context.Context, email, passwordHash string) (storage.User, error)
	UserByEmail(ctx context.Context, email string) (storage.User, error)
	CreateNote(ctx context.Context, ownerID int64, title, body string) (storage.Note, error)
	Note(ctx context.Context, id int64) (storage.Note, error)
	ListNotes(ctx context.Context, ownerID int64, limit int) ([]storage.Note, error)
	SearchNotes(ctx context.Context, ownerID int64, query string) ([]storage.Note, error)
	DeleteNote(ctx context.Context, id int64) error
}

// Server holds the handlers' dependencies.
type Server struct {
	store    Store
	sessions *auth.Manager
	log      *slog.Logger
	maxBody  int64
}

// NewServer returns a Server; maxBody caps request bodies in bytes.
func NewServer(store Store, sessions *auth.Manager, log *slog.Logger, maxBody int64) *Server {
	return &Server{store: store, sessions: sessions, log: log, maxBody: maxBody}
}

const sessionCookie = "notesd_session"

// Routes returns the API's handler.
func (s *Server) Routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("POST /api/users", s.handleSignup)
	mux.HandleFunc("POST /api/login", s.handleLogin)
	mux.HandleFunc("POST /api/logout", s.handleLogout)
	mux.HandleFunc("GET /api/notes", s.handleListNotes)
	mux.HandleFunc("POST /api/notes", s.handleCreateNote)
	mux.HandleFunc("GET /api/notes/{id}", s.handleGetNote)
	mux.HandleFunc("DELETE /api/notes/{id}", s.handleDeleteNote)
	return s.logRequests(mux)
}

// currentUser returns the signed-in user's id; otherwise it answers 401 and
// returns false.
func (s *Server) currentUser(w http.ResponseWriter, r *http.Request) (int64, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		s.writeError(w, http.StatusUnauthorized, "sign in first")
		return 0, false
	}
	sess, err := s.sessions.Lookup(c.Value)
	if err != nil {
		s.writeError(w, http.StatusUnauthorized, "sign in first")
		return 0, false
	}
	return sess.UserID, true
}

// decode reads a JSON body into v, answering 400 when it cannot.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		s.writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return false
	}
	return true
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		s.log.Warn("writing response", "err", err)
	}
}

func (s *Server) writeError(w http.ResponseWriter, status int, msg string) {
	s.writeJSON(w, status, map[string]string{"error": msg})
}

func (s *Server) internalError(w http.ResponseWriter, r *http.Request, err error) {
	s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	s.writeError(w, http.StatusInternalServerError, "internal error")
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		s.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "duration", time.Since(start))
	})
}
