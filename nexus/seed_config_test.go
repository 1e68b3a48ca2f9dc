package nexus_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	swarm "github.com/swarm-dev/swarm"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/nexus"
	"github.com/swarm-dev/swarm/runfiles"
)

// seedBlock is the seed system's own shadow_scoring block, as written
// (issue 20): conformance_level, sealed_criteria_count and the completeness
// category were unknown keys or values to swarm's strict decoder.
const seedBlock = `shadow_scoring:
  enabled: %s
  spec_version: "2.0.0"
  conformance_level: 2
  sealed_criteria_count: 7
  categories: [happy_path, edge_case, error_handling, security, completeness]
`

func seedConfig(t *testing.T, enabled string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("seed.yml", []byte(strings.Replace(seedBlock, "%s", enabled, 1)), swarm.DefaultConfig, nil)
	if err != nil {
		t.Fatalf("the seed's shadow_scoring block is refused: %v", err)
	}
	return cfg
}

// Issue 20: the seed's block is accepted and each key means something:
// sealed_criteria_count sets how many criteria are sealed at every scale,
// conformance_level caps what the reports claim (2 here, though hardening
// would reach 3), completeness is a category the seal author may use.
func TestSeedShadowScoringBlockIsAcceptedAsWritten(t *testing.T) {
	t.Parallel()
	cfg := seedConfig(t, "true")
	for _, scale := range []string{"ss-50", "ss-100", "ss-250"} {
		if s, err := cfg.ScaleFor(scale); err != nil || s.SealedCriteria != 7 {
			t.Errorf("%s: %d sealed criteria (%v), want sealed_criteria_count 7", scale, s.SealedCriteria, err)
		}
	}
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", func(o *nexus.Options) { o.Config = cfg })
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runfiles.StatusComplete || res.Plan.Criteria != 7 {
		t.Fatalf("status %s (%s), %d criteria; want complete with 7", res.Status, res.Error, res.Plan.Criteria)
	}
	if !res.Plan.Hardening.Enabled {
		t.Fatal("fixture: hardening is off at ss-100, so level 2 would be the run's own claim")
	}
	for _, b := range res.Bundles {
		if b.Final == nil || b.Final.Total != 7 {
			t.Errorf("%s judged on %v criteria, want 7", b.ID, b.Final)
		}
	}
	files, _ := filepath.Glob(filepath.Join(res.Dir, "reports", "*.json"))
	if len(files) == 0 {
		t.Fatal("no reports")
	}
	for _, f := range files {
		var r struct {
			Report struct {
				ConformanceLevel int `json:"conformance_level"`
			} `json:"report"`
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &r); err != nil || r.Report.ConformanceLevel != 2 {
			t.Errorf("%s claims conformance level %d (%v), want the configured 2", filepath.Base(f), r.Report.ConformanceLevel, err)
		}
	}
}

// Issue 20: with the seed's block and enabled: false, the run completes
// (exit 0 in the CLI), says shadow scoring is off and shows no score; it
// used to end incomplete (exit 3) with nothing judged.
func TestShadowScoringOffCompletesWithoutAScore(t *testing.T) {
	t.Parallel()
	res, err := runMission(t, loadMission(t, "auth-migration.md"), "ss-100", "mock:honest", func(o *nexus.Options) { o.Config = seedConfig(t, "false") })
	if err != nil {
		t.Fatal(err)
	}
	a := res.Aggregate
	if res.Status != runfiles.StatusComplete || !res.OK || res.ShadowReason != nexus.ShadowOff {
		t.Errorf("status %s (ok %v, %q, reason %q), want complete saying %q", res.Status, res.OK, res.Error, res.ShadowReason, nexus.ShadowOff)
	}
	if a.Scored != 0 || a.Median != nil || a.Level != "none" || a.Unjudged != a.Planned {
		t.Errorf("aggregate %+v: want nothing scored, every bundle delivered", a)
	}
	for _, b := range res.Bundles {
		if b.ShadowScore != nil {
			t.Errorf("%s has a score %v with shadow scoring off", b.ID, *b.ShadowScore)
		}
	}
}
