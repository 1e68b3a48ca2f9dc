package nexus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/vocab"
)

// This file is the follow-up run (swarm run --follow-up PREV_RUN_DIR): what
// it reads of the previous run, the bounded "previous run" context its
// agents get, and the chain of runs with its Shadow Score velocity. See
// docs/follow-up.md.

// MaxChain bounds a follow-up chain: at most this many runs, this one
// included. Older runs are left out (FollowUp.Truncated).
const MaxChain = 50

// Bounds of the previous-run context the agents get.
const (
	maxPriorFindings   = 8   // finding titles shown
	maxPriorTitleRunes = 100 // per title
	maxPriorChars      = 600 // the whole block (it shares the capsule brief's commanders.MaxBriefChars)
)

// followUpSetup is a follow-up read at Phase 0: the record without this
// run's entry (Chain holds the predecessors, oldest first) and the rendered
// previous-run block.
type followUpSetup struct {
	info  runfiles.FollowUp
	block string
}

// criterionIDRe finds a sealed criterion's id in text.
var criterionIDRe = regexp.MustCompile(`(?i)\bsc-\d{2,}\b`)

// prepareFollowUp reads the previous run of o.FollowUp (nil without one).
// A previous run that cannot be used is bad input naming the file or
// field: no directory, no result.json (the run never finished: resume it
// first), a result.json that is not a run's, a run that was only sealed,
// or sealed criteria that do not verify against what the run committed.
func prepareFollowUp(o Options) (*followUpSetup, error) {
	if o.FollowUp == "" {
		return nil, nil
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: --follow-up %s: %s", config.ErrBadInput, o.FollowUp, fmt.Sprintf(format, a...))
	}
	dir, err := filepath.Abs(o.FollowUp)
	if err != nil {
		return nil, bad("%v", err)
	}
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return nil, bad("%v", err)
	case !fi.IsDir():
		return nil, bad("not a directory: give the previous run's directory")
	}
	if o.OutDir != "" {
		if out, err := filepath.Abs(o.OutDir); err == nil && sameDir(out, dir) {
			return nil, bad("it is the run directory --out: a run cannot follow itself up")
		}
	}
	rec, err := readRunRecord(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, bad("%s has no result.json: the run never finished (resume it with --resume first)", dir)
	case err != nil:
		return nil, bad("%v", err)
	case rec.Status == runfiles.StatusSealed:
		return nil, bad("%s: status sealed: the run was only sealed, it has no work to follow up", filepath.Join(dir, runfiles.ResultFile))
	}
	s := &followUpSetup{info: runfiles.FollowUp{PreviousDir: dir, PreviousRunID: rec.Plan.RunID}}
	fu := &s.info
	prior, distinct, err := readPrior(dir, rec)
	if err != nil {
		return nil, bad("%v", err)
	}
	fu.Prior = prior
	for _, m := range prior.Missing {
		fu.Warnings = append(fu.Warnings, "previous run "+rec.Plan.RunID+": "+m)
	}
	if prev, err := rundir.ReadFile(filepath.Join(dir, runfiles.MissionFile)); err != nil {
		fu.Warnings = append(fu.Warnings, fmt.Sprintf("cannot tell whether the mission changed: %v", err))
	} else if strings.TrimSpace(string(prev)) != strings.TrimSpace(o.Mission) {
		fu.MissionChanged = true
		fu.Warnings = append(fu.Warnings, "the previous run's mission differs from this one (a revised mission): its findings and failed categories are passed on as they are")
	}
	first := chainRun(dir, rec) // readPrior verified its envelope when it has a score
	chain, truncated, warns := readPredecessors(dir, rec, MaxChain-2)
	fu.Chain = append(chain, first)
	fu.Truncated = truncated
	fu.Warnings = append(fu.Warnings, warns...)
	if s.block, err = renderPrior(&fu.Prior, distinct); err != nil {
		return nil, err
	}
	return s, nil
}

// sameDir says whether a and b are the same directory (the same path, or
// the same file when both exist).
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// chainRun is a run's entry in a chain, from its result.json.
func chainRun(dir string, rec *runRecord) runfiles.ChainRun {
	return newChainRun(rec.Plan.RunID, dir, rec.Status, rec.ShadowValid, rec.Aggregate)
}

