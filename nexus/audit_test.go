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

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
	"github.com/swarm-dev/swarm/providers/mock"
)

func reviewer(id, model string) commanders.Reviewer {
	ref, _ := providers.ParseRef(model)
	return commanders.Reviewer{Agent: commanders.Agent{ID: id, Role: commanders.RoleReviewer, Ref: ref}}
}

func TestReviewerPairsMixFamiliesWhereTheRosterAllows(t *testing.T) {
	gpt, claude, gemini := "openai:gpt-4.1", "anthropic:claude-sonnet-4", "google:gemini-2.5-pro"
	tests := []struct {
		name      string
		models    []string
		wantPairs int
		wantMixed int // pairs of two different families
	}{
		{"ss-50 roster of two families, odd count: no same-family pair", []string{gpt, claude, gpt}, 2, 2},
		{"pairs [[a,a],[b,b]] as configured: still every pair mixed", []string{gpt, gpt, claude, claude, gpt, gpt, claude, claude}, 4, 4},
		{"three families", []string{gpt, claude, gemini, gpt, claude, gemini}, 3, 3},
		{"one family: the roster does not allow mixing", []string{gpt, "openai:gpt-4.1-mini", gpt}, 2, 0},
		{"a lone reviewer works alone", []string{gpt}, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rs []commanders.Reviewer
			for i, m := range tc.models {
				rs = append(rs, reviewer(fmt.Sprintf("reviewer-%02d", i+1), m))
			}
			pairs := nexus.ReviewerPairs(rs)
			if len(pairs) != tc.wantPairs {
				t.Fatalf("%d pairs, want %d", len(pairs), tc.wantPairs)
			}
			mixed := 0
			works := map[string]bool{}
			for _, p := range pairs {
				for _, r := range p {
					works[r.Agent.ID] = true
				}
				if len(p) == 2 {
					if p[0].Agent.ID == p[1].Agent.ID {
						t.Errorf("reviewer %s paired with itself", p[0].Agent.ID)
					}
					if providers.Family(p[0].Agent.Ref) != providers.Family(p[1].Agent.Ref) {
						mixed++
					}
				}
			}
			if mixed != tc.wantMixed {
				t.Errorf("%d mixed-family pairs, want %d", mixed, tc.wantMixed)
			}
			if len(works) != len(rs) {
				t.Errorf("%d of %d reviewers work", len(works), len(rs))
			}
		})
	}
}

// TestTwoFamilyRosterReviewsInMixedPairs runs a mission whose reviewer
// roster has two model families and checks that every bundle pair was
// scored by one reviewer of each family.
func TestTwoFamilyRosterReviewsInMixedPairs(t *testing.T) {
	res, err := runMission(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
		o.Models = map[string]string{"reviewer": "mock:honest,mock:sloppy"}
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
	script, err := os.CreateTemp(t.TempDir(), "script-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// One worker's call always fails with a transient server error.
	fmt.Fprintln(script, "rules:\n  - schema: atom\n    match: \"testing-01\\\\b\"\n    fault: server_error")
	script.Close()
	s, err := mock.LoadScript(script.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.personality, func(t *testing.T) {
			res, err := runMission(t, loadMission(t, "test-gap-hunt.md"), "ss-50", "mock:honest", func(o *nexus.Options) {
				o.Personality = tc.personality
				o.Config.Providers["mock"] = withRetries(o.Config.Providers["mock"], 0)
				o.Registry = mockRegistry(mock.Options{Script: s})
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
				if e.Kind == nexus.EvLLMCall && e.AgentID == "worker-testing-01" {
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
	reg := mockRegistry(mock.Options{})
	reg.Register(providers.KindInfo{Kind: "spy", Description: "recording mock"}, func(ref providers.Ref, _ providers.KindConfig) (providers.Provider, error) {
		m, err := mock.New(ref.Model, mock.Options{})
		if err != nil {
			return nil, err
		}
		return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
			c := spyCall{role: req.Caller.Role, maxTokens: req.MaxTokens}
			if dl, ok := ctx.Deadline(); ok {
				c.left = time.Until(dl)
			}
			mu.Lock()
			*calls = append(*calls, c)
			mu.Unlock()
			return m.Complete(ctx, req)
		}), nil
	})
	return reg
}

// TestTokenCeilingsAndCallTimeoutReachEveryCall checks run.max_tokens per
// role and the scale's per-call timeout (× the personality's factor) on the
// requests that reach the provider.
func TestTokenCeilingsAndCallTimeoutReachEveryCall(t *testing.T) {
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
	release := make(chan struct{})
	var once sync.Once
	reg := mockRegistry(mock.Options{})
	reg.Register(providers.KindInfo{Kind: "held", Description: "mock whose integration bundle waits for Phase 5"}, func(ref providers.Ref, _ providers.KindConfig) (providers.Provider, error) {
		m, err := mock.New(ref.Model, mock.Options{})
		if err != nil {
			return nil, err
		}
		return providers.ProviderFunc(func(ctx context.Context, req providers.Request) (providers.Response, error) {
			if req.Caller.AgentID == "commander-integration" && req.Schema != nil && req.Schema.Name == providers.SchemaBundle {
				select {
				case <-release:
				case <-time.After(10 * time.Second):
					return providers.Response{}, fmt.Errorf("phase 5 never started while a commander was working")
				case <-ctx.Done():
					return providers.Response{}, ctx.Err()
				}
			}
			return m.Complete(ctx, req)
		}), nil
	})
	var mu sync.Mutex
	reviewsBeforeRelease := 0
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "held:honest", func(o *nexus.Options) {
		o.Registry = reg
		o.Observers = []nexus.Observer{func(e nexus.Event) {
			if e.Kind == nexus.EvReview {
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
		}}
	})
	if err != nil {
		t.Fatal(err)
	}
	phase5, lastFinish, firstReview := -1, -1, -1
	for i, e := range res.Events {
		switch {
		case e.Kind == nexus.EvPhaseStart && e.Phase == "5" && phase5 < 0:
			phase5 = i
		case e.Kind == nexus.EvReview && firstReview < 0:
			firstReview = i
		case e.Kind == nexus.EvAgentFinish && e.AgentID == "commander-integration":
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
