package nexus

import (
	"crypto/sha256"
	"math"
	"sort"
	"strings"

	"github.com/swarm-dev/swarm/commanders"
	"github.com/swarm-dev/swarm/config"
	"github.com/swarm-dev/swarm/internal/stats"
	"github.com/swarm-dev/swarm/workspace"
)

// Consensus tiers.
const (
	tierConsensus = "CONSENSUS"
	tierMajority  = "MAJORITY"
	TierConflict  = "CONFLICT"
	tierUnique    = "UNIQUE"
)

// tier classifies a bundle's review score (median reviewer total / 10). A
// bundle with fewer than two reviews is UNIQUE: there is nothing to agree on.
func tier(score float64, reviews int, c config.Consensus) string {
	switch {
	case reviews < 2:
		return tierUnique
	case score >= c.ConsensusThreshold:
		return tierConsensus
	case score >= c.MajorityThreshold:
		return tierMajority
	default:
		return TierConflict
	}
}

// FormulaInputs are the bundle-level consensus formula's terms, each in [0,1].
type FormulaInputs struct {
	Confidence float64 `json:"confidence"` // geometric mean of atom confidences (+ unanimity boost)
	// Evidence is the grounding of the bundle's unique atoms (evidenceTerm);
	// nil when the run had no workspace: evidence was not measured, the
	// term drops out and the other weights are renormalised (formula).
	Evidence     *float64 `json:"evidence"`
	Scope        float64  `json:"scope"`         // share of seats that delivered a complete atom
	Coverage     float64  `json:"coverage"`      // share of mission aspects the bundle covers
	ConflictRate float64  `json:"conflict_rate"` // conflicts reported per review
	UniqueAtoms  int      `json:"unique_atoms"`  // after content-hash de-duplication
	Atoms        int      `json:"atoms"`
}

// formula computes max(0, wc·confidence + we·evidence + ws·scope + wv·coverage
// − min(cap, cap·conflict_rate)). When evidence was not measured (no
// workspace) its term drops out and the other three weights are scaled by
// W/(W−we), W = wc+we+ws+wv, so they keep the full weights' sum: a missing
// measurement neither counts as zero nor as perfect.
func formula(in FormulaInputs, c config.Consensus) float64 {
	w := c.Weights
	penalty := math.Min(c.ConflictCap, c.ConflictCap*in.ConflictRate)
	if in.Evidence != nil {
		v := w.Confidence*in.Confidence + w.Evidence**in.Evidence + w.Scope*in.Scope + w.Coverage*in.Coverage - penalty
		return math.Max(0, v)
	}
	total := w.Confidence + w.Evidence + w.Scope + w.Coverage
	rest := total - w.Evidence
	if rest <= 0 {
		return 0 // every weight was on evidence, which was not measured
	}
	k := total / rest
	v := k*(w.Confidence*in.Confidence+w.Scope*in.Scope+w.Coverage*in.Coverage) - penalty
	return math.Max(0, v)
}

// evidenceTerm is the consensus formula's evidence input over a bundle's
// unique finished atoms, given each one's checked citations:
//
//	max(0, (grounded − fabricating) / atoms)
//
// where grounded counts the atoms with at least one citation, every one
// verified, and fabricating the atoms with at least one fabricated
// citation. An atom citing nothing, or only unverifiable lines, is neither:
// it adds to the denominator only. Callers pass at least one atom (a
// bundle without a finished atom has no evidence term: nil).
func evidenceTerm(checks [][]workspace.Check) float64 {
	if len(checks) == 0 {
		return 0
	}
	grounded, fabricating := 0, 0
	for _, cs := range checks {
		n := workspace.CountChecks(cs)
		if n.Cited > 0 && n.Verified == n.Cited {
			grounded++
		}
		if n.Fabricated > 0 {
			fabricating++
		}
	}
	return math.Max(0, float64(grounded-fabricating)/float64(len(checks)))
}

