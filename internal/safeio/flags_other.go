//go:build !unix

package safeio

import "os"

const (
	oNonBlock = 0
	oNoFollow = 0
)

func clearNonBlock(*os.File) error { return nil }
