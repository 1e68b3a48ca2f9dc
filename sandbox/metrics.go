package sandbox

import (
	"math"
)

// histBins is the resolution of the p histograms used for selection
// saturation and AUC: memory stays constant whatever the number of
// interactions; p values closer than 1/histBins count as ties.
const histBins = 10000

// Metrics accumulates distributional metrics over a stream of interactions
// in constant memory. Not safe for concurrent use.
type Metrics struct {
	pay PayoffConfig

	n, acc, rej                  int
	sumP, sumP2                  float64
	sumPAcc, sumPRej             float64
	sumPiA, sumPiB               float64
	sumPiAAcc, sumPiBAcc         float64
	welfare, netSocial           float64
	sumPA                        float64 // Σ p·accepted, for the covariance
	uncertain                    int
	hiN, hiAcc, loN, loAcc       int
	hist                         [histBins]int32 // all p
	gtN                          int
	brier, logLoss, sumY, sumPGT float64
	eceN                         [10]int
	eceP, eceY                   [10]float64
	pos, neg                     [histBins]int32
	nPos, nNeg                   int
}

// NewMetrics returns an empty accumulator.
func NewMetrics(c PayoffConfig) *Metrics { return &Metrics{pay: c} }

func bin(p float64) int { return min(histBins-1, max(0, int(p*histBins))) }

// Add accounts one interaction (its P must be set).
func (m *Metrics) Add(in Interaction) {
	p := math.Max(0, math.Min(1, in.P))
	pay := m.pay.Payoff(in)
	m.n++
	m.sumP += p
	m.sumP2 += p * p
	m.sumPiA += pay.PiA
	m.sumPiB += pay.PiB
	m.hist[bin(p)]++
	if in.Accepted {
		m.acc++
		m.sumPAcc += p
		m.sumPA += p
		m.sumPiAAcc += pay.PiA
		m.sumPiBAcc += pay.PiB
		m.welfare += pay.PiA + pay.PiB
		m.netSocial += pay.S - pay.E
	} else {
		m.rej++
		m.sumPRej += p
	}
	if p > 0.3 && p < 0.7 {
		m.uncertain++
	}
	if p >= 0.5 {
		m.hiN++
		if in.Accepted {
			m.hiAcc++
		}
	} else {
		m.loN++
		if in.Accepted {
			m.loAcc++
		}
	}
	if in.GroundTruth != 0 {
		y := 0.0
		if in.GroundTruth > 0 {
			y = 1
			m.pos[bin(p)]++
			m.nPos++
		} else {
			m.neg[bin(p)]++
			m.nNeg++
		}
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
	SelectionSaturation float64  `json:"selection_saturation"`
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
// selection_credit), zero up to rounding; selection_saturation =
// selection_credit / the credit of accepting the same number of the
// highest-p interactions; participation_high_p/low_p = acceptance rate of
// p ≥ 0.5 / p < 0.5; calibration_error = |E[p] − E[y]| over ground truth.
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
	cov := m.sumPA/n - r.MeanP*pa
	if sd := math.Sqrt(r.Variance) * math.Sqrt(pa*(1-pa)); sd > 0 {
		r.QualityCorrelation = cov / sd
	}
	r.BaselineHarm = r.ToxicityAll
	if pa > 0 {
		r.SelectionCredit = cov / pa
		r.ReconstructionError = r.Toxicity - (r.BaselineHarm - r.SelectionCredit)
		if best := m.bestCredit(); best > 1e-12 {
			r.SelectionSaturation = r.SelectionCredit / best
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
		r.CalibrationError = ptr(math.Abs(m.sumPGT/g - m.sumY/g))
		if m.nPos > 0 && m.nNeg > 0 {
			r.AUC = ptr(m.auc())
		}
	}
	return r
}

// bestCredit is E[p | the acc highest p] − E[p], from the histogram (bin
// midpoints).
func (m *Metrics) bestCredit() float64 {
	need := m.acc
	var sum float64
	for b := histBins - 1; b >= 0 && need > 0; b-- {
		k := min(need, int(m.hist[b]))
		sum += float64(k) * (float64(b) + 0.5) / histBins
		need -= k
	}
	return sum/float64(m.acc) - m.sumP/float64(m.n)
}

// auc is the Mann–Whitney U statistic / (n⁺·n⁻), ties (same bin) counting ½.
func (m *Metrics) auc() float64 {
	var u float64
	negBelow := 0
	for b := 0; b < histBins; b++ {
		u += float64(m.pos[b]) * (float64(negBelow) + 0.5*float64(m.neg[b]))
		negBelow += int(m.neg[b])
	}
	return u / (float64(m.nPos) * float64(m.nNeg))
}
