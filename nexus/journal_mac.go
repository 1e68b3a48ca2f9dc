package nexus

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/swarm-dev/swarm/internal/safeio"
)

// The journal is tamper-evident: every record ends with a MAC
// (HMAC-SHA256) under a key of the user's, kept outside run directories,
// over the record's exact bytes, the run id and the MAC of the record
// before it. Editing, deleting, reordering or inserting a record, or
// copying records from another run, breaks the chain; only someone holding
// the key (the same user account) can write a record that verifies. See
// docs/security.md ("Run directories handed to you").

// EnvJournalKeyFile names the journal key file instead of the default
// (os.UserConfigDir()/swarm/journal.key): tests and CI point it at a
// temporary file.
const EnvJournalKeyFile = "SWARM_JOURNAL_KEY_FILE"

// ErrJournalTampered marks a journal record whose MAC does not verify (it
// also wraps ErrJournal).
var ErrJournalTampered = errors.New("journal record fails verification")

// ErrJournalUnsigned marks a journal written before journal MACs (records
// without a MAC), refused unless the user trusts it explicitly
// (ResumeOptions.TrustUnsignedJournal, --trust-unsigned-journal).
var ErrJournalUnsigned = errors.New("journal records carry no MAC")

// ErrJournalKey marks a journal key that cannot be used (looser
// permissions than 0600, not a regular file, not the right length).
var ErrJournalKey = errors.New("journal key unusable")

const (
	journalKeyBytes = 32
	// journalMACField ends every signed line: `,"mac":"<64 hex>"}`.
	journalMACField = `,"mac":"`
	journalMACHex   = 2 * sha256.Size
	journalMACTail  = len(journalMACField) + journalMACHex + 2 // + `"}`
	// journalMACDomain separates the journal's MACs from any other use of
	// the key.
	journalMACDomain = "swarm journal v1\n"
)

// journalKeyPath is where the user's journal key lives: $SWARM_JOURNAL_KEY_FILE,
// else os.UserConfigDir()/swarm/journal.key.
func journalKeyPath() (string, error) {
	if p := os.Getenv(EnvJournalKeyFile); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("%w: no place for the journal key (%v): set %s to a file only you can read", ErrJournalKey, err, EnvJournalKeyFile)
	}
	return filepath.Join(dir, "swarm", "journal.key"), nil
}

// journalKey is the key and where it came from (named in errors).
type journalKey struct {
	path string
	key  []byte
}

// loadJournalKey reads the user's journal key; with create, a missing key
// is made (32 random bytes, hex, mode 0600, in a directory created 0700).
// A key file that is not a regular file, is a symbolic link, or that
// others may read or write is refused.
func loadJournalKey(create bool) (*journalKey, error) {
	path, err := journalKeyPath()
	if err != nil {
		return nil, err
	}
	return loadJournalKeyAt(path, create)
}

// loadJournalKeyAt is loadJournalKey for the key at path.
func loadJournalKeyAt(path string, create bool) (*journalKey, error) {
	k, err := readJournalKey(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("%w: create %s: %w", ErrJournalKey, filepath.Dir(path), err)
		}
		raw := make([]byte, journalKeyBytes)
		if _, err := rand.Read(raw); err != nil {
			return nil, err
		}
		if err := publishJournalKey(path, raw); err != nil {
			return nil, err
		}
		k, err = readJournalKey(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no journal key at %s (it is made by the first run of this user; set %s to use another file)", ErrJournalKey, path, EnvJournalKeyFile)
	}
	return k, err
}

