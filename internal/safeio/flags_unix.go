//go:build unix

package safeio

import (
	"os"
	"syscall"
)

const (
	oNonBlock = syscall.O_NONBLOCK
	oNoFollow = syscall.O_NOFOLLOW
)

// clearNonBlock puts a regular file opened with O_NONBLOCK back in blocking
// mode (a no-op for regular files on Linux, but the file's later users
// should not see a flag they did not ask for).
func clearNonBlock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
