package nexus

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/internal/safeio"
	"github.com/swarm-dev/swarm/shadow"
)

// This file reads a finished run directory: what `swarm shadow verify` and
// `swarm shadow report` check and print.

// ErrNoReports is returned by ReadReports for a directory without
// reports/*.json.
var ErrNoReports = errors.New("no reports (is it a run directory?)")

// VerifyCommitment checks an envelope against what the run directory
// committed: the hashes recorded in events.jsonl before any commander
// started, and the decomposition the task hash was computed over. A file
// the check needs that is missing or unreadable fails the check (what
// cannot be verified is not valid). Every error wraps shadow.ErrTampered.
func VerifyCommitment(runDir string, env *shadow.Envelope) error {
	d := rundir.Dir{Path: runDir}
	sealed, task, ok, err := CommittedHashes(d.Path)
	switch {
	case err != nil:
		return fmt.Errorf("%w: cannot read the run's commitment: %w", shadow.ErrTampered, err)
	case !ok:
		return fmt.Errorf("%w: events.jsonl records no sealed hash", shadow.ErrTampered)
	case sealed != env.SealedHash:
		return fmt.Errorf("%w: envelope commits %s, the run's events committed %s", shadow.ErrTampered, env.SealedHash, sealed)
	case task == "" || task != env.TaskHash:
		return fmt.Errorf("%w: envelope task_hash %s, the run's events committed %q", shadow.ErrTampered, env.TaskHash, task)
	}
	dec, err := rundir.ReadFile(d.Join("decomposition.json"))
	if err != nil {
		return fmt.Errorf("%w: cannot read decomposition.json: %w", shadow.ErrTampered, err)
	}
	if err := shadow.VerifyTaskHash(dec, task); err != nil {
		return fmt.Errorf("decomposition.json: %w", err)
	}
	return nil
}

// EnvelopePath is where a run directory keeps its sealed envelope.
func EnvelopePath(runDir string) string { return rundir.Dir{Path: runDir}.EnvelopePath() }

// ReadReports reads the run's Shadow Reports (reports/*.json), ordered by file
// name. A directory without any is ErrNoReports (wrapped, naming the
// directory); a report that is not JSON names its file.
func ReadReports(runDir string) ([]shadow.Report, error) {
	d := rundir.Dir{Path: runDir}
	files, _ := filepath.Glob(d.Join("reports", "*.json"))
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: %w", d.Path, ErrNoReports)
	}
	sort.Strings(files)
	var all []shadow.Report
	for _, f := range files {
		b, err := rundir.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r shadow.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		all = append(all, r)
	}
	return all, nil
}

// runRecord is what a follow-up reads of an earlier run's result.json: how
// it ended, its Shadow Scores, its findings and its own predecessor.
type runRecord struct {
	Status string `json:"status"`
	Plan   struct {
		RunID string `json:"run_id"`
	} `json:"plan"`
	SealedHash  string           `json:"sealed_hash"`
	ShadowValid bool             `json:"shadow_valid"`
	Aggregate   *ShadowAggregate `json:"shadow_aggregate"`
	Bundles     []recordBundle   `json:"bundles"`
	FollowUp    *FollowUp        `json:"follow_up"`
}

// recordBundle is a bundle of result.json as a follow-up reads it.
type recordBundle struct {
	ID     string `json:"id"`
	Failed bool   `json:"failed"`
	Bundle struct {
		Findings []recordFinding `json:"findings"`
	} `json:"bundle"`
}

type recordFinding struct {
	Title    string `json:"title"`
	Priority string `json:"priority"`
}

// runStatuses are the statuses result.json may hold.
var runStatuses = []string{StatusComplete, StatusIncomplete, StatusPartial, StatusInvalid, StatusFailed, StatusInterrupted, StatusSealed}

// readRunRecord reads and checks dir/result.json. Its errors name the file
// and the field at fault.
func readRunRecord(dir string) (*runRecord, error) {
	path := filepath.Join(dir, "result.json")
	b, err := rundir.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec runRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: not a run's result: %w", path, err)
	}
	if !slices.Contains(runStatuses, rec.Status) {
		return nil, fmt.Errorf("%s: status %q is not a run status (%s)", path, rec.Status, strings.Join(runStatuses, ", "))
	}
	if strings.TrimSpace(rec.Plan.RunID) == "" {
		return nil, fmt.Errorf("%s: plan.run_id is empty", path)
	}
	if a := rec.Aggregate; a != nil {
		for _, f := range []struct {
			name string
			v    *float64
		}{{"shadow_aggregate.median", a.Median}, {"shadow_aggregate.mean", a.Mean}} {
			if f.v != nil && (math.IsNaN(*f.v) || *f.v < 0 || *f.v > 100) {
				return nil, fmt.Errorf("%s: %s %v is not a Shadow Score (0 to 100)", path, f.name, *f.v)
			}
		}
		if a.Scored < 0 || a.Planned < 0 || a.Scored > a.Planned {
			return nil, fmt.Errorf("%s: shadow_aggregate scored %d of %d planned bundles", path, a.Scored, a.Planned)
		}
	}
	return &rec, nil
}

// JournalCheck is what VerifyJournal found in a run directory's journal.
type JournalCheck struct {
	Present  bool // the directory has a journal.jsonl
	Records  int  // records read, every one verified (or unsigned and trusted)
	Unsigned int  // records without a MAC, accepted because trustUnsigned
	Torn     bool // a torn last line (a crash mid-write) would be dropped on resume
}

// VerifyJournal checks every record of runDir's journal.jsonl against the
// user's journal key, in chain order, as a resume would: a record edited,
// moved, inserted or following a deleted one fails (ErrJournalTampered,
// naming file, line and seq), and so does a run written under another
// user's key. Records without a MAC (a journal from before journal MACs)
// fail with ErrJournalUnsigned unless trustUnsigned. A directory without a
// journal is not an error (Present false).
func VerifyJournal(runDir string, trustUnsigned bool) (JournalCheck, error) {
	var jc JournalCheck
	f, _, err := safeio.Open(filepath.Join(runDir, JournalFile), true)
	if errors.Is(err, fs.ErrNotExist) {
		return jc, nil
	}
	if err != nil {
		return jc, err
	}
	defer f.Close()
	jc.Present = true
	b, err := rundir.ReadFile(filepath.Join(runDir, ManifestFile))
	if err != nil {
		return jc, fmt.Errorf("%s: the journal's run id: %w", runDir, err)
	}
	var mf struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal(b, &mf); err != nil {
		return jc, fmt.Errorf("%s: %w", filepath.Join(runDir, ManifestFile), err)
	}
	key, err := loadJournalKey(false)
	if err != nil {
		return jc, err
	}
	v := &journalVerifier{key: key, runID: mf.RunID, trustUnsigned: trustUnsigned}
	_, n, torn, err := scanJournal(f, JournalFile, v, nil)
	if err != nil {
		return jc, err
	}
	jc.Records, jc.Unsigned, jc.Torn = n, v.unsigned, torn
	return jc, nil
}
