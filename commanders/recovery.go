package commanders

import (
	"errors"
	"fmt"
	"strings"

	"github.com/swarm-dev/swarm/citation"
	"github.com/swarm-dev/swarm/providers"
)

// Recovery configures the recovery ladder: what a unit of work that keeps
// failing (an atom, a shard, a bundle, a verdict) tries before it gives up.
// The first step, retry, is always there: the providers' stack retries
// transient errors and Structured repairs a bad answer once. The other steps
// are switched on here. The zero value is the ladder off: a failure is
// recorded as it happens, as before the ladder existed.
type Recovery struct {
	Enabled        bool
	Simplify       bool
	ModelSwap      bool
	ScopeReduction bool
	Degrade        bool
	// Attempts bounds each step (each simplification halves again, each
	// model swap takes the next fallback, each re-plan halves the shards);
	// below 1 counts as 1.
	Attempts int
}

// The units of work the ladder recovers.
const (
	UnitAtom    = "atom"    // a worker's result
	UnitShard   = "shard"   // a squad lead's split of its shard, or a shard of the plan
	UnitBundle  = "bundle"  // a commander's plan or assembly
	UnitVerdict = "verdict" // the judge's verdicts on one bundle (Phase 6, in nexus)
)

// The ladder's steps, in the order they are climbed.
const (
	StepRetry          = "retry"
	StepSimplify       = "simplify"
	StepModelSwap      = "model_swap"
	StepScopeReduction = "scope_reduction"
	StepDegrade        = "degrade"
)

// RecoveryStep is one attempt of one step of a unit's ladder (an
// AgentRecovery event).
type RecoveryStep struct {
	Unit    string // UnitAtom, UnitShard, UnitBundle, UnitVerdict
	UnitID  string // the atom's brief id, the shard's, the bundle's domain
	Step    string // StepRetry ... StepDegrade
	Attempt int    // from 1 within the step
	OK      bool   // the attempt recovered the unit
	Detail  string
	// From and To are the models of a model swap (zero otherwise).
	From, To providers.Ref
}

// Degraded names a unit that ended on the degrade step: what was kept is
// salvage, marked, never a success.
type Degraded struct {
	Unit   string `json:"unit"`
	UnitID string `json:"unit_id"`
	Detail string `json:"detail"`
}

// attempts is the bound of each step.
func (r Recovery) attempts() int { return max(1, r.Attempts) }

// Attempt is what one attempt of a rung did. The zero value says the
// attempt could not be made (nothing simpler to ask, no further fallback):
// the step ends there, unrecorded.
type Attempt struct {
	Made   bool
	OK     bool // it recovered the unit
	Detail string
	// Err is why a made attempt failed (nil when it recovered the unit or
	// the rung did not say).
	Err error
	// From and To are the models of a model swap.
	From, To providers.Ref
}

// Rung is one step of a ladder: Try makes attempt n (from 1) of Step, at
// most Recovery.Attempts times, or once when Once.
type Rung struct {
	Step string
	On   bool
	Once bool
	Try  func(n int) Attempt
}

// Ladder climbs the rungs of one unit. Each attempt made is reported; the
// climb stops at the first attempt that recovers the unit, or as soon as
// Halted says the failure is the run's own (cancellation, cost ceiling),
// which never climbs. Its decisions depend only on the attempts' results.
type Ladder struct {
	Recovery Recovery
	Unit     string
	ID       string
	Report   func(RecoveryStep)
	Halted   func() bool
	// Cause is the unit's failure (nil: its parts failed). When it, or a
	// later attempt's, is providers.ErrCircuitOpen (every model the unit
	// could go to has an open breaker), the climb skips to degrade: a
	// simpler request, another model or a smaller scope would be refused
	// the same way, and the waiting would be for nothing.
	Cause error
}

// Because is l with Cause set to err.
func (l Ladder) Because(err error) Ladder {
	l.Cause = err
	return l
}

