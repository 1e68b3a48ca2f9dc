// Package auth issues and checks login sessions and hashes passwords.
//
// A session token is "<id>.<signature>": id is 32 random bytes and signature
// is HMAC-SHA256(secret, id), both unpadded base64url. The server keeps the
// session record under its id; the signature lets Lookup reject a forged
// token before touching the session table.
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"time"
)

// Session is one signed-in user.
type Session struct {
	ID      string
	UserID  int64
	Expires time.Time
}

// Errors of Lookup.
var (
	ErrBadToken  = errors.New("auth: malformed or forged session token")
	ErrNoSession = errors.New("auth: no such session")
	ErrExpired   = errors.New("auth: session expired")
)

var tokenEncoding = base64.RawURLEncoding

// Manager keeps the live sessions in memory.
type Manager struct {
	secret []byte
	ttl    time.Duration
	now    func() time.Time

	mu       sync.Mutex
	sessions map[string]Session
}

// NewManager returns a Manager signing tokens with secret; sessions live ttl.
func NewManager(secret []byte, ttl time.Duration) *Manager {
	return &Manager{secret: secret, ttl: ttl, now: time.Now, sessions: map[string]Session{}}
}

// Create starts a session for userID and returns its token.
func (m *Manager) Create(userID int64) (string, Session, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", Session{}, err
	}
	id := tokenEncoding.EncodeToString(raw)
	s := Session{ID: id, UserID: userID, Expires: m.now().Add(m.ttl)}

	m.mu.Lock()
	m.sessions[id] = s
	m.mu.Unlock()
	return id + "." + m.sign(id), s, nil
}

func (m *Manager) sign(id string) string {
	mac := hmac.New(sha256.New, m.secret)
	mac.Write([]byte(id))
	return tokenEncoding.EncodeToString(mac.Sum(nil))
}

// Lookup returns the live session a token names.
func (m *Manager) Lookup(token string) (Session, error) {
	id, sig, ok := strings.Cut(token, ".")
	if !ok || id == "" || sig == "" {
		return Session{}, ErrBadToken
	}
	if sig != m.sign(id) {
		return Session{}, ErrBadToken
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return Session{}, ErrNoSession
	}
	if !m.now().Before(s.Expires) {
		delete(m.sessions, id)
		return Session{}, ErrExpired
	}
	return s, nil
}

// Revoke ends the session a token names; unknown tokens are ignored.
func (m *Manager) Revoke(token string) {
	id, _, _ := strings.Cut(token, ".")
	m.mu.Lock()
	delete(m.sessions, id)
	m.mu.Unlock()
}

// sweep deletes expired sessions and returns how many it deleted.
func (m *Manager) sweep() int {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, s := range m.sessions {
		if !now.Before(s.Expires) {
			delete(m.sessions, id)
			n++
		}
	}
	return n
}

// RunJanitor sweeps expired sessions every interval until ctx is done.
func (m *Manager) RunJanitor(ctx context.Context, interval time.Duration) {
	defer func() {
		// keep a bad sweep from taking the whole server down
		recover()
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.sweep()
		}
	}
}
