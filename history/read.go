package history

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/internal/safeio"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/workspace"
)

// Run is one run directory as the index records it. Pointer fields are
// absent (nil, NULL in the index) when the run did not measure them: no
// bundle judged (ShadowMedian), no workspace (Evidence*), no ground truth
// (Recall), no telemetry or no price for any model it used (CostUSD).
type Run struct {
	// Dir is the run directory relative to the runs directory,
	// slash-separated (the index's key).
	Dir string `json:"dir"`
	// ID is the run id of run.json (the directory's name when run.json is
	// missing or unreadable).
	ID string `json:"id"`
	// Started is when the run started (its first event; run.json's time
	// when events.jsonl has none); nil when unknown.
	Started *time.Time `json:"started"`
	// Mission is the mission's title (the intake's summary, or the mission
	// file's name); MissionFile the mission file's base name.
	Mission     string `json:"mission"`
	MissionFile string `json:"mission_file,omitempty"`
	// TaskHash is the hash of the decomposition the criteria were sealed
	// over: runs of the same mission share it.
	TaskHash string   `json:"task_hash,omitempty"`
	Scale    string   `json:"scale,omitempty"`
	Models   []string `json:"models"`
	// Status is result.json's status (runfiles.Status*), StatusUnfinished
	// without result.json, or StatusUnreadable when the directory could
	// not be read (Error says why).
	Status string `json:"status"`
	// Reason says why the run is not complete ("" when it is).
	Reason         string   `json:"reason,omitempty"`
	ShadowMedian   *float64 `json:"shadow_median"`
	BundlesPlanned *int     `json:"bundles_planned"`
	BundlesScored  *int     `json:"bundles_scored"`
	// Evidence counts the run's citations; nil without a workspace.
	EvidenceCited      *int `json:"evidence_cited"`
	EvidenceVerified   *int `json:"evidence_verified"`
	EvidenceFabricated *int `json:"evidence_fabricated"`
	// Recall is the share of planted defects found; nil without ground
	// truth.
	Recall *float64 `json:"recall"`
	// CostUSD is what the priced calls cost; CostPartial says some model
	// had no price, so it is a lower bound. nil when unknown (no
	// telemetry, or no call priced at all).
	CostUSD     *float64 `json:"cost_usd"`
	CostPartial bool     `json:"cost_partial,omitempty"`
	// DurationMS is the run's wall time (telemetry.json); nil when
	// unknown.
	DurationMS *int64 `json:"duration_ms"`
	// Compare is the compare directory (relative, slash-separated) the run
	// belongs to; "" for a run of its own.
	Compare string `json:"compare,omitempty"`
	// Error says what could not be read; "" when the directory read
	// cleanly.
	Error string `json:"error,omitempty"`

	// signature is the size and time of the files the row was read from:
	// a changed signature means the row is stale.
	signature string
}

// Statuses the index adds to runfiles' own.
const (
	// StatusUnfinished: run.json exists but result.json does not (the
	// run is still going, or stopped before it could write it).
	StatusUnfinished = "unfinished"
	// StatusUnreadable: the directory looks like a run but its files could
	// not be read (Run.Error says which and why).
	StatusUnreadable = "unreadable"
)

// resultFile is the part of result.json the index reads. result.json's Go
// type (nexus.Result) lives in the engine, which history never imports,
// so the fields are decoded here by their JSON names; the names are the
// run directory's contract (docs/run-directory in the README), and a test
// runs a real mission and reads it back.
type resultFile struct {
	Status           string `json:"status"`
	Error            string `json:"error"`
	FailureClass     string `json:"failure_class"`
	NoRecommendation string `json:"no_recommendation"`
	ShadowReason     string `json:"shadow_invalid_reason"`
	TaskHash         string `json:"task_hash"`
	Plan             struct {
		Mission string          `json:"mission"`
		Scale   string          `json:"scale"`
		Models  json.RawMessage `json:"models"`
	} `json:"plan"`
	Aggregate struct {
		Median  *float64 `json:"median"`
		Planned *int     `json:"planned"`
		Scored  *int     `json:"scored"`
	} `json:"shadow_aggregate"`
	Evidence    *workspace.Counts `json:"evidence"`
	GroundTruth *struct {
		Recall *float64 `json:"recall"`
	} `json:"ground_truth"`
	Telemetry *runfiles.Telemetry `json:"telemetry"`
}

