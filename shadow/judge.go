package shadow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"

	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/vocab"
)

// Mode is how the judge is called.
type Mode int

// Judge modes.
const (
	PerBundle    Mode = iota // one call per bundle with all criteria (default)
	PerCriterion             // one call per criterion
)

// Verdicts is the judge's structured output.
type Verdicts struct {
	Verdicts []RawVerdict `json:"verdicts" jsonschema:"minItems=1" jsonschema_description:"One verdict per criterion given, each criterion once."`
}

// SchemaDescription implements providers.Described.
func (Verdicts) SchemaDescription() string {
	return "The judge's verdicts on one deliverable against the criteria given."
}

// SchemaName implements providers.Named.
func (Verdicts) SchemaName() string { return vocab.SchemaVerdicts }

// RawVerdict is one verdict as the judge writes it.
type RawVerdict struct {
	ID      string `json:"id" jsonschema:"minLength=1" jsonschema_description:"The criterion's id, exactly as given (e.g. sc-01)."`
	Status  string `json:"status" jsonschema:"enum=pass,enum=fail" jsonschema_description:"pass if the deliverable meets the criterion; fail if it does not, or if that cannot be checked from the deliverable alone."`
	Actual  string `json:"actual" jsonschema_description:"What the deliverable does contain on this point, in your own words; say so if it contains nothing."`
	Message string `json:"message" jsonschema_description:"For fail: what is missing, in your own words. Never quote the criterion's assertion or expected outcome: the message is shown to the agents that revise the deliverable. For pass: an empty string."`
}

// SchemaDescription implements providers.Described.
func (RawVerdict) SchemaDescription() string { return "The judge's verdict on one criterion." }

// Verdict is a criterion's judged outcome on one bundle.
type Verdict struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Status   string `json:"status"` // pass | fail
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	Message  string `json:"message"`
	Votes    int    `json:"votes"` // samples
	Agree    int    `json:"agree"` // samples agreeing with the majority
	// Check names the mechanical check code evaluated for this verdict;
	// empty for a verdict of the judge.
	Check string `json:"check,omitempty"`
}

// Evaluation is one bundle judged against every criterion.
type Evaluation struct {
	BundleID     string          `json:"bundle_id"`
	Verdicts     []Verdict       `json:"verdicts"`
	Total        int             `json:"total"`
	Passed       int             `json:"passed"`
	Failed       int             `json:"failed"`
	Score        float64         `json:"shadow_score"`
	Level        Level           `json:"level"`
	Disagreement float64         `json:"disagreement"` // share of verdicts where samples disagreed
	Usage        providers.Usage `json:"usage"`
}

// BundleInput is what the judge sees of a bundle.
type BundleInput struct {
	ID     string
	Domain string
	// Content is the bundle's text. In a run with a workspace it carries
	// the ledger marks (prompts.CitationMark, prompts.FindingMark) that
	// code wrote from Ledger.
	Content     string
	Implementer providers.Ref
	// Ledger is what the run verified about the bundle, the input of the
	// envelope's mechanical checks; nil in a run without a workspace
	// (every mechanical check then fails: nothing backs it).
	Ledger *Ledger
}

// JudgeConfig configures the judge.
type JudgeConfig struct {
	Provider providers.Provider
	Ref      providers.Ref
	Mode     Mode
	Samples  int // self-ensemble size k (default 1)
	Seed     *int64
}

// ErrNoCriteria means there is nothing to judge against: zero criteria
// never score (and never read as perfect).
var ErrNoCriteria = errors.New("no sealed criteria to judge against")

// Judge evaluates bundles against sealed criteria.
type Judge struct{ c JudgeConfig }

// NewJudge returns a judge.
func NewJudge(c JudgeConfig) *Judge {
	if c.Samples < 1 {
		c.Samples = 1
	}
	return &Judge{c: c}
}

// Ref is the judge's model.
func (j *Judge) Ref() providers.Ref { return j.c.Ref }

