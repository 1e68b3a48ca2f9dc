package shadow

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/swarm-dev/swarm/vocab"
	"github.com/swarm-dev/swarm/workspace"
)

// Mechanical checks: sealed criteria that code evaluates from what the run
// verified (a Ledger), never the judge. A run with a workspace seals them
// beside the seal author's criteria; they count in the Shadow Score like any
// other criterion, so a deliverable resting on fabricated evidence cannot be
// perfect whatever the judge thinks of its prose.
const (
	// CheckFindingsSupported: the deliverable reports at least one finding
	// and every finding has at least one verified citation.
	CheckFindingsSupported = "findings_supported"
	// CheckNoFabricated: none of the deliverable's citations (its own
	// evidence and its findings') is fabricated.
	CheckNoFabricated = "no_fabricated_citation"
	// CheckSubTasksFinished: every sub-task planned for the deliverable
	// (one worker brief each) produced a finished result.
	CheckSubTasksFinished = "subtasks_finished"
)

// Categories of the mechanical checks. Neither is one of the spec's
// categories: a spec report lists their failures under "unknown" with the
// category in x_category (as for any config category outside the spec).
const (
	CategoryEvidence     = "evidence"
	CategoryCompleteness = "completeness"
)

// Checks lists the mechanical checks, in the order they are sealed.
var Checks = []string{CheckFindingsSupported, CheckNoFabricated, CheckSubTasksFinished}

// ErrUnknownCheck means an envelope names a mechanical check this version
// of swarm cannot evaluate.
var ErrUnknownCheck = errors.New("unknown mechanical check")

// KnownCheck reports whether kind is one of Checks.
func KnownCheck(kind string) bool { return slices.Contains(Checks, kind) }

// checkCriteria are the criteria of the mechanical checks: category,
// assertion and expected outcome of each kind. The assertion is the
// criterion's text in the envelope (for whoever audits it); code, not
// the text, decides.
var checkCriteria = map[string]Criterion{
	CheckFindingsSupported: {Category: CategoryEvidence,
		Assertion: "Every finding of the deliverable rests on at least one citation whose quoted lines were verified against the workspace, and the deliverable reports at least one finding.",
		Expected:  "each finding has a verified citation"},
	CheckNoFabricated: {Category: CategoryEvidence,
		Assertion: "None of the deliverable's citations, its own or its findings', is fabricated: every cited file and line range exists in the workspace and holds the quoted text.",
		Expected:  "no fabricated citation"},
	CheckSubTasksFinished: {Category: CategoryCompleteness,
		Assertion: "Every sub-task planned for the deliverable's domain produced a finished worker result: none failed, was left unlaunched or was salvaged from an invalid answer.",
		Expected:  "a finished worker result for each planned brief"},
}

// WithChecks returns criteria followed by one criterion per mechanical
// check kind, numbered after the highest id of criteria (sc-09, sc-10, ...
// after sc-08). Unknown kinds are an error.
func WithChecks(criteria []Criterion, kinds []string) ([]Criterion, error) {
	out := append([]Criterion(nil), criteria...)
	next := 0
	for _, c := range criteria {
		if n, err := strconv.Atoi(strings.TrimPrefix(c.ID, "sc-")); err == nil && n > next {
			next = n
		}
	}
	for _, k := range kinds {
		c, ok := checkCriteria[k]
		if !ok {
			return nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownCheck, k, strings.Join(Checks, ", "))
		}
		next++
		c.ID, c.Check = fmt.Sprintf("sc-%02d", next), k
		out = append(out, c)
	}
	return out, nil
}

// Ledger is what the run verified about one deliverable, the input of the
// mechanical checks: its findings and citations as checked against the
// workspace, and its planned sub-tasks. nexus fills it from the bundle as
// judged (each hardening revision gets its own).
type Ledger struct {
	Findings []FindingLedger   `json:"findings"`
	Evidence []workspace.Check `json:"evidence"` // the deliverable's own citations
	SubTasks []SubTask         `json:"sub_tasks"`
}

// FindingLedger is one finding and its checked citations.
type FindingLedger struct {
	Title  string            `json:"title"`
	Checks []workspace.Check `json:"checks"`
}

// Supported reports whether at least one of the finding's citations was
// verified.
func (f FindingLedger) Supported() bool {
	return slices.ContainsFunc(f.Checks, func(c workspace.Check) bool { return c.State == workspace.Verified })
}

// SubTask is one planned sub-task (a worker's brief) of the deliverable.
type SubTask struct {
	ID       string `json:"id"`
	Finished bool   `json:"finished"`
	// Why an unfinished sub-task did not finish, in a few words ("not
	// launched", "failed: timeout", "salvaged from an invalid answer").
	Why string `json:"why,omitempty"`
}

