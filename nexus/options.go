package nexus

import (
	"errors"
	"fmt"
	"time"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"
)

// ErrInterrupted is returned when the run was cancelled; what existed was written.
var ErrInterrupted = errors.New("run interrupted")

// Options configure one mission run. Config and Registry are required.
type Options struct {
	Config   *config.Config
	Registry *providers.Registry

	Mission     string // the mission text (its front matter, if any, is split off: SplitFrontMatter)
	MissionName string // used in the run id (e.g. the file name)
	// MissionDir is the directory the relative paths of the mission's front
	// matter are resolved against: the mission file's. Empty: the working
	// directory.
	MissionDir string
	// MissionPath is the mission's file ("" for a mission from stdin or
	// text), recorded in run.json so that a resume (Resume) reads it again.
	MissionPath string
	// ConfigPath is the file Config was loaded from ("" for the embedded
	// config.yml), recorded in run.json for the same reason.
	ConfigPath  string
	Scale       string // default: config default_scale
	Personality string // default: config run.personality

	// Provider, when set (Kind != ""), serves every role ("mock:honest").
	Provider providers.Ref
	// Models overrides one role's model: role -> its model (a pool for
	// commander and worker, one or two for reviewer). Roles: nexus,
	// seal_author, judge, commander, squad_lead, worker, reviewer, synthesizer.
	Models map[string][]providers.Ref
	// Fallbacks adds fallback models to a role (role -> models, tried in
	// order after the config's fallbacks for the role): --fallback.
	Fallbacks map[string][]providers.Ref

	// FileScope, when set, limits the files the mission's agents may touch
	// (paths or directories). It is every capsule's file-scope constraint,
	// which only narrows going down (squad leads, workers) and is shown to
	// the commanders and workers.
	FileScope []string

	// Workspace is the directory the mission is about ("" = none): the
	// agents of the configured roles read it through read-only tools and
	// every citation is checked against it. It overrides the mission's
	// front matter and the config's workspace.dir.
	Workspace string
	// AllowHomeWorkspace lets Workspace (from whichever source) be the file
	// system's root or a directory that is or contains the user's home
	// directory (workspace.ExposesHome); without it such a workspace is
	// refused (--allow-home-workspace).
	AllowHomeWorkspace bool
	// GroundTruth is a file of planted defects (workspace.LoadGroundTruth)
	// the run's findings are matched against (recall and precision). It
	// needs a Workspace.
	GroundTruth string

	// FollowUp is the directory of an earlier run this one follows up
	// ("" = none): its findings, failed criteria categories and scores are
	// the agents' prior context, and the chain of runs gets a Shadow Score
	// velocity (docs/follow-up.md).
	FollowUp string

	OutDir string // the run directory; default <run.out_dir>/<run-id>
	// Force lets a run write into a non-empty OutDir: the entries an earlier
	// run left there (events.jsonl, bundles/, ...) are removed first; other
	// files are left alone. Without it a non-empty directory is refused.
	Force bool
	Seed  *int64 // default: config run.seed

	// Observers receive every event as it happens.
	Observers []events.Observer
	// KeepPrompts keeps every prompt in memory (Result.Transcripts) for audits
	// such as the leak scan.
	KeepPrompts bool
	// KeepEvents keeps every event in memory (Result.Events) for tests and
	// audits; otherwise events are only streamed (events.jsonl, Observers).
	KeepEvents bool
	// Replays, when > 1, runs the mission that many times in all (same
	// envelope, seeds seed..seed+K−1) to measure incoherence.
	Replays int
	// Now is the clock (tests).
	Now func() time.Time
}

// Plan is what a run will deploy, known before any LLM call (the briefing).
type Plan struct {
	RunID          string                 `json:"run_id"`
	Scale          string                 `json:"scale"`
	Personality    string                 `json:"personality"`
	Domains        []string               `json:"domains"`
	Commanders     int                    `json:"commanders"`
	SquadLeads     int                    `json:"squad_leads"`
	Workers        int                    `json:"workers"`
	Reviewers      int                    `json:"reviewers"`
	Agents         int                    `json:"agents"`
	Criteria       int                    `json:"criteria"`
	CostCeilingUSD float64                `json:"cost_ceiling_usd"`
	Seed           int64                  `json:"seed"`
	Roster         config.Roster          `json:"models"`
	MissionTitle   string                 `json:"mission"`
	ChildrenPerCmd int                    `json:"children_per_commander"`
	WorkersPerLead int                    `json:"workers_per_squad_lead"`
	Hardening      shadow.HardeningConfig `json:"hardening"`
	// Workspace is the directory the agents read ("" = none).
	Workspace string `json:"workspace,omitempty"`
	// WorkspaceWarnings are what was odd about the workspace's own files
	// when it was opened (a .swarmignore line dropped).
	WorkspaceWarnings []string `json:"workspace_warnings,omitempty"`
	// Unpriced are the roster's models (fallbacks included) without a
	// known price (Config.PriceOf): the cost ceiling cannot act on their
	// calls, and costs leave them out. Absent when every model is priced.
	Unpriced []string `json:"unpriced_models,omitempty"`
}

// clock is Options.Now, else time.Now.
func (o Options) clock() func() time.Time {
	if o.Now != nil {
		return o.Now
	}
	return time.Now
}

// checkOutDir says whether a run may write to path (rundir.Check); a refusal
// is bad input.
func checkOutDir(path string, force bool) error {
	if err := rundir.Check(path, force); err != nil {
		return fmt.Errorf("%w: %v", config.ErrBadInput, err)
	}
	return nil
}
