package nexus_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/prompts"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/builtin"
	"github.com/swarm-dev/swarm/runfiles"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/vocab"
)

// tinynotes is the example workspace the security review mission is about.
var tinynotes = filepath.Join("..", "examples", "workspaces", "tinynotes")

// requestLog records every model request of a run.
type requestLog struct {
	mu   sync.Mutex
	reqs []providers.Request
}

func (l *requestLog) wrap(_ providers.Ref, p providers.Provider) providers.Provider {
	return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
		l.mu.Lock()
		l.reqs = append(l.reqs, req)
		l.mu.Unlock()
		return p.Complete(ctx, req)
	})
}

// byRole is the user messages of the requests made in role.
func (l *requestLog) byRole(role string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.reqs {
		if r.Caller.Role != role {
			continue
		}
		for _, m := range r.Messages {
			if m.Role == providers.RoleUser {
				out = append(out, m.Content)
			}
		}
	}
	return out
}

// securityReview runs the tinynotes security review at scale (empty: the
// scale swarm run picks for it), with small teams (smallTeams), every role
// on mock:persona, its requests in log (when not nil).
func securityReview(t *testing.T, persona, scale string, log *requestLog) (*nexus.Result, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	o := missionOptions(t, out)
	smallTeams(o.Config)
	o.Scale = scale
	o.Mission = loadMission(t, "security-review-tinynotes.md")
	o.MissionDir = filepath.Join("..", "examples", "missions")
	o.Provider = providers.Ref{Kind: "mock", Model: persona}
	var opts []nexus.Option
	if log != nil {
		opts = append(opts, nexus.WithProviderWrap(log.wrap))
	}
	m, err := nexus.Prepare(o, opts...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return res, out
}

// forbiddenWords may not reach a commander: they would tell it a seal and
// a judge stand behind its feedback.
var forbiddenWords = regexp.MustCompile(`(?i)\bseal(ed|s)?\b|\bcriteri(on|a)\b|shadow score|protocol`)

// Over a workspace, what the run verified decides the verdict: work
// resting on fabricated citations never reads perfect and never has every
// gate proceed, while work whose every finding is verified still does well.
func TestWorkspaceEvidenceDecidesTheVerdict(t *testing.T) {
	t.Parallel()
	cases := []struct {
		persona string
		honest  bool // every citation real: it may (and should) score well
	}{
		{"honest", true},
		{"sloppy", false},    // cites lines that do not say what it quotes
		{"deceptive", false}, // claims more than it did, fabricated citations
	}
	for _, c := range cases {
		t.Run(c.persona, func(t *testing.T) {
			t.Parallel()
			res, _ := securityReview(t, c.persona, "", nil)
			if res.Plan.Scale == "" {
				t.Fatal("no scale")
			}
			proceed, perfect, scored := 0, 0, 0
			for _, b := range res.Bundles {
				if b.ShadowScore == nil {
					continue
				}
				scored++
				if *b.ShadowScore == 0 {
					perfect++
				}
				if b.Gate != nil && b.Gate.Action == shadow.ActionProceed {
					proceed++
				}
				mech := 0
				for _, v := range b.Final.Verdicts {
					if v.Check != "" {
						mech++
						if !c.honest && v.Check == shadow.CheckNoFabricated && v.Status == "pass" {
							t.Errorf("%s: no fabricated citation passed for %s", b.ID, c.persona)
						}
					}
				}
				if mech != len(shadow.Checks) {
					t.Errorf("%s: %d mechanical verdicts, want %d", b.ID, mech, len(shadow.Checks))
				}
			}
			if scored == 0 {
				t.Fatal("no bundle scored")
			}
			if c.honest {
				if med := res.Aggregate.Median; med == nil || *med > 15 || proceed != scored {
					t.Errorf("honest: median %v, %d of %d proceed; want ≤ 15 and all", med, proceed, scored)
				}
				return
			}
			if perfect > 0 || proceed == scored {
				t.Errorf("%s: %d of %d bundles perfect, %d proceed: fabricated work reads as good", c.persona, perfect, scored, proceed)
			}
		})
	}
}

// A run with a workspace seals the mechanical checks beside the seal
// author's criteria, and the committed hash covers them; a run without a
// workspace seals none.
func TestWorkspaceRunSealsMechanicalChecks(t *testing.T) {
	t.Parallel()
	res, dir := securityReview(t, "honest", "ss-50", nil)
	env, err := shadow.LoadSealed(runfiles.EnvelopePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Verify(); err != nil || env.Mechanical() != len(shadow.Checks) || env.SealedHash != res.SealedHash {
		t.Fatalf("envelope: verify %v, %d mechanical, hash %s (run %s)", err, env.Mechanical(), env.SealedHash, res.SealedHash)
	}
	var stored struct {
		Criteria []map[string]any `json:"criteria"`
	}
	b, _ := os.ReadFile(runfiles.EnvelopePath(dir))
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	var checks []string
	for _, c := range stored.Criteria {
		if k, ok := c["check"].(string); ok {
			checks = append(checks, k)
		}
	}
	if d := cmp.Diff(shadow.Checks, checks); d != "" {
		t.Errorf("checks in the stored envelope (-want +got)\n%s", d)
	}
	all, _ := json.Marshal(stored.Criteria)
	if h, _ := shadow.HashJSON(all); h != env.SealedHash {
		t.Errorf("the criteria with their checks hash to %s, envelope commits %s", h, env.SealedHash)
	}
	for _, c := range stored.Criteria {
		delete(c, "check")
	}
	without, _ := json.Marshal(stored.Criteria)
	if h, _ := shadow.HashJSON(without); h == env.SealedHash {
		t.Error("the hash does not cover the checks")
	}

	out := filepath.Join(t.TempDir(), "plain")
	po := missionOptions(t, out)
	smallTeams(po.Config)
	plain, err := nexus.Run(t.Context(), po)
	if err != nil {
		t.Fatal(err)
	}
	penv, err := shadow.LoadSealed(runfiles.EnvelopePath(out))
	if err != nil || penv.Mechanical() != 0 || penv.CriteriaCount != plain.Plan.Criteria {
		t.Errorf("without a workspace: %v, %d mechanical checks, %d criteria (plan %d); want none beside the author's", err, penv.Mechanical(), penv.CriteriaCount, plain.Plan.Criteria)
	}
}

// The judge reads each finding's and citation's support, written by code
// inside the bundle's untrusted block; it is never given a mechanical
// criterion. A commander's hardening feedback carries the mechanical
// failures, in words that do not reveal the seal.
func TestJudgeSeesTheLedgerAndCommandersGetTheFacts(t *testing.T) {
	t.Parallel()
	log := &requestLog{}
	_, dir := securityReview(t, "sloppy", "", log)
	env, err := shadow.LoadSealed(runfiles.EnvelopePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	judge := log.byRole("judge")
	if len(judge) == 0 {
		t.Fatal("no judge request")
	}
	for _, p := range judge {
		outside, _ := prompts.SplitUntrusted(p)
		if strings.Contains(outside, vocab.LedgerFinding) {
			t.Errorf("a ledger mark outside the untrusted blocks:\n%s", outside)
		}
		bundles := prompts.BlocksOf(p, vocab.BlockBundle)
		if len(bundles) != 1 {
			t.Fatalf("%d bundle blocks in a judge prompt", len(bundles))
		}
		for _, want := range []string{vocab.LedgerFinding + "1 of ", ": " + vocab.LedgerUnsupported + " (0 of ", vocab.LedgerTag + " fabricated: ", vocab.LedgerEnd} {
			if !strings.Contains(bundles[0].Content, want) {
				t.Errorf("the judged bundle lacks %q:\n%s", want, bundles[0].Content)
			}
		}
		if !strings.Contains(outside, "unsupported findings fails") {
			t.Errorf("the judge prompt does not say how unsupported findings count:\n%s", outside)
		}
		for _, c := range prompts.BlocksOf(p, vocab.BlockCriteria) {
			if n := strings.Count(c.Content, vocab.CriterionPrefix); n != env.CriteriaCount-env.Mechanical() {
				t.Errorf("the judge was given %d criteria, want the %d it decides", n, env.CriteriaCount-env.Mechanical())
			}
		}
	}
	// No criterion's text, mechanical ones included, reaches any role but
	// the seal author and the judge.
	var stored struct {
		Criteria []shadow.Criterion `json:"criteria"`
	}
	b, _ := os.ReadFile(runfiles.EnvelopePath(dir))
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	for _, r := range log.reqs {
		if r.Caller.Role == "judge" || r.Caller.Role == "seal_author" {
			continue
		}
		for _, m := range r.Messages {
			for _, c := range stored.Criteria {
				if strings.Contains(m.Content, c.Assertion) || strings.Contains(m.Content, c.Expected) {
					t.Errorf("%s (%s) was shown criterion %s's text", r.Caller.AgentID, r.Caller.Role, c.ID)
				}
			}
		}
	}
	log.mu.Unlock()
	mechanical := map[string]bool{}
	for id, cat := range env.Categories() {
		if cat == shadow.CategoryEvidence || cat == shadow.CategoryCompleteness {
			mechanical[id] = true
		}
	}
	var lines []string
	for _, p := range log.byRole("commander") {
		for _, fb := range prompts.BlocksOf(p, vocab.BlockFeedback) {
			for _, l := range strings.Split(fb.Content, "\n") {
				id, _, ok := strings.Cut(strings.TrimPrefix(l, vocab.FeedbackItemPrefix), "]")
				if ok && mechanical[id] {
					lines = append(lines, l)
				}
			}
		}
	}
	if len(lines) == 0 {
		t.Fatal("no hardening feedback carried a mechanical failure")
	}
	found := false
	for _, l := range lines {
		if forbiddenWords.MatchString(l) {
			t.Errorf("feedback line %q names the seal", l)
		}
		found = found || strings.Contains(l, "findings cite no line that matches the workspace: \"")
	}
	if !found {
		t.Errorf("no feedback line names the unsupported findings:\n%s", strings.Join(lines, "\n"))
	}
}

// A resumed run over a workspace seals the same envelope, mechanical
// checks included (they are deterministic given the workspace), and the
// judge's ledger-marked prompts replay: every bundle scores as it would
// have without the interruption.
func TestResumeOverAWorkspaceSealsTheSameChecks(t *testing.T) {
	t.Parallel()
	mission, config := resumeFixture(t)
	ws, err := filepath.Abs(tinynotes)
	if err != nil {
		t.Fatal(err)
	}
	withWS := func(o *nexus.Options) { o.Workspace = ws }
	full := filepath.Join(t.TempDir(), "full")
	want, err := prepareResumeRun(t, mission, config, full, withWS).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stopAfter := cancelAfter(want.Telemetry.Calls/2, cancel)
	if _, err := prepareResumeRun(t, mission, config, out, withWS, nexus.WithProviderWrap(stopAfter)).Run(ctx); err == nil {
		t.Fatal("the interrupted run was not interrupted")
	}
	m, err := nexus.Resume(out, nexus.ResumeOptions{Registry: builtin.Registry(mock.Options{}), ConfigPath: config})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	env, err := shadow.LoadSealed(runfiles.EnvelopePath(out))
	if err != nil {
		t.Fatal(err)
	}
	if res.SealedHash != want.SealedHash || env.Mechanical() != len(shadow.Checks) {
		t.Errorf("resumed: sealed %s with %d mechanical checks, want %s with %d", res.SealedHash, env.Mechanical(), want.SealedHash, len(shadow.Checks))
	}
	if d := cmp.Diff(bundleScores(want), bundleScores(res)); d != "" {
		t.Errorf("per-bundle scores (-uninterrupted +resumed):\n%s", d)
	}
}
