// Package safeio reads files that someone else may have put in our way: a
// workspace's ignore files, a run directory handed to us, a previous run's
// result. Every read checks that the file is a regular file before reading
// it (a FIFO would block the reader forever, a device would never end) and
// reads at most a stated number of bytes (a 3 GB file must not cost 3 GB).
package safeio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular marks a path that exists but is not a regular file (a FIFO,
// a device, a socket, a directory).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge marks a file over the bound its reader gave.
var ErrTooLarge = errors.New("file too large")

// SizeError is returned (wrapping ErrTooLarge) when a file is over the
// bound.
type SizeError struct {
	Path string
	Size int64 // bytes the file holds (at least Max+1 when it grew while read)
	Max  int64
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("%s: %d bytes, over the limit of %d", e.Path, e.Size, e.Max)
}

func (e *SizeError) Unwrap() error { return ErrTooLarge }

// Open opens path for reading without blocking on a FIFO and without
// following a symbolic link in its last element when nofollow is set, and
// refuses anything but a regular file (ErrNotRegular, naming path). The
// returned file reads normally.
func Open(path string, nofollow bool) (*os.File, os.FileInfo, error) {
	flags := os.O_RDONLY | oNonBlock
	if nofollow {
		flags |= oNoFollow
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := checkRegular(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// OpenRoot is Open for a name inside root (os.Root never follows a link
// out of its directory).
func OpenRoot(root *os.Root, name string) (*os.File, os.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|oNonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := checkRegular(f, name)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

func checkRegular(f *os.File, name string) (os.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	if err := clearNonBlock(f); err != nil {
		return nil, err
	}
	return fi, nil
}

// ReadFile reads the regular file at path, refusing one of more than max
// bytes (a *SizeError) and anything that is not a regular file.
func ReadFile(path string, max int64) ([]byte, error) {
	f, fi, err := Open(path, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, path, fi.Size(), max)
}

// ReadFileNoFollow is ReadFile refusing a symbolic link as the last element
// of path.
func ReadFileNoFollow(path string, max int64) ([]byte, error) {
	f, fi, err := Open(path, true)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, path, fi.Size(), max)
}

// ReadFileRoot is ReadFile for a name inside root.
func ReadFileRoot(root *os.Root, name string, max int64) ([]byte, error) {
	f, fi, err := OpenRoot(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, name, fi.Size(), max)
}

func readBounded(r io.Reader, name string, size, max int64) ([]byte, error) {
	if size > max {
		return nil, &SizeError{Path: name, Size: size, Max: max}
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &SizeError{Path: name, Size: int64(len(b)), Max: max}
	}
	return b, nil
}
