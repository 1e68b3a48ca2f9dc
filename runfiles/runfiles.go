package runfiles

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/internal/safeio"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// The files and directories of a run directory (see docs/run-directory.md):
// every name a run writes, in one place.
const (
	// ManifestFile is run.json: what the run was started with (Manifest).
	ManifestFile = "run.json"
	// JournalFile is journal.jsonl: every answer the run got, for resume.
	JournalFile = "journal.jsonl"
	// AttemptsDir holds the record of each attempt of a resumed run.
	AttemptsDir = "attempts"
	// MissionFile is mission.md: the mission as the run read it.
	MissionFile = "mission.md"
	// EffectiveConfigFile is config.effective.yml: the configuration the
	// run used, secrets redacted.
	EffectiveConfigFile = "config.effective.yml"
	// EventsFile is events.jsonl: one events.Event per line.
	EventsFile = "events.jsonl"
	// TranscriptsFile is transcripts.jsonl: every prompt and answer.
	TranscriptsFile = "transcripts.jsonl"
	// DecompositionFile is decomposition.json, the plan the task hash covers.
	DecompositionFile = "decomposition.json"
	// CapsulesDir holds one context capsule per domain.
	CapsulesDir = "capsules"
	// BundlesDir holds one bundle per domain.
	BundlesDir = "bundles"
	// ReviewsDir holds the cross-review score cards.
	ReviewsDir = "reviews"
	// SealedDir holds the sealed envelope (EnvelopeFile), readable by its
	// owner only.
	SealedDir = "sealed"
	// EnvelopeFile is the sealed envelope's name in SealedDir.
	EnvelopeFile = "envelope.json"
	// ReportsDir holds the Shadow Reports (reports/*.json).
	ReportsDir = "reports"
	// ReplaysDir holds the replays of Phase 8.
	ReplaysDir = "replays"
	// EvidenceFile is evidence.json: every checked citation.
	EvidenceFile = "evidence.json"
	// SandboxFile is sandbox.json: the sandbox's report of the mission.
	SandboxFile = "sandbox.json"
	// ReportFile is report.md: the action report.
	ReportFile = "report.md"
	// TelemetryFile is telemetry.json (Telemetry).
	TelemetryFile = "telemetry.json"
	// ResultFile is result.json (Result).
	ResultFile = "result.json"
	// FindingsCSV is findings.csv: the findings, one row each.
	FindingsCSV = "findings.csv"
	// FindingsSARIF is findings.sarif: the findings for code-scanning tools.
	FindingsSARIF = "findings.sarif"
)

// Run statuses (result.json "status").
const (
	// StatusComplete: the run completed and every planned bundle was judged
	// with valid shadow scoring.
	StatusComplete = "complete"
	// StatusIncomplete: the run finished but judged fewer bundles than
	// planned (possibly none), or some bundle or verdict was degraded
	// (salvage after the recovery ladder).
	StatusIncomplete = "incomplete"
	// StatusPartial: the cost ceiling stopped work; finished work was kept
	// (bundles built from finished atoms are marked salvaged).
	StatusPartial = "partial"
	// StatusInvalid: shadow scoring is invalid (the commitment hash did not
	// match: tampering), so nothing was judged.
	StatusInvalid = "invalid"
	// StatusFailed: the run failed (Result.Error, FailureClass and Phase say
	// how and where).
	StatusFailed = "failed"
	// StatusInterrupted: the run was cancelled (Ctrl-C).
	StatusInterrupted = "interrupted"
	// StatusSealed: the mission was sealed and closed without running
	// (Mission.Seal, then Mission.Close).
	StatusSealed = "sealed"
)