// Climb reports the failed retry (the unit's first call, with the
// providers' retries and Structured's repair; no report when failure is
// "": the unit's failure was its parts') and climbs rungs in order, each
// at most Recovery.Attempts times (a Once rung once). It returns the step that recovered the
// unit ("" when none did).
func (l Ladder) Climb(failure string, rungs ...Rung) string {
	if !l.Recovery.Enabled || l.Halted() {
		return ""
	}
	if failure != "" {
		l.Report(RecoveryStep{Unit: l.Unit, UnitID: l.ID, Step: StepRetry, Attempt: 1, Detail: failure})
	}
	unavailable := errors.Is(l.Cause, providers.ErrCircuitOpen)
	for _, r := range rungs {
		if !r.On || (unavailable && r.Step != StepDegrade) {
			continue
		}
		bound := l.Recovery.attempts()
		if r.Once {
			bound = 1
		}
		for n := 1; n <= bound; n++ {
			if l.Halted() {
				return ""
			}
			a := r.Try(n)
			if !a.Made {
				break
			}
			if !a.OK && l.Halted() { // the attempt was cut off by the run itself
				return ""
			}
			l.Report(RecoveryStep{Unit: l.Unit, UnitID: l.ID, Step: r.Step, Attempt: n, OK: a.OK, Detail: a.Detail, From: a.From, To: a.To})
			if a.OK {
				return r.Step
			}
			if errors.Is(a.Err, providers.ErrCircuitOpen) {
				unavailable = true
				break
			}
		}
	}
	return ""
}

// Tried is an attempt that was made: it recovered its unit when err is
// nil; otherwise its detail ends with the failure (": class: error").
func Tried(detail string, err error) Attempt {
	if err != nil {
		detail += ": " + FailureText(err)
	}
	return Attempt{Made: true, OK: err == nil, Detail: detail, Err: err}
}

// FailureText is how a failed attempt reads in a recovery step's detail:
// "class: error", the class once (a provider's error already begins with
// it).
func FailureText(err error) string {
	if err == nil {
		return ""
	}
	class, s := string(providers.ClassOf(err)), err.Error()
	if s == class || strings.HasPrefix(s, class+":") || strings.HasPrefix(s, class+" ") {
		return s
	}
	return class + ": " + s
}

// essentialBrief is brief cut for simplification attempt n (from 1): its
// first half of lines (n=1), quarter (n=2), ..., at least one; a one-line
// brief is cut by sentences the same way. It depends on the brief and n
// only, so the simplified request is reproducible.
func essentialBrief(brief string, n int) string {
	var lines []string
	for _, l := range strings.Split(brief, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	sep := "\n"
	if len(lines) <= 1 {
		lines, sep = sentences(strings.TrimSpace(brief)), " "
	}
	return strings.Join(lines[:halved(len(lines), n)], sep)
}

// sentences splits s after each ". ", "! " or "? ".
func sentences(s string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i+1] == ' ' {
			out = append(out, strings.TrimSpace(s[start:i+1]))
			start = i + 2
		}
	}
	if rest := strings.TrimSpace(s[min(start, len(s)):]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// halved is n items halved k times, rounded up, at least 1 (0 stays 0).
func halved(n, k int) int {
	if n == 0 {
		return 0
	}
	for range k {
		n = (n + 1) / 2
	}
	return max(1, n)
}

// halveAspects keeps the first half of aspects per attempt n (from 1).
func halveAspects(aspects []string, n int) []string {
	return aspects[:halved(len(aspects), n)]
}

// salvageAtom recovers the content of a schema-invalid atom: it becomes a
// partial atom of confidence at most 0.5. An unparseable answer or one with
// no content is not salvaged.
func salvageAtom(err error) (Atom, bool) {
	loose, ok := looseAnswer(err)
	if !ok {
		return Atom{}, false
	}
	content, _ := loose["content"].(string)
	if strings.TrimSpace(content) == "" {
		return Atom{}, false
	}
	conf, _ := loose["confidence"].(float64)
	return Atom{Status: StatusPartial, Content: content, Confidence: min(0.5, max(0, conf)), Evidence: []citation.Citation{}}, true
}

// SalvageAtoms builds a partial bundle from the atoms that finished, in
// brief order, unedited; n is how many went in (0: nothing to salvage).
// why says what stopped the commander from assembling its bundle.
func SalvageAtoms(domain string, atoms []AtomResult, why string) (b Bundle, n int) {
	var content strings.Builder
	var conf float64
	seen := map[citation.Citation]bool{}
	for _, a := range atoms {
		if a.Failed || strings.TrimSpace(a.Atom.Content) == "" {
			continue
		}
		n++
		conf += a.Atom.Confidence
		fmt.Fprintf(&content, "### %s\n\n%s\n\n", a.BriefID, strings.TrimSpace(a.Atom.Content))
		for _, e := range a.Atom.Evidence {
			if !seen[e] {
				seen[e] = true
				b.Evidence = append(b.Evidence, e)
			}
		}
	}
	if n == 0 {
		return Bundle{}, 0
	}
	b.Domain, b.Status = domain, StatusPartial
	b.Summary = fmt.Sprintf("Salvaged: %s; this is the work of the %d of %d workers that finished, unedited.", why, n, len(atoms))
	b.Content = strings.TrimSpace(content.String())
	b.Confidence = min(0.5, conf/float64(n))
	return b, n
}