// Evaluate judges b against every criterion of env. It verifies the
// envelope's hash first and refuses to judge a tampered envelope.
func (j *Judge) Evaluate(ctx context.Context, env *Envelope, b BundleInput) (Evaluation, error) {
	if err := env.Verify(); err != nil {
		return Evaluation{}, err
	}
	crit := env.sealedCriteria()
	if len(crit) == 0 {
		return Evaluation{}, fmt.Errorf("judge %s: %w", b.ID, ErrNoCriteria)
	}
	ev := Evaluation{BundleID: b.ID}
	// The judge decides the criteria without a mechanical check; it never
	// sees the others (code evaluates them from b.Ledger below).
	judged := judgedCriteria(crit)
	var groups [][]Criterion
	switch {
	case len(judged) == 0:
	case j.c.Mode == PerCriterion:
		for _, c := range judged {
			groups = append(groups, []Criterion{c})
		}
	default:
		groups = [][]Criterion{judged}
	}
	votes := map[string][]RawVerdict{}
	for s := 0; s < j.c.Samples; s++ {
		for gi, g := range groups {
			vs, u, err := j.call(ctx, g, b, s, gi)
			if err != nil {
				return Evaluation{}, fmt.Errorf("judge %s on %s: %w", j.c.Ref, b.ID, err)
			}
			ev.Usage = ev.Usage.Add(u)
			for _, v := range vs {
				votes[v.ID] = append(votes[v.ID], v)
			}
		}
	}
	verdicts := make([]Verdict, 0, len(crit))
	for _, c := range crit {
		if c.Check != "" {
			verdicts = append(verdicts, checkVerdict(c, b.Ledger, j.c.Samples))
			continue
		}
		verdicts = append(verdicts, majority(c, votes[c.ID], j.c.Samples))
	}
	ev.tally(verdicts, j.c.Samples)
	return ev, nil
}

// judgedCriteria are the criteria the judge decides: those without a
// mechanical check.
func judgedCriteria(crit []Criterion) []Criterion {
	var out []Criterion
	for _, c := range crit {
		if c.Check == "" {
			out = append(out, c)
		}
	}
	return out
}

// EvaluateEach judges b against each criterion of env in a call of its own
// (the recovery ladder's scope reduction: judge what can be judged). A
// criterion whose call fails is left out of the evaluation, its id in
// unjudged with the failure, and is never counted as passed (nor failed):
// the evaluation's Total, Passed and Failed count the judged criteria
// only, so with any criterion unjudged it is not the bundle's Shadow
// Score. The calls are those of PerCriterion mode (same seeds).
func (j *Judge) EvaluateEach(ctx context.Context, env *Envelope, b BundleInput) (ev Evaluation, unjudged map[string]error, err error) {
	if err := env.Verify(); err != nil {
		return Evaluation{}, nil, err
	}
	crit := env.sealedCriteria()
	if len(crit) == 0 {
		return Evaluation{}, nil, fmt.Errorf("judge %s: %w", b.ID, ErrNoCriteria)
	}
	ev = Evaluation{BundleID: b.ID}
	var verdicts []Verdict
	gi := -1
	for _, c := range crit {
		if c.Check != "" {
			// Code, not a call: always judged.
			verdicts = append(verdicts, checkVerdict(c, b.Ledger, j.c.Samples))
			continue
		}
		gi++ // the group index of PerCriterion mode: the same seeds
		var vs []RawVerdict
		var cerr error
		for s := 0; s < j.c.Samples && cerr == nil; s++ {
			got, u, err := j.call(ctx, []Criterion{c}, b, s, gi)
			ev.Usage = ev.Usage.Add(u)
			cerr = err
			vs = append(vs, got...)
		}
		if cerr != nil {
			if unjudged == nil {
				unjudged = map[string]error{}
			}
			unjudged[c.ID] = cerr
			continue
		}
		verdicts = append(verdicts, majority(c, vs, j.c.Samples))
	}
	ev.tally(verdicts, j.c.Samples)
	return ev, unjudged, nil
}

// tally records the verdicts of the judged criteria (samples votes each)
// in ev: their counts, Score, Level and Disagreement (the share of the
// judge's verdicts whose samples disagreed; mechanical checks, decided by
// code, are not among them). With no verdict they all stay zero (no score
// over nothing).
func (ev *Evaluation) tally(verdicts []Verdict, samples int) {
	disagree, byJudge := 0, 0
	for _, v := range verdicts {
		if v.Check == "" {
			byJudge++
		}
		if v.Agree < v.Votes {
			disagree++
		}
		if v.Status == "pass" {
			ev.Passed++
		} else {
			ev.Failed++
		}
		ev.Verdicts = append(ev.Verdicts, v)
	}
	ev.Total = len(verdicts)
	if ev.Total == 0 {
		return
	}
	ev.Score = Score(ev.Failed, ev.Total)
	ev.Level = LevelOf(ev.Score)
	if samples > 1 && byJudge > 0 {
		ev.Disagreement = float64(disagree) / float64(byJudge)
	}
}

