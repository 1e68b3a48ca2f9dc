package sandbox

import (
	"math"
	"slices"
)

// histBins is the resolution of the p histogram behind selection
// efficiency: memory stays constant whatever the number of interactions.
// Each bin keeps its count and the exact sum of its p values, so only the
// one bin that the best selection splits is approximated (by its mean):
// the error is below 1/histBins.
const histBins = 10000

// Metrics accumulates distributional metrics over a stream of interactions.
// Memory is constant except for one float64 per interaction with ground
// truth (kept for the exact AUC). Not safe for concurrent use.
type Metrics struct {
	pay PayoffConfig

	n, acc, rej                  int
	sumP, sumP2                  float64
	sumPAcc, sumPRej             float64
	sumPiA, sumPiB               float64
	sumPiAAcc, sumPiBAcc         float64
	welfare, netSocial           float64
	uncertain                    int
	hiN, hiAcc, loN, loAcc       int
	hist                         [histBins]int32   // all p
	histSum                      [histBins]float64 // Σ p per bin
	gtN                          int
	brier, logLoss, sumY, sumPGT float64
	eceN                         [10]int
	eceP, eceY                   [10]float64
	pos, neg                     []float64 // p of interactions with ground truth +1 / −1
	sorted                       bool      // pos and neg are sorted
}

// NewMetrics returns an empty accumulator.
func NewMetrics(c PayoffConfig) *Metrics { return &Metrics{pay: c} }

func bin(p float64) int { return min(histBins-1, max(0, int(p*histBins))) }

// b2i is 1 for true, 0 for false (compiled without a branch).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Add accounts one interaction (its P must be set). The accumulation is
// branch-free so that a random stream of accepted/rejected, high/low p
// costs no mispredictions.
func (m *Metrics) Add(in Interaction) { m.add(&in) }

func (m *Metrics) add(in *Interaction) {
	p := in.P
	if !(p >= 0) { // also NaN
		p = 0
	} else if p > 1 {
		p = 1
	}
	pay := m.pay.payoff(in)
	ai := b2i(in.Accepted)
	af := float64(ai)
	m.n++
	m.sumP += p
	m.sumP2 += p * p
	m.sumPiA += pay.PiA
	m.sumPiB += pay.PiB
	b := bin(p)
	m.hist[b]++
	m.histSum[b] += p
	m.acc += ai
	m.rej += 1 - ai
	m.sumPAcc += af * p
	m.sumPRej += (1 - af) * p
	m.sumPiAAcc += af * pay.PiA
	m.sumPiBAcc += af * pay.PiB
	m.welfare += af * (pay.PiA + pay.PiB)
	m.netSocial += af * (pay.S - pay.E)
	m.uncertain += b2i(p > 0.3) & b2i(p < 0.7)
	hi := b2i(p >= 0.5)
	m.hiN += hi
	m.hiAcc += hi & ai
	m.loN += 1 - hi
	m.loAcc += (1 - hi) & ai
	if in.GroundTruth != 0 {
		y := 0.0
		if in.GroundTruth > 0 {
			y = 1
			m.pos = append(m.pos, p)
		} else {
			m.neg = append(m.neg, p)
		}
		m.sorted = false
		m.gtN++
		m.brier += (p - y) * (p - y)
		pc := math.Max(1e-15, math.Min(1-1e-15, p))
		m.logLoss += -(y*math.Log(pc) + (1-y)*math.Log(1-pc))
		m.sumY += y
		m.sumPGT += p
		b := min(9, int(p*10))
		m.eceN[b]++
		m.eceP[b] += p
		m.eceY[b] += y
	}
}

