package safeio

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	if err := os.WriteFile(reg, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		max        int64
		nofollow   bool
		want       string
		wantErr    error
	}{
		{name: "a regular file within the bound is read", path: reg, max: 5, want: "hello"},
		{name: "a regular file over the bound is refused", path: reg, max: 4, wantErr: ErrTooLarge},
		{name: "a FIFO is refused without blocking", path: fifo, max: 10, wantErr: ErrNotRegular},
		{name: "a directory is refused", path: dir, max: 10, wantErr: ErrNotRegular},
		{name: "a device is refused without reading forever", path: "/dev/zero", max: 10, wantErr: ErrNotRegular},
		{name: "a link is followed by default", path: link, max: 10, want: "hello"},
		{name: "a link is refused with nofollow", path: link, max: 10, nofollow: true, wantErr: syscall.ELOOP},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read := ReadFile
			if tc.nofollow {
				read = ReadFileNoFollow
			}
			b, err := read(tc.path, tc.max)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || string(b) != tc.want {
				t.Fatalf("got %q, %v; want %q", b, err, tc.want)
			}
		})
	}
}

func TestReadFileRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, ".gitignore"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if b, err := ReadFileRoot(root, "a", 3); err != nil || string(b) != "abc" {
		t.Fatalf("a: %q, %v", b, err)
	}
	if _, err := ReadFileRoot(root, ".gitignore", 3); !errors.Is(err, ErrNotRegular) {
		t.Fatalf(".gitignore FIFO: err = %v, want ErrNotRegular", err)
	}
	var se *SizeError
	if _, err := ReadFileRoot(root, "a", 2); !errors.As(err, &se) || se.Size != 3 || se.Max != 2 {
		t.Fatalf("over the bound: err = %v", err)
	}
}
