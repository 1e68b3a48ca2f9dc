// Package shadow implements shadow scoring: the sealed envelope and its
// canonical hash, the LLM seal author and judge, the Shadow Score and its
// levels, spec-conformant reports (Shadow Score Spec v2.0.0 and v1.0.0),
// hardening with velocity, the Shadow Gate, and the spec-compatible
// validator behind `swarm shadow score`.
package shadow

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/swarm-dev/swarm/internal/redact"
	"github.com/swarm-dev/swarm/internal/safeio"
)

// Spec categories. Config may add more; reports map extra ones to "unknown".
var SpecCategories = []string{"happy_path", "edge_case", "error_handling", "security"}

// ErrTampered means a stored envelope no longer matches its committed hash.
var ErrTampered = errors.New("sealed envelope hash mismatch")

// Criterion is one sealed acceptance criterion.
type Criterion struct {
	ID        string `json:"id" jsonschema:"pattern=^sc-[0-9]{2\\,}$" jsonschema_description:"The criterion's id: sc- and a number of at least two digits, in order (sc-01, sc-02, ...)."`
	Category  string `json:"category" jsonschema:"minLength=1" jsonschema_description:"One of the categories on the Categories line (e.g. happy_path, edge_case, error_handling, security)."`
	Assertion string `json:"assertion" jsonschema:"minLength=1" jsonschema_description:"A binary check: one statement a reader can decide pass or fail from the deliverable alone, naming the concrete thing that must be present with its key term in double quotes. At least 20 characters; no vague wording such as high quality, robust enough or as appropriate."`
	Expected  string `json:"expected" jsonschema:"minLength=1" jsonschema_description:"What a passing deliverable contains on this point."`
	// Check names the mechanical check (one of Checks) that code evaluates
	// for this criterion instead of the judge; empty for a criterion the
	// judge decides. It is set by code, never by the seal author (it is not
	// part of the seal author's schema), and omitted when empty, so an
	// envelope without mechanical checks hashes as it always has.
	Check string `json:"check,omitempty" jsonschema:"-"`
}

// SchemaDescription implements providers.Described.
func (Criterion) SchemaDescription() string {
	return "One sealed acceptance criterion: a binary pass/fail check of a deliverable."
}

// SealAuthor is the provenance of the criteria.
type SealAuthor struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Family   string `json:"family"`
}

// Envelope holds the sealed criteria. Its default formatting and its JSON
// encoding redact the criteria (only hashes, count and provenance show), so
// passing an Envelope to a logger, an event or a prompt cannot leak them.
// The full sealed form is written only by WriteSealed.
type Envelope struct {
	GeneratedAt   time.Time
	TaskHash      string
	SealedHash    string
	CriteriaCount int
	SealAuthor    SealAuthor
	criteria      []Criterion
}

type redacted struct {
	GeneratedAt   time.Time  `json:"generated_at"`
	TaskHash      string     `json:"task_hash"`
	SealedHash    string     `json:"sealed_hash"`
	CriteriaCount int        `json:"criteria_count"`
	SealAuthor    SealAuthor `json:"seal_author"`
	Criteria      string     `json:"criteria"`
}

func (e *Envelope) redacted() redacted {
	return redacted{e.GeneratedAt, e.TaskHash, e.SealedHash, e.CriteriaCount, e.SealAuthor, "[sealed]"}
}

// MarshalJSON redacts the criteria.
func (e *Envelope) MarshalJSON() ([]byte, error) { return json.Marshal(e.redacted()) }

// String redacts the criteria.
func (e *Envelope) String() string {
	return fmt.Sprintf("Envelope{sealed_hash=%s task_hash=%s criteria=%d [sealed]}", e.SealedHash, e.TaskHash, e.CriteriaCount)
}

// GoString redacts the criteria (for %#v).
func (e *Envelope) GoString() string { return e.String() }

// Format redacts the criteria for every verb.
func (e *Envelope) Format(f fmt.State, verb rune) { fmt.Fprint(f, e.String()) }

// sealedCriteria returns a copy of the criteria, for the judge only: it is
// unexported so that no package outside shadow can read a criterion's text.
func (e *Envelope) sealedCriteria() []Criterion { return append([]Criterion(nil), e.criteria...) }

// Mechanical is the number of the envelope's criteria that code evaluates
// (mechanical checks); the judge decides the others.
func (e *Envelope) Mechanical() int {
	n := 0
	for _, c := range e.criteria {
		if c.Check != "" {
			n++
		}
	}
	return n
}

// Categories maps each criterion's id to its category: what a comparison
// needs to count failures per category, without any criterion's text.
func (e *Envelope) Categories() map[string]string {
	out := make(map[string]string, len(e.criteria))
	for _, c := range e.criteria {
		out[c.ID] = c.Category
	}
	return out
}