// newChainRun is a run's entry in a chain from how it ended. Its score is
// the aggregate median when shadow scoring was valid and judged a bundle.
func newChainRun(runID, dir, status string, shadowValid bool, a *ShadowAggregate) runfiles.ChainRun {
	c := runfiles.ChainRun{RunID: runID, Dir: dir, Status: status}
	if a != nil {
		c.Scored, c.Planned = a.Scored, a.Planned
	}
	switch {
	case status == runfiles.StatusInvalid || !shadowValid:
		c.NoScore = "shadow scoring was invalid"
	case a == nil || a.Scored == 0 || a.Median == nil:
		c.NoScore = "no bundle was judged"
	default:
		v := *a.Median
		c.ShadowScore, c.Level = &v, a.Level
	}
	return c
}

// readPredecessors follows the previous run's own follow_up.previous_dir
// back, at most limit runs, never visiting a directory twice. It returns
// them oldest first. A predecessor that cannot be read, or whose sealed
// criteria no longer verify, ends the chain there or loses its score, and
// a warning says so.
func readPredecessors(dir string, rec *runRecord, limit int) (chain []runfiles.ChainRun, truncated bool, warns []string) {
	visited := []string{dir}
	for rec.FollowUp != nil && rec.FollowUp.PreviousDir != "" {
		next := rec.FollowUp.PreviousDir
		if slices.ContainsFunc(visited, func(v string) bool { return sameDir(v, next) }) {
			warns = append(warns, fmt.Sprintf("the chain returns to %s: stopped there (a cycle)", next))
			truncated = true
			break
		}
		if len(chain) >= limit {
			warns = append(warns, fmt.Sprintf("the chain is longer than %d runs: runs before %s are left out", MaxChain, chain[len(chain)-1].RunID))
			truncated = true
			break
		}
		r, err := readRunRecord(next)
		if err != nil {
			warns = append(warns, fmt.Sprintf("an earlier run of the chain cannot be read (%v): the chain starts after it", err))
			truncated = true
			break
		}
		c := chainRun(next, r)
		if c.ShadowScore != nil {
			if err := verifyRunEnvelope(next, r.SealedHash); err != nil {
				c.ShadowScore, c.Level, c.NoScore = nil, "", "its sealed criteria do not verify: "+err.Error()
				warns = append(warns, fmt.Sprintf("run %s: %s", c.RunID, c.NoScore))
			}
		}
		chain = append(chain, c)
		visited = append(visited, next)
		rec = r
	}
	slices.Reverse(chain)
	return chain, truncated, warns
}

