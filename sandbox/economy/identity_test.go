package economy

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustRegistry(t *testing.T, cfg IdentityConfig) *Registry {
	t.Helper()
	r, err := NewRegistry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestTrustWorkedExamples(t *testing.T) {
	t.Parallel()
	r := mustRegistry(t, DefaultIdentityConfig())
	plain, _ := r.CreateIdentity("plain", "", false, 0)
	pop, _ := r.CreateIdentity("pop", "", true, 0)
	near(t, "no PoP", plain.Trust, 0.3)
	near(t, "PoP", pop.Trust, 0.5)

	docs, _ := r.CreateIdentity("docs", "", true, 0)
	if _, err := r.IssueReputation("docs", 0.8, 5); err != nil {
		t.Fatal(err)
	}
	near(t, "docs example at 5", docs.TrustScore(5), 0.6)
	near(t, "docs example at 55 (expired: expiry is exclusive)", docs.TrustScore(55), 0.5)

	two, _ := r.CreateIdentity("two", "", true, 0)
	_, _ = r.IssueAudit("two", 0)
	c2, _ := r.IssueAudit("two", 10)
	for _, c := range []struct {
		epoch int
		want  float64
	}{{5, 0.7}, {49, 0.7}, {50, 0.6}, {60, 0.5}} {
		near(t, "two credentials", two.TrustScore(c.epoch), c.want)
	}
	if !r.Revoke(c2.ID) || r.Revoke("nope") {
		t.Error("Revoke: want true for a known ID, false for an unknown one")
	}
	near(t, "second revoked, at 5 (shared credential object)", two.TrustScore(5), 0.6)
	if r.Verify(c2.ID, 5) {
		t.Error("a revoked credential verifies")
	}

	seven, _ := r.CreateIdentity("seven", "", false, 0)
	sevenP, _ := r.CreateIdentity("sevenP", "", true, 0)
	three, _ := r.CreateIdentity("three", "", false, 0)
	for i := range 7 {
		_, _ = r.IssueAudit("seven", i)
		_, _ = r.IssueAudit("sevenP", i)
		if i < 3 {
			_, _ = r.IssueAudit("three", i)
		}
	}
	near(t, "7 credentials", seven.TrustScore(6), 0.8)
	near(t, "7 credentials + PoP", sevenP.TrustScore(6), 1.0)
	if got := three.TrustScore(6); got != 0.6000000000000001 {
		t.Errorf("3 credentials: %.17g, want 0.6000000000000001 (the reference's float order)", got)
	}
	if rate, ok := r.PoPVerificationRate(); !ok || rate != 4.0/7 {
		t.Errorf("PoP rate %v, %v; want 4/7 (pop, docs, two, sevenP)", rate, ok)
	}
}

func TestEntityQuirk(t *testing.T) {
	t.Parallel()
	cfg := DefaultIdentityConfig()
	cfg.ProofOfPersonhoodRequired = true
	r := mustRegistry(t, cfg)
	if _, err := r.CreateIdentity("s1", "e1", false, 0); !errors.Is(err, ErrPoPRequired) {
		t.Errorf("s1 without PoP: %v, want ErrPoPRequired", err)
	}
	if _, err := r.CreateIdentity("s2", "e1", true, 0); !errors.Is(err, ErrEntityFull) {
		t.Errorf("s2 with PoP: %v, want ErrEntityFull (s1 kept the slot)", err)
	}
	if _, err := r.CreateIdentity("s3", "", true, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateIdentity("s3", "", true, 0); !errors.Is(err, ErrIdentityExists) {
		t.Errorf("second identity: %v", err)
	}
}

func TestSimilarity(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		why  string
		a, b map[string]float64
		want float64
	}{
		{"docs example: J 1, d 5/9", map[string]float64{"a": 10, "b": 5}, map[string]float64{"a": 10, "b": 5}, 0.777777778},
		{"identical {10,5,3}", map[string]float64{"a": 10, "b": 5, "c": 3}, map[string]float64{"a": 10, "b": 5, "c": 3}, 0.706790123},
		{"one shared key", map[string]float64{"t": 10}, map[string]float64{"t": 3}, 1.0},
		{"J 1/3, d 1/2", map[string]float64{"t1": 1, "t2": 1}, map[string]float64{"t2": 4, "t3": 1}, 0.666666667},
		{"empty", map[string]float64{}, map[string]float64{"t": 1}, 0},
		{"disjoint", map[string]float64{"a": 1}, map[string]float64{"b": 1}, 0},
	} {
		near(t, c.why, Similarity(c.a, c.b), c.want)
	}
}

func TestClustering(t *testing.T) {
	t.Parallel()
	docs := NewPatterns()
	for _, a := range []string{"agent_1", "agent_2"} {
		docs.Add(a, "a", 10)
		docs.Add(a, "b", 5)
	}
	r := mustRegistry(t, DefaultIdentityConfig())
	if got := r.DetectSybils(docs); len(got) != 0 {
		t.Errorf("threshold 0.8: %v, want no cluster (sim 0.778)", got)
	}
	if d := cmp.Diff([][]string{{"agent_1", "agent_2"}}, Cluster(docs, 0.7)); d != "" {
		t.Errorf("threshold 0.7 (-want +got):\n%s", d)
	}
	off := DefaultIdentityConfig()
	off.SybilDetectionEnabled = false
	if got := mustRegistry(t, off).DetectSybils(docs); got != nil {
		t.Errorf("detection disabled: %v", got)
	}
	g := NewPatterns()
	for _, e := range []struct {
		a  string
		ts []string
	}{{"A", []string{"t1", "t2"}}, {"B", []string{"t1", "t2", "t3"}}, {"C", []string{"t2", "t3"}}, {"D", []string{"t3"}}} {
		for _, tt := range e.ts {
			g.Add(e.a, tt, 1)
		}
	}
	near(t, "AB", Similarity(g.Counts("A"), g.Counts("B")), 0.583333333)
	near(t, "CD", Similarity(g.Counts("C"), g.Counts("D")), 0.75)
	if d := cmp.Diff([][]string{{"A", "C"}, {"B", "D"}}, Cluster(g, 0.6)); d != "" {
		t.Errorf("greedy clusters (-want +got):\n%s", d)
	}
}

func TestSybilLever(t *testing.T) {
	t.Parallel()
	l, err := NewSybilLever(SybilConfig{Enabled: true, SimilarityThreshold: 0.8, PenaltyMultiplier: 2, RealtimePenalty: true, RealtimeRate: 0.1, MaxClusterSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		l.OnInteraction("s1", "t1")
	}
	for range 3 {
		l.OnInteraction("s2", "t1")
	}
	if a, b := l.OnInteraction("h", "t2"); a != 0 || b != 0 {
		t.Errorf("cost before any flag: %v %v", a, b)
	}
	p := l.Patterns()
	if d := cmp.Diff([]string{"s1", "t1", "s2", "h", "t2"}, p.Agents()); d != "" {
		t.Errorf("pattern order (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]float64{"s1": 3, "s2": 3}, p.Counts("t1")); d != "" {
		t.Errorf("t1's pattern (-want +got):\n%s", d)
	}
	pen := l.OnEpochStart()
	want := []SybilPenalty{{"s1", -0.2, -2}, {"s2", -0.2, -2}}
	if d := cmp.Diff(want, pen, approx); d != "" {
		t.Errorf("penalties (-want +got):\n%s", d)
	}
	if l.CanAct("s1") || !l.CanAct("h") {
		t.Errorf("CanAct(s1) = %v, CanAct(h) = %v; want false, true", l.CanAct("s1"), l.CanAct("h"))
	}
	if a, b := l.OnInteraction("s1", "s2"); a != 0.1 || b != 0.1 {
		t.Errorf("realtime cost s1→s2 = %v, %v; want 0.1 each", a, b)
	}
	if a, _ := l.OnInteraction("s1", "h"); a != 0 {
		t.Errorf("realtime cost with an unflagged party = %v, want 0", a)
	}
	off, _ := NewSybilLever(DefaultSybilConfig())
	off.OnInteraction("x", "y")
	if off.OnEpochStart() != nil || !off.CanAct("x") {
		t.Error("a disabled lever acted")
	}
}
