package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/internal/rundir"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// Detail is everything a run page shows of one run directory, read from
// its files (result.json, evidence.json, the sealed envelope,
// telemetry.json, reviews/): never from the live workspace.
type Detail struct {
	Run Run
	// Plan is the briefing: what the run deployed.
	Plan Plan
	// Synthesis is Phase 7's summary and top action; nil when the run made
	// none.
	Synthesis *Synthesis
	Bundles   []Bundle
	// Criteria are the sealed criteria, revealed from the envelope now
	// that the run is over; nil when the run has no envelope.
	Criteria []shadow.Criterion
	// Sealed says whether the envelope's criteria hash to the sealed hash
	// the run committed to (runfiles.VerifyCommitment); SealedProblem
	// says why not.
	SealedHash    string
	Sealed        bool
	SealedProblem string
	// Dissent are the reviewers' score cards with a dissent or conflicts.
	Dissent   []Dissent
	Telemetry *runfiles.Telemetry
	// Files are every file of the run directory, relative to it,
	// slash-separated, sorted.
	Files []File
	// Problems say what could not be read (the page shows the rest).
	Problems []string
}

// Plan is the part of result.json's plan a briefing shows.
type Plan struct {
	Mission    string          `json:"mission"`
	Scale      string          `json:"scale"`
	Domains    []string        `json:"domains"`
	Commanders int             `json:"commanders"`
	SquadLeads int             `json:"squad_leads"`
	Workers    int             `json:"workers"`
	Reviewers  int             `json:"reviewers"`
	Agents     int             `json:"agents"`
	Criteria   int             `json:"criteria"`
	CostCeil   float64         `json:"cost_ceiling_usd"`
	Models     json.RawMessage `json:"models"`
}