// verifyRunEnvelope checks a finished run's sealed envelope: its criteria
// hash to the committed hash, which is the one events.jsonl recorded before
// any commander started and the one result.json names.
func verifyRunEnvelope(dir, resultHash string) error {
	path := runfiles.EnvelopePath(dir)
	env, err := shadow.LoadSealed(path)
	if err != nil {
		return err
	}
	if err := env.Verify(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := runfiles.VerifyCommitment(dir, env); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if resultHash != env.SealedHash {
		return fmt.Errorf("%s: %w: result.json sealed_hash %s, envelope %s", filepath.Join(dir, runfiles.ResultFile), shadow.ErrTampered, resultHash, env.SealedHash)
	}
	return nil
}

// readPrior reads what the agents get from the previous run: its score,
// its reports' failed criteria by category and its findings. A run with a
// score or judged reports must have sealed criteria that verify (else an
// error naming the file); a run that was never judged gives what exists,
// and Missing says what does not.
// distinct is the number of distinct finding titles that could be shown
// (p.Findings are the first of them).
func readPrior(dir string, rec *runRecord) (p runfiles.PriorContext, distinct int, err error) {
	c := chainRun(dir, rec)
	p = runfiles.PriorContext{RunID: rec.Plan.RunID, Status: rec.Status, ShadowScore: c.ShadowScore, Level: c.Level, NoScore: c.NoScore, Scored: c.Scored, Planned: c.Planned,
		FailedCategories: []events.CategoryCount{}, Findings: []runfiles.PriorFinding{}}
	if c.NoScore != "" {
		p.Missing = append(p.Missing, "no Shadow Score: "+c.NoScore)
	} else if rec.Status != runfiles.StatusComplete {
		p.Missing = append(p.Missing, fmt.Sprintf("status %s: its Shadow Score covers %d of %d bundles", rec.Status, c.Scored, c.Planned))
	}
	var judged []shadow.Report
	if rec.Status != runfiles.StatusInvalid {
		reports, err := runfiles.ReadReports(dir)
		if err != nil && !errors.Is(err, runfiles.ErrNoReports) {
			return p, 0, err
		}
		for _, r := range reports {
			if r.Report.Valid && r.Report.Scored {
				judged = append(judged, r)
			}
		}
	}
	if c.ShadowScore != nil || len(judged) > 0 {
		if err := verifyRunEnvelope(dir, rec.SealedHash); err != nil {
			return p, 0, fmt.Errorf("its sealed criteria do not verify, so its scores cannot be trusted: %w", err)
		}
		for _, r := range judged {
			if r.Report.SealedHash != rec.SealedHash {
				return p, 0, fmt.Errorf("report %s was judged against %s, the run sealed %s: %w", r.Report.ID, r.Report.SealedHash, rec.SealedHash, shadow.ErrTampered)
			}
		}
	}
	if len(judged) == 0 && rec.Status != runfiles.StatusInvalid {
		p.Missing = append(p.Missing, "no judged Shadow Report (reports/*.json): no failed categories to pass on")
	}
	p.FailedCategories = failedCategories(judged)
	p.Findings, distinct, p.FindingsTotal, p.FindingsWithheld = priorFindings(rec)
	if p.FindingsTotal == 0 {
		p.Missing = append(p.Missing, "no findings")
	}
	return p, distinct, nil
}

// failedCategories counts the failed sealed criteria of judged reports by
// category (a configured category outside the spec's enum by its own name):
// distinct criteria and failed verdicts, most failures first. Criterion ids
// are used only to count distinct criteria; they are not returned.
func failedCategories(reports []shadow.Report) []events.CategoryCount {
	type acc struct {
		ids      map[string]bool
		failures int
	}
	by := map[string]*acc{}
	for _, r := range reports {
		for _, f := range r.Failures {
			cat := f.Category
			if f.XCategory != "" {
				cat = f.XCategory
			}
			cat = categoryName(cat)
			a := by[cat]
			if a == nil {
				a = &acc{ids: map[string]bool{}}
				by[cat] = a
			}
			a.ids[f.TestName] = true
			a.failures++
		}
	}
	out := []events.CategoryCount{}
	for cat, a := range by {
		out = append(out, events.CategoryCount{Category: cat, Criteria: len(a.ids), Failures: a.failures})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Failures != out[j].Failures {
			return out[i].Failures > out[j].Failures
		}
		return out[i].Category < out[j].Category
	})
	return out
}

// categoryName keeps a category name to lower-case letters, digits, '_'
// and '-' (at most 40): a name, never prose.
func categoryName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if b.Len() >= 40 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

// priorityRank orders findings high, medium, low, then anything else.
func priorityRank(p string) int {
	switch p {
	case "high":
		return 0
	case "medium":
		return 1
	case "low":
		return 2
	}
	return 3
}

