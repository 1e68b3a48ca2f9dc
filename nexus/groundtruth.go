package nexus

import (
	"fmt"
	"os"
	"strings"

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
		return s, fmt.Errorf("%w: --ground-truth %s needs a workspace (--workspace DIR): its defects are lines of the workspace's files", ErrBadInput, o.GroundTruth)
	}
	// The stat names the file even for a loader that would not.
	if fi, err := os.Stat(o.GroundTruth); err != nil {
		return s, fmt.Errorf("%w: ground truth: %v", ErrBadInput, err)
	} else if fi.IsDir() {
		return s, fmt.Errorf("%w: ground truth %s: is a directory, want a YAML file", ErrBadInput, o.GroundTruth)
	}
	gt, err := workspace.LoadGroundTruth(o.GroundTruth)
	if err != nil {
		if strings.Contains(err.Error(), o.GroundTruth) { // file:line:col already
			return s, fmt.Errorf("%w: ground truth: %v", ErrBadInput, err)
		}
		return s, fmt.Errorf("%w: ground truth %s: %v", ErrBadInput, o.GroundTruth, err)
	}
	s.gt, s.gtFile = gt, o.GroundTruth
	return s, nil
}
