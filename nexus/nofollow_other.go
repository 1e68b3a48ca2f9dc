//go:build !unix

package nexus

// oNoFollow: Windows and Plan 9 have no O_NOFOLLOW; openLog's Lstat checks
// refuse a symbolic link there.
const oNoFollow = 0
