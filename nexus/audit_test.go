package nexus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/mock"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/shadow"
	"github.com/swarm-dev/swarm/vocab"
)

// TestTwoFamilyRosterReviewsInMixedPairs runs a mission whose reviewer
// roster has two model families and checks that every bundle pair was
// scored by one reviewer of each family.
func TestTwoFamilyRosterReviewsInMixedPairs(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
		o.Models = map[string][]providers.Ref{"reviewer": {{Kind: "mock", Model: "honest"}, {Kind: "mock", Model: "sloppy"}}}
	})
	if err != nil {
		t.Fatal(err)
	}
	model := map[string]string{}
	for _, r := range res.Reviews {
		model[r.Reviewer] = r.Model
	}
	files, _ := filepath.Glob(filepath.Join(res.Dir, "reviews", "reviewer-*.json"))
	byPair := map[string][]string{} // bundle pair -> reviewer models
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".json") // reviewer-NN-<a>-<b>
		id := base[:len("reviewer-NN")]
		byPair[base[len(id)+1:]] = append(byPair[base[len(id)+1:]], model[id])
	}
	if len(res.Bundles) < 2 || len(byPair) == 0 {
		t.Fatalf("%d bundles, %d reviewed pairs", len(res.Bundles), len(byPair))
	}
	for pair, models := range byPair {
		if len(models) != 2 || models[0] == models[1] {
			t.Errorf("bundles %s reviewed by %v, want one mock:honest and one mock:sloppy", pair, models)
		}
	}
}

// TestPersonalityChangesWorkersTimeoutsAndRetries checks that each
// personality's worker factor, timeout factor and extra retries reach the run.
func TestPersonalityChangesWorkersTimeoutsAndRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		personality      string
		workersPerCmd    int
		commanderTimeout time.Duration // ss-50: 10m × timeout factor
		workerTimeout    time.Duration // ss-50: 3m × timeout factor
		attempts         int           // of an always-failing call: 1 + retries (0 in this config) + extra retries
	}{
		{"balanced", 15, 10 * time.Minute, 3 * time.Minute, 1},
		{"thorough", 15, 15 * time.Minute, 270 * time.Second, 2},
		{"fast", 9, 7 * time.Minute, 126 * time.Second, 1},
		{"creative", 15, 12 * time.Minute, 216 * time.Second, 1},
		{"cautious", 15, 15 * time.Minute, 270 * time.Second, 3},
	}
	// One worker's call always fails with a transient server error.
	s := loadScript(t, "rules:\n  - schema: atom\n    match: \"testing-01\\\\b\"\n    fault: server_error\n")
	for _, tc := range tests {
		t.Run(tc.personality, func(t *testing.T) {
			t.Parallel()
			res, err := runMission(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
				o.Personality = tc.personality
				o.Config.Providers["mock"] = withRetries(o.Config.Providers["mock"], 0)
				o.Registry = mockRegistry(mock.Options{Script: s})
				withoutRecovery(o) // the provider's own attempts only: the ladder's are counted in recovery_test.go
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Plan.ChildrenPerCmd != tc.workersPerCmd || res.Plan.Workers != tc.workersPerCmd*res.Plan.Commanders {
				t.Errorf("workers per commander %d (%d in all), want %d", res.Plan.ChildrenPerCmd, res.Plan.Workers, tc.workersPerCmd)
			}
			var capsule commanders.Capsule
			b, err := os.ReadFile(filepath.Join(res.Dir, "capsules", "testing.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &capsule); err != nil {
				t.Fatal(err)
			}
			if d := capsule.Constraints.Timeout - tc.commanderTimeout; d < -time.Millisecond || d > time.Millisecond {
				t.Errorf("capsule timeout %v, want %v", capsule.Constraints.Timeout, tc.commanderTimeout)
			}
			attempts := 0
			for _, e := range res.Events {
				if e.Kind == events.LLMCall && e.AgentID == "worker-testing-01" {
					attempts++
				}
			}
			if attempts != tc.attempts {
				t.Errorf("worker-testing-01 made %d attempts, want %d", attempts, tc.attempts)
			}
			for _, o := range res.Bundles {
				var file struct {
					Atoms []commanders.AtomResult `json:"atoms"`
				}
				b, err := os.ReadFile(filepath.Join(res.Dir, "bundles", o.ID+".json"))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &file); err != nil {
					t.Fatal(err)
				}
				if len(file.Atoms) != tc.workersPerCmd {
					t.Errorf("bundle %s has %d atoms, want %d", o.ID, len(file.Atoms), tc.workersPerCmd)
				}
				for _, a := range file.Atoms {
					if d := a.Constraints.Timeout - tc.workerTimeout; d < -time.Millisecond || d > time.Millisecond {
						t.Fatalf("%s ran under timeout %v, want %v", a.AgentID, a.Constraints.Timeout, tc.workerTimeout)
					}
				}
			}
		})
	}
}

