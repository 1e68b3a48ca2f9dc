//go:build unix

package workspace

import "syscall"

// mkfifo makes a named pipe at p.
func mkfifo(p string) error { return syscall.Mkfifo(p, 0o600) }

// mkzero makes a character device like /dev/zero at p (needs privileges).
func mkzero(p string) error {
	return syscall.Mknod(p, syscall.S_IFCHR|0o644, int(uint64(1)<<8|5))
}
