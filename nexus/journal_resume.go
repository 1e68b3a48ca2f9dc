package nexus

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/internal/safeio"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// ErrRunFinished is returned by Resume for a run that already finished:
// there is nothing to do and nothing was touched. It is wrapped in a
// *FinishedError that says the run's status.
var ErrRunFinished = errors.New("run already finished")

// ErrResumeChanged marks a refused resume: what the run was started with
// changed (mission, config, workspace, ground truth). It also wraps
// ErrBadInput.
var ErrResumeChanged = errors.New("what the run was started with changed")

// FinishedError says a resumed run had already finished, and how.
type FinishedError struct{ Status string }

func (e *FinishedError) Error() string {
	return fmt.Sprintf("run already finished (status %s); nothing to do", e.Status)
}

func (e *FinishedError) Unwrap() error { return ErrRunFinished }

// finishedStatuses are the result.json statuses of a run that ended on its
// own: resuming it would only do the same again. A run that was
// interrupted, or failed (a provider outage, a crash of a phase: the
// answers it got are replayed and the rest asked again), or has no
// result.json (killed) is resumable.
var finishedStatuses = []string{runfiles.StatusComplete, runfiles.StatusIncomplete, runfiles.StatusPartial, runfiles.StatusInvalid, runfiles.StatusSealed}

// The workspace fingerprint's bounds (variables so tests can lower them).
var (
	// maxTreeFiles files are hashed by content, at most maxTreeBytes bytes
	// in all, each file at most maxTreeFileBytes; a file beyond any of
	// them is fingerprinted by its size, modification and change times
	// and inode (a change to it changes those), not skipped.
	maxTreeFiles     = 50_000
	maxTreeBytes     = int64(1 << 30)
	maxTreeFileBytes = int64(64 << 20)
	// maxTreeWalk bounds the files fingerprinted at all; a tree with more
	// is marked truncated, and resume refuses it (without --force) rather
	// than call it unchanged.
	maxTreeWalk = 1_000_000
)

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// maxHashedFile bounds a file hashed for the manifest (the mission, the
// config, the ground truth): each has a tighter bound of its own where it
// is parsed; this one keeps a path run.json names from costing more.
const maxHashedFile = 64 << 20

func fileSHA256(path string) (string, error) {
	b, err := safeio.ReadFile(path, maxHashedFile)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// treeSum is a workspace's fingerprint (see runfiles.ManifestWorkspace).
type treeSum struct {
	Hash      string
	Files     int  // regular files fingerprinted
	ByStat    int  // of them, fingerprinted by size, times and inode
	Truncated bool // more than maxTreeWalk files: the rest are not covered
}

// treeHash fingerprints every regular file under dir (path, and content or
// metadata; symbolic links by their target; .git skipped). It never calls
// a tree "the same" without looking: a file too big to read is
// fingerprinted by its metadata, and a tree too big to walk is marked
// Truncated.
func treeHash(dir string) (treeSum, error) {
	h := sha256.New()
	var sum treeSum
	content := int64(0) // bytes hashed by content so far
	full := errors.New("full")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" && p != dir {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			if d.Type()&fs.ModeSymlink != 0 {
				t, _ := os.Readlink(p)
				fmt.Fprintf(h, "link\x00%s\x00%s\n", rel, t)
			}
			return nil
		}
		if sum.Files == maxTreeWalk {
			sum.Truncated = true
			return full
		}
		sum.Files++
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if sum.Files > maxTreeFiles || fi.Size() > maxTreeFileBytes || content+fi.Size() > maxTreeBytes {
			sum.ByStat++
			fmt.Fprintf(h, "stat\x00%s\x00%s\n", rel, statKey(fi))
			return nil
		}
		digest, n, err := contentSHA256(p)
		if err != nil {
			return err
		}
		content += n
		fmt.Fprintf(h, "file\x00%s\x00%s\n", rel, digest)
		return nil
	})
	if err != nil && !errors.Is(err, full) {
		return sum, err
	}
	sum.Hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return sum, nil
}