// Report is every metric, with snake_case JSON names.
type Report struct {
	N                   int      `json:"n"`
	Accepted            int      `json:"accepted"`
	Rejected            int      `json:"rejected"`
	AcceptanceRate      float64  `json:"acceptance_rate"`
	MeanP               float64  `json:"mean_p"`
	MeanPAccepted       float64  `json:"mean_p_accepted"`
	MeanPRejected       float64  `json:"mean_p_rejected"`
	Toxicity            float64  `json:"toxicity"`
	ToxicityAll         float64  `json:"toxicity_all"`
	QualityGap          float64  `json:"quality_gap"`
	ConditionalLossA    float64  `json:"conditional_loss_a"`
	ConditionalLossB    float64  `json:"conditional_loss_b"`
	Spread              float64  `json:"spread"`
	QualityCorrelation  float64  `json:"quality_correlation"`
	BaselineHarm        float64  `json:"baseline_harm"`
	SelectionCredit     float64  `json:"selection_credit"`
	ReconstructionError float64  `json:"reconstruction_error"`
	SelectionEfficiency float64  `json:"selection_efficiency"`
	TotalWelfare        float64  `json:"total_welfare"`
	NetSocialWelfare    float64  `json:"net_social_welfare"`
	Variance            float64  `json:"variance"`
	CV                  float64  `json:"cv"`
	ParticipationHighP  float64  `json:"participation_high_p"`
	ParticipationLowP   float64  `json:"participation_low_p"`
	UncertainFraction   float64  `json:"uncertain_fraction"`
	BreakEven           float64  `json:"break_even"`
	SocialBreakEven     float64  `json:"social_break_even"`
	GroundTruthN        int      `json:"ground_truth_n"`
	Brier               *float64 `json:"brier"`
	ECE                 *float64 `json:"ece"`
	LogLoss             *float64 `json:"log_loss"`
	AUC                 *float64 `json:"auc"`
	CalibrationError    *float64 `json:"calibration_error"`
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func ptr(x float64) *float64 { return &x }

// Report computes the metrics so far.
//
// Definitions beyond the issue's: conditional_loss_a/b = E[π | accepted] −
// E[π] per side (what selection gains or costs each side); baseline_harm =
// E[1−p] (= toxicity_all); selection_credit = Cov(p, accepted)/P(accepted)
// (= E[p|acc] − E[p]); reconstruction_error = toxicity − (baseline_harm −
// selection_credit), zero up to rounding; selection_efficiency =
// selection_credit / the credit of accepting the same number of the
// highest-p interactions (1: the best selection of that size; not the
// paper's "selection saturation", see docs/sandbox.md);
// participation_high_p/low_p = acceptance rate of p ≥ 0.5 / p < 0.5;
// calibration_error = E[p] − E[y] over ground truth, signed as the
// reference (positive: p overstates quality); auc is exact (Mann–Whitney,
// equal p counting ½).
func (m *Metrics) Report() Report {
	n := float64(m.n)
	r := Report{N: m.n, Accepted: m.acc, Rejected: m.rej, BreakEven: m.pay.BreakEven(), SocialBreakEven: m.pay.SocialBreakEven(), GroundTruthN: m.gtN}
	if m.n == 0 {
		return r
	}
	r.AcceptanceRate = float64(m.acc) / n
	r.MeanP = m.sumP / n
	r.MeanPAccepted = div(m.sumPAcc, float64(m.acc))
	r.MeanPRejected = div(m.sumPRej, float64(m.rej))
	if m.acc > 0 {
		r.Toxicity = 1 - r.MeanPAccepted
	}
	r.ToxicityAll = 1 - r.MeanP
	if m.acc > 0 && m.rej > 0 {
		r.QualityGap = r.MeanPAccepted - r.MeanPRejected
	}
	if m.acc > 0 {
		r.ConditionalLossA = m.sumPiAAcc/float64(m.acc) - m.sumPiA/n
		r.ConditionalLossB = m.sumPiBAcc/float64(m.acc) - m.sumPiB/n
		r.Spread = (m.pay.SPlus + m.pay.SMinus) * (r.MeanP - r.MeanPAccepted)
	}
	r.Variance = math.Max(0, m.sumP2/n-r.MeanP*r.MeanP)
	r.CV = div(math.Sqrt(r.Variance), r.MeanP)
	pa := r.AcceptanceRate
	cov := m.sumPAcc/n - r.MeanP*pa
	if sd := math.Sqrt(r.Variance) * math.Sqrt(pa*(1-pa)); sd > 0 {
		r.QualityCorrelation = cov / sd
	}
	r.BaselineHarm = r.ToxicityAll
	if pa > 0 {
		r.SelectionCredit = cov / pa
		r.ReconstructionError = r.Toxicity - (r.BaselineHarm - r.SelectionCredit)
		if best := m.bestCredit(); best > 1e-12 {
			r.SelectionEfficiency = r.SelectionCredit / best
		}
	}
	r.TotalWelfare, r.NetSocialWelfare = m.welfare, m.netSocial
	r.ParticipationHighP = div(float64(m.hiAcc), float64(m.hiN))
	r.ParticipationLowP = div(float64(m.loAcc), float64(m.loN))
	r.UncertainFraction = float64(m.uncertain) / n
	if m.gtN > 0 {
		g := float64(m.gtN)
		r.Brier = ptr(m.brier / g)
		r.LogLoss = ptr(m.logLoss / g)
		var ece float64
		for b := range m.eceN {
			if m.eceN[b] > 0 {
				ece += float64(m.eceN[b]) / g * math.Abs(m.eceP[b]/float64(m.eceN[b])-m.eceY[b]/float64(m.eceN[b]))
			}
		}
		r.ECE = ptr(ece)
		r.CalibrationError = ptr(m.sumPGT/g - m.sumY/g)
		if len(m.pos) > 0 && len(m.neg) > 0 {
			r.AUC = ptr(m.auc())
		}
	}
	return r
}

// bestCredit is E[p | the acc highest p] − E[p]: whole bins by their exact
// sums, the bin the selection splits by its mean.
func (m *Metrics) bestCredit() float64 {
	need := m.acc
	var sum float64
	for b := histBins - 1; b >= 0 && need > 0; b-- {
		c := int(m.hist[b])
		if c == 0 {
			continue
		}
		k := min(need, c)
		if k == c {
			sum += m.histSum[b]
		} else {
			sum += float64(k) * m.histSum[b] / float64(c)
		}
		need -= k
	}
	return sum/float64(m.acc) - m.sumP/float64(m.n)
}

// auc is the Mann–Whitney U statistic / (n⁺·n⁻) over the exact p values:
// each (positive, negative) pair counts 1 when the positive's p is higher,
// ½ when they are equal. O(n log n) for the sort, once per batch of adds.
func (m *Metrics) auc() float64 {
	if !m.sorted {
		slices.Sort(m.pos)
		slices.Sort(m.neg)
		m.sorted = true
	}
	var u float64
	lo, hi := 0, 0 // neg[:lo] < p, neg[:hi] <= p
	for _, p := range m.pos {
		for lo < len(m.neg) && m.neg[lo] < p {
			lo++
		}
		hi = max(hi, lo)
		for hi < len(m.neg) && m.neg[hi] <= p {
			hi++
		}
		u += float64(lo) + 0.5*float64(hi-lo)
	}
	return u / (float64(len(m.pos)) * float64(len(m.neg)))
}