// spyRegistry serves kind "spy" with the mock personas and records every
// request as it reaches the provider, with the time left before its deadline.
type spyCall struct {
	role      string
	maxTokens int
	left      time.Duration
}

func spyRegistry(calls *[]spyCall, mu *sync.Mutex) *providers.Registry {
	return hookRegistry("spy", "recording mock", func(ctx context.Context, req providers.Request, m providers.Provider) (providers.Response, error) {
		c := spyCall{role: req.Caller.Role, maxTokens: req.MaxTokens}
		if dl, ok := ctx.Deadline(); ok {
			c.left = time.Until(dl)
		}
		mu.Lock()
		*calls = append(*calls, c)
		mu.Unlock()
		return m.Complete(ctx, req)
	})
}

// TestTokenCeilingsAndCallTimeoutReachEveryCall checks run.max_tokens per
// role and the scale's per-call timeout (× the personality's factor) on the
// requests that reach the provider.
func TestTokenCeilingsAndCallTimeoutReachEveryCall(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var calls []spyCall
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-50", "spy:honest", func(o *nexus.Options) {
		o.Registry = spyRegistry(&calls, &mu)
		o.FileScope = []string{"services/auth"}
		o.Personality = "cautious" // timeout factor 1.5
		sc := o.Config.Scales["ss-50"]
		sc.Timeouts.Call = 8 * time.Second // tighter than the kind's 30s: 8s × 1.5 = 12s per call
		o.Config.Scales["ss-50"] = sc
		o.Config.Providers["spy"] = providers.KindConfig{Timeout: 30 * time.Second, MaxConcurrency: 8}
		o.Config.Run.MaxTokens = map[string]int{"commander": 900, "worker": 300, "reviewer": 700}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"commander": 900, "worker": 300, "reviewer": 700, "nexus": 0, "judge": 0}
	seen := map[string]int{}
	for _, c := range calls {
		seen[c.role]++
		if w, ok := want[c.role]; ok && c.maxTokens != w {
			t.Errorf("%s call max_tokens = %d, want %d", c.role, c.maxTokens, w)
		}
		if c.left <= 0 || c.left > 12*time.Second || c.left < 10*time.Second {
			t.Errorf("%s call deadline in %v, want about 12s (8s call timeout × 1.5)", c.role, c.left)
		}
	}
	for role := range want {
		if seen[role] == 0 {
			t.Errorf("no %s call seen", role)
		}
	}
	// The file scope is a capsule constraint shown to commanders and workers.
	scoped := map[string]int{}
	for _, tr := range res.Transcripts {
		if strings.Contains(tr.Messages[len(tr.Messages)-1].Content, "File scope") &&
			strings.Contains(tr.Messages[len(tr.Messages)-1].Content, "services/auth") {
			scoped[tr.Role]++
		}
	}
	if scoped["worker"] != res.Plan.Workers || scoped["commander"] != res.Plan.Commanders {
		t.Errorf("prompts showing the file scope: %v; want %d workers and %d commander plans", scoped, res.Plan.Workers, res.Plan.Commanders)
	}
}