// contentSHA256 streams the regular file at p through SHA-256 (never
// blocking on a FIFO swapped in, never following a link).
func contentSHA256(p string) (string, int64, error) {
	f, _, err := safeio.Open(p, true)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", n, fmt.Errorf("%s: %w", p, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// statKey is a file's metadata fingerprint: size, modification time and,
// where the system has them, change time and inode (a write changes the
// change time even when the modification time is set back).
func statKey(fi fs.FileInfo) string {
	return fmt.Sprintf("%d\x00%d\x00%s", fi.Size(), fi.ModTime().UnixNano(), sysStatKey(fi))
}

func swarmVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " (" + s.Value[:12] + ")"
		}
	}
	return v
}

func refStrings(m map[string][]providers.Ref) map[string][]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string][]string, len(m))
	for k, refs := range m {
		for _, r := range refs {
			out[k] = append(out[k], r.String())
		}
	}
	return out
}

func parseRefMap(field string, m map[string][]string) (map[string][]providers.Ref, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string][]providers.Ref, len(m))
	for k, list := range m {
		for i, s := range list {
			r, err := providers.ParseRef(s)
			if err != nil {
				return nil, fmt.Errorf("%s.%s[%d]: %w", field, k, i, err)
			}
			out[k] = append(out[k], r)
		}
	}
	return out, nil
}

// manifestFor is the manifest of a run of o (resolved by Prepare) whose
// mission text as given hashes to missionSHA, reading ws (nil: none).
func manifestFor(o Options, missionRaw string, ws *workspace.FS) (*runfiles.Manifest, error) {
	mf := &runfiles.Manifest{SwarmVersion: swarmVersion(), Attempts: 1,
		Mission:  runfiles.ManifestMission{Path: absPath(o.MissionPath), Name: o.MissionName, Dir: absPath(o.MissionDir), SHA256: sha256Hex([]byte(missionRaw))},
		Provider: "", Models: refStrings(o.Models), Fallbacks: refStrings(o.Fallbacks), Scale: o.Scale, Personality: o.Personality,
		Seed: o.Seed, Replays: o.Replays, FileScope: o.FileScope, FollowUp: absPath(o.FollowUp)}
	if !o.Provider.IsZero() {
		mf.Provider = o.Provider.String()
	}
	if mf.Mission.Path == "" {
		mf.Mission.Text = missionRaw
	}
	if o.Config != nil {
		mf.Config.Spec = o.Config.ShadowScoring.SpecVersion
		eff, err := o.Config.Effective()
		if err != nil {
			return nil, fmt.Errorf("effective configuration: %w", err)
		}
		mf.Config.EffectiveSHA256 = sha256Hex(eff)
	}
	if o.ConfigPath != "" {
		mf.Config.Path = absPath(o.ConfigPath)
		h, err := fileSHA256(o.ConfigPath)
		if err != nil {
			return nil, fmt.Errorf("%w: config %s: %w", config.ErrBadInput, o.ConfigPath, err)
		}
		mf.Config.FileSHA256 = h
	}
	if o.Workspace != "" {
		w := &runfiles.ManifestWorkspace{Dir: absPath(o.Workspace)}
		if ws != nil {
			w.Fingerprint = ws.Fingerprint()
		}
		sum, err := treeHash(o.Workspace)
		if err != nil {
			return nil, fmt.Errorf("%w: workspace %s: %w", config.ErrBadInput, o.Workspace, err)
		}
		w.TreeHash, w.TreeFiles, w.TreeByStat, w.TreeTruncated = sum.Hash, sum.Files, sum.ByStat, sum.Truncated
		mf.Workspace = w
	}
	if o.GroundTruth != "" {
		h, err := fileSHA256(o.GroundTruth)
		if err != nil {
			return nil, fmt.Errorf("%w: ground truth %s: %w", config.ErrBadInput, o.GroundTruth, err)
		}
		mf.GroundTruth = &runfiles.ManifestFileHash{Path: absPath(o.GroundTruth), SHA256: h}
	}
	return mf, nil
}