// Config is the judge's configuration.
func (j *Judge) Config() JudgeConfig { return j.c }

// majority combines samples; a tie or a missing verdict counts as a fail
// (a criterion is passed only when the judge says so).
func majority(c Criterion, vs []RawVerdict, samples int) Verdict {
	out := Verdict{ID: c.ID, Category: c.Category, Expected: c.Expected, Votes: samples}
	pass := 0
	var passV, failV *RawVerdict
	for i := range vs {
		if vs[i].Status == "pass" {
			pass++
			if passV == nil {
				passV = &vs[i]
			}
		} else if failV == nil {
			failV = &vs[i]
		}
	}
	fail := samples - pass
	if pass > fail {
		out.Status, out.Agree = "pass", pass
		out.Actual, out.Message = passV.Actual, ""
		return out
	}
	out.Status, out.Agree = "fail", fail
	if failV != nil {
		out.Actual, out.Message = failV.Actual, failV.Message
	} else {
		out.Message = "no verdict from the judge"
	}
	out.Message = scrub(out.Message, c)
	if out.Message == "" {
		out.Message = "check not met" // hardening feedback: never "criterion" (issue 20)
	}
	return out
}

// WithheldMessage replaces a failure message that restated its criterion.
// It reveals only the criterion's category (below the "message" level the
// hardening feedback is allowed to reach), and it goes to a commander, so it
// never names a seal, a criterion or the protocol (issue 20).
func WithheldMessage(category string) string {
	return fmt.Sprintf("%s check not met; the explanation was withheld because it gave away the expected answer", oneLine(category))
}

// scrub keeps hardening feedback from revealing assertions or expected
// outcomes: a failure message that restates the criterion's assertion or
// expected text, verbatim or paraphrased (see Restates), is replaced as a
// whole by WithheldMessage.
func scrub(msg string, c Criterion) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return ""
	}
	for _, s := range []string{c.Assertion, c.Expected} {
		if Restates(msg, s) {
			return WithheldMessage(c.Category)
		}
	}
	return msg
}

// Thresholds of Restates.
const (
	restateMinWords   = 3    // a side this short is too common to prove a leak by containment
	restateMinChars   = 12   // ... unless its normalised text is at least this long
	restateTrigramOK  = 0.5  // share of the criterion's word trigrams a message may not reach
	restateContentOK  = 0.75 // share of the criterion's content words a message may not reach
	restateMinContent = 4    // content words a criterion needs before that share proves anything
	restateMinCompact = 16   // letters and digits a message needs before being inside a criterion proves anything
)