// formulaFromAtoms derives the formula's terms from a commander's atoms and
// bundle. Atoms with identical content (by SHA-256) count once; when every
// unique atom is complete and their confidences are within 0.1 of each other
// the confidence gets the unanimity boost (capped at 1). checks are the
// atoms' checked citations (aligned with atoms), nil when the run had no
// workspace: then Evidence is nil (not measured), as it is for a bundle
// without a finished atom.
func formulaFromAtoms(atoms []commanders.AtomResult, checks [][]workspace.Check, b commanders.Bundle, aspects []string, conflicts, reviews int, c config.Consensus) FormulaInputs {
	in := FormulaInputs{Atoms: len(atoms)}
	seen := map[[32]byte]bool{}
	var logSum float64
	var confs []float64
	var unique [][]workspace.Check
	complete := 0
	for i, a := range atoms {
		if a.Failed {
			continue
		}
		if a.Atom.Status == commanders.StatusComplete {
			complete++
		}
		h := sha256.Sum256([]byte(strings.TrimSpace(a.Atom.Content)))
		if seen[h] {
			continue
		}
		seen[h] = true
		conf := math.Max(a.Atom.Confidence, 1e-6)
		logSum += math.Log(conf)
		confs = append(confs, conf)
		if checks != nil {
			unique = append(unique, checks[i])
		}
	}
	in.UniqueAtoms = len(confs)
	if len(confs) > 0 {
		in.Confidence = math.Exp(logSum / float64(len(confs)))
		lo, hi := confs[0], confs[0]
		for _, x := range confs {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		if hi-lo <= 0.1 && complete == len(atoms) {
			in.Confidence = math.Min(1, in.Confidence+c.UnanimityBoost)
		}
	} else {
		in.Confidence = b.Confidence
	}
	if len(atoms) > 0 {
		in.Scope = float64(complete) / float64(len(atoms))
	}
	if checks != nil && len(unique) > 0 {
		e := evidenceTerm(unique)
		in.Evidence = &e
	}
	in.Coverage = coverage(b.Text(), aspects)
	if reviews > 0 {
		in.ConflictRate = math.Min(1, float64(conflicts)/float64(reviews))
	}
	return in
}

// coverage is the share of aspects named (case-insensitively) in text.
func coverage(text string, aspects []string) float64 {
	if len(aspects) == 0 {
		return 0
	}
	lt := strings.ToLower(text)
	n := 0
	for _, a := range aspects {
		if a != "" && strings.Contains(lt, strings.ToLower(a)) {
			n++
		}
	}
	return float64(n) / float64(len(aspects))
}

// ReviewRecord is one reviewer's card about one bundle.
type ReviewRecord struct {
	Reviewer  string               `json:"reviewer"`
	Model     string               `json:"model"`
	BundleID  string               `json:"bundle_id"`
	Card      commanders.ScoreCard `json:"card"`
	Total     float64              `json:"total"`
	Corrected float64              `json:"corrected"`
	Weight    float64              `json:"weight"`
	// Quarantine marks a quarantine re-review: a reviewer who read the
	// bundle with its failure messages after the gate quarantined it.
	Quarantine bool `json:"quarantine,omitempty"`
}

// Correction is one meta-review adjustment, recorded in the events.
type Correction struct {
	Kind     string  `json:"kind"` // inflation, deflation, rubber_stamp, herding
	Reviewer string  `json:"reviewer,omitempty"`
	BundleID string  `json:"bundle_id,omitempty"`
	Delta    float64 `json:"delta"`
	Reason   string  `json:"reason"`
}

// MetaReview is the per-bundle result of the meta-review.
type MetaReview struct {
	BundleID    string  `json:"bundle_id"`
	Reviews     int     `json:"reviews"`
	Score       float64 `json:"score"`       // median corrected total / 10
	Reliability float64 `json:"reliability"` // 1 − sd(totals)/5, clipped to [0,1]
	Conflicts   int     `json:"conflicts"`
	Herding     bool    `json:"herding"`
}

// metaReviewAll applies the meta-review to all records: per-reviewer
// inflation/deflation correction (a reviewer's mean offset from the others
// on the same bundles is removed), rubber-stamp detection (a reviewer giving
// the same high total to every bundle gets half weight) and herding (every
// reviewer of a bundle identical to the first one's total while the run's
// spread is wide). Offsets need at least three reviewers of a bundle. It returns the per-bundle results and the corrections.
func metaReviewAll(records []ReviewRecord) (map[string]MetaReview, []ReviewRecord, []Correction) {
	byBundle := map[string][]int{}
	byReviewer := map[string][]int{}
	for i := range records {
		records[i].Total = records[i].Card.Total()
		records[i].Corrected = records[i].Total
		records[i].Weight = 1
		byBundle[records[i].BundleID] = append(byBundle[records[i].BundleID], i)
		byReviewer[records[i].Reviewer] = append(byReviewer[records[i].Reviewer], i)
	}
	var corr []Correction
	reviewers := make([]string, 0, len(byReviewer))
	for r := range byReviewer {
		reviewers = append(reviewers, r)
	}
	sort.Strings(reviewers)
	for _, r := range reviewers {
		idx := byReviewer[r]
		// Offset against the median of all reviewers of the same bundle: the
		// median resists the very inflation it is meant to expose.
		var offs []float64
		for _, i := range idx {
			peers := byBundle[records[i].BundleID]
			if len(peers) < 3 {
				continue
			}
			var xs []float64
			for _, j := range peers {
				xs = append(xs, records[j].Total)
			}
			offs = append(offs, records[i].Total-stats.Median(xs))
		}
		bias := stats.Mean(offs)
		if len(offs) >= 1 && math.Abs(bias) >= 1.0 {
			kind := "inflation"
			if bias < 0 {
				kind = "deflation"
			}
			for _, i := range idx {
				records[i].Corrected = clamp(records[i].Total-bias, 0, 10)
			}
			corr = append(corr, Correction{Kind: kind, Reviewer: r, Delta: -bias,
				Reason: "reviewer's totals differ from the median of the same bundles' reviewers by a mean of " + fmtf(bias)})
		}
		var totals []float64
		for _, i := range idx {
			totals = append(totals, records[i].Total)
		}
		if len(totals) >= 2 && stats.PopStddev(totals) == 0 && totals[0] >= 8 {
			for _, i := range idx {
				records[i].Weight = 0.5
			}
			corr = append(corr, Correction{Kind: "rubber_stamp", Reviewer: r, Delta: 0,
				Reason: "identical high total " + fmtf(totals[0]) + " for every bundle; weight halved"})
		}
	}
	out := map[string]MetaReview{}
	var allTotals []float64
	for i := range records {
		allTotals = append(allTotals, records[i].Total)
	}
	runSpread := stats.PopStddev(allTotals)
	for b, idx := range byBundle {
		var xs, raw []float64
		conflicts := 0
		for _, i := range idx {
			// Weight as repetition: half-weight reviewers count once, full
			// weight twice, so the median respects weights.
			reps := int(math.Round(records[i].Weight * 2))
			for k := 0; k < reps; k++ {
				xs = append(xs, records[i].Corrected)
			}
			raw = append(raw, records[i].Total)
			conflicts += len(records[i].Card.Conflicts)
		}
		m := MetaReview{BundleID: b, Reviews: len(idx), Score: stats.Median(xs) / 10, Conflicts: conflicts}
		m.Reliability = clamp(1-stats.PopStddev(raw)/5, 0, 1)
		if len(raw) >= 3 && stats.PopStddev(raw) == 0 && runSpread > 1.5 {
			m.Herding = true
			corr = append(corr, Correction{Kind: "herding", BundleID: b,
				Reason: "all reviewers gave the identical total while the run's spread is " + fmtf(runSpread)})
		}
		out[b] = m
	}
	return out, records, corr
}

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }
