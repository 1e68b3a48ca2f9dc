package nexus

import (
	"sort"
	"sync"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/workspace"
)

// This file checks a run's evidence: every citation of every atom, of
// every (final) bundle and of every finding, against the workspace. The
// counts reach the bundles, result.json, telemetry.json, evidence.json and
// report.md only when the run had a workspace; without one evidence was
// not measured and every one of them is absent (nil), never zero.

// verifier checks one citation against a workspace (*workspace.FS; tests
// use a fake with known states).
type verifier interface {
	Verify(citation.Citation) workspace.Check
}

// workspaceVerifier is a verifier that can also say what it checked
// against: *workspace.FS.
type workspaceVerifier interface {
	verifier
	Dir() string
	Fingerprint() workspace.Fingerprint
}

// evidenceSetup is what Prepare resolved for the evidence part of a run:
// the ground truth (loaded, so a bad file fails before any LLM call) and,
// for tests, a verifier standing in for the workspace.
type evidenceSetup struct {
	gt     truthMatcher // nil without Options.GroundTruth
	gtFile string
	verify workspaceVerifier // a test's fake; nil: the run's workspace (deps.ws)
}

// evidenceVerifier is the run's verifier: a test's fake, else the opened
// workspace, else nil (the run has no workspace: nothing is measured).
func (r *deps) evidenceVerifier() workspaceVerifier {
	if r.ev.verify != nil {
		return r.ev.verify
	}
	if r.ws != nil {
		return r.ws
	}
	return nil
}

// arrivedChecks are the checked citations of each atom that finished, by
// its worker's agent id (checkArrived): what Phase 4 returns (deployment)
// for Phase 7 to count.
type arrivedChecks struct {
	mu sync.Mutex
	m  map[string][]workspace.Check
}

// checkArrived verifies the citations of an atom as its worker finishes,
// the only time an atom is checked in a run: the sandbox bridge lowers the
// atom's interaction for what is fabricated, and Phase 7 counts the same
// checks (checkBundle). The atom is judged against the workspace as it was
// when it arrived, just after its worker read it; a file changed later in
// the run does not change the atom's verdicts (a bundle's and its
// findings' citations are checked when the judge reads it, each hardening
// revision as revised, and in Phase 7 for a bundle never judged). The
// checks are kept in into. Nil without a workspace or for a failed atom.
func (r *deps) checkArrived(into *arrivedChecks, a commanders.AtomResult) []workspace.Check {
	v := r.evidenceVerifier()
	if v == nil || a.Failed {
		return nil
	}
	cs := checkAll(v, a.Atom.Evidence)
	into.mu.Lock()
	defer into.mu.Unlock()
	if into.m == nil {
		into.m = map[string][]workspace.Check{}
	}
	into.m[a.AgentID] = cs
	return cs
}

// atom returns the checks checkArrived made of agent's atom (none when c
// is nil).
func (c *arrivedChecks) atom(agent string) ([]workspace.Check, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cs, ok := c.m[agent]
	return cs, ok
}

// atomEvidence is one atom's checked citations (evidence.json "atoms").
type atomEvidence struct {
	AgentID string            `json:"agent_id"`
	Model   string            `json:"model"`
	BriefID string            `json:"brief_id"`
	Checks  []workspace.Check `json:"checks"`
}

// bundleEvidence is one final bundle's checked citations: its own and
// each finding's (evidence.json "bundles").
type bundleEvidence struct {
	Domain    string            `json:"domain"`
	Commander string            `json:"commander"`
	Model     string            `json:"model"`
	Evidence  []workspace.Check `json:"evidence"`
	Findings  []findingEvidence `json:"findings"`
}

// findingEvidence is one finding's checked citations; Index is its place
// in the bundle's findings (from 0).
type findingEvidence struct {
	Index  int               `json:"index"`
	Title  string            `json:"title"`
	Checks []workspace.Check `json:"checks"`
}

// evidenceRecord is evidence.json: every checked citation of a run with a
// workspace, and their counts.
type evidenceRecord struct {
	Workspace WorkspaceInfo               `json:"workspace"`
	Atoms     []atomEvidence              `json:"atoms"`
	Bundles   []bundleEvidence            `json:"bundles"`
	Counts    workspace.Counts            `json:"counts"`
	ByModel   map[string]workspace.Counts `json:"by_model"`
	ByAgent   map[string]workspace.Counts `json:"by_agent"`
}