// TestCrossReviewStartsWhenTwoBundlesExist holds the last commander's bundle
// call until Phase 5 has started, then checks in the event log that the
// cross-review began, and reviews were scored, while that commander was
// still working.
func TestCrossReviewStartsWhenTwoBundlesExist(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var once sync.Once
	reg := hookRegistry("held", "mock whose integration bundle waits for Phase 5", func(ctx context.Context, req providers.Request, m providers.Provider) (providers.Response, error) {
		if req.Caller.AgentID == "commander-integration" && req.Schema != nil && req.Schema.Name == vocab.SchemaBundle {
			select {
			case <-release:
			case <-time.After(10 * time.Second):
				return providers.Response{}, fmt.Errorf("phase 5 never started while a commander was working")
			case <-ctx.Done():
				return providers.Response{}, ctx.Err()
			}
		}
		return m.Complete(ctx, req)
	})
	var mu sync.Mutex
	reviewsBeforeRelease := 0
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "held:honest", func(o *nexus.Options) {
		o.Registry = reg
		o.Observers = []events.Observer{events.ObserverFunc(func(e events.Event) {
			if e.Kind == events.Review {
				mu.Lock()
				select {
				case <-release:
				default:
					reviewsBeforeRelease++
					if reviewsBeforeRelease == 2 { // both reviewers of the first pair have scored
						once.Do(func() { close(release) })
					}
				}
				mu.Unlock()
			}
		})}
	})
	if err != nil {
		t.Fatal(err)
	}
	phase5, lastFinish, firstReview := -1, -1, -1
	for i, e := range res.Events {
		switch {
		case e.Kind == events.PhaseStart && e.Phase == "5" && phase5 < 0:
			phase5 = i
		case e.Kind == events.Review && firstReview < 0:
			firstReview = i
		case e.Kind == events.AgentFinish && e.AgentID == "commander-integration":
			lastFinish = i
		}
	}
	if phase5 < 0 || firstReview < 0 || lastFinish < 0 || !(phase5 < firstReview && firstReview < lastFinish) {
		t.Errorf("phase 5 start at %d, first review at %d, commander-integration finished at %d: want start < review < finish", phase5, firstReview, lastFinish)
	}
	if reviewsBeforeRelease < 2 {
		t.Errorf("%d reviews scored while a commander was still working, want at least 2", reviewsBeforeRelease)
	}
	// Every bundle still gets reviewed once the held one arrives.
	for _, b := range res.Bundles {
		if b.Review.Reviews < 2 {
			t.Errorf("bundle %s has %d reviews", b.ID, b.Review.Reviews)
		}
	}
}

// paraphraseCriteria are the sealed criteria of the paraphrasing-judge run,
// and paraphrases the failure messages its scripted judge writes: each one
// restates its criterion in a way an exact-match scrub misses.
var paraphraseCriteria = []shadow.Criterion{
	{ID: "sc-01", Category: "happy_path", Assertion: `The plan names the "PKCE" flow for every public client login.`, Expected: `"PKCE" required for public clients`},
	{ID: "sc-02", Category: "edge_case", Assertion: `The plan states how "clock skew" between servers is tolerated.`, Expected: `A "clock skew" tolerance window`},
	{ID: "sc-03", Category: "error_handling", Assertion: `The plan says what a client sees when the "refresh token" is expired.`, Expected: `"refresh token" expiry answered with 401`},
	{ID: "sc-04", Category: "security", Assertion: `The plan identifies "token replay" as a risk and gives a mitigation.`, Expected: `"token replay" mitigated`},
	{ID: "sc-05", Category: "happy_path", Assertion: `The plan lists a "rollback" step for the session store migration.`, Expected: `"rollback" step listed`},
	{ID: "sc-06", Category: "edge_case", Assertion: `The plan covers users with "both sessions" active during the cut-over.`, Expected: `"both sessions" handled`},
	{ID: "sc-07", Category: "error_handling", Assertion: `The plan describes a "fallback" when the identity provider is down.`, Expected: `"fallback" for an identity provider outage`},
	{ID: "sc-08", Category: "security", Assertion: `The plan requires "audit logging" of every token issuance.`, Expected: `"audit logging" of token issuance`},
}

