package nexus_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/events"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/providers"
)

// The judge needs only a bundle and the verified envelope: Phase 6 must not
// wait for the cross-review. Every reviewer call here is held until a bundle
// has been judged; a judge that waits for the reviews never sees one, and
// the held reviewers give up (failing the reviews) after ten seconds.
func TestJudgingDoesNotWaitForCrossReview(t *testing.T) {
	t.Parallel()
	judged := make(chan struct{})
	var once sync.Once
	reg := hookRegistry("held", "mock whose reviewers wait for a judged bundle", func(ctx context.Context, req providers.Request, m providers.Provider) (providers.Response, error) {
		if req.Caller.Role == commanders.RoleReviewer {
			select {
			case <-judged:
			case <-time.After(10 * time.Second):
				return providers.Response{}, errors.New("no bundle was judged while the cross-review was under way")
			case <-ctx.Done():
				return providers.Response{}, ctx.Err()
			}
		}
		return m.Complete(ctx, req)
	})
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "held:honest", func(o *nexus.Options) {
		o.Registry = reg
		o.Observers = append(o.Observers, events.ObserverFunc(func(e events.Event) {
			if e.Kind == events.Judged {
				once.Do(func() { close(judged) })
			}
		}))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Events {
		if e.Kind == events.Failure && e.Role == commanders.RoleReviewer {
			t.Errorf("reviewer failed: %s", e.Message)
		}
	}
	for _, b := range res.Bundles {
		if b.Review.Reviews < 2 || b.ShadowScore == nil {
			t.Errorf("bundle %s: %d reviews, shadow score %v: want both reviews and a score", b.ID, b.Review.Reviews, b.ShadowScore)
		}
	}
}

// fingerprint is what a mock run must reproduce whatever the schedule.
type fingerprint struct {
	SealedHash string
	Aggregate  nexus.ShadowAggregate
	Bundles    []bundlePrint
}

type bundlePrint struct {
	ID             string
	Initial, Final float64
	Cycles         int
	Gate           string
	Text           string
}

func printOf(t *testing.T, res *nexus.Result) fingerprint {
	t.Helper()
	f := fingerprint{SealedHash: res.SealedHash, Aggregate: res.Aggregate}
	for _, b := range res.Bundles {
		p := bundlePrint{ID: b.ID, Text: b.Bundle.Text()}
		if b.Initial != nil {
			p.Initial = b.Initial.Score
		}
		if b.Final != nil {
			p.Final = b.Final.Score
		}
		if b.Hardening != nil {
			p.Cycles = b.Hardening.Cycles
		}
		if b.Gate != nil {
			p.Gate = b.Gate.Action
		}
		f.Bundles = append(f.Bundles, p)
	}
	return f
}

// Judging beside the cross-review must not change what a run finds: the
// same mission on the mock gives the same sealed hash, scores, hardening,
// gates and final bundles on every run, and hardening still revises weak
// bundles. (Which reviewer pair scores which bundle pair follows the order
// in which commanders finish, so review scores are not compared.)
func TestParallelJudgingIsDeterministicAndStillHardens(t *testing.T) {
	t.Parallel()
	run := func() *nexus.Result {
		res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", func(o *nexus.Options) {
			o.Models = models(t, map[string]string{"commander": "mock:sloppy"})
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(), run()
	if diff := cmp.Diff(printOf(t, a), printOf(t, b)); diff != "" {
		t.Errorf("two runs of one mission differ (-first +second):\n%s", diff)
	}
	hardened := 0
	for _, o := range a.Bundles {
		if o.Hardening != nil && o.Hardening.Cycles > 0 {
			hardened++
		}
	}
	evs := 0
	for _, e := range a.Events {
		if e.Kind == events.Hardening {
			evs++
		}
	}
	if hardened == 0 || evs != hardened {
		t.Errorf("%d bundles hardened, %d hardening events: want sloppy bundles hardened, one event each", hardened, evs)
	}
}

// Reviewers score each bundle as it arrived: hardening, now running beside
// the cross-review, never changes what they see. A line that only the
// hardened revision of a bundle has never reaches a reviewer (no bundle is
// quarantined here, so every reviewer call is the cross-review's).
func TestCrossReviewSeesBundlesAsTheyArrived(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var prompts []string
	reg := hookRegistry("spy", "mock recording reviewer prompts", func(ctx context.Context, req providers.Request, m providers.Provider) (providers.Response, error) {
		if req.Caller.Role == commanders.RoleReviewer {
			var b strings.Builder
			for _, m := range req.Messages {
				b.WriteString(m.Content)
			}
			mu.Lock()
			prompts = append(prompts, b.String())
			mu.Unlock()
		}
		return m.Complete(ctx, req)
	})
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", func(o *nexus.Options) {
		o.Registry = reg
		o.Models = models(t, map[string]string{"commander": "mock:sloppy", "reviewer": "spy:honest"})
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	promptLines := map[string]bool{}
	for _, p := range prompts {
		for _, l := range strings.Split(p, "\n") {
			promptLines[strings.TrimSpace(l)] = true
		}
	}
	seen := func(line string) bool { return promptLines[line] }
	lines := func(text string) map[string]bool {
		out := map[string]bool{}
		for _, l := range strings.Split(text, "\n") {
			if l = strings.TrimSpace(l); len(l) > 20 {
				out[l] = true
			}
		}
		return out
	}
	arrivedLines, finalLines := map[string]bool{}, map[string]bool{}
	for _, o := range res.Bundles {
		if o.Gate != nil && o.Gate.Action == "quarantine" {
			t.Fatalf("%s quarantined: its re-review would see the revision", o.ID)
		}
		b, err := os.ReadFile(filepath.Join(res.Dir, "bundles", o.ID+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var arrived struct {
			Bundle commanders.Bundle `json:"bundle"`
		}
		if err := json.Unmarshal(b, &arrived); err != nil {
			t.Fatal(err)
		}
		for l := range lines(arrived.Bundle.Text()) {
			arrivedLines[l] = true
		}
		for l := range lines(o.Bundle.Text()) {
			finalLines[l] = true
		}
	}
	revised, originalSeen := 0, 0
	for l := range finalLines {
		if !arrivedLines[l] {
			revised++
			if seen(l) {
				t.Errorf("a reviewer saw a line only a hardened revision has: %q", l)
			}
		}
	}
	for l := range arrivedLines {
		if !finalLines[l] && seen(l) {
			originalSeen++
		}
	}
	if revised == 0 || originalSeen == 0 {
		t.Fatalf("%d revised lines, %d lines only the arrived bundles have seen by reviewers: the test shows nothing", revised, originalSeen)
	}
}

// Phases 4, 5 and 6 overlap, so each LLM call is tagged with the phase its
// work belongs to, not with the phase entered last.
func TestLLMCallsCarryTheirOwnPhase(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", func(o *nexus.Options) {
		o.Models = models(t, map[string]string{"commander": "mock:sloppy"}) // hardened: commanders revise in Phase 6
	})
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string][]string{
		commanders.RoleNexus: {"1"}, commanders.RoleSealAuthor: {"1.5"},
		commanders.RoleCommander: {"4", "6"}, commanders.RoleWorker: {"4"},
		commanders.RoleReviewer: {"5", "6"}, // cross-review; quarantine re-review
		commanders.RoleJudge:    {"6"}, commanders.RoleSynthesizer: {"7"},
	}
	got := map[string]map[string]int{}
	for _, e := range res.Events {
		if e.Kind != events.LLMCall {
			continue
		}
		if got[e.Role] == nil {
			got[e.Role] = map[string]int{}
		}
		got[e.Role][string(e.Phase)]++
		ok := false
		for _, p := range allowed[e.Role] {
			ok = ok || p == string(e.Phase)
		}
		if !ok {
			t.Errorf("%s call by %s tagged phase %q, want one of %v", e.Role, e.AgentID, e.Phase, allowed[e.Role])
		}
	}
	if got[commanders.RoleCommander]["6"] == 0 || got[commanders.RoleJudge]["6"] == 0 || got[commanders.RoleReviewer]["5"] == 0 {
		t.Errorf("calls per role and phase %v: want revisions and judgements in 6, reviews in 5", got)
	}
}
