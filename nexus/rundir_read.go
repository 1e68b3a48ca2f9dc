package nexus

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/internal/safeio"
	"github.com/swarm-dev/swarm/runfiles"
)

// This file reads a finished run directory: what `swarm shadow verify` and
// `swarm shadow report` check and print.

// runRecord is what a follow-up reads of an earlier run's result.json: how
// it ended, its Shadow Scores, its findings and its own predecessor.
type runRecord struct {
	Status string `json:"status"`
	Plan   struct {
		RunID string `json:"run_id"`
	} `json:"plan"`
	SealedHash  string             `json:"sealed_hash"`
	ShadowValid bool               `json:"shadow_valid"`
	Aggregate   *ShadowAggregate   `json:"shadow_aggregate"`
	Bundles     []recordBundle     `json:"bundles"`
	FollowUp    *runfiles.FollowUp `json:"follow_up"`
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
var runStatuses = []string{runfiles.StatusComplete, runfiles.StatusIncomplete, runfiles.StatusPartial, runfiles.StatusInvalid, runfiles.StatusFailed, runfiles.StatusInterrupted, runfiles.StatusSealed}

// readRunRecord reads and checks dir/result.json. Its errors name the file
// and the field at fault.
func readRunRecord(dir string) (*runRecord, error) {
	path := filepath.Join(dir, runfiles.ResultFile)
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
	f, _, err := safeio.Open(filepath.Join(runDir, runfiles.JournalFile), true)
	if errors.Is(err, fs.ErrNotExist) {
		return jc, nil
	}
	if err != nil {
		return jc, err
	}
	defer f.Close()
	jc.Present = true
	b, err := rundir.ReadFile(filepath.Join(runDir, runfiles.ManifestFile))
	if err != nil {
		return jc, fmt.Errorf("%s: the journal's run id: %w", runDir, err)
	}
	var mf struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal(b, &mf); err != nil {
		return jc, fmt.Errorf("%s: %w", filepath.Join(runDir, runfiles.ManifestFile), err)
	}
	key, err := loadJournalKey(false)
	if err != nil {
		return jc, err
	}
	v := &journalVerifier{key: key, runID: mf.RunID, trustUnsigned: trustUnsigned}
	_, n, torn, err := scanJournal(f, runfiles.JournalFile, v, nil)
	if err != nil {
		return jc, err
	}
	jc.Records, jc.Unsigned, jc.Torn = n, v.unsigned, torn
	return jc, nil
}