var paraphrases = map[string]string{
	"sc-01": "the plan names the PKCE flow for every public client login",                      // quotes, period and case dropped
	"sc-02": "THE PLAN STATES HOW CLOCK SKEW BETWEEN SERVERS IS TOLERATED",                     // upper case
	"sc-03": "What a client sees when the refresh token is expired: the plan never says it.",   // reordered
	"sc-04": "It does not identify token replay as a risk, nor does it give a mitigation.",     // reworded a little
	"sc-05": "No rollback step listed.",                                                        // the expected text
	"sc-06": "Users with both sessions active during the cut-over are not covered by the plan", // reordered clauses
	"sc-07": "The plan should describe a fallback when the identity provider is down",          // modal added
	"sc-08": "audit-logging of token issuance",                                                 // hyphenated expected
}

// normalised lower-cases s and turns every run of characters other than
// letters and digits into one space: the test's own, independent view of
// "the same text".
func normalised(s string) string {
	return " " + strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ") + " "
}

// TestParaphrasingJudgeNeverLeaksCriteriaToCommanders runs a full mission
// whose scripted seal author writes known criteria and whose scripted judge
// fails every one with a message that paraphrases it. It scans every prompt
// of the hardening cycle (and, through scanLeaks, every prompt of the run)
// and fails if a criterion or a paraphrase of it reached a commander.
func TestParaphrasingJudgeNeverLeaksCriteriaToCommanders(t *testing.T) {
	t.Parallel()
	var verdicts []map[string]string
	for _, c := range paraphraseCriteria {
		verdicts = append(verdicts, map[string]string{"id": c.ID, "status": "fail", "actual": "nothing on this point", "message": paraphrases[c.ID]})
	}
	script := map[string]any{"rules": []map[string]any{
		{"schema": vocab.SchemaSealedCriteria, "json": map[string]any{"criteria": paraphraseCriteria}},
		{"schema": vocab.SchemaVerdicts, "json": map[string]any{"verdicts": verdicts}},
	}}
	b, err := json.Marshal(script) // JSON is YAML
	if err != nil {
		t.Fatal(err)
	}
	s := loadScript(t, string(b))
	// Small teams (smallTeams): every commander's feedback is still scanned.
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", small, func(o *nexus.Options) {
		o.Registry = mockRegistry(mock.Options{Script: s})
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(paraphraseCriteria, readSealedCriteria(t, res.Dir)); d != "" {
		t.Fatalf("the scripted criteria were not sealed (-want +got)\n%s", d)
	}
	hardened := 0
	for _, o := range res.Bundles {
		if o.Hardening != nil && o.Hardening.Cycles > 0 {
			hardened++
		}
	}
	if hardened == 0 {
		t.Fatal("no bundle was hardened: the scan would prove nothing")
	}
	feedbackPrompts := 0
	for _, tr := range res.Transcripts {
		if tr.Role == "seal_author" || tr.Role == "judge" {
			continue
		}
		for _, m := range tr.Messages {
			if !strings.Contains(m.Content, vocab.FeedbackHeading) {
				continue
			}
			feedbackPrompts++
			text := normalised(m.Content)
			for _, c := range paraphraseCriteria {
				for what, s := range map[string]string{"assertion": c.Assertion, "expected": c.Expected, "paraphrase": paraphrases[c.ID]} {
					if strings.Contains(text, normalised(s)) {
						t.Errorf("%s of %s reached %s (%s): %q", what, c.ID, tr.AgentID, tr.Role, s)
					}
				}
			}
			for _, line := range strings.Split(m.Content, "\n") {
				if !strings.HasPrefix(line, "- [sc-") {
					continue
				}
				for _, c := range paraphraseCriteria {
					if shadow.Restates(line, c.Assertion) || shadow.Restates(line, c.Expected) {
						t.Errorf("feedback line to %s restates %s: %q", tr.AgentID, c.ID, line)
					}
				}
			}
		}
	}
	if feedbackPrompts == 0 {
		t.Fatal("no prompt carried hardening feedback")
	}
	scanLeaks(t, res)
	// The reports keep what the judge said apart from what agents saw: the
	// withheld message replaces the paraphrase there too.
	for id, r := range validateReports(t, res) {
		for _, f := range r.Failures {
			if f.Message == paraphrases[f.TestName] {
				t.Errorf("report %s: %s keeps the paraphrase", id, f.TestName)
			}
		}
	}
}

