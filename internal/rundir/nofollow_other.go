//go:build !unix

package rundir

// oNoFollow: Windows and Plan 9 have no O_NOFOLLOW; OpenLog's Lstat checks
// refuse a symbolic link there.
const oNoFollow = 0

// syncDir: directories cannot be synced here; the rename is what there is.
func syncDir(string) error { return nil }