// NewEnvelope seals criteria: removes any secret from their text
// (internal/redact), sorts them by id and commits their hash.
func NewEnvelope(criteria []Criterion, decomposition any, author SealAuthor, now time.Time) (*Envelope, error) {
	cs := append([]Criterion(nil), criteria...)
	// Secrets out before the hash commits to the text: an envelope is never
	// rewritten after sealing (that would break its hash), so a credential
	// the seal author echoed must not get in at all.
	for i := range cs {
		cs[i].Category, cs[i].Assertion, cs[i].Expected = redact.String(cs[i].Category), redact.String(cs[i].Assertion), redact.String(cs[i].Expected)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
	sh, err := HashCriteria(cs)
	if err != nil {
		return nil, err
	}
	th, err := Hash(decomposition)
	if err != nil {
		return nil, err
	}
	return &Envelope{GeneratedAt: now.UTC(), TaskHash: th, SealedHash: sh, CriteriaCount: len(cs), SealAuthor: author, criteria: cs}, nil
}

// Hash is "sha256:" + hex SHA-256 of the RFC 8785 canonical JSON of v.
func Hash(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return HashJSON(b)
}

// HashJSON hashes a JSON document after RFC 8785 canonicalisation.
func HashJSON(doc []byte) (string, error) {
	c, err := jcs.Transform(doc)
	if err != nil {
		return "", fmt.Errorf("canonicalise: %w", err)
	}
	sum := sha256.Sum256(c)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// HashCriteria hashes criteria ordered by id.
func HashCriteria(cs []Criterion) (string, error) {
	s := append([]Criterion(nil), cs...)
	sort.Slice(s, func(i, j int) bool { return s[i].ID < s[j].ID })
	return Hash(s)
}

// Verify recomputes the hash of the criteria and compares it with the
// committed one. A criterion naming a mechanical check swarm does not know
// cannot be evaluated, so it fails verification too (ErrUnknownCheck).
func (e *Envelope) Verify() error {
	for _, c := range e.criteria {
		if c.Check != "" && !KnownCheck(c.Check) {
			return fmt.Errorf("%w: %s names check %q (known: %s)", ErrUnknownCheck, c.ID, c.Check, strings.Join(Checks, ", "))
		}
	}
	h, err := HashCriteria(e.criteria)
	if err != nil {
		return err
	}
	if h != e.SealedHash {
		return fmt.Errorf("%w: criteria hash to %s, envelope commits %s", ErrTampered, h, e.SealedHash)
	}
	if len(e.criteria) != e.CriteriaCount {
		return fmt.Errorf("%w: %d criteria, envelope commits %d", ErrTampered, len(e.criteria), e.CriteriaCount)
	}
	return nil
}

// sealedFile is the on-disk form of an envelope.
type sealedFile struct {
	GeneratedAt   time.Time   `json:"generated_at"`
	TaskHash      string      `json:"task_hash"`
	SealedHash    string      `json:"sealed_hash"`
	CriteriaCount int         `json:"criteria_count"`
	SealAuthor    SealAuthor  `json:"seal_author"`
	Criteria      []Criterion `json:"criteria"`
}

// WriteSealed writes the full envelope (criteria included) with mode 0600.
func WriteSealed(path string, e *Envelope) error {
	b, err := json.MarshalIndent(sealedFile{e.GeneratedAt, e.TaskHash, e.SealedHash, e.CriteriaCount, e.SealAuthor, e.criteria}, "", "  ")
	if err != nil {
		return err
	}
	// Atomically: a crash while writing leaves the previous file (or none),
	// never a torn envelope that no later run could read.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".envelope-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append(b, '\n'))
	if werr == nil {
		werr = tmp.Chmod(0o600)
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

// MaxEnvelopeBytes bounds a sealed envelope read back (LoadSealed): a run
// writes far less; a file handed to us may hold anything.
const MaxEnvelopeBytes = 64 << 20

// LoadSealed reads an envelope written by WriteSealed: a regular file of at
// most MaxEnvelopeBytes (never a FIFO or a device). It does not verify
// the hash: call Verify.
func LoadSealed(path string) (*Envelope, error) {
	b, err := safeio.ReadFile(path, MaxEnvelopeBytes)
	if err != nil {
		return nil, err
	}
	return ParseSealed(path, b)
}

// ParseSealed is LoadSealed for the bytes b of the envelope read from path
// (named in errors): a caller that keeps the bytes parses the very ones it
// read, not a second read of a file that may have changed since.
func ParseSealed(path string, b []byte) (*Envelope, error) {
	var f sealedFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: not a sealed envelope: %w", path, err)
	}
	if f.SealedHash == "" {
		return nil, fmt.Errorf("%s: not a sealed envelope: no sealed_hash", path)
	}
	return &Envelope{GeneratedAt: f.GeneratedAt, TaskHash: f.TaskHash, SealedHash: f.SealedHash, CriteriaCount: f.CriteriaCount, SealAuthor: f.SealAuthor, criteria: f.Criteria}, nil
}

// VerifyTaskHash recomputes the task hash of a stored decomposition (the
// JSON document the run wrote as decomposition.json) and compares it with
// the committed one.
func VerifyTaskHash(decomposition []byte, committed string) error {
	h, err := HashJSON(decomposition)
	if err != nil {
		return fmt.Errorf("%w: decomposition is not the JSON document that was sealed: %v", ErrTampered, err)
	}
	if h != committed {
		return fmt.Errorf("%w: decomposition hashes to %s, task_hash committed %s", ErrTampered, h, committed)
	}
	return nil
}