// priorFindings picks the findings shown to the agents: titles on one line,
// capped, duplicates dropped, high priority first (then the bundles' order),
// at most maxPriorFindings. A title naming a sealed criterion's id (a
// commander may echo its hardening feedback) or the protocol
// (vocab.NamesProtocol: a commander may echo feedback of a run made
// before issue 20) is withheld.
func priorFindings(rec *runRecord) (shown []runfiles.PriorFinding, distinct, total, withheld int) {
	var all []runfiles.PriorFinding
	seen := map[string]bool{}
	for _, b := range rec.Bundles {
		if b.Failed {
			continue
		}
		for _, f := range b.Bundle.Findings {
			total++
			title := strings.Join(strings.Fields(f.Title), " ")
			if title == "" {
				continue
			}
			if criterionIDRe.MatchString(title) || vocab.NamesProtocol(title) {
				withheld++
				continue
			}
			if utf8.RuneCountInString(title) > maxPriorTitleRunes {
				title = string([]rune(title)[:maxPriorTitleRunes-1]) + "…"
			}
			if k := strings.ToLower(title); !seen[k] {
				seen[k] = true
				all = append(all, runfiles.PriorFinding{Bundle: b.ID, Priority: categoryName(f.Priority), Title: title})
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return priorityRank(all[i].Priority) < priorityRank(all[j].Priority) })
	distinct = len(all)
	if len(all) > maxPriorFindings {
		all = all[:maxPriorFindings]
	}
	return append([]runfiles.PriorFinding{}, all...), distinct, total, withheld
}

// priorView is prompts/templates/previous_run.tmpl's data.
type priorView struct {
	RunID, Status, Score string
	Categories           []events.CategoryCount
	Findings             []runfiles.PriorFinding
	More                 int // findings not shown
}

// renderPrior renders the previous-run block, at most maxPriorChars: the
// findings shown (then the categories) shrink until it fits, and p keeps
// only what was shown.
func renderPrior(p *runfiles.PriorContext, distinct int) (string, error) {
	v := priorView{RunID: p.RunID, Status: p.Status, Score: "none: " + priorNoScore(p.NoScore),
		Categories: p.FailedCategories, Findings: p.Findings}
	if p.ShadowScore != nil {
		v.Score = fmt.Sprintf("median %.1f%% (%s), %d of %d bundles scored", *p.ShadowScore, p.Level, p.Scored, p.Planned)
	}
	for {
		v.More = max(distinct, len(p.Findings)) - len(v.Findings)
		s, err := prompts.Render("previous_run", v)
		if err != nil {
			return "", err
		}
		s = strings.TrimSpace(s)
		if utf8.RuneCountInString(s) <= maxPriorChars {
			p.Findings, p.FailedCategories = v.Findings, v.Categories
			return s, nil
		}
		if len(v.Findings) > 0 {
			v.Findings = v.Findings[:len(v.Findings)-1]
			continue
		}
		if len(v.Categories) > 0 {
			v.Categories = v.Categories[:len(v.Categories)-1]
			continue
		}
		p.Findings, p.FailedCategories = v.Findings, v.Categories
		return string([]rune(s)[:maxPriorChars-1]) + "…", nil
	}
}

// priorNoScore says to the agents why the previous run has no score,
// without naming the seal, its criteria or the scoring protocol (the
// reasons result.json records do: "shadow scoring was invalid", "its
// sealed criteria do not verify: ...").
func priorNoScore(reason string) string {
	if reason == "no bundle was judged" {
		return "no deliverable was scored"
	}
	return "its scores cannot be trusted"
}

// chainVelocity is the Shadow Score velocity of a chain (oldest first):
// (first − last) / (runs − 1), positive when scores fall. It is absent, with
// the reason, for a chain of one run or when any run did not complete with
// a Shadow Score: never computed over a missing score.
func chainVelocity(chain []runfiles.ChainRun) (*float64, string) {
	if len(chain) < 2 {
		return nil, "a chain of one run has no velocity"
	}
	for _, c := range chain {
		switch {
		case c.ShadowScore == nil:
			reason := c.NoScore
			if reason == "" {
				reason = "no Shadow Score"
			}
			return nil, fmt.Sprintf("run %s (%s) has no Shadow Score: %s", c.RunID, c.Status, reason)
		case c.Status != runfiles.StatusComplete:
			return nil, fmt.Sprintf("run %s is %s (%d of %d bundles scored): velocity needs every run of the chain complete", c.RunID, c.Status, c.Scored, c.Planned)
		}
	}
	v := (*chain[0].ShadowScore - *chain[len(chain)-1].ShadowScore) / float64(len(chain)-1)
	return &v, ""
}

// followUpEvent emits the follow_up event (Phase 0).
func (r *deps) followUpEvent() {
	if r.fu == nil {
		return
	}
	fu := r.fu.info
	p := fu.Prior
	r.rec.emit(events.Event{Phase: events.Phase0, Kind: events.FollowUp, Message: "follow-up of " + fu.PreviousRunID, Data: events.FollowUpData{
		PreviousDir: fu.PreviousDir, PreviousRunID: fu.PreviousRunID, PreviousStatus: p.Status, PreviousScore: p.ShadowScore,
		ChainRuns: len(fu.Chain) + 1, MissionChanged: fu.MissionChanged, FailedCategories: p.FailedCategories,
		Findings: len(p.Findings), Warnings: fu.Warnings}})
}

// priorBlock is the rendered previous-run block ("" without a follow-up).
func (r *deps) priorBlock() string {
	if r.fu == nil {
		return ""
	}
	return r.fu.block
}

// followUpResult is the run's follow_up record: the predecessors, this run
// (as it ended) and the chain's velocity; nil without a follow-up.
func (r *deps) followUpResult(res *Result) *runfiles.FollowUp {
	if r.fu == nil {
		return nil
	}
	fu := r.fu.info
	fu.Chain = slices.Clone(fu.Chain)
	fu.Warnings = slices.Clone(fu.Warnings)
	dir, err := filepath.Abs(res.Dir)
	if err != nil {
		dir = res.Dir
	}
	fu.Chain = append(fu.Chain, newChainRun(r.plan.RunID, dir, res.Status, res.ShadowValid, &res.Aggregate))
	fu.Velocity, fu.VelocityAbsent = chainVelocity(fu.Chain)
	return &fu
}