// manifestChanges lists what differs between the manifest a run was started with
// (was) and the one it would be started with now (now), for a user.
func manifestChanges(was, now *runfiles.Manifest) []string {
	var out []string
	if was.Mission.SHA256 != now.Mission.SHA256 {
		out = append(out, "mission text ("+orStdin(was.Mission.Path)+")")
	}
	if c := configChange(was.Config, now.Config); c != "" {
		out = append(out, c)
	}
	switch {
	case (was.Workspace == nil) != (now.Workspace == nil):
		out = append(out, "workspace (given now and not then, or the reverse)")
	case was.Workspace != nil:
		w, n := was.Workspace, now.Workspace
		switch {
		case w.Dir != n.Dir:
			out = append(out, "workspace directory ("+w.Dir+" → "+n.Dir+")")
		case w.Fingerprint.GitHead != n.Fingerprint.GitHead:
			out = append(out, fmt.Sprintf("workspace %s (git HEAD %s → %s)", w.Dir, w.Fingerprint.GitHead, n.Fingerprint.GitHead))
		case w.TreeHash != n.TreeHash && w.TreeHash == "":
			// A manifest of a swarm that left trees over its caps
			// unfingerprinted: nothing says the files are the same.
			out = append(out, fmt.Sprintf("workspace %s (not fingerprinted when the run started: %d files; a change cannot be ruled out)", w.Dir, w.TreeFiles))
		case w.TreeHash != n.TreeHash:
			out = append(out, fmt.Sprintf("workspace %s (file contents: %d files then, %d now)", w.Dir, w.TreeFiles, n.TreeFiles))
		case w.TreeTruncated || n.TreeTruncated:
			out = append(out, fmt.Sprintf("workspace %s (more than %d files: too large to fingerprint, a change beyond them cannot be ruled out)", w.Dir, maxTreeWalk))
		}
	}
	switch {
	case (was.GroundTruth == nil) != (now.GroundTruth == nil):
		out = append(out, "ground truth (given now and not then, or the reverse)")
	case was.GroundTruth != nil && was.GroundTruth.SHA256 != now.GroundTruth.SHA256:
		out = append(out, "ground truth ("+was.GroundTruth.Path+")")
	}
	if was.FollowUp != now.FollowUp {
		out = append(out, "follow-up run directory")
	}
	return out
}

// configChange says how the configuration a run was started with (was)
// differs from the one it is resumed with (now), "" when it does not.
func configChange(was, now runfiles.ManifestConfig) string {
	switch {
	case was.FileSHA256 != now.FileSHA256:
		// Resume never loads the config run.json names (a directory handed
		// to you could name one that sends your key elsewhere): the user's
		// --config is used, and when it is not the run's, both are named.
		return fmt.Sprintf("config file (the run was started with %s, %s, and is resumed with %s, %s: resume with --config naming the file you trust, "+
			"the run's own only if you trust where this directory came from)",
			orEmbedded(was.Path), configHash(was), orEmbedded(now.Path), configHash(now))
	case was.EffectiveSHA256 != now.EffectiveSHA256:
		return "effective config (config.effective.yml; a different swarm version may change defaults)"
	}
	return ""
}

// configHash is how a manifest's config is named: its file's hash, or the
// effective configuration's for the embedded one.
func configHash(c runfiles.ManifestConfig) string {
	if c.FileSHA256 != "" {
		return c.FileSHA256
	}
	return "effective " + c.EffectiveSHA256
}

func orStdin(p string) string {
	if p == "" {
		return "stdin or --mission"
	}
	return p
}

func orEmbedded(p string) string {
	if p == "" {
		return "the embedded config.yml"
	}
	return p
}