// bundleChecks are a bundle's checked citations, kept on its outcome for
// the consensus formula (per atom), the report (per finding) and the
// ground truth.
type bundleChecks struct {
	atoms    [][]workspace.Check // aligned with result.Atoms; nil for a failed atom
	own      []workspace.Check   // the final bundle's evidence
	findings [][]workspace.Check // aligned with Bundle.Findings
}

// findingVerified reports whether finding i of o's bundle has at least one
// verified citation: what a finding needs to feed the synthesis, count in
// a domain's risk or be recommended. False when evidence was not measured.
func (o *BundleOutcome) findingVerified(i int) bool {
	return o.checks != nil && i < len(o.checks.findings) && workspace.CountChecks(o.checks.findings[i]).Verified > 0
}

// checkAll verifies every citation.
func checkAll(v verifier, cs []citation.Citation) []workspace.Check {
	out := make([]workspace.Check, 0, len(cs))
	for _, c := range cs {
		out = append(out, v.Verify(c))
	}
	return out
}

// checkBundle verifies the citations of a bundle's atoms and of its final
// bundle (a failed bundle has none of its own) and sets o.Evidence: its
// own, its findings' and its atoms' citations. An atom arrived has already
// checked (by agent id; nil arrived: none) is not checked again, nor is a
// final bundle the judge read with its ledger (judgeInput checked it).
func checkBundle(v verifier, o *BundleOutcome, arrived func(agent string) ([]workspace.Check, bool)) {
	bc := &bundleChecks{atoms: make([][]workspace.Check, len(o.result.Atoms))}
	var n workspace.Counts
	for i, a := range o.result.Atoms {
		if a.Failed {
			continue
		}
		cs, ok := []workspace.Check(nil), false
		if arrived != nil {
			cs, ok = arrived(a.AgentID)
		}
		if !ok {
			cs = checkAll(v, a.Atom.Evidence)
		}
		bc.atoms[i] = cs
		n = n.Plus(workspace.CountChecks(bc.atoms[i]))
	}
	if l := o.judgedLedger(); l != nil {
		// The judge's ledger checked this very bundle: its checks count.
		bc.own = l.Evidence
		n = n.Plus(workspace.CountChecks(bc.own))
		for _, f := range l.Findings {
			bc.findings = append(bc.findings, f.Checks)
			n = n.Plus(workspace.CountChecks(f.Checks))
		}
	} else if !o.Failed {
		bc.own = checkAll(v, o.Bundle.Evidence)
		n = n.Plus(workspace.CountChecks(bc.own))
		for _, f := range o.Bundle.Findings {
			fc := checkAll(v, f.Evidence)
			bc.findings = append(bc.findings, fc)
			n = n.Plus(workspace.CountChecks(fc))
		}
	}
	o.checks, o.Evidence = bc, &n
}

// verifyEvidence counts every citation of the run's final bundles (Phase
// 7, before consensus: hardening has revised what it would): the checks
// the judge's ledger made of the final bundle (judgeInput), or new ones
// for a bundle not judged; takes the atoms' checks made as they arrived
// (checkArrived, kept in arrived) and returns the run's tally and its
// ground-truth match.
// Without a workspace it does nothing and returns nil: evidence is not
// measured.
func (r *deps) verifyEvidence(bundles []*BundleOutcome, arrived *arrivedChecks) *evidenceTally {
	v := r.evidenceVerifier()
	if v == nil {
		return nil
	}
	for _, o := range bundles {
		checkBundle(v, o, arrived.atom)
	}
	f := evidenceFile(bundles)
	t := &evidenceTally{counts: &f.Counts, byModel: f.ByModel, byAgent: f.ByAgent}
	if r.ev.gt != nil {
		t.groundTruth = &GroundTruthResult{File: r.ev.gtFile, Match: r.ev.gt.Match(findingChecks(bundles))}
	}
	return t
}

// evidenceTally is every citation of a run counted by state (Result's
// Evidence, EvidenceByModel, EvidenceByAgent) and the findings matched
// against the ground truth (nil without one).
type evidenceTally struct {
	counts           *workspace.Counts
	byModel, byAgent map[string]workspace.Counts
	groundTruth      *GroundTruthResult
}

