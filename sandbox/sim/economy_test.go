package sim

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func in01(x float64) bool { return x >= 0 && x <= 1 }

// TestEconomyScenarios runs each economy example as `swarm sandbox run`
// does and checks that its success criteria hold, that they are the economy
// criteria it declares, that its economy metrics are present and plausible
// and that they reach epochs.csv and the plots.
func TestEconomyScenarios(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file     string
		criteria []string
		check    func(t *testing.T, s Scenario, res *Result)
	}{
		{"economy_sybil.yaml", []string{"economy.max_auction_gini", "economy.sybil.min_epochs_flagged", "economy.sybil.max_outsiders_flagged"},
			func(t *testing.T, s Scenario, res *Result) {
				y := res.Economy.Sybil
				if y == nil || y.EpochsFlagged == 0 || y.BlockedEpochs == 0 {
					t.Fatalf("sybil report %+v: want flagged and blocked epochs", y)
				}
				for a := range y.Flagged {
					if !strings.HasPrefix(a, "adversarial-") {
						t.Errorf("%s flagged; only the ring should be", a)
					}
				}
				// Blocking goes through the governance path: in an epoch
				// where the lever blocks agents, they do not act.
				all := 11 * s.Simulation.StepsPerEpoch
				for _, e := range res.Epochs {
					b := e.Economy.Sybil.Blocked
					if want := all - b*s.Simulation.StepsPerEpoch; e.Interactions != want {
						t.Errorf("epoch %d: %d blocked, %d interactions, want %d", e.Epoch, b, e.Interactions, want)
					}
				}
				id := res.Economy.Identity
				if id.Revoked == 0 || id.TrustByType["honest"] <= id.TrustByType["adversarial"] {
					t.Errorf("identity %+v: want revoked credentials and honest trust above the ring's", id)
				}
				p := res.Economy.Permeability
				if p.Containment == nil || !in01(*p.Containment) || p.Spillovers+p.Blocked == 0 {
					t.Errorf("permeability %+v", p)
				}
			}},
		{"economy_flash_crash.yaml", []string{"economy.min_crashes", "economy.max_crashes", "economy.min_containment"},
			func(t *testing.T, s Scenario, res *Result) {
				m := res.Economy.Market
				if len(m.Crashes) == 0 || m.Trades == 0 || m.SpeedAdvantageGini == nil || !in01(*m.SpeedAdvantageGini) {
					t.Fatalf("market %+v", m)
				}
				// The crashes come once the deceptive agents exploit (after
				// 40% of the run), and each halts the market.
				for _, c := range m.Crashes {
					if c.StartEpoch <= 8 || c.PriceDropPct < 0.1 || c.Severity < 1 {
						t.Errorf("crash %+v", c)
					}
					if e := res.Epochs[c.StartEpoch-1].Economy.Market; e.Crashes == 0 {
						t.Errorf("epoch %d does not count its crash: %+v", c.StartEpoch, e)
					}
				}
				// Volatility feeds the threat: threat = min(1, 5·volatility).
				for _, e := range res.Epochs {
					k, p := e.Economy.Market, e.Economy.Permeability
					if k.Volatility == nil {
						continue
					}
					if d := p.Threat - min(1, 5**k.Volatility); d > 1e-12 || d < -1e-12 {
						t.Errorf("epoch %d: threat %v, volatility %v", e.Epoch, p.Threat, *k.Volatility)
					}
				}
			}},
		{"economy_missions.yaml", []string{"economy.max_auction_gini", "economy.min_missions_succeeded", "economy.max_free_rider_index"},
			func(t *testing.T, s Scenario, res *Result) {
				ms := res.Economy.Missions
				paid := 0.0
				for _, m := range ms.Missions {
					if m.FreeRider == nil || !in01(*m.FreeRider) {
						t.Errorf("mission %+v: want a free-rider index in [0, 1]", m)
					}
					if m.Status == "succeeded" && (m.Paid < 50-1e-9 || m.Paid > 50+1e-9) {
						t.Errorf("mission %+v: a succeeded mission pays its pool of 50", m)
					}
					paid += m.Paid
				}
				if d := paid - ms.Paid; d > 1e-9 || d < -1e-9 || ms.Succeeded < 3 {
					t.Errorf("missions %+v", ms)
				}
				a := res.Economy.Auction
				if a.MeanGini == nil || !in01(*a.MeanGini) || a.Auctions != len(res.Epochs) || a.TotalUtility <= 0 {
					t.Errorf("auction %+v", a)
				}
				for _, e := range res.Epochs {
					if g := e.Economy.Auction.Gini; g != nil && !in01(*g) {
						t.Errorf("epoch %d auction Gini %v", e.Epoch, *g)
					}
				}
			}},
	} {
		t.Run(c.file, func(t *testing.T) {
			s := load(t, c.file)
			res, err := Run(t.Context(), s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, cr := range res.Criteria {
				names = append(names, cr.Name)
				if cr.Actual == nil || !cr.Passed {
					t.Errorf("criterion %s: actual %v passed %v", cr.Name, cr.Actual, cr.Passed)
				}
			}
			if d := cmp.Diff(c.criteria, names); d != "" || !res.Passed {
				t.Errorf("passed %v, criteria (-want +got):\n%s", res.Passed, d)
			}
			if res.Economy == nil {
				t.Fatal("no economy report")
			}
			for _, e := range res.Epochs {
				if e.Economy == nil {
					t.Fatalf("epoch %d has no economy metrics", e.Epoch)
				}
			}
			c.check(t, s, res)
			dir := t.TempDir()
			if err := WriteOutputs(dir, res, true); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(dir, "epochs.csv"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			if err != nil || len(rows) != len(res.Epochs)+1 {
				t.Fatalf("epochs.csv: %d rows, %v", len(rows), err)
			}
			if len(rows[0]) <= 9 {
				t.Errorf("epochs.csv header %v has no economy columns", rows[0])
			}
			for _, ext := range []string{".png", ".svg"} {
				if st, err := os.Stat(filepath.Join(dir, "economy"+ext)); err != nil || st.Size() == 0 {
					t.Errorf("economy%s: %v", ext, err)
				}
			}
			// Same seed, same economy.
			again, err := Run(t.Context(), s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(res.Epochs, again.Epochs); d != "" {
				t.Errorf("second run differs:\n%s", d)
			}
		})
	}
}

// TestEconomyColumnsOnlyForMechanismsPresent: epochs.csv gains exactly the
// columns of the mechanisms the scenario declares.
func TestEconomyColumnsOnlyForMechanismsPresent(t *testing.T) {
	t.Parallel()
	s := parse(t, "economy:\n  market: {}\n")
	res, err := Run(t.Context(), s, Options{Epochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := econCSV(res)
	if d := cmp.Diff([]string{"market_price", "volatility", "crashes", "halted_ticks"}, h); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
}

// TestPassiveEconomyLeavesTheWorldAlone: the market, permeability and
// identity only measure, so with them the agents' world is the run without
// an economy, epoch for epoch (their generators are their own).
func TestPassiveEconomyLeavesTheWorldAlone(t *testing.T) {
	t.Parallel()
	plain := load(t, "baseline.yaml")
	eco := plain
	eco.Economy = &Economy{Market: &EconMarket{}, Permeability: &EconPermeability{}, Identity: &EconIdentity{}}
	a, err := Run(t.Context(), plain, Options{Epochs: 6})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(t.Context(), eco, Options{Epochs: 6})
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Epochs {
		if b.Epochs[i].Economy == nil {
			t.Fatalf("epoch %d: no economy metrics", i+1)
		}
		b.Epochs[i].Economy = nil
	}
	if d := cmp.Diff(a.Epochs, b.Epochs); d != "" {
		t.Errorf("epochs differ (-plain +economy):\n%s", d)
	}
	if d := cmp.Diff(a.Agents, b.Agents); d != "" {
		t.Errorf("agents differ (-plain +economy):\n%s", d)
	}
}

// TestUndefinedEconomyMetricFailsItsCriterion: with no contagion possible
// (contagion_rate 0) containment is undefined; a min_containment criterion
// then fails with no actual value, never passes on a default.
func TestUndefinedEconomyMetricFailsItsCriterion(t *testing.T) {
	t.Parallel()
	s := parse(t, "economy:\n  permeability: {contagion_rate: 0}\nsuccess_criteria:\n  economy: {min_containment: 0}\n")
	res, err := Run(t.Context(), s, Options{Epochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := []CriterionResult{{Name: "economy.min_containment", Limit: 0, Actual: nil, Passed: false}}
	if d := cmp.Diff(want, res.Criteria); d != "" || res.Passed {
		t.Errorf("passed %v (-want +got):\n%s", res.Passed, d)
	}
	if res.Economy.Permeability.Containment != nil {
		t.Errorf("containment %v without contagion", *res.Economy.Permeability.Containment)
	}
}

const econHead = "scenario_id: e\nagents:\n  - {type: honest, count: 3}\n  - {type: adversarial, count: 2, allies: true}\n"

func parse(t *testing.T, tail string) Scenario {
	t.Helper()
	s, err := ParseScenario("e.yaml", []byte(econHead+tail))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEconomyKeysValidated: every economy key is checked, and a bad one is
// reported as file:line:col: key: message (exit 2 in the CLI).
func TestEconomyKeysValidated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ why, yaml, err string }{
		{"empty block", "economy: {}\n", "e.yaml:5:1: economy: declares no mechanism"},
		{"unknown key", "economy:\n  market: {drop: 0.2}\n", `e.yaml:6:12: economy.market.drop: unknown key "drop"`},
		{"wrong type", "economy:\n  market: {window: ten}\n", "e.yaml:6:20: economy.market.window: wrong type"},
		{"fractional int", "economy:\n  market: {window: 2.5}\n", "e.yaml:6:20: economy.market.window: 2.5: want a whole number"},
		{"window below 2", "economy:\n  market: {window: 1}\n", "e.yaml:6:12: economy.market.window: 1 is out of range 2..10000"},
		{"drop threshold above 1", "economy:\n  market:\n    drop_threshold: 1.5\n", "e.yaml:7:5: economy.market.drop_threshold: 1.5 is out of range (0, 1]"},
		{"negative latency", "economy:\n  market: {latency_noise_ms: -1}\n", "economy.market.latency_noise_ms: -1 is out of range [0, 1e+06]"},
		{"spread above 1", "economy:\n  market: {spread: 2}\n", "economy.market.spread: 2 is out of range [0, 1]"},
		{"auction without resources", "economy:\n  auction: {budget_scale: 10}\n", "e.yaml:6:3: economy.auction.resources: 0 resources: want 1..16"},
		{"resource twice", "economy:\n  auction:\n    resources: [{name: a, supply: 1}, {name: a, supply: 2}]\n", `e.yaml:7:40: economy.auction.resources[1].name: "a" is offered twice`},
		{"zero supply", "economy:\n  auction:\n    resources: [{name: a, supply: 0}]\n", "economy.auction.resources[0].supply: 0 is out of range (0, 1e+09]"},
		{"trust budgets need identity", "economy:\n  auction: {budget_from: trust, resources: [{name: a, supply: 1}]}\n", "economy.auction.budget_from: trust needs an economy.identity block"},
		{"valuation of an unknown type", "economy:\n  auction:\n    resources: [{name: a, supply: 1}]\n    valuations: {pirate: {a: 1}}\n", `e.yaml:8:18: economy.auction.valuations.pirate: "pirate": want an agent type`},
		{"valuation of an unknown resource", "economy:\n  auction:\n    resources: [{name: a, supply: 1}]\n    valuations: {honest: {b: 1}}\n", `economy.auction.valuations.honest.b: "b" is not an auctioned resource`},
		{"negative valuation", "economy:\n  auction:\n    resources: [{name: a, supply: 1}]\n    valuations: {honest: {a: -1}}\n", "economy.auction.valuations.honest.a: -1 is out of range [0, 1e+06]"},
		{"price rate 0 is the default, above 1 is not", "economy:\n  auction: {price_adjustment_rate: 1.5, resources: [{name: a, supply: 1}]}\n", "economy.auction.price_adjustment_rate: 1.5 is out of range (0, 1]"},
		{"negative envy tolerance", "economy:\n  auction: {envy_tolerance: -0.1, resources: [{name: a, supply: 1}]}\n", "economy.auction.envy_tolerance: -0.1 is out of range [0, 1e+06]"},
		{"too many rounds", "economy:\n  auction: {max_rounds: 20000, resources: [{name: a, supply: 1}]}\n", "economy.auction.max_rounds: 20000 is out of range 1..10000"},
		{"mission without objectives", "economy:\n  missions: {pool: 5}\n", "economy.missions.objectives: 0 objectives: want 1..16"},
		{"unknown metric", "economy:\n  missions:\n    objectives: [{metric: speed, target: 1}]\n", `e.yaml:7:19: economy.missions.objectives[0].metric: "speed": want avg_p`},
		{"zero target", "economy:\n  missions:\n    objectives: [{metric: avg_p, target: 0}]\n", "economy.missions.objectives[0].target: 0 is out of range (0, 1e+09]"},
		{"unknown reward rule", "economy:\n  missions: {reward_distribution: lottery, objectives: [{metric: avg_p, target: 1}]}\n", `economy.missions.reward_distribution: "lottery": want equal, proportional or shapley`},
		{"unknown contribution rule", "economy:\n  missions: {contribute: some, objectives: [{metric: avg_p, target: 1}]}\n", `economy.missions.contribute: "some": want accepted or all`},
		{"participants of an absent type", "economy:\n  missions: {participants: [deceptive], objectives: [{metric: avg_p, target: 1}]}\n", `economy.missions.participants[0]: "deceptive": no agent group of this type`},
		{"negative pool", "economy:\n  missions: {pool: -5, objectives: [{metric: avg_p, target: 1}]}\n", "economy.missions.pool: -5 is out of range (0, 1e+09]"},
		{"base permeability above 1", "economy:\n  permeability: {base_permeability: 1.2}\n", "e.yaml:6:18: economy.permeability.base_permeability: 1.2 is out of range [0, 1]"},
		{"volatility threat needs a market", "economy:\n  permeability: {threat_from: volatility}\n", "economy.permeability.threat_from: volatility needs an economy.market block"},
		{"unknown threat", "economy:\n  permeability: {threat_from: weather}\n", `economy.permeability.threat_from: "weather": want volatility or toxicity`},
		{"identity trust needs identity", "economy:\n  permeability: {trust_from: identity}\n", "economy.permeability.trust_from: identity needs an economy.identity block"},
		{"expiry 0 is the default, negative is not", "economy:\n  identity: {credential_expiry_epochs: -1}\n", "economy.identity.credential_expiry_epochs: -1 is out of range 1..100000"},
		{"PoP of an unknown type", "economy:\n  identity: {proof_of_personhood: [robots]}\n", `economy.identity.proof_of_personhood[0]: "robots": want an agent type`},
		{"similarity above 1", "economy:\n  sybil: {similarity_threshold: 1.1}\n", "economy.sybil.similarity_threshold: 1.1 is out of range [0, 1]"},
		{"negative cluster size", "economy:\n  sybil: {max_cluster_size: -1}\n", "economy.sybil.max_cluster_size: -1 is out of range 1..10000"},
		{"revoking needs identity", "economy:\n  sybil: {revoke_credentials: true}\n", "economy.sybil.revoke_credentials: needs an economy.identity block"},
		{"criterion without its mechanism", "economy:\n  sybil: {}\nsuccess_criteria:\n  economy: {min_crashes: 1}\n", "e.yaml:8:13: success_criteria.economy.min_crashes: needs an economy.market block"},
		{"gini limit above 1", "economy:\n  auction: {resources: [{name: a, supply: 1}]}\nsuccess_criteria:\n  economy: {max_auction_gini: 2}\n", "success_criteria.economy.max_auction_gini: 2 is out of range [0, 1]"},
		{"sybil criterion coalition", "economy:\n  sybil: {}\nsuccess_criteria:\n  economy:\n    sybil: {coalition: honest}\n", "success_criteria.economy.sybil: set min_epochs_flagged, max_outsiders_flagged or both"},
	} {
		_, err := ParseScenario("e.yaml", []byte(econHead+c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err = %v, want %q", c.why, err, c.err)
		}
	}
}

// TestEconomyDefaults: an empty mechanism block takes the documented
// defaults.
func TestEconomyDefaults(t *testing.T) {
	t.Parallel()
	s := parse(t, "economy:\n  market: {}\n  permeability: {}\n  sybil: {}\n  identity: {}\n")
	e := s.Economy
	got := []any{e.Market.PricePerQuality, e.Market.Spread, e.Market.BatchIntervalTicks, e.Market.Window, *e.Permeability.BasePermeability,
		e.Permeability.ThreatFrom, e.Permeability.TrustFrom, *e.Sybil.SimilarityThreshold, e.Sybil.MaxClusterSize, e.Identity.CredentialExpiryEpochs,
		*e.Identity.CredentialMinReputation}
	want := []any{2.0, 0.1, 5, 10, 0.5, "volatility", "identity", 0.8, 1, 50, 0.6}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
	if !*e.Permeability.Adaptive {
		t.Error("adaptive defaults to true")
	}
}