// finishedStatus reads the status of dir's result.json ("" when there is
// none) and says whether it is a finished run's.
func finishedStatus(dir string) (string, bool, error) {
	b, err := rundir.ReadFile(filepath.Join(dir, runfiles.ResultFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	var r struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		// A result.json cut short: the run did not end cleanly.
		return "", false, nil
	}
	return r.Status, slices.Contains(finishedStatuses, r.Status), nil
}

// ResumeOptions configure Resume.
type ResumeOptions struct {
	// Registry builds the providers (required).
	Registry *providers.Registry
	// ConfigPath is the user's configuration file, as --config gives it
	// ("" = the embedded config.yml), exactly as for a fresh run: a resumed
	// run never loads the config file its run.json names (a directory
	// handed to you could name one that sends your API key elsewhere). When
	// its hash differs from the one the run was started with, the resume is
	// refused naming both files and hashes (unless Force).
	ConfigPath string
	// Config, when set, is used instead of loading ConfigPath (the
	// configuration must still match the run's).
	Config *config.Config
	// TrustUnsignedJournal resumes a run whose journal was written before
	// journal MACs (records without one): its answers are replayed
	// unverified. Without it such a journal is refused (ErrJournalUnsigned).
	TrustUnsignedJournal bool
	// Force resumes even when what the run was started with changed; the
	// changes are in the run_resumed event and ResumeChanges.
	Force bool
	// AllowHomeWorkspace is Options.AllowHomeWorkspace: run.json's workspace
	// is checked again, and the consent is not taken from the run directory.
	AllowHomeWorkspace bool
	// Observers, KeepPrompts, KeepEvents and Now are as in Options.
	Observers   []events.Observer
	KeepPrompts bool
	KeepEvents  bool
}

// resumeState is what a resumed mission carries from Resume to open.
type resumeState struct {
	was     *runfiles.Manifest
	now     *runfiles.Manifest // what the run is started with now: open writes it as run.json
	changed []string
	lock    *rundir.Lock // held from Resume to the end of the run
	journal journalOpen  // how open verifies and signs the journal
}

// Resume prepares the continuation of the run in dir (an interrupted,
// killed or failed run): the mission, config and options come from its
// run.json, are checked against what the run was started with, and Run
// then re-runs the pipeline in dir with every answer of its journal
// replayed, so only what was never answered is asked. A finished run
// returns a *FinishedError (ErrRunFinished) and touches nothing; a
// changed mission, config, workspace or ground truth is refused
// (ErrResumeChanged, ErrBadInput) unless ro.Force.
func Resume(dir string, ro ResumeOptions, opts ...Option) (m *Mission, err error) {
	mf, err := runfiles.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	// Before anything else: one process at a time in a run directory (a
	// second resume, or a resume beside the run still going, is refused
	// naming the holder's pid). The lock is held until the run ends.
	lock, err := rundir.Acquire(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: --resume: %w", config.ErrBadInput, err)
	}
	defer func() {
		if err != nil {
			lock.Unlock()
		}
	}()
	if status, done, err := finishedStatus(dir); err != nil {
		return nil, fmt.Errorf("%w: --resume %s: %w (swarm writes result.json as a regular file of at most %d bytes: this directory was not left so by a run)",
			config.ErrBadInput, dir, err, rundir.MaxFileBytes)
	} else if done {
		return nil, &FinishedError{Status: status}
	}
	// A damaged or forged journal is refused before anything in dir is
	// touched.
	key, err := loadJournalKey(true)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", config.ErrBadInput, err)
	}
	jo := journalOpen{key: key, runID: mf.RunID, trustUnsigned: ro.TrustUnsignedJournal}
	if err := checkJournal(dir, jo); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", config.ErrBadInput, dir, err)
	}
	o, err := manifestOptions(mf, dir, ro)
	if err != nil {
		return nil, err
	}
	// The user's config against the run's, before anything is built from
	// it: a mismatch is named at once (it is also among the changes below
	// when forced).
	if !ro.Force {
		user := runfiles.ManifestConfig{Path: absPath(ro.ConfigPath)}
		if ro.ConfigPath != "" {
			if user.FileSHA256, err = fileSHA256(ro.ConfigPath); err != nil {
				return nil, fmt.Errorf("%w: --config %s: %w", config.ErrBadInput, ro.ConfigPath, err)
			}
		}
		eff, err := o.Config.Effective()
		if err != nil {
			return nil, fmt.Errorf("effective configuration: %w", err)
		}
		user.EffectiveSHA256 = sha256Hex(eff)
		if c := configChange(mf.Config, user); c != "" {
			return nil, fmt.Errorf("%w: %w: resume of %s refused: %s changed since the run started (pass --force to resume anyway with your config)",
				config.ErrBadInput, ErrResumeChanged, dir, c)
		}
	}
	o.OutDir = "" // Prepare refuses a non-empty directory: this one is resumed
	m, err = Prepare(o, opts...)
	if err != nil {
		return nil, err
	}
	m.opts.OutDir = dir
	if mf.RunID != "" {
		m.plan.RunID = mf.RunID // the run keeps its id
	}
	ws, err := openWorkspace(m.opts)
	if err != nil {
		return nil, err
	}
	now, err := manifestFor(m.opts, m.missionRaw, ws)
	closeWorkspace(ws)
	if err != nil {
		return nil, err
	}
	now.Attempts, now.RunID = mf.Attempts, mf.RunID
	changed := manifestChanges(mf, now)
	if len(changed) > 0 && !ro.Force {
		return nil, fmt.Errorf("%w: %w: resume of %s refused: %s changed since the run started (pass --force to resume anyway)",
			config.ErrBadInput, ErrResumeChanged, dir, strings.Join(changed, "; "))
	}
	jo.runID = m.plan.RunID
	m.resume = &resumeState{was: mf, now: now, changed: changed, lock: lock, journal: jo}
	return m, nil
}

