package compare

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/safeio"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

// Request is a comparison as a command line asks for it: flags, and
// optionally a compare file (File) for what the flags leave out.
type Request struct {
	Mission      string // a mission file, besides the file's missions
	File         string // compare YAML; "" for none
	Models       []string
	Judge        string
	SealAuthor   string
	Repeats      int
	Scale        string
	Roles        string
	JudgeSamples int
	Out          string
	CacheDir     string
	Resume       bool
	Seed         int64
	Parallel     int
	// Workspace is the directory every contender reads (""= none);
	// GroundTruth the planted-defects file (needs Workspace).
	Workspace   string
	GroundTruth string
	// AllowHomeWorkspace is nexus.Options.AllowHomeWorkspace
	// (--allow-home-workspace; never from the compare file).
	AllowHomeWorkspace bool
	// Changed holds the names of the flags given on the command line
	// (--judge-samples: "judge-samples"); they win over the compare file.
	Changed map[string]bool
}

// Plan is a comparison checked as a whole before its first run starts: a
// bad second mission must not surface after the first one has spent an
// hour.
type Plan struct {
	Config   *config.Config
	Missions []PlannedMission
	// Models and the rest are Request's, merged with the file's and with
	// compare's defaults for what neither set.
	Models       []string
	Judge        string
	SealAuthor   string
	Repeats      int
	Scale        string
	Roles        string
	JudgeSamples int
	CacheDir     string
	Resume       bool
	Seed         int64
	Parallel     int
	Workspace    string
	GroundTruth  string
	// AllowHomeWorkspace: see Request.
	AllowHomeWorkspace bool
}

// PlannedMission is one mission of a plan, read and given its output
// directory.
type PlannedMission struct {
	Path string // as given (relative to the compare file when from it)
	Name string // file name without extension: names the output directory
	Text string
	Out  string
}