// RoleModels are the plan's models, one line per role ("workers":
// "mock:honest"), sorted by role.
func (p Plan) RoleModels() [][2]string {
	var m map[string]json.RawMessage
	if json.Unmarshal(p.Models, &m) != nil {
		return nil
	}
	var out [][2]string
	for role, raw := range m {
		refs := modelRefs(raw)
		out = append(out, [2]string{role, strings.Join(refs, ", ")})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// Synthesis is Phase 7's synthesis.
type Synthesis struct {
	Summary   string   `json:"summary"`
	TopAction string   `json:"top_action"`
	QuickWins []string `json:"quick_wins"`
}

// Bundle is one domain's bundle with its gate, scores and verdicts.
type Bundle struct {
	ID          string                  `json:"id"`
	Domain      string                  `json:"domain"`
	Commander   string                  `json:"commander"`
	Model       string                  `json:"model"`
	Failed      bool                    `json:"failed"`
	Salvaged    bool                    `json:"salvaged"`
	Error       string                  `json:"error"`
	ShadowScore *float64                `json:"shadow_score"`
	Level       string                  `json:"level"`
	Gate        *shadow.GateDecision    `json:"gate"`
	Tier        string                  `json:"tier"`
	InSynthesis bool                    `json:"in_synthesis"`
	Hardening   *shadow.HardeningResult `json:"hardening"`
	Initial     *shadow.Evaluation      `json:"initial_evaluation"`
	Final       *shadow.Evaluation      `json:"final_evaluation"`
	Evidence    *workspace.Counts       `json:"evidence"`
	Review      struct {
		Reviews     int     `json:"reviews"`
		Score       float64 `json:"score"`
		Reliability float64 `json:"reliability"`
		Conflicts   int     `json:"conflicts"`
		Herding     bool    `json:"herding"`
	} `json:"review"`
	Bundle struct {
		Status   string `json:"status"`
		Summary  string `json:"summary"`
		Content  string `json:"content"`
		Findings []struct {
			Title    string              `json:"title"`
			Detail   string              `json:"detail"`
			Priority string              `json:"priority"`
			Effort   string              `json:"effort"`
			Evidence []citation.Citation `json:"evidence"`
		} `json:"findings"`
	} `json:"bundle"`

	// Findings are the bundle's findings with their citations checked
	// (from evidence.json when the run had a workspace).
	Findings []Finding `json:"-"`
}

// Verdict returns the bundle's final verdict on criterion id; ok is false
// when the bundle was not judged on it.
func (b Bundle) Verdict(id string) (v shadow.Verdict, ok bool) {
	if b.Final == nil {
		return v, false
	}
	i := slices.IndexFunc(b.Final.Verdicts, func(v shadow.Verdict) bool { return v.ID == id })
	if i < 0 {
		return v, false
	}
	return b.Final.Verdicts[i], true
}

// Finding is one finding with its checked citations.
type Finding struct {
	Title, Detail, Priority, Effort string
	Citations                       []Citation
}

// Citation is a cited piece of a workspace file as the run recorded and
// checked it: State is "verified", "unverifiable", "fabricated", or ""
// when the run did not check it (no workspace).
type Citation struct {
	citation.Citation
	State  string
	Reason string
}

// Lines are the quote's lines numbered from StartLine.
func (c Citation) Lines() []Line {
	var out []Line
	for i, l := range strings.Split(strings.TrimSuffix(c.Quote, "\n"), "\n") {
		out = append(out, Line{N: c.StartLine + i, Text: l})
	}
	return out
}

// Line is one numbered line of a quote.
type Line struct {
	N    int
	Text string
}

// Dissent is one reviewer's score card that disagreed.
type Dissent struct {
	Reviewer   string   `json:"reviewer"`
	Model      string   `json:"model"`
	BundleID   string   `json:"bundle_id"`
	Dissent    string   `json:"dissent"`
	Conflicts  []string `json:"conflicts"`
	Quarantine bool     `json:"quarantine"`
}

// File is one file of a run directory.
type File struct {
	Path string
	Size int64
}

// detailResult is the part of result.json a run page reads (see
// resultFile for why it is decoded here).
type detailResult struct {
	Plan      Plan       `json:"plan"`
	Bundles   []Bundle   `json:"bundles"`
	Synthesis *Synthesis `json:"synthesis"`
	Reviews   []struct {
		Reviewer string `json:"reviewer"`
		Model    string `json:"model"`
		BundleID string `json:"bundle_id"`
		Card     struct {
			Conflicts []string `json:"conflicts"`
			Dissent   string   `json:"dissent"`
		} `json:"card"`
		Quarantine bool `json:"quarantine"`
	} `json:"reviews"`
	Telemetry *runfiles.Telemetry `json:"telemetry"`
}

// evidenceFile is the part of evidence.json a run page reads: each final
// bundle's findings with their checked citations.
type evidenceFile struct {
	Bundles []struct {
		Domain   string `json:"domain"`
		Findings []struct {
			Index  int               `json:"index"`
			Checks []workspace.Check `json:"checks"`
		} `json:"findings"`
	} `json:"bundles"`
}

// envelopeFile is the sealed envelope with its criteria (shadow.Envelope
// keeps them unexported: only the judge reads them during a run).
type envelopeFile struct {
	SealedHash string             `json:"sealed_hash"`
	Criteria   []shadow.Criterion `json:"criteria"`
}

// maxFiles bounds the files a run page lists.
const maxFiles = 2000

// ReadDetail reads what a run page shows of the run directory rel
// (relative to runsDir). What cannot be read is listed in
// Detail.Problems; the error is for a directory that is not there.
func ReadDetail(runsDir, rel string) (*Detail, error) {
	dir := filepath.Join(runsDir, filepath.FromSlash(rel))
	if fi, err := os.Lstat(dir); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	d := &Detail{Run: ReadRun(runsDir, rel)}
	problem := func(err error) { d.Problems = append(d.Problems, err.Error()) }

	var res detailResult
	if err := readJSON(dir, runfiles.ResultFile, &res); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			problem(err)
		}
	}
	d.Plan, d.Synthesis, d.Bundles, d.Telemetry = res.Plan, res.Synthesis, res.Bundles, res.Telemetry
	if d.Telemetry == nil {
		var t runfiles.Telemetry
		if err := readJSON(dir, runfiles.TelemetryFile, &t); err == nil {
			d.Telemetry = &t
		} else if !errors.Is(err, fs.ErrNotExist) {
			problem(err)
		}
	}
	for _, r := range res.Reviews {
		if r.Card.Dissent != "" || len(r.Card.Conflicts) > 0 {
			d.Dissent = append(d.Dissent, Dissent{Reviewer: r.Reviewer, Model: r.Model, BundleID: r.BundleID,
				Dissent: r.Card.Dissent, Conflicts: r.Card.Conflicts, Quarantine: r.Quarantine})
		}
	}

	var ev evidenceFile
	if err := readJSON(dir, runfiles.EvidenceFile, &ev); err != nil && !errors.Is(err, fs.ErrNotExist) {
		problem(err)
	}
	for i := range d.Bundles {
		b := &d.Bundles[i]
		var checked map[int][]workspace.Check
		for _, eb := range ev.Bundles {
			if eb.Domain == b.Domain {
				checked = map[int][]workspace.Check{}
				for _, f := range eb.Findings {
					checked[f.Index] = f.Checks
				}
			}
		}
		for fi, f := range b.Bundle.Findings {
			card := Finding{Title: f.Title, Detail: f.Detail, Priority: f.Priority, Effort: f.Effort}
			if checks, ok := checked[fi]; ok {
				for _, c := range checks {
					card.Citations = append(card.Citations, Citation{Citation: c.Citation, State: string(c.State), Reason: c.Reason})
				}
			} else {
				for _, c := range f.Evidence {
					card.Citations = append(card.Citations, Citation{Citation: c})
				}
			}
			b.Findings = append(b.Findings, card)
		}
	}

	var env envelopeFile
	switch err := readJSON(dir, filepath.ToSlash(filepath.Join(runfiles.SealedDir, runfiles.EnvelopeFile)), &env); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		problem(err)
	default:
		d.Criteria, d.SealedHash = env.Criteria, env.SealedHash
		d.Sealed, d.SealedProblem = checkSeal(dir, env)
	}

	files, err := listFiles(dir)
	if err != nil {
		problem(err)
	}
	d.Files = files
	return d, nil
}