// findingChecks are the checked citations of every finding of every
// bundle, in bundle then finding order: what a ground truth is matched
// against.
func findingChecks(bundles []*BundleOutcome) [][]workspace.Check {
	out := [][]workspace.Check{}
	for _, o := range bundles {
		if o.checks == nil {
			continue
		}
		out = append(out, o.checks.findings...)
	}
	return out
}

// evidenceFile assembles evidence.json (without its workspace) from the
// bundles' checks: the atoms count for their worker and its model, a
// bundle's own and findings' citations for its commander and its model.
func evidenceFile(bundles []*BundleOutcome) evidenceRecord {
	f := evidenceRecord{Atoms: []atomEvidence{}, Bundles: []bundleEvidence{},
		ByModel: map[string]workspace.Counts{}, ByAgent: map[string]workspace.Counts{}}
	add := func(agent, model string, cs []workspace.Check) {
		n := workspace.CountChecks(cs)
		f.Counts = f.Counts.Plus(n)
		f.ByAgent[agent] = f.ByAgent[agent].Plus(n)
		f.ByModel[model] = f.ByModel[model].Plus(n)
	}
	for _, o := range bundles {
		bc := o.checks
		if bc == nil {
			continue
		}
		for i, a := range o.result.Atoms {
			if bc.atoms[i] == nil {
				continue
			}
			f.Atoms = append(f.Atoms, atomEvidence{AgentID: a.AgentID, Model: a.Model, BriefID: a.BriefID, Checks: bc.atoms[i]})
			add(a.AgentID, a.Model, bc.atoms[i])
		}
		if o.Failed {
			continue
		}
		be := bundleEvidence{Domain: o.Domain, Commander: o.Commander, Model: o.Model, Evidence: bc.own, Findings: []findingEvidence{}}
		add(o.Commander, o.Model, bc.own)
		for i, fc := range bc.findings {
			be.Findings = append(be.Findings, findingEvidence{Index: i, Title: o.Bundle.Findings[i].Title, Checks: fc})
			add(o.Commander, o.Model, fc)
		}
		f.Bundles = append(f.Bundles, be)
	}
	return f
}

// workspaceInfo is what the run's workspace looked like, nil without one.
// Dir is as given when it was given, else the root's absolute path.
func (r *deps) workspaceInfo() *WorkspaceInfo {
	v := r.evidenceVerifier()
	if v == nil {
		return nil
	}
	dir := r.opts.Workspace
	if dir == "" {
		dir = v.Dir()
	}
	return &WorkspaceInfo{Dir: dir, Fingerprint: v.Fingerprint()}
}

// writeEvidence writes evidence.json and rewrites each bundle file with
// its final bundle and its counts (only when the run measured evidence).
func (r *deps) writeEvidence(res *Result) {
	if res.Evidence == nil || res.Workspace == nil {
		return
	}
	f := evidenceFile(res.Bundles)
	f.Workspace = *res.Workspace
	_ = r.dir.WriteJSON(runfiles.EvidenceFile, f)
	for _, o := range res.Bundles {
		if o.checks == nil {
			continue
		}
		r.writeBundle(o)
	}
}

// atomCounts is one atom's counts in a bundle file.
type atomCounts struct {
	AgentID  string           `json:"agent_id"`
	Model    string           `json:"model"`
	BriefID  string           `json:"brief_id"`
	Evidence workspace.Counts `json:"evidence"`
}

// atomCountsOf are the counts of each atom of o that finished, in atom
// order (bundles/<id>.json "atom_evidence"); o.checks is set.
func atomCountsOf(o *BundleOutcome) []atomCounts {
	var ac []atomCounts
	for i, a := range o.result.Atoms {
		if o.checks.atoms[i] == nil {
			continue
		}
		ac = append(ac, atomCounts{AgentID: a.AgentID, Model: a.Model, BriefID: a.BriefID, Evidence: workspace.CountChecks(o.checks.atoms[i])})
	}
	return ac
}

// atomChecksOf returns the bundle's per-atom checks aligned with its
// atoms, nil when evidence was not measured.
func atomChecksOf(o *BundleOutcome) [][]workspace.Check {
	if o.checks == nil {
		return nil
	}
	return o.checks.atoms
}