// checkJournal reads dir's journal (when it has one) without changing it
// and verifies every record as a resume would.
func checkJournal(dir string, jo journalOpen) error {
	path := filepath.Join(dir, runfiles.JournalFile)
	f, _, err := safeio.Open(path, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	_, _, _, err = scanJournal(f, runfiles.JournalFile, jo.verifier(), nil)
	return err
}

// manifestOptions rebuilds the Options a run was started with.
func manifestOptions(mf *runfiles.Manifest, dir string, ro ResumeOptions) (Options, error) {
	if ro.Registry == nil {
		return Options{}, fmt.Errorf("%w: no provider registry", config.ErrBadInput)
	}
	o := Options{Registry: ro.Registry, MissionName: mf.Mission.Name, MissionDir: mf.Mission.Dir, MissionPath: mf.Mission.Path,
		Scale: mf.Scale, Personality: mf.Personality, Seed: mf.Seed, Replays: mf.Replays, FileScope: mf.FileScope,
		GroundTruth: "", OutDir: dir, Force: ro.Force, Observers: ro.Observers, KeepPrompts: ro.KeepPrompts, KeepEvents: ro.KeepEvents,
		ConfigPath: ro.ConfigPath} // the user's config, never the one run.json names
	if mf.Mission.Path != "" {
		f, _, err := safeio.Open(mf.Mission.Path, false)
		if err != nil {
			return o, fmt.Errorf("%w: resume: the mission: %w", config.ErrBadInput, err)
		}
		o.Mission, err = ReadMission(f)
		f.Close()
		if err != nil {
			return o, fmt.Errorf("%w: resume: the mission %s: %w", config.ErrBadInput, mf.Mission.Path, err)
		}
	} else {
		o.Mission = mf.Mission.Text
	}
	var err error
	if o.Provider.Kind == "" && mf.Provider != "" {
		if o.Provider, err = providers.ParseRef(mf.Provider); err != nil {
			return o, fmt.Errorf("%w: %s: provider: %w", config.ErrBadInput, runfiles.ManifestFile, err)
		}
	}
	if o.Models, err = parseRefMap("models", mf.Models); err != nil {
		return o, fmt.Errorf("%w: %s: %w", config.ErrBadInput, runfiles.ManifestFile, err)
	}
	if o.Fallbacks, err = parseRefMap("fallbacks", mf.Fallbacks); err != nil {
		return o, fmt.Errorf("%w: %s: %w", config.ErrBadInput, runfiles.ManifestFile, err)
	}
	if mf.Workspace != nil {
		o.Workspace = mf.Workspace.Dir
	}
	o.AllowHomeWorkspace = ro.AllowHomeWorkspace
	o.FollowUp = mf.FollowUp
	if mf.GroundTruth != nil {
		o.GroundTruth = mf.GroundTruth.Path
	}
	o.Config = ro.Config
	if o.Config == nil {
		cfg, err := config.Load(ro.ConfigPath, ro.Registry)
		if err != nil {
			return o, fmt.Errorf("%w: resume: %w", config.ErrBadInput, err)
		}
		switch mf.Config.Spec {
		case "":
		case shadow.SpecV1, shadow.SpecV2:
			cfg.ShadowScoring.SpecVersion = mf.Config.Spec
		default:
			return o, fmt.Errorf("%w: %s: config.spec %q: want %s or %s", config.ErrBadInput, runfiles.ManifestFile, mf.Config.Spec, shadow.SpecV2, shadow.SpecV1)
		}
		o.Config = cfg
	}
	return o, nil
}

// ResumeChanges is what changed since the run started, when it was resumed
// with Force (nil otherwise).
func (m *Mission) ResumeChanges() []string {
	if m.resume == nil {
		return nil
	}
	return m.resume.changed
}

// loadStoredEnvelope reads and verifies the envelope a resumed run sealed
// before (nil when it never got that far).
func loadStoredEnvelope(path string) (*shadow.Envelope, []byte, error) {
	b, err := safeio.ReadFileNoFollow(path, shadow.MaxEnvelopeBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	env, err := shadow.ParseSealed(path, b)
	if err != nil {
		return nil, nil, err
	}
	if err := env.Verify(); err != nil {
		return nil, nil, fmt.Errorf("stored envelope %s: %w", path, err)
	}
	return env, b, nil
}

// reopen readies the directory of a resumed run: it verifies the stored
// envelope (keeping a copy beside it), moves the previous attempt's logs
// under attempts/N/, removes the files the run writes again and returns
// the resume record. mf (what the run is started with now) replaces
// run.json with the attempt counted.
func (m *Mission) reopen(path string, mf *runfiles.Manifest) (rundir.Dir, *ResumeInfo, error) {
	rs := m.resume
	envPath := filepath.Join(path, runfiles.SealedDir, runfiles.EnvelopeFile)
	env, raw, err := loadStoredEnvelope(envPath)
	if err != nil {
		return rundir.Dir{}, nil, fmt.Errorf("%w: resume: %w", config.ErrBadInput, err)
	}
	prev := rs.was.Attempts
	dir, err := rundir.Reopen(path, prev)
	if errors.Is(err, rundir.ErrNotDir) {
		// A run directory someone handed over, with attempts/ linked out of
		// it: refused as bad input (exit 2), nothing written outside.
		return rundir.Dir{}, nil, fmt.Errorf("%w: %w", config.ErrBadInput, err)
	}
	if err != nil {
		return rundir.Dir{}, nil, err
	}
	if env != nil {
		if err := dir.WriteFile(filepath.Join(runfiles.SealedDir, fmt.Sprintf("envelope.attempt-%d.json", prev)), raw, 0o600); err != nil {
			return rundir.Dir{}, nil, err
		}
	}
	m.storedEnv = env
	mf.Attempts = prev + 1
	return dir, &ResumeInfo{Attempt: mf.Attempts, Changed: rs.changed}, nil
}

func resumeMessage(ri *ResumeInfo) string {
	msg := fmt.Sprintf("resumed (attempt %d): %d journaled answers to replay", ri.Attempt, ri.JournalRecords)
	if ri.TornLineDropped {
		msg += "; a torn last line of journal.jsonl was dropped"
	}
	if ri.UnsignedRecords > 0 {
		msg += fmt.Sprintf("; %d of them carry no MAC and are replayed unverified (--trust-unsigned-journal)", ri.UnsignedRecords)
	}
	if len(ri.Changed) > 0 {
		msg += "; resumed with --force although " + strings.Join(ri.Changed, "; ") + " changed"
	}
	return msg
}