// Fold maps s to the form Restates compares: NFKC (fullwidth and
// compatibility forms become plain letters), format characters (Unicode
// category Cf: zero-width space, zero-width joiner, soft hyphen, bidi
// marks) removed, and every letter outside ASCII that Unicode's
// confusables table (UTS #39, through github.com/mtibben/confusables) maps
// to ASCII letters replaced by them (Cyrillic а, е, о, р, с, Greek ο, ...).
func Fold(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cf, r):
			continue
		case r >= utf8.RuneSelf && unicode.IsLetter(r):
			if sk := confusables.Skeleton(string(r)); sk != string(r) && isASCIILetters(sk) {
				b.WriteString(sk)
				continue
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

// compact is s in lower case with only its letters and digits.
func compact(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Restates reports whether msg restates text, exactly or paraphrased. Both
// are normalised first: lower case, every run of characters other than
// letters and digits one space (so case, punctuation, quotes and spacing do
// not matter) and a light suffix strip (identifies/identify, steps/step).
// msg restates text when one contains the other, when msg holds at least
// half of text's word trigrams (a few dropped or reordered words do not
// hide it), or when msg holds at least three quarters of text's content
// words (text with at least four of them; stop words do not count).
//
// Before any of that, both sides are folded (Fold): NFKC, format characters
// (zero-width spaces and joiners, soft hyphens) removed, look-alike letters
// from other scripts mapped to the Latin ones they imitate; and a text
// written letter by letter ("s e a l e d", "s-e-a-l-e-d") is caught by
// comparing the letters and digits alone, every blank and mark removed.
func Restates(msg, text string) bool {
	msg, text = Fold(msg), Fold(text)
	if mc, tc := compact(msg), compact(text); (len(tc) >= restateMinChars && strings.Contains(mc, tc)) ||
		(len(mc) >= restateMinCompact && strings.Contains(tc, mc)) {
		return true
	}
	mw, tw := normWords(msg), normWords(text)
	if len(mw) == 0 || len(tw) == 0 {
		return false
	}
	m, t := " "+strings.Join(mw, " ")+" ", " "+strings.Join(tw, " ")+" "
	if (len(tw) >= restateMinWords || len(t)-2 >= restateMinChars) && strings.Contains(m, t) {
		return true
	}
	if len(mw) >= restateMinWords && strings.Contains(t, m) {
		return true
	}
	if tt := trigrams(tw); len(tt) > 0 && share(tt, trigrams(mw)) >= restateTrigramOK {
		return true
	}
	tc := contentWords(tw)
	return len(tc) >= restateMinContent && share(tc, contentWords(mw)) >= restateContentOK
}

// share is the fraction of want's keys that got has.
func share(want, got map[string]bool) float64 {
	n := 0
	for k := range want {
		if got[k] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

func normWords(s string) []string {
	ws := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range ws {
		ws[i] = stem(w)
	}
	return ws
}

// stem strips a few English inflections, the same way on both sides of a
// comparison; it need not produce words, only the same key for both forms.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		return w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("a an the of and or nor not no to in on at by for with from as is are be been was were it its it this that these those there their they them he she we you i do doe does did has have had can could should would must will shall may might any each every all some such than then so but if when which what who whose how very also only just into onto about over under per via") {
		stopWords[stem(w)] = true
	}
}

func contentWords(ws []string) map[string]bool {
	out := map[string]bool{}
	for _, w := range ws {
		if !stopWords[w] {
			out[w] = true
		}
	}
	return out
}

func trigrams(ws []string) map[string]bool {
	out := map[string]bool{}
	for i := 0; i+3 <= len(ws); i++ {
		out[ws[i]+" "+ws[i+1]+" "+ws[i+2]] = true
	}
	return out
}

func (j *Judge) call(ctx context.Context, crit []Criterion, b BundleInput, sample, group int) ([]RawVerdict, providers.Usage, error) {
	lines := make([]string, len(crit))
	for i, c := range crit {
		lines[i] = fmt.Sprintf("%s%s | %s | %s | expected: %s", vocab.CriterionPrefix, c.ID, c.Category, oneLine(c.Assertion), oneLine(c.Expected))
	}
	user, err := prompts.Render("judge", map[string]any{"Criteria": lines, "Bundle": b.Content, "Domain": b.Domain, "Ledger": b.Ledger != nil})
	if err != nil {
		return nil, providers.Usage{}, err
	}
	system, _ := prompts.Render("system", nil)
	req := providers.Request{
		Messages:    []providers.Message{{Role: providers.RoleSystem, Content: system}, {Role: providers.RoleUser, Content: user}},
		Caller:      providers.Caller{Role: "judge", AgentID: "judge"},
		Temperature: providers.Float(0),
	}
	if j.c.Seed != nil {
		req.Seed = providers.Int64(*j.c.Seed + int64(sample)*1000003 + int64(group))
	}
	if j.c.Samples > 1 {
		req.Temperature = providers.Float(0.7)
	}
	out, sr, err := providers.StructuredRetry[Verdicts](ctx, j.c.Provider, req, 3)
	if err != nil {
		return nil, sr.Usage(), err
	}
	want := map[string]bool{}
	for _, c := range crit {
		want[c.ID] = true
	}
	var vs []RawVerdict
	seen := map[string]bool{}
	for _, v := range out.Verdicts {
		if want[v.ID] && !seen[v.ID] {
			seen[v.ID] = true
			vs = append(vs, v)
		}
	}
	return vs, sr.Usage(), nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "|", "/")), " ")
}

func jsonIndent(v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return string(b), err
}
