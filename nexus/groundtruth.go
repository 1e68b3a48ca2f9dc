package nexus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/workspace"
)

// This file is the ground truth of a run (Options.GroundTruth): planted
// defects of the workspace that the run's findings are matched against
// after their citations are checked (verifyEvidence): recall, precision and
// the defects missed, in result.json and report.md.

// truthMatcher matches findings' checked citations against planted
// defects: workspace.GroundTruth.
type truthMatcher interface {
	Match(findings [][]workspace.Check) workspace.Match
}

// prepareEvidence loads Options.GroundTruth. A ground truth needs a
// workspace (Options.Workspace): without one it is a usage error. wsDir is
// the run's workspace directory as resolved from the options, the
// mission's front matter and the config ("" = none).
func prepareEvidence(o Options, wsDir string) (evidenceSetup, error) {
	var s evidenceSetup
	if o.GroundTruth == "" {
		return s, nil
	}
	if wsDir == "" {
		return s, fmt.Errorf("%w: --ground-truth %s needs a workspace (--workspace DIR): its defects are lines of the workspace's files", config.ErrBadInput, o.GroundTruth)
	}
	// The stat names the file even for a loader that would not.
	if fi, err := os.Stat(o.GroundTruth); err != nil {
		return s, fmt.Errorf("%w: ground truth: %v", config.ErrBadInput, err)
	} else if fi.IsDir() {
		return s, fmt.Errorf("%w: ground truth %s: is a directory, want a YAML file", config.ErrBadInput, o.GroundTruth)
	}
	if inside(wsDir, o.GroundTruth) {
		return s, fmt.Errorf("%w: ground truth %s is inside the workspace %s, where the agents could read the answers: keep it outside (e.g. beside the directory)", config.ErrBadInput, o.GroundTruth, wsDir)
	}
	// Each defect is checked against the workspace before any LLM call: a
	// file that is not there, or lines it does not have, could never be
	// found and would only lower the recall.
	ws, err := openWorkspace(o)
	if err != nil {
		return s, err
	}
	defer closeWorkspace(ws)
	gt, err := workspace.LoadGroundTruthIn(o.GroundTruth, ws) // its errors name the file (and line and column)
	if err != nil {
		return s, fmt.Errorf("%w: ground truth: %w", config.ErrBadInput, err)
	}
	s.gt, s.gtFile = gt, o.GroundTruth
	return s, nil
}

// inside reports whether path is dir or under it, symbolic links resolved
// (an unresolvable path is compared as given, made absolute).
func inside(dir, path string) bool {
	resolve := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		return p
	}
	rel, err := filepath.Rel(resolve(dir), resolve(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