// TestEveryExampleMissionEmitsSpecConformingReports runs each example
// mission with the mock and validates every report the run wrote against
// the Shadow Score Spec's published schema, including a hardened run
// (hardening block with cycles, velocity and max_reveal) and a v1 run.
func TestEveryExampleMissionEmitsSpecConformingReports(t *testing.T) {
	t.Parallel()
	missions, _ := filepath.Glob(filepath.Join("..", "examples", "missions", "*.md"))
	if len(missions) == 0 {
		t.Fatal("no example missions")
	}
	type run struct {
		name, mission, scale, spec, commander string
	}
	var runs []run
	for _, m := range missions {
		runs = append(runs, run{filepath.Base(m), filepath.Base(m), "ss-50", "", "mock:honest"})
	}
	runs = append(runs,
		run{"hardened v2", "auth-migration.md", "ss-100", "", "mock:sloppy"},
		run{"v1 gap report", "auth-migration.md", "ss-100", shadow.SpecV1, "mock:sloppy"})
	for _, tc := range runs {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Small teams: the reports' shape is the point, and every
			// bundle, judge report and hardening cycle is still written.
			res, err := runMission(t, loadMission(t, tc.mission), tc.scale, "mock:honest", small, func(o *nexus.Options) {
				o.MissionDir = filepath.Join("..", "examples", "missions") // front matter: the tinynotes missions' workspace
				o.Models = models(t, map[string]string{"commander": tc.commander})
				if tc.spec != "" {
					o.Config.ShadowScoring.SpecVersion = tc.spec
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(res.Dir, "reports", "*.json"))
			if len(files) == 0 {
				t.Fatal("no reports")
			}
			cycles := 0
			for _, f := range files {
				b, _ := os.ReadFile(f)
				if err := shadow.ValidateReport(b); err != nil {
					t.Errorf("%s: %v", filepath.Base(f), err)
				}
				var r struct {
					Version string         `json:"shadow_score_spec_version"`
					Report  map[string]any `json:"report"`
					Hard    map[string]any `json:"hardening"`
				}
				if err := json.Unmarshal(b, &r); err != nil {
					t.Fatal(err)
				}
				if r.Hard == nil {
					t.Errorf("%s: no hardening block", filepath.Base(f))
				}
				if c, _ := r.Hard["cycles_completed"].(float64); c > 0 {
					cycles++
					if _, ok := r.Hard["initial_shadow_score"]; !ok {
						t.Errorf("%s: hardened without initial_shadow_score", filepath.Base(f))
					}
				}
				if tc.spec == shadow.SpecV1 {
					if r.Version != shadow.SpecV1 || r.Report["conformance_level"] != nil {
						t.Errorf("%s: v1 report %s with conformance %v", filepath.Base(f), r.Version, r.Report["conformance_level"])
					}
					continue
				}
				wantLevel := 2.0 // ss-50 runs without hardening
				if tc.scale != "ss-50" {
					wantLevel = 3
				}
				if r.Report["conformance_level"] != wantLevel || r.Report["workspace_isolation"] != "strict" {
					t.Errorf("%s: conformance %v, isolation %v", filepath.Base(f), r.Report["conformance_level"], r.Report["workspace_isolation"])
				}
				if c, _ := r.Hard["cycles_completed"].(float64); c > 0 && (r.Hard["max_reveal"] != shadow.RevealMessage || r.Hard["hardening_velocity"] == nil) {
					t.Errorf("%s: hardened, max_reveal %v, velocity %v", filepath.Base(f), r.Hard["max_reveal"], r.Hard["hardening_velocity"])
				}
			}
			if tc.scale == "ss-100" && cycles == 0 {
				t.Error("no report of a hardened bundle: the hardening block was not exercised")
			}
		})
	}
}
