// Package slug turns names into the lower-case, dash-separated form swarm
// uses in file and directory names.
package slug

import (
	"regexp"
	"strings"
)

var nonAlnum = regexp.MustCompile(`[^a-z0-9]+`)

// Make lower-cases s, replaces every run of characters other than a-z and
// 0-9 by one dash, and trims dashes at either end: "Auth Migration.md"
// becomes "auth-migration-md". It may return "".
func Make(s string) string {
	return strings.Trim(nonAlnum.ReplaceAllString(strings.ToLower(s), "-"), "-")
}