// Manifest is run.json: what a run was started with, so that --resume can
// start it again the same way and refuse when something changed.
type Manifest struct {
	SwarmVersion string `json:"swarm_version"`
	RunID        string `json:"run_id"`
	// Attempts is how many times the run was started (1, then one more per
	// resume).
	Attempts int `json:"attempts"`

	Mission ManifestMission `json:"mission"`
	Config  ManifestConfig  `json:"config"`

	Provider    string              `json:"provider,omitempty"`
	Models      map[string][]string `json:"models,omitempty"`
	Fallbacks   map[string][]string `json:"fallbacks,omitempty"`
	Scale       string              `json:"scale,omitempty"`
	Personality string              `json:"personality,omitempty"`
	Seed        *int64              `json:"seed,omitempty"`
	Replays     int                 `json:"replays,omitempty"`
	FileScope   []string            `json:"file_scope,omitempty"`

	Workspace   *ManifestWorkspace `json:"workspace,omitempty"`
	GroundTruth *ManifestFileHash  `json:"ground_truth,omitempty"`
	// FollowUp is the previous run directory of a follow-up run (issue 12
	// part D: Options.FollowUp); empty otherwise.
	FollowUp string `json:"follow_up,omitempty"`
}

// ManifestMission is the mission a run was started with: its file (Path,
// absolute) or, for a mission from stdin or --mission, its Text; and the
// SHA-256 of the text as given (front matter included).
type ManifestMission struct {
	Path   string `json:"path,omitempty"`
	Text   string `json:"text,omitempty"`
	Name   string `json:"name"`
	Dir    string `json:"dir,omitempty"` // front matter paths are relative to it
	SHA256 string `json:"sha256"`
}

// ManifestConfig is the configuration: its file (absolute path, "" for the
// embedded config.yml) and file hash, the SHA-256 of the effective
// configuration (config.effective.yml) and the Shadow Score Spec version
// (--spec overrides the file's, so resume applies it again).
type ManifestConfig struct {
	Path            string `json:"path,omitempty"`
	FileSHA256      string `json:"file_sha256,omitempty"`
	EffectiveSHA256 string `json:"effective_sha256"`
	Spec            string `json:"spec,omitempty"`
}

// ManifestWorkspace is the workspace: its directory, its fingerprint when
// the run opened (git HEAD and dirty state when it is a checkout) and the
// fingerprint of every file in it (treeHash): TreeHash covers the first
// maxTreeWalk files, by content while they stay within maxTreeFiles files
// and maxTreeBytes bytes (and a file within maxTreeFileBytes), by size,
// times and inode beyond (TreeByStat counts those); TreeTruncated says
// there were more files than it covers, so a change cannot be ruled out.
type ManifestWorkspace struct {
	Dir           string                `json:"dir"`
	Fingerprint   workspace.Fingerprint `json:"fingerprint"`
	TreeHash      string                `json:"tree_hash,omitempty"`
	TreeFiles     int                   `json:"tree_files"`
	TreeByStat    int                   `json:"tree_by_stat,omitempty"`
	TreeTruncated bool                  `json:"tree_truncated,omitempty"`
}

// ManifestFileHash is a file and the SHA-256 of its content.
type ManifestFileHash struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// ReadManifest reads a run directory's run.json.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	b, err := rundir.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return nil, fmt.Errorf("%w: --resume %s: %w", config.ErrBadInput, dir, serr)
		}
		return nil, fmt.Errorf("%w: --resume %s: no %s: not a run directory, or one written by a swarm without resume", config.ErrBadInput, dir, ManifestFile)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", config.ErrBadInput, err)
	}
	var mf Manifest
	if err := json.Unmarshal(b, &mf); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", config.ErrBadInput, path, err)
	}
	if mf.Attempts < 1 || mf.Mission.SHA256 == "" {
		return nil, fmt.Errorf("%w: %s: not a run manifest (no attempts or mission hash)", config.ErrBadInput, path)
	}
	return &mf, nil
}

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

// CommittedHashes returns the sealed hash and the task hash (of the
// decomposition) that a run recorded in its events (the "sealed" event of
// Phase 1.5, written before any commander started). ok is false when the
// run directory has no such event.
func CommittedHashes(runDir string) (sealed, task string, ok bool, err error) {
	f, _, err := safeio.Open(filepath.Join(runDir, "events.jsonl"), true)
	if err != nil {
		return "", "", false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		var e events.Event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Kind != events.Sealed {
			continue
		}
		if d, _ := e.Data.(events.SealedData); d.SealedHash != "" {
			return d.SealedHash, d.TaskHash, true, nil
		}
	}
	return "", "", false, sc.Err()
}
