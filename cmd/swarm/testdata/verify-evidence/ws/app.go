package app

// Check compares two tokens.
func Check(a, b string) bool {
	return a == b
}