// NewPlan merges the compare file (if any) and the flags of r, checks every
// value and reads every mission; then it loads the configuration with
// loadConfig and checks the scale against it. Every error it returns is bad
// input (nothing was run); an error about a value names where it came from:
// the compare file's line and key, else the flag.
func NewPlan(r Request, loadConfig func() (*config.Config, error)) (*Plan, error) {
	var missions []string
	var file *File
	fromFileKeys := map[string]bool{}
	where := func(flag, key string) string {
		if fromFileKeys[key] {
			return fmt.Sprintf("%s:%d: %s", r.File, file.Line(key), key)
		}
		if flag == "" {
			return "MISSION.md"
		}
		return "--" + flag
	}
	if r.File != "" {
		cf, err := LoadFile(r.File)
		if err != nil {
			return nil, err
		}
		file = cf
		for _, m := range cf.Missions {
			if !filepath.IsAbs(m) {
				m = filepath.Join(filepath.Dir(r.File), m)
			}
			missions = append(missions, m)
		}
		if len(cf.Missions) > 0 {
			fromFileKeys["missions"] = true
		}
		// The file sets what the command line did not.
		fromFile := func(flag, key string, set bool, apply func()) {
			if set && !r.Changed[flag] {
				apply()
				fromFileKeys[key] = true
			}
		}
		fromFile("models", "models", len(cf.Models) > 0, func() { r.Models = cf.Models })
		fromFile("judge", "judge", cf.Judge != "", func() { r.Judge = cf.Judge })
		fromFile("seal-author", "seal_author", cf.SealAuthor != "", func() { r.SealAuthor = cf.SealAuthor })
		fromFile("scale", "scale", cf.Scale != "", func() { r.Scale = cf.Scale })
		fromFile("roles", "roles", cf.Roles != "", func() { r.Roles = cf.Roles })
		fromFile("repeats", "repeats", cf.Repeats != 0, func() { r.Repeats = cf.Repeats })
		fromFile("judge-samples", "judge_samples", cf.JudgeSamples != 0, func() { r.JudgeSamples = cf.JudgeSamples })
		fromFile("seed", "seed", cf.Seed != 0, func() { r.Seed = cf.Seed })
		fromFile("parallel", "parallel", cf.Parallel != 0, func() { r.Parallel = cf.Parallel })
		rel := func(p string) string {
			if filepath.IsAbs(p) {
				return p
			}
			return filepath.Join(filepath.Dir(r.File), p)
		}
		fromFile("workspace", "workspace", cf.Workspace != "", func() { r.Workspace = rel(cf.Workspace) })
		fromFile("ground-truth", "ground_truth", cf.GroundTruth != "", func() { r.GroundTruth = rel(cf.GroundTruth) })
	}
	if r.Mission != "" {
		missions = append(missions, r.Mission)
	}
	if len(missions) == 0 {
		return nil, errors.New("no mission: give MISSION.md or --file COMPARE.yaml")
	}
	if len(r.Models) == 0 {
		return nil, errors.New("no contenders: give --models a,b,c")
	}
	// Unset options (a caller without the command line's defaults) take
	// compare's.
	if r.Roles == "" {
		r.Roles = RolesCommanders
	}
	if r.Scale == "" {
		r.Scale = DefaultScale
	}
	if r.Repeats == 0 {
		r.Repeats = DefaultRepeats
	}
	if r.Parallel < 0 {
		return nil, fmt.Errorf("%s %d: want 0 (all contenders at once) or more", where("parallel", "parallel"), r.Parallel)
	}
	if r.Repeats < 1 {
		return nil, fmt.Errorf("%s %d: want at least 1", where("repeats", "repeats"), r.Repeats)
	}
	if r.JudgeSamples < 0 {
		return nil, fmt.Errorf("%s %d: want 1 or more", where("judge-samples", "judge_samples"), r.JudgeSamples)
	}
	if r.Roles != RolesCommanders && r.Roles != RolesAll {
		return nil, fmt.Errorf("%s %q: want %s or %s", where("roles", "roles"), r.Roles, RolesCommanders, RolesAll)
	}
	for _, m := range r.Models {
		if _, err := providers.ParseRef(m); err != nil {
			return nil, fmt.Errorf("%s: %v", where("models", "models"), err)
		}
	}
	for _, c := range []struct{ flag, key, v string }{{"judge", "judge", r.Judge}, {"seal-author", "seal_author", r.SealAuthor}} {
		if c.v == "" {
			continue
		}
		if _, err := providers.ParseRef(c.v); err != nil {
			return nil, fmt.Errorf("%s: %v", where(c.flag, c.key), err)
		}
	}
	if r.Workspace != "" {
		if fi, err := os.Stat(r.Workspace); err != nil {
			return nil, fmt.Errorf("%s: %w", where("workspace", "workspace"), err)
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("%s %s: not a directory", where("workspace", "workspace"), r.Workspace)
		}
	}
	if r.GroundTruth != "" {
		if fi, err := os.Stat(r.GroundTruth); err != nil {
			return nil, fmt.Errorf("%s: %w", where("ground-truth", "ground_truth"), err)
		} else if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s %s: not a regular file", where("ground-truth", "ground_truth"), r.GroundTruth)
		}
	}
	p := &Plan{Models: r.Models, Judge: r.Judge, SealAuthor: r.SealAuthor, Repeats: r.Repeats, Scale: r.Scale, Roles: r.Roles,
		JudgeSamples: r.JudgeSamples, CacheDir: r.CacheDir, Resume: r.Resume, Seed: r.Seed, Parallel: r.Parallel,
		Workspace: r.Workspace, GroundTruth: r.GroundTruth, AllowHomeWorkspace: r.AllowHomeWorkspace}
	names := map[string]string{}
	for _, mpath := range missions {
		name := strings.TrimSuffix(filepath.Base(mpath), filepath.Ext(mpath))
		if prev, dup := names[name]; dup {
			return nil, fmt.Errorf("%s: %s and %s would share the output directory %q: rename one", where("", "missions"), prev, mpath, name)
		}
		names[name] = mpath
		text, err := safeio.ReadFile(mpath, config.MaxMissionBytesLimit)
		if err != nil {
			return nil, fmt.Errorf("%s: read mission: %w", where("", "missions"), err)
		}
		if strings.TrimSpace(string(text)) == "" {
			return nil, fmt.Errorf("%s: mission %s is empty", where("", "missions"), mpath)
		}
		if r.GroundTruth != "" && r.Workspace == "" && frontMatterWorkspace(mpath, string(text), "") == "" {
			return nil, fmt.Errorf("%s %s: needs a workspace (--workspace DIR, the compare file's workspace: or the front matter of mission %s): the defects are matched against cited workspace lines",
				where("ground-truth", "ground_truth"), r.GroundTruth, mpath)
		}
		p.Missions = append(p.Missions, PlannedMission{Path: mpath, Name: name, Text: string(text)})
	}
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	if _, ok := cfg.Scales[r.Scale]; !ok {
		return nil, fmt.Errorf("%s %q: unknown scale (known: %s)", where("scale", "scale"), r.Scale, strings.Join(slices.Sorted(maps.Keys(cfg.Scales)), ", "))
	}
	p.Config = cfg
	for i := range p.Missions {
		m := &p.Missions[i]
		switch {
		case r.Out == "":
			m.Out = filepath.Join(cfg.Run.OutDir, "compare-"+m.Name)
		case len(p.Missions) > 1:
			m.Out = filepath.Join(r.Out, m.Name)
		default:
			m.Out = r.Out
		}
	}
	return p, nil
}

