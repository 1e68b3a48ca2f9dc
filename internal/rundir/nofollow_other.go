//go:build !unix

package rundir

// oNoFollow: Windows and Plan 9 have no O_NOFOLLOW; OpenLog's Lstat checks
// refuse a symbolic link there.
const oNoFollow = 0
