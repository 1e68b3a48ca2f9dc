//go:build !unix

package workspace

import "errors"

func mkfifo(string) error { return errors.New("named pipes are not supported here") }

func mkzero(string) error { return errors.New("devices are not supported here") }