// checkSeal checks that the revealed criteria are the ones the run
// committed to: they hash to the envelope's sealed hash, and the envelope
// matches the commitment recorded in events.jsonl before any commander
// started.
func checkSeal(dir string, env envelopeFile) (bool, string) {
	h, err := shadow.HashCriteria(env.Criteria)
	if err != nil {
		return false, err.Error()
	}
	if h != env.SealedHash {
		return false, fmt.Sprintf("the criteria hash to %s, the envelope says %s", h, env.SealedHash)
	}
	sealed, err := shadow.LoadSealed(filepath.Join(dir, runfiles.SealedDir, runfiles.EnvelopeFile))
	if err != nil {
		return false, err.Error()
	}
	if err := runfiles.VerifyCommitment(dir, sealed); err != nil {
		return false, err.Error()
	}
	return true, ""
}

func readJSON(dir, name string, v any) error {
	b, err := rundir.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// listFiles lists the regular files of dir (not following links), up to
// maxFiles.
func listFiles(dir string) ([]File, error) {
	var out []File
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable subdirectory: list the rest
		}
		if !e.Type().IsRegular() {
			return nil
		}
		if len(out) >= maxFiles {
			return fs.SkipAll
		}
		fi, err := e.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, File{Path: filepath.ToSlash(rel), Size: fi.Size()})
		return nil
	})
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return out, err
}