// sortedCounts lists a map of counts by key.
func sortedCounts(m map[string]workspace.Counts) []namedCounts {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]namedCounts, 0, len(keys))
	for _, k := range keys {
		out = append(out, namedCounts{Name: k, Counts: m[k]})
	}
	return out
}

type namedCounts struct {
	Name string
	workspace.Counts
}

// judgedLedger is the ledger the judge read of o's final bundle, nil when
// it was not judged with one.
func (o *BundleOutcome) judgedLedger() *shadow.Ledger {
	if o.Failed || o.judged == nil {
		return nil
	}
	return o.judged.Ledger
}

// finalInput is what the judge reads of o's final bundle: what it read
// when it judged it, else judgeInput (a bundle not judged yet).
func (r *deps) finalInput(o *BundleOutcome) shadow.BundleInput {
	if o.judged != nil {
		return *o.judged
	}
	return r.judgeInput(o, o.Bundle)
}

// judgeInput is what the judge reads of bundle b of outcome o (o.Bundle, or
// a hardening revision of it). In a run with a workspace, b's citations are
// checked against the workspace now (a revision is checked as revised) and
// the input carries the ledger: the text with its ledger marks (ledgerText)
// and the facts the mechanical checks evaluate (Ledger). Without a
// workspace it is b's plain text and no ledger.
func (r *deps) judgeInput(o *BundleOutcome, b commanders.Bundle) shadow.BundleInput {
	in := shadow.BundleInput{ID: o.ID, Domain: o.Domain, Content: b.Text(), Implementer: o.ref}
	v := r.evidenceVerifier()
	if v == nil {
		return in
	}
	l := &shadow.Ledger{Evidence: checkAll(v, b.Evidence), Findings: make([]shadow.FindingLedger, 0, len(b.Findings)), SubTasks: subTasksOf(o.result)}
	for _, f := range b.Findings {
		l.Findings = append(l.Findings, shadow.FindingLedger{Title: f.Title, Checks: checkAll(v, f.Evidence)})
	}
	in.Content, in.Ledger = ledgerText(b, l), l
	return in
}

// subTasksOf lists a commander's planned sub-tasks, one per worker brief
// (res.Atoms has one entry per worker planned, launched or not), and
// whether each produced a finished atom: finished as completeness counts
// it (commanders.AtomResult.Finished: ran, did not fail, did not report
// its brief failed, wrote something) and not salvaged from an answer that
// failed its schema.
func subTasksOf(res commanders.Result) []shadow.SubTask {
	out := make([]shadow.SubTask, 0, len(res.Atoms))
	for _, a := range res.Atoms {
		st := shadow.SubTask{ID: a.BriefID, Finished: a.Finished() && !a.Degraded}
		switch {
		case a.Skipped:
			st.Why = "not launched"
		case a.Failed && a.Class != "":
			st.Why = "failed: " + string(a.Class)
		case a.Failed:
			st.Why = "failed"
		case a.Atom.Status == commanders.StatusFailed:
			st.Why = "its worker reported it failed"
		case !a.Finished():
			st.Why = "its worker wrote nothing"
		case a.Degraded:
			st.Why = "salvaged from an invalid answer"
		}
		out = append(out, st)
	}
	return out
}

// ledgerText renders b as commanders.Bundle.Text does, with the ledger
// marks of l (the checks of b's citations) among its lines: before each
// finding whether it is supported, after each citation what checking it
// found, after the findings how many were supported. Every piece of b is
// agent text and goes through prompts.EscapeLedger, so only the marks carry
// the ledger tag: an agent cannot forge a "verified" mark.
func ledgerText(b commanders.Bundle, l *shadow.Ledger) string {
	supported := 0
	for _, f := range l.Findings {
		if f.Supported() {
			supported++
		}
	}
	return b.TextWith(commanders.TextMarks{
		Escape:      prompts.EscapeLedger,
		Finding:     func(i int) string { return prompts.FindingMark(i+1, len(b.Findings), l.Findings[i].Checks) },
		Citation:    func(i, j int) string { return prompts.CitationMark(l.Findings[i].Checks[j]) },
		FindingsEnd: func() string { return prompts.FindingsEnd(supported, len(b.Findings)) },
		Evidence:    func(i int) string { return prompts.CitationMark(l.Evidence[i]) },
	})
}
