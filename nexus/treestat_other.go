//go:build !linux

package nexus

import "io/fs"

// sysStatKey: no change time or inode outside Linux; size and modification
// time fingerprint the file.
func sysStatKey(fs.FileInfo) string { return "" }
