//go:build linux

package nexus

import (
	"fmt"
	"io/fs"
	"syscall"
)

// sysStatKey is the change time and inode of fi.
func sysStatKey(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d.%d\x00%d", st.Ctim.Sec, st.Ctim.Nsec, st.Ino)
}