// publishJournalKey makes the key file at path hold raw, unless another
// process made it first (then theirs stays, and is the one read). The key
// is written whole to a temporary file beside path (mode 0600), synced,
// then linked to path: a reader sees no file or a complete one, never the
// empty or partial file an in-place write would show it.
func publishJournalKey(path string, raw []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".journal.key-*")
	if err != nil {
		return fmt.Errorf("%w: create a key beside %s: %w", ErrJournalKey, path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, werr := f.WriteString(hex.EncodeToString(raw) + "\n")
	if serr := f.Sync(); werr == nil {
		werr = serr
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("%w: write %s: %w", ErrJournalKey, tmp, werr)
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: create %s: %w (set %s to a key file on another file system)", ErrJournalKey, path, err, EnvJournalKeyFile)
	}
	return nil
}

func readJournalKey(path string) (*journalKey, error) {
	f, fi, err := safeio.Open(path, true)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s: %w (it must be a regular file, not a link, readable by you alone)", ErrJournalKey, path, err)
	}
	defer f.Close()
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o: it must be readable and writable by you alone (chmod 600 %s)", ErrJournalKey, path, fi.Mode().Perm(), path)
	}
	b := make([]byte, 4*journalKeyBytes)
	n, _ := f.Read(b)
	raw, err := hex.DecodeString(strings.TrimSpace(string(b[:n])))
	if err != nil || len(raw) != journalKeyBytes {
		return nil, fmt.Errorf("%w: %s does not hold a journal key (%d hex digits); remove it to make a new one (journals signed with it will no longer verify)", ErrJournalKey, path, 2*journalKeyBytes)
	}
	return &journalKey{path: path, key: raw}, nil
}

// mac is the MAC of a record's bytes (body, the line without its MAC
// field) in run runID after the record whose MAC is prev ("" for the
// first).
func (k *journalKey) mac(runID, prev string, body []byte) string {
	h := hmac.New(sha256.New, k.key)
	h.Write([]byte(journalMACDomain))
	fmt.Fprintf(h, "%d:%s\n%s\n", len(runID), runID, prev)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// sign appends the MAC field to a record's JSON object body.
func (k *journalKey) sign(runID, prev string, body []byte) (line []byte, mac string) {
	mac = k.mac(runID, prev, body)
	line = make([]byte, 0, len(body)+journalMACTail+1)
	line = append(line, body[:len(body)-1]...)
	line = append(line, journalMACField...)
	line = append(line, mac...)
	line = append(line, '"', '}')
	return line, mac
}

// splitMAC splits a journal line into the body the MAC covers and the MAC;
// ok is false when the line does not end with a MAC field.
func splitMAC(line []byte) (body []byte, mac string, ok bool) {
	if len(line) < journalMACTail+2 || !bytes.HasSuffix(line, []byte(`"}`)) {
		return nil, "", false
	}
	tail := line[len(line)-journalMACTail:]
	if !bytes.HasPrefix(tail, []byte(journalMACField)) {
		return nil, "", false
	}
	mac = string(tail[len(journalMACField) : len(journalMACField)+journalMACHex])
	if _, err := hex.DecodeString(mac); err != nil {
		return nil, "", false
	}
	body = append(append(make([]byte, 0, len(line)-journalMACTail+1), line[:len(line)-journalMACTail]...), '}')
	return body, mac, true
}

// journalVerifier checks the chain of a journal's records as they are
// read. A nil key checks nothing (a journal read for its records only).
type journalVerifier struct {
	key   *journalKey
	runID string
	// trustUnsigned accepts records without a MAC before the first signed
	// one (a journal written before journal MACs, resumed on the user's
	// word).
	trustUnsigned bool

	prev     string // the last good record's MAC
	signed   int
	unsigned int
}

// check verifies one record (line, without its newline) at line number n
// of the file name.
func (v *journalVerifier) check(name string, n int, seq int64, line []byte) error {
	if v == nil || v.key == nil {
		return nil
	}
	where := fmt.Sprintf("%s line %d (seq %d)", name, n, seq)
	body, mac, ok := splitMAC(line)
	if !ok {
		if v.signed > 0 {
			return fmt.Errorf("%w: %w: %s has no MAC, after signed records: a record was inserted or changed", ErrJournal, ErrJournalTampered, where)
		}
		if !v.trustUnsigned {
			return fmt.Errorf("%w: %w: %s has no MAC: the journal was written by a swarm from before journal MACs, or its MACs were removed; "+
				"resume it only if you trust where the directory came from, with --trust-unsigned-journal", ErrJournal, ErrJournalUnsigned, where)
		}
		v.unsigned++
		return nil
	}
	if want := v.key.mac(v.runID, v.prev, body); !hmac.Equal([]byte(want), []byte(mac)) {
		return fmt.Errorf("%w: %w: %s: its MAC does not verify under your journal key (%s): the record was edited, moved, inserted or "+
			"follows a deleted one, or the run was written by another user (whose key this is not)", ErrJournal, ErrJournalTampered, where, v.key.path)
	}
	v.prev = mac
	v.signed++
	return nil
}
