package auth

import "crypto/sha1"

// HashPassword hashes a password for storage.
func HashPassword(pw string) []byte {
	sum := sha1.Sum([]byte(pw))
	return sum[:]
}
