package auth

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Password hashes are "pbkdf2-sha256$<iterations>$<salt>$<key>", salt and key
// in unpadded standard base64.
const (
	hashScheme       = "pbkdf2-sha256"
	hashIterations   = 600_000
	hashSaltBytes    = 16
	hashKeyBytes     = 32
	maxHashIteration = 10_000_000
)

// ErrPasswordMismatch: the password does not match the stored hash.
var ErrPasswordMismatch = errors.New("auth: password does not match")

var b64 = base64.RawStdEncoding

// HashPassword returns the encoded hash of password with a fresh salt.
func HashPassword(password string) (string, error) {
	salt := make([]byte, hashSaltBytes)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key, err := pbkdf2.Key(sha256.New, password, salt, hashIterations, hashKeyBytes)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s$%d$%s$%s", hashScheme, hashIterations, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// VerifyPassword checks password against an encoded hash made by
// HashPassword. It returns ErrPasswordMismatch for a wrong password and
// another error for a hash it cannot read.
func VerifyPassword(encoded, password string) error {
	parts := strings.Split(encoded, "$")
	if len(parts) != 4 || parts[0] != hashScheme {
		return errors.New("auth: unknown password hash format")
	}
	iterations, err := strconv.Atoi(parts[1])
	if err != nil || iterations < 1 || iterations > maxHashIteration {
		return fmt.Errorf("auth: bad iteration count %q", parts[1])
	}
	salt, err := b64.DecodeString(parts[2])
	if err != nil {
		return fmt.Errorf("auth: bad salt: %w", err)
	}
	want, err := b64.DecodeString(parts[3])
	if err != nil || len(want) == 0 {
		return errors.New("auth: bad key in password hash")
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, iterations, len(want))
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return ErrPasswordMismatch
	}
	return nil
}
