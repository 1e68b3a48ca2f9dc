package nexus

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/swarm-dev/swarm/internal/rundir"
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
		return fmt.Errorf("%w: cannot read the run's commitment: %v", shadow.ErrTampered, err)
	case !ok:
		return fmt.Errorf("%w: events.jsonl records no sealed hash", shadow.ErrTampered)
	case sealed != env.SealedHash:
		return fmt.Errorf("%w: envelope commits %s, the run's events committed %s", shadow.ErrTampered, env.SealedHash, sealed)
	case task == "" || task != env.TaskHash:
		return fmt.Errorf("%w: envelope task_hash %s, the run's events committed %q", shadow.ErrTampered, env.TaskHash, task)
	}
	dec, err := os.ReadFile(d.Join("decomposition.json"))
	if err != nil {
		return fmt.Errorf("%w: cannot read decomposition.json: %v", shadow.ErrTampered, err)
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
		b, err := os.ReadFile(f)
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
