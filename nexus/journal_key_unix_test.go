//go:build unix

package nexus

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/swarm-dev/swarm/internal/safeio"
)

// The journal key: made on first use (0600 in a 0700 directory), the same
// key afterwards, and refused when others may read it or when it is not a
// regular file.
func TestJournalKeyFile(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	dir := filepath.Join(t.TempDir(), "cfg", "swarm")
	path := filepath.Join(dir, "journal.key")
	t.Setenv(EnvJournalKeyFile, path)
	if _, err := loadJournalKey(false); !errors.Is(err, ErrJournalKey) || !strings.Contains(err.Error(), "no journal key at "+path) {
		t.Fatalf("verify without a key: %v; want ErrJournalKey naming %s", err, path)
	}
	k, err := loadJournalKey(true)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	if di, err := os.Stat(dir); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("key directory: %v, %v; want mode 0700", di, err)
	}
	k2, err := loadJournalKey(true)
	if err != nil || string(k2.key) != string(k.key) || len(k.key) != journalKeyBytes {
		t.Fatalf("second load: %v; want the same %d-byte key", err, journalKeyBytes)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadJournalKey(true); !errors.Is(err, ErrJournalKey) || !strings.Contains(err.Error(), "mode 0644") {
		t.Errorf("a key others may read: %v; want ErrJournalKey naming the mode", err)
	}

	fifo := filepath.Join(t.TempDir(), "journal.key")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvJournalKeyFile, fifo)
	if _, err := loadJournalKey(true); !errors.Is(err, ErrJournalKey) || !errors.Is(err, safeio.ErrNotRegular) {
		t.Errorf("a FIFO key: %v; want ErrJournalKey, not a regular file", err)
	}

	link := filepath.Join(t.TempDir(), "journal.key")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvJournalKeyFile, link)
	if _, err := loadJournalKey(true); !errors.Is(err, ErrJournalKey) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a symbolic link as key: %v; want ErrJournalKey", err)
	}
}
