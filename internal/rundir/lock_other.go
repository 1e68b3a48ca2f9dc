//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package rundir

import "os"

// flock: no flock(2) here (Windows, Plan 9, Solaris, AIX). The lock file
// still names the last process that took it, but two processes are not
// kept apart: docs/resume.md says so.
func flock(*os.File) (bool, error) { return false, nil }