// listed is how many names a failure message lists before "and N more".
const listed = 5

// names renders items as a comma-separated list of at most listed, then
// "and N more".
func names(items []string) string {
	if len(items) <= listed {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:listed], ", ") + fmt.Sprintf(" and %d more", len(items)-listed)
}

// quoteTitle is a finding's title quoted on one line, cut at 60 runes. A
// title naming the protocol (vocab.NamesProtocol: a commander echoing what
// it guessed) is withheld: the message reaches commanders in hardening
// feedback, and none of them may read of the protocol there.
func quoteTitle(t string) string {
	t = oneLine(t)
	if vocab.NamesProtocol(t) {
		return "(a finding whose title is withheld)"
	}
	if r := []rune(t); len(r) > 60 {
		t = string(r[:59]) + "…"
	}
	return strconv.Quote(t)
}

// checkVerdict evaluates the mechanical criterion c on l. A nil ledger (no
// record of what was verified) fails the check: it is never passed on
// trust. The messages are facts (counts, finding titles, paths) and never
// restate the criterion; they reach the commander in hardening feedback.
func checkVerdict(c Criterion, l *Ledger, samples int) Verdict {
	v := Verdict{ID: c.ID, Category: c.Category, Expected: c.Expected, Check: c.Check, Votes: samples, Agree: samples}
	fail := func(actual, msg string) Verdict {
		v.Status, v.Actual, v.Message = "fail", actual, msg
		return v
	}
	pass := func(actual string) Verdict {
		v.Status, v.Actual = "pass", actual
		return v
	}
	if l == nil {
		return fail("nothing was checked against the workspace", "the deliverable's citations and sub-tasks were not checked against the workspace, so nothing backs it")
	}
	switch c.Check {
	case CheckFindingsSupported:
		n := len(l.Findings)
		if n == 0 {
			return fail("no findings", "the deliverable reports no finding: state each finding with the workspace lines (path, line range, exact quote) that show it")
		}
		var bad []string
		for _, f := range l.Findings {
			if f.Supported() {
				continue
			}
			why := "cites nothing"
			if cn := workspace.CountChecks(f.Checks); cn.Cited > 0 {
				why = cn.Unverified()
			}
			bad = append(bad, quoteTitle(f.Title)+" ("+why+")")
		}
		actual := fmt.Sprintf("%d of %d findings rest on verified workspace lines", n-len(bad), n)
		if len(bad) == 0 {
			return pass(actual)
		}
		return fail(actual, fmt.Sprintf("%d of %d findings cite no line that matches the workspace: %s", len(bad), n, names(bad)))
	case CheckNoFabricated:
		all := append([]workspace.Check(nil), l.Evidence...)
		for _, f := range l.Findings {
			all = append(all, f.Checks...)
		}
		var bad []string // each fabricated citation once, however often cited
		n := 0
		for _, ck := range all {
			if ck.State != workspace.Fabricated {
				continue
			}
			n++
			if s := fabricatedText(ck); !slices.Contains(bad, s) {
				bad = append(bad, s)
			}
		}
		actual := fmt.Sprintf("%d of %d citations do not match the workspace", n, len(all))
		if n == 0 {
			return pass(actual)
		}
		return fail(actual, fmt.Sprintf("%d of %d citations do not match the workspace: %s", n, len(all), names(bad)))
	case CheckSubTasksFinished:
		n := len(l.SubTasks)
		if n == 0 {
			return fail("no sub-task was planned", "no sub-task was planned or carried out for this deliverable")
		}
		var bad []string
		for _, s := range l.SubTasks {
			if !s.Finished {
				bad = append(bad, oneLine(s.ID)+" ("+oneLine(s.Why)+")")
			}
		}
		actual := fmt.Sprintf("%d of %d sub-tasks finished", n-len(bad), n)
		if len(bad) == 0 {
			return pass(actual)
		}
		return fail(actual, fmt.Sprintf("%d of %d sub-tasks produced no finished result: %s", len(bad), n, names(bad)))
	}
	// Verify refuses unknown kinds before anything is judged.
	return fail("unknown check", "this point could not be checked")
}

// fabricatedText names a fabricated citation and why, on one line: "path:3-5
// (the quote is not what those lines say)". A reason that starts with the
// citation's place does not repeat it.
func fabricatedText(ck workspace.Check) string {
	ref, r := oneLine(ck.Ref()), oneLine(ck.Reason)
	if i := strings.Index(r, ": "); i >= 0 && strings.HasPrefix(ck.Ref(), strings.SplitN(r[:i], ":", 2)[0]) {
		r = r[i+2:]
	}
	if r == "" {
		return ref
	}
	return ref + " (" + r + ")"
}
