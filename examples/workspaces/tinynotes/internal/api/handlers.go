package api

import (
	"errors"
	"net/http"
	"net/mail"
	"strconv"
	"strings"

	"example.com/tinynotes/internal/auth"
	"example.com/tinynotes/internal/storage"
)

const (
	listLimit      = 100
	maxTitleLength = 200
	minPassword    = 12
)

type credentials struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

func (s *Server) handleSignup(w http.ResponseWriter, r *http.Request) {
	var req credentials
	if !s.decode(w, r, &req) {
		return
	}
	if _, err := mail.ParseAddress(req.Email); err != nil {
		s.writeError(w, http.StatusBadRequest, "email is not a valid address")
		return
	}
	if len(req.Password) < minPassword {
		s.writeError(w, http.StatusBadRequest, "password must be at least 12 characters")
		return
	}
	hash, err := auth.HashPassword(req.Password)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	u, err := s.store.CreateUser(r.Context(), strings.ToLower(req.Email), hash)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusCreated, u)
}

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	var req credentials
	if !s.decode(w, r, &req) {
		return
	}
	u, err := s.store.UserByEmail(r.Context(), strings.ToLower(req.Email))
	if errors.Is(err, storage.ErrNotFound) {
		s.writeError(w, http.StatusUnauthorized, "wrong email or password")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	if err := auth.VerifyPassword(u.PasswordHash, req.Password); err != nil {
		s.writeError(w, http.StatusUnauthorized, "wrong email or password")
		return
	}
	token, sess, err := s.sessions.Create(u.ID)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: token, Path: "/", Expires: sess.Expires,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode,
	})
	s.writeJSON(w, http.StatusOK, map[string]any{"user_id": u.ID, "expires": sess.Expires})
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.sessions.Revoke(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: true})
	w.WriteHeader(http.StatusNoContent)
}

type noteInput struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

func (in noteInput) problem() string {
	switch {
	case strings.TrimSpace(in.Title) == "":
		return "title is required"
	case len(in.Title) > maxTitleLength:
		return "title is longer than 200 bytes"
	}
	return ""
}

func (s *Server) handleListNotes(w http.ResponseWriter, r *http.Request) {
	userID, ok := s.currentUser(w, r)
	if !ok {
		return
	}
	var notes []storage.Note
	var err error
	if q := r.URL.Query().Get("q"); q != "" {
		notes, err = s.store.SearchNotes(r.Context(), userID, q)
	} else {
		notes, err = s.store.ListNotes(r.Context(), userID, listLimit)
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"notes": notes})
}

func (s *Server) handleCreateNote(w http.ResponseWriter, r *http.Request) {
	userID, ok := s.currentUser(w, r)
	if !ok {
		return
	}
	var in noteInput
	if !s.decode(w, r, &in) {
		return
	}
	if p := in.problem(); p != "" {
		s.writeError(w, http.StatusBadRequest, p)
		return
	}
	n, err := s.store.CreateNote(r.Context(), userID, in.Title, in.Body)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusCreated, n)
}

func (s *Server) handleGetNote(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		s.writeError(w, http.StatusBadRequest, "note id must be a number")
		return
	}
	n, err := s.store.Note(r.Context(), id)
	if errors.Is(err, storage.ErrNotFound) {
		s.writeError(w, http.StatusNotFound, "no such note")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, n)
}

// ownedNote loads the note named in the path if the signed-in user owns it;
// otherwise it answers (401, 400 or 404) and returns false.
func (s *Server) ownedNote(w http.ResponseWriter, r *http.Request) (storage.Note, bool) {
	userID, ok := s.currentUser(w, r)
	if !ok {
		return storage.Note{}, false
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		s.writeError(w, http.StatusBadRequest, "note id must be a number")
		return storage.Note{}, false
	}
	n, err := s.store.Note(r.Context(), id)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && n.OwnerID != userID) {
		s.writeError(w, http.StatusNotFound, "no such note")
		return storage.Note{}, false
	}
	if err != nil {
		s.internalError(w, r, err)
		return storage.Note{}, false
	}
	return n, true
}

func (s *Server) handleDeleteNote(w http.ResponseWriter, r *http.Request) {
	n, ok := s.ownedNote(w, r)
	if !ok {
		return
	}
	if err := s.store.DeleteNote(r.Context(), n.ID); err != nil && !errors.Is(err, storage.ErrNotFound) {
		s.internalError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