// Options are the options of running one mission of the plan; the caller
// adds the Registry and, if it wants them, Progress reports.
func (p *Plan) Options(m PlannedMission) Options {
	return Options{Config: p.Config, Mission: m.Text, MissionName: m.Name, MissionDir: filepath.Dir(m.Path), Models: p.Models, Judge: p.Judge, SealAuthor: p.SealAuthor,
		Repeats: p.Repeats, Scale: p.Scale, Roles: p.Roles, JudgeSamples: p.JudgeSamples, Seed: p.Seed, Out: m.Out,
		CacheDir: p.CacheDir, Resume: p.Resume, Parallel: p.Parallel, Workspace: p.Workspace, GroundTruth: p.GroundTruth,
		AllowHomeWorkspace: p.AllowHomeWorkspace}
}

// Unpriced lists the models of the comparison without a known price
// (Config.PriceOf): the contenders, the judge, the seal author and the
// config's models for the roles not compared. The cost ceiling cannot act on
// their calls and every cost leaves them out.
func (p *Plan) Unpriced() []string {
	var refs []providers.Ref
	for _, m := range append([]string{p.Judge, p.SealAuthor}, p.Models...) {
		if ref, err := providers.ParseRef(m); err == nil {
			refs = append(refs, ref)
		}
	}
	if roster, err := config.ResolveRoster(p.Config, providers.Ref{}, nil); err == nil {
		judgeSet, sealSet := p.Judge != "", p.SealAuthor != ""
		roster.Seats(func(role string, ref providers.Ref) bool {
			switch {
			case role == "judge" && judgeSet, role == "seal_author" && sealSet:
			case p.Roles == RolesAll && role != "nexus" && role != "judge" && role != "seal_author":
			case p.Roles != RolesAll && role == "commander":
			default:
				refs = append(refs, ref)
			}
			return true
		})
	}
	return p.Config.Unpriced(refs...)
}

// frontMatterWorkspace is the workspace a mission's front matter names,
// relative to dir unless absolute ("" when it names none; a bad front
// matter is reported when the mission runs).
func frontMatterWorkspace(name, mission, dir string) string {
	fm, _, err := nexus.SplitFrontMatter(name, mission)
	if err != nil || fm.Workspace == "" {
		return ""
	}
	if filepath.IsAbs(fm.Workspace) {
		return fm.Workspace
	}
	return filepath.Join(dir, fm.Workspace)
}
