package auth

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Session is one signed-in user.
type Session struct {
	Token   string
	UserID  string
	Expires time.Time
}

// NewSession issues a session token for a user.
func NewSession(userID string) (Session, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return Session{}, err
	}
	return Session{Token: hex.EncodeToString(b), UserID: userID, Expires: time.Now().Add(24 * time.Hour)}, nil
}

// Valid compares the presented token with the stored one.
func (s Session) Valid(token string) bool {
	return s.Token == token && time.Now().Before(s.Expires)
}
