//go:build unix

package rundir

import (
	"errors"
	"os"
	"syscall"
)

// oNoFollow makes opening a symbolic link fail (ELOOP) instead of following it.
const oNoFollow = syscall.O_NOFOLLOW

// syncDir makes a rename in dir durable. A file system that cannot sync a
// directory (EINVAL) is not a failure to write.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: reason(err)}
	}
	err = f.Sync()
	cerr := f.Close()
	if err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return &os.PathError{Op: "sync", Path: dir, Err: reason(err)}
	}
	if cerr != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: reason(cerr)}
	}
	return nil
}
