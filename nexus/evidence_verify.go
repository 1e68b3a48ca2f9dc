package nexus

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/workspace"
)

// ErrNoEvidence is returned by VerifyEvidence for a run directory without
// evidence.json (a run without a workspace measured no evidence).
var ErrNoEvidence = errors.New("no evidence.json: the run had no workspace, so it recorded no evidence")

// EvidenceReport is a finished run's citations checked again: the fresh
// counts beside the recorded ones, and every citation whose state changed.
type EvidenceReport struct {
	RunDir string `json:"run_dir"`
	// Workspace is what the citations were checked against now; Recorded
	// what the run read.
	Workspace WorkspaceInfo `json:"workspace"`
	Recorded  WorkspaceInfo `json:"recorded_workspace"`
	// Counts are the fresh tallies; RecordedCounts evidence.json's.
	Counts         workspace.Counts            `json:"counts"`
	RecordedCounts workspace.Counts            `json:"recorded_counts"`
	ByModel        map[string]workspace.Counts `json:"by_model"`
	ByAgent        map[string]workspace.Counts `json:"by_agent"`
	// Changes lists every citation whose state differs from the recorded
	// one, in run order; empty when nothing changed.
	Changes []EvidenceChange `json:"changes"`
}

// EvidenceChange is one citation whose state changed. Where names it:
// "atom <agent> (<brief>)", "bundle <domain>" or "bundle <domain> finding
// <n> (<title>)". Was is "" for a citation evidence.json did not record,
// Now "" for one the run directory no longer holds.
type EvidenceChange struct {
	Where    string            `json:"where"`
	Citation citation.Citation `json:"citation"`
	Was      workspace.State   `json:"was"`
	Now      workspace.State   `json:"now"`
	Reason   string            `json:"reason,omitempty"`
}

// Changed reports whether any citation's state changed.
func (r *EvidenceReport) Changed() bool { return len(r.Changes) > 0 }

// VerifyEvidence re-checks a finished run's citations against fs: the
// atoms and final bundles of bundles/*.json, compared with the states
// evidence.json recorded. A missing or unreadable file is an error naming
// it (ErrNoEvidence when evidence.json is absent).
func VerifyEvidence(runDir string, fs *workspace.FS) (*EvidenceReport, error) {
	if fs == nil {
		return nil, fmt.Errorf("%w: VerifyEvidence needs an opened workspace", config.ErrBadInput)
	}
	return verifyRunEvidence(runDir, fs)
}

// bundleFile is what VerifyEvidence reads of bundles/<id>.json.
type bundleFile struct {
	ID        string                  `json:"id"`
	Domain    string                  `json:"domain"`
	Commander string                  `json:"commander"`
	Model     string                  `json:"model"`
	Failed    bool                    `json:"failed"`
	Bundle    commanders.Bundle       `json:"bundle"`
	Atoms     []commanders.AtomResult `json:"atoms"`
}

func readJSONFile(path string, v any) error {
	b, err := rundir.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func verifyRunEvidence(runDir string, v workspaceVerifier) (*EvidenceReport, error) {
	d := rundir.Dir{Path: runDir}
	var rec evidenceRecord
	if err := readJSONFile(d.Join(runfiles.EvidenceFile), &rec); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", d.Join(runfiles.EvidenceFile), ErrNoEvidence)
		}
		return nil, err
	}
	files, _ := filepath.Glob(d.Join(runfiles.BundlesDir, "*.json"))
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no bundles/*.json (is it a run directory?)", d.Path)
	}
	var outs []*BundleOutcome
	for _, f := range files {
		var bf bundleFile
		if err := readJSONFile(f, &bf); err != nil {
			return nil, err
		}
		o := &BundleOutcome{ID: bf.ID, Domain: bf.Domain, Commander: bf.Commander, Model: bf.Model, Failed: bf.Failed,
			Bundle: bf.Bundle, result: commanders.Result{Atoms: bf.Atoms}}
		checkBundle(v, o, nil)
		outs = append(outs, o)
	}
	fresh := evidenceFile(outs)
	rep := &EvidenceReport{RunDir: runDir, Workspace: WorkspaceInfo{Dir: v.Dir(), Fingerprint: v.Fingerprint()}, Recorded: rec.Workspace,
		Counts: fresh.Counts, RecordedCounts: rec.Counts, ByModel: fresh.ByModel, ByAgent: fresh.ByAgent,
		Changes: diffEvidence(rec, fresh)}
	return rep, nil
}

// located is one checked citation with where it is and its occurrence
// among equal citations there (so duplicates pair up one to one).
type located struct {
	where string
	check workspace.Check
}

func locate(f evidenceRecord) ([]string, map[string]located) {
	var order []string
	m := map[string]located{}
	add := func(where string, cs []workspace.Check) {
		seen := map[citation.Citation]int{}
		for _, c := range cs {
			k := where + "\x00" + c.Path + "\x00" + strconv.Itoa(c.StartLine) + "\x00" + strconv.Itoa(c.EndLine) + "\x00" + c.Quote + "\x00" + strconv.Itoa(seen[c.Citation])
			seen[c.Citation]++
			order = append(order, k)
			m[k] = located{where: where, check: c}
		}
	}
	for _, a := range f.Atoms {
		add(fmt.Sprintf("atom %s (%s)", a.AgentID, a.BriefID), a.Checks)
	}
	for _, b := range f.Bundles {
		add("bundle "+b.Domain, b.Evidence)
		for _, fe := range b.Findings {
			add(fmt.Sprintf("bundle %s finding %d (%s)", b.Domain, fe.Index+1, fe.Title), fe.Checks)
		}
	}
	return order, m
}

// diffEvidence lists the citations whose state differs between the
// recorded and the fresh checks, fresh order first, then what only the
// record holds.
func diffEvidence(rec, fresh evidenceRecord) []EvidenceChange {
	recOrder, recM := locate(rec)
	freshOrder, freshM := locate(fresh)
	changes := []EvidenceChange{}
	for _, k := range freshOrder {
		n := freshM[k]
		was := recM[k].check.State // "" when not recorded
		if was != n.check.State {
			changes = append(changes, EvidenceChange{Where: n.where, Citation: n.check.Citation, Was: was, Now: n.check.State, Reason: n.check.Reason})
		}
	}
	for _, k := range recOrder {
		if _, ok := freshM[k]; !ok {
			r := recM[k]
			changes = append(changes, EvidenceChange{Where: r.where, Citation: r.check.Citation, Was: r.check.State, Reason: "no longer in the run directory's bundles"})
		}
	}
	return changes
}