// The files whose size and time make a row's signature: when any of them
// changes, the row is read again.
var signatureFiles = []string{runfiles.ManifestFile, runfiles.ResultFile, runfiles.TelemetryFile, runfiles.EventsFile}

// isRunDir reports whether dir holds a run: run.json, result.json or
// events.jsonl.
func isRunDir(dir string) bool {
	for _, f := range []string{runfiles.ManifestFile, runfiles.ResultFile, runfiles.EventsFile} {
		if fi, err := os.Lstat(filepath.Join(dir, f)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// signature is the size and modification time of dir's signature files.
func signature(dir string) string {
	var b strings.Builder
	for _, f := range signatureFiles {
		fi, err := os.Lstat(filepath.Join(dir, f))
		if err != nil {
			b.WriteString("-;")
			continue
		}
		fmt.Fprintf(&b, "%d@%d;", fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String()
}

// ReadRun reads the run directory rel (slash-separated, relative to
// runsDir) into a Run. It never fails: what cannot be read is said in
// Run.Error and Status is StatusUnreadable.
func ReadRun(runsDir, rel string) Run {
	dir := filepath.Join(runsDir, filepath.FromSlash(rel))
	r := Run{Dir: rel, ID: path.Base(rel), Models: []string{}, signature: signature(dir)}
	var errs []string
	fail := func(err error) { errs = append(errs, err.Error()) }

	var mf *runfiles.Manifest
	switch b, err := rundir.ReadFile(filepath.Join(dir, runfiles.ManifestFile)); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		fail(err)
	default:
		var m runfiles.Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			fail(fmt.Errorf("%s: %w", runfiles.ManifestFile, err))
		} else {
			mf = &m
		}
	}
	if mf != nil {
		if mf.RunID != "" {
			r.ID = mf.RunID
		}
		r.Scale = mf.Scale
		name := mf.Mission.Path
		if name == "" {
			name = mf.Mission.Name
		}
		if name != "" {
			r.MissionFile = filepath.Base(name)
		}
		for _, refs := range mf.Models {
			r.Models = append(r.Models, refs...)
		}
		if mf.Provider != "" {
			r.Models = append(r.Models, mf.Provider)
		}
	}

	if t, err := firstEventTime(filepath.Join(dir, runfiles.EventsFile)); err != nil {
		fail(err)
	} else if t != nil {
		r.Started = t
	} else if fi, err := os.Lstat(filepath.Join(dir, runfiles.ManifestFile)); err == nil {
		t := fi.ModTime().UTC()
		r.Started = &t
	}

	var res *resultFile
	switch b, err := rundir.ReadFile(filepath.Join(dir, runfiles.ResultFile)); {
	case errors.Is(err, fs.ErrNotExist):
		r.Status = StatusUnfinished
		r.Reason = "no result.json: the run is still going, or stopped before writing it"
	case err != nil:
		fail(err)
	default:
		var rf resultFile
		if err := json.Unmarshal(b, &rf); err != nil {
			fail(fmt.Errorf("%s: %w", runfiles.ResultFile, err))
		} else if rf.Status == "" {
			fail(fmt.Errorf("%s: no status", runfiles.ResultFile))
		} else {
			res = &rf
		}
	}
	if res != nil {
		r.fromResult(res)
	}

	// telemetry.json is written at the end like result.json; it is read
	// when result.json did not carry it.
	if res == nil || res.Telemetry == nil {
		switch b, err := rundir.ReadFile(filepath.Join(dir, runfiles.TelemetryFile)); {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			fail(err)
		default:
			var t runfiles.Telemetry
			if err := json.Unmarshal(b, &t); err != nil {
				fail(fmt.Errorf("%s: %w", runfiles.TelemetryFile, err))
			} else {
				r.fromTelemetry(&t)
			}
		}
	}
	if r.Mission == "" {
		r.Mission = strings.TrimSuffix(r.MissionFile, ".md")
	}
	slices.Sort(r.Models)
	r.Models = slices.Compact(r.Models)
	if len(errs) > 0 {
		r.Error = strings.Join(errs, "; ")
		if res == nil {
			r.Status, r.Reason = StatusUnreadable, ""
		}
	}
	return r
}

func (r *Run) fromResult(res *resultFile) {
	r.Status = res.Status
	r.TaskHash = res.TaskHash
	if res.Plan.Mission != "" {
		r.Mission = res.Plan.Mission
	}
	if res.Plan.Scale != "" {
		r.Scale = res.Plan.Scale
	}
	r.Models = append(r.Models, modelRefs(res.Plan.Models)...)
	r.ShadowMedian = res.Aggregate.Median
	r.BundlesPlanned, r.BundlesScored = res.Aggregate.Planned, res.Aggregate.Scored
	if e := res.Evidence; e != nil {
		r.EvidenceCited, r.EvidenceVerified, r.EvidenceFabricated = &e.Cited, &e.Verified, &e.Fabricated
	}
	if gt := res.GroundTruth; gt != nil {
		r.Recall = gt.Recall
	}
	switch {
	case res.Error != "":
		r.Reason = res.Error
	case res.ShadowReason != "":
		r.Reason = res.ShadowReason
	case res.Status == runfiles.StatusIncomplete && r.BundlesPlanned != nil && r.BundlesScored != nil:
		r.Reason = fmt.Sprintf("%d of %d bundles judged", *r.BundlesScored, *r.BundlesPlanned)
	case res.NoRecommendation != "":
		r.Reason = "no recommendation: " + res.NoRecommendation
	}
	if res.Telemetry != nil {
		r.fromTelemetry(res.Telemetry)
	}
}

func (r *Run) fromTelemetry(t *runfiles.Telemetry) {
	if r.Scale == "" {
		r.Scale = t.Scale
	}
	for m := range t.ByModel {
		r.Models = append(r.Models, m)
	}
	if t.WallMS > 0 {
		d := t.WallMS
		r.DurationMS = &d
	}
	// A cost of 0 with every call unpriced is not a cost: absent.
	if t.CostUSD > 0 || len(t.UnpricedModels) == 0 {
		c := t.CostUSD
		r.CostUSD = &c
		r.CostPartial = len(t.UnpricedModels) > 0
	}
	if r.ShadowMedian == nil {
		r.ShadowMedian = t.ShadowMedian
	}
}

// modelRefs collects every string of the plan's models (a role's model, a
// list of them, a list of lists).
func modelRefs(raw json.RawMessage) []string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if v != "" {
				out = append(out, v)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

// maxFirstLine bounds the first line of events.jsonl read for the start
// time.
const maxFirstLine = 1 << 20

// firstEventTime is the time of the first event of events.jsonl; nil when
// the file is missing or empty.
func firstEventTime(file string) (*time.Time, error) {
	f, _, err := safeio.Open(file, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(f, maxFirstLine), 64<<10).ReadBytes('\n')
	if len(line) == 0 {
		return nil, nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", runfiles.EventsFile, err)
	}
	var e events.Event
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, fmt.Errorf("%s: line 1: %w", runfiles.EventsFile, err)
	}
	if e.Time.IsZero() {
		return nil, nil
	}
	t := e.Time.UTC()
	return &t, nil
}
